"""What keeping seeds, replays and forfeit reasons secret costs a read.

A temporary SQLite database is migrated and filled with ladder matches in duplicate sets of four
rotations (one set in eight still being played) plus a real played replay with a forfeit. Then
it times, per call:
- `published_match_ids` for a page of 100 matches (the Arena's ListMatches adds it once a page),
- `match_is_published` for one match (GetMatch, the match page),
- `replay_for_viewer` for the seat's owner (the stored bytes, nothing to blank) and for a stranger
  (parsed, reasons blanked, compressed again),
and prints the median and 95th percentile of each.

    python benchmarks/secrets_overhead.py [--sets 500] [--repeat 200]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/referee.py would shadow the referee package (septet_platform imports it first thing).
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]


def _timed(call: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median and 95th percentile wall time of `call`, in milliseconds."""
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=500, help="duplicate sets of 4 rotations (default 500)")
    parser.add_argument("--repeat", type=int, default=200, help="timed calls per figure (default 200)")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="septet-secrets-bench-"))
    os.environ.update(
        DJANGO_SETTINGS_MODULE="septet_platform.settings.local",
        DATABASE_URL=f"sqlite:///{scratch / 'bench.sqlite3'}",
        SEPTET_DATA_DIR=str(scratch),
        SECRET_KEY="benchmark-only-" + "x" * 40,
    )
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)

    from referee.engine.games import get_game
    from referee.engine.match import play_match
    from referee.engine.players import PolicyPlayer, RandomPlayer
    from septet_platform.bots.models import Bot, BotVersion
    from septet_platform.ladders.models import Ladder
    from septet_platform.matches import selectors
    from septet_platform.matches.models import Match, Seat
    from septet_platform.matches.services import match_claim, match_record

    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    owners = [User.objects.create_user(f"owner{n}") for n in range(4)]
    versions = []
    for n, owner in enumerate(owners):
        bot = Bot.objects.create(name=f"bot{n}", owner=owner)
        versions.append(
            BotVersion.objects.create(
                bot=bot, number=1, archive="x", archive_sha256="0" * 64,
                manifest={"games": ["oh-hell"]}, status=BotVersion.Status.ACTIVE,
            )
        )  # fmt: skip
    rng = random.Random(1)
    matches = []
    for number in range(args.sets):
        over = number % 8 != 0
        for rotation in range(4):
            status = Match.Status.FINISHED if over or rotation < 2 else Match.Status.SCHEDULED
            matches.append(
                Match(ladder=ladder, seed=rng.getrandbits(60), duplicate_set=f"set-{number}",
                      rotation=rotation, status=status)
            )  # fmt: skip
    Match.objects.bulk_create(matches, batch_size=2000)
    page = list(Match.objects.order_by("-id")[:100])

    played = Match.objects.create(ladder=ladder, seed=99)
    Seat.objects.bulk_create(Seat(match=played, seat=i, bot_version=v) for i, v in enumerate(versions))
    attempt = match_claim(match_id=played.pk, worker="bench")
    assert attempt is not None
    players = [RandomPlayer(random.Random(i), name=f"bot{i}") for i in range(4)]
    players[0] = PolicyPlayer(lambda info, legal: "illegal", "bot0")
    outcome = play_match(get_game("oh-hell"), players, seed=99, match_id=str(played.pk))
    assert match_record(match_id=played.pk, attempt=attempt, outcome=outcome)
    played = selectors.match_get(match_id=played.pk)
    size = (Path(os.environ["SEPTET_DATA_DIR"]) / "replays" / played.replay).stat().st_size

    figures = {
        "published_match_ids, page of 100": lambda: selectors.published_match_ids(page),
        "match_is_published, one match": lambda: selectors.match_is_published(page[0]),
        "replay_for_viewer, owner (as stored)": lambda: selectors.replay_for_viewer(
            match=played, viewer=owners[0]
        ),
        "replay_for_viewer, stranger (blanked)": lambda: selectors.replay_for_viewer(
            match=played, viewer=None
        ),
    }
    print(f"{args.sets * 4} matches in duplicate sets; replay {size:,} bytes gzip; {args.repeat} calls each")
    for name, call in figures.items():
        median, p95 = _timed(call, args.repeat)
        print(f"{name:40s} median {median:7.2f} ms   p95 {p95:7.2f} ms")
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
