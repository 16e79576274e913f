"""What unpacking a version's archive costs a match, once per worker process against once per seat.

A temporary SQLite database and data folder; the example bots stored as versions, plus two
synthetic built archives of random bytes: 64 MiB (the most a build may now write back) and 199 MB
(what issue 25's audit stored from a 963-byte upload, when 200 MiB was allowed). For each it times:
- a cold unpack through a worker's cache (`septet_platform/matches/unpacked.py`): the SHA-256
  check, the intake's checker, extraction, read-only modes (what a match paid per seat if every
  seat unpacked its version);
- a hit: a seat of a version the process has unpacked already.
Then it plays real matches (the sandbox, `match_play`) of one version seated three times and
prints the seconds spent getting the seats' folders, in the process's first match and in the next.

    python benchmarks/unpack_cost.py [--repeat 5] [--matches 3]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import statistics
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/referee.py would shadow the referee package (septet_platform imports it first thing).
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "bots" / "examples"
MiB = 1 << 20
EXAMPLE_NAMES = ("random", "greedy", "montecarlo")


def _median_ms(call: Callable[[], object], repeat: int, before: Callable[[], object] | None = None) -> float:
    samples = []
    for _ in range(repeat):
        if before is not None:
            before()
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def _synthetic(total: int, name: str) -> bytes:
    """A built archive as `pack_tree` stores one: the random example and `total` random bytes
    in files of 16 MiB (each under the per-file limit), gzip-compressed."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as archive:
        for path in sorted((EXAMPLES / "random").iterdir()):
            if path.is_file():
                data = path.read_bytes()
                if path.name == "septet-bot.toml":
                    data = data.replace(b'name = "random"', f'name = "{name}"'.encode())
                info = tarfile.TarInfo(path.name)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
        left, number = total, 0
        while left > 0:
            size = min(16 * MiB, left)
            info = tarfile.TarInfo(f"blob-{number}.bin")
            info.size = size
            archive.addfile(info, io.BytesIO(os.urandom(size)))
            left, number = left - size, number + 1
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed unpacks per figure (default 5)")
    parser.add_argument("--matches", type=int, default=3, help="matches played in one process (default 3)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="septet-unpack-bench-"))
    try:
        _run(args, scratch)
    finally:
        from septet_platform.matches.unpacked import _remove_tree

        _remove_tree(scratch)


def _run(args: argparse.Namespace, scratch: Path) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="septet_platform.settings.local",
        DATABASE_URL=f"sqlite:///{scratch / 'bench.sqlite3'}",
        SEPTET_DATA_DIR=str(scratch / "data"),
        SEPTET_UNPACKED_DIR=str(scratch / "unpacked"),
        SECRET_KEY="benchmark-only-" + "x" * 40,
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from referee.tools.building import size_text
    from referee.tools.packing import pack_folder
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.bots.services import bot_version_submit
    from septet_platform.ladders.models import Ladder
    from septet_platform.matches import services
    from septet_platform.matches.models import Match, Seat
    from septet_platform.matches.unpacked import UnpackedFolders

    owner = User.objects.create(username="bench")
    stored = Path(os.environ["SEPTET_DATA_DIR"]) / "archives"
    versions = {
        name: bot_version_submit(owner=owner, archive=pack_folder(EXAMPLES / name)) for name in EXAMPLE_NAMES
    }
    for label, total in (("built 64 MiB", 64 * MiB), ("built 199 MB (the audit's)", 199_000_000)):
        name = f"built-{total // MiB}"
        data = _synthetic(total, name)  # stored as a build would have stored it: past any upload limit
        (stored / name).mkdir(parents=True)
        (stored / name / "v1.built.tar.gz").write_bytes(data)
        versions[label] = BotVersion.objects.create(
            bot=Bot.objects.create(owner=owner, name=name),
            number=1,
            archive=f"{name}/v1.built.tar.gz",
            archive_sha256=hashlib.sha256(data).hexdigest(),
            archive_bytes=len(data),
            manifest={"name": name},
        )
    cache = UnpackedFolders(scratch / "bench-cache", max_bytes=1 << 40)

    print(f"{'archive':<28}{'stored':>10}{'unpacked':>10}{'cold unpack ms':>16}{'hit ms':>9}")
    for label, version in versions.items():

        def hold(version: object = version) -> None:
            cache.hold(archive=stored / version.archive, digest=version.archive_sha256).release()  # type: ignore[attr-defined]

        cold = _median_ms(hold, args.repeat, before=cache.clear)
        hit = _median_ms(hold, args.repeat * 20)
        unpacked = sum(
            path.stat().st_size
            for path in (cache.folder / version.archive_sha256).rglob("*")
            if path.is_file()
        )
        print(
            f"{label:<28}{size_text(version.archive_bytes):>10}{size_text(unpacked):>10}{cold:>16.1f}{hit:>9.3f}"
        )
    cache.clear()

    ladder, _ = Ladder.objects.get_or_create(
        game="oh-hell", pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    seated = versions["random"]
    seated.status = "active"
    seated.save()
    held_seconds: list[float] = []
    original = services._version_held

    def timed_held(version: object) -> object:
        start = time.perf_counter()
        try:
            return original(version)  # type: ignore[arg-type]
        finally:
            held_seconds.append(time.perf_counter() - start)

    services._version_held = timed_held  # type: ignore[assignment]
    print("\nmatches of oh-hell, the random example seated 3 times, in one process:")
    for number in range(args.matches):
        match = Match.objects.create(ladder=ladder, seed=number + 1, rated=False)
        for seat in range(3):
            Seat.objects.create(match=match, seat=seat, bot_version=seated)
        held_seconds.clear()
        start = time.perf_counter()
        outcome = services.match_play(match_id=match.pk, worker="bench").outcome
        total = time.perf_counter() - start
        getting = sum(held_seconds) * 1000
        unpacked = services.unpacked_folders().unpacks
        print(
            f"  match {number + 1}: {outcome}, {total:.2f} s in all, {getting:.1f} ms getting "
            f"{len(held_seconds)} seats' folders ({unpacked} unpacked in this process so far)"
        )


if __name__ == "__main__":
    main()
