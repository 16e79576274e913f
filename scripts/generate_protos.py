"""Generates the Python stubs of protos/septet/v1/*.proto into referee/botkit/protocol/ (one command).

    python scripts/generate_protos.py           # regenerate after changing a .proto
    python scripts/generate_protos.py --check   # exit 1 if the committed stubs are stale

grpcio-tools writes `from septet.v1 import bot_pb2`, the import path of the .proto files; the
stubs live flat in the `referee.botkit.protocol` package, so that one import line is rewritten. The
generated files are never edited by hand.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTOS = ROOT / "protos"
TARGET = ROOT / "referee" / "botkit" / "protocol"
IMPORT = re.compile(r"^from septet\.v1 import (\w+_pb2)", re.MULTILINE)


def generate(out: Path) -> dict[str, str]:
    """The generated files' names and text, as they are committed."""
    sources = sorted(str(path.relative_to(PROTOS)) for path in PROTOS.glob("septet/v1/*.proto"))
    status = protoc.main(
        [
            "protoc",
            f"-I{PROTOS}",
            f"--python_out={out}",
            f"--pyi_out={out}",
            f"--grpc_python_out={out}",
            *sources,
        ]
    )
    if status != 0:
        raise SystemExit(f"protoc failed with status {status}")
    files = {}
    for path in sorted((out / "septet" / "v1").iterdir()):
        text = IMPORT.sub(r"from referee.botkit.protocol import \1", path.read_text())
        files[path.name] = text
    return files


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="fail if referee/botkit/protocol/ is stale")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        files = generate(Path(scratch))
    committed = {path.name: path.read_text() for path in TARGET.glob("*_pb2*.py*")}
    if args.check:
        stale = sorted(
            name for name in files.keys() | committed.keys() if files.get(name) != committed.get(name)
        )
        if stale:
            print(f"stale generated stubs: {', '.join(stale)}; run: python scripts/generate_protos.py")
            return 1
        print("generated stubs are up to date")
        return 0
    for name in committed.keys() - files.keys():
        (TARGET / name).unlink()
    for name, text in files.items():
        (TARGET / name).write_text(text)
    print(f"wrote {len(files)} files to {TARGET.relative_to(ROOT)}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
