"""Hostile bot: what of the caller's environment and files can a folder run by `septet check` reach?

At its first decision it looks for the secrets a bot author has exported (targets.json, written
next to this file by the test, gives their values as `needles` and further `names`), for the
variables passed on purpose (`wanted`), and reads the host files named in `read`; then it always
raises, so the test reads one forfeit whose reason starts with SEEN and lists what it found
(`needles` the variables holding a secret's value, `names` the listed names present, `wanted`
those of the wanted it got, `files` the files it read, `path` whether it has a PATH at all).
"""

import contextlib
import json
import os
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent


def seen() -> str:
    targets = json.loads((HERE / "targets.json").read_text())
    needles = [
        name for name, value in sorted(os.environ.items()) if any(n in value for n in targets["needles"])
    ]
    names = [name for name in targets["names"] if name in os.environ]
    wanted = [name for name in targets["wanted"] if name in os.environ]
    files = []
    for path in targets["read"]:
        with contextlib.suppress(OSError):
            Path(path).read_bytes()
            files.append(Path(path).name)
    path = "yes" if os.environ.get("PATH") else "no"
    return (
        f"SEEN needles={','.join(needles)} names={','.join(names)} wanted={','.join(wanted)}"
        f" files={','.join(files)} path={path}"
    )


class ReadEnvironment(Bot):
    name = "hostile-read-environment"

    def decide(self, info, legal):
        raise RuntimeError(seen())


if __name__ == "__main__":
    serve(ReadEnvironment())
