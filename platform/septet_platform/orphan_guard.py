"""`python -m septet_platform.orphan_guard`: ends `septet up`'s process groups once the launcher
is gone, however it ended (SIGKILL included: nothing in the launcher runs then).

It reads lines from stdin, a pipe whose other end only the launcher holds: `+GROUP` adds a
process group, `-GROUP` drops one (a child the launcher stopped itself). End of input means the
launcher closed the pipe or died; every group still listed then gets SIGTERM, and SIGKILL after
GRACE_SECONDS if any of its processes is left. Standard library only, so it starts in a blink and
keeps working whatever state the project's code is in.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

GRACE_SECONDS = 10.0


def _alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _signal(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def end_groups(groups: set[int], grace: float = GRACE_SECONDS) -> None:
    """SIGTERM to each group, SIGKILL to those with a process left after `grace` seconds."""
    for group in groups:
        _signal(group, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(group) for group in groups):
        time.sleep(0.1)
    for group in groups:
        _signal(group, signal.SIGKILL)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # only the end of the pipe ends the guard
    groups: set[int] = set()
    for line in sys.stdin.buffer:
        text = line.decode("ascii", "replace").strip()
        if text[:1] in ("+", "-") and text[1:].isdigit() and int(text[1:]) > 1:
            (groups.add if text[0] == "+" else groups.discard)(int(text[1:]))
    end_groups(groups)


if __name__ == "__main__":
    main()
