"""Referee speed: games/s and decisions/s per game id, in-process random players, one core.

Every game goes through `play_match` as a real match does: information states built for every
decision, forced decisions applied by the runner, the replay recorded. Prints one row per game id
and the peak memory of one game's replay and states (tracemalloc) and of the process (ru_maxrss).

    python benchmarks/referee.py [--seconds 2] [--game oh-hell] [--players 4]

Target (issue: referee engine): >= 100,000 decisions/s for oh-hell with 4 players.
"""

from __future__ import annotations

import argparse
import random
import resource
import sys
import time
import tracemalloc
from pathlib import Path

# This script shares its name with the package it measures: keep its own folder off the path.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != _HERE]

from referee.engine.games import GAMES  # noqa: E402
from referee.engine.match import play_match  # noqa: E402
from referee.engine.players import RandomPlayer  # noqa: E402

TARGET_GAME, TARGET_PLAYERS, TARGET_DECISIONS_PER_SECOND = "oh-hell", 4, 100_000


def measure(game_id: str, players: int, seconds: float) -> dict[str, float]:
    """Plays seeded games for about `seconds` of CPU time and returns the rates."""
    game = GAMES[game_id]
    games = decisions = asked = 0
    started = time.process_time()
    seed = 0
    while (elapsed := time.process_time() - started) < seconds:
        seats = [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(players)]
        outcome = play_match(game, seats, seed=seed)
        games += 1
        asked += outcome.decisions
        decisions += outcome.decisions + outcome.forced
        seed += 1
    seats = [RandomPlayer(random.Random(seat)) for seat in range(players)]
    tracemalloc.start()
    play_match(game, seats, seed=10**6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "games_per_s": games / elapsed,
        "decisions_per_s": decisions / elapsed,
        "asked_per_s": asked / elapsed,
        "decisions_per_game": decisions / games,
        "peak_kib_per_game": peak / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU seconds per game id (default 2)")
    parser.add_argument("--game", choices=list(GAMES), help="only this game id")
    parser.add_argument(
        "--players", type=int, help="players (default: the target's for oh-hell, else the minimum)"
    )
    args = parser.parse_args()
    print(
        f"{'game id':<22}{'players':>8}{'games/s':>10}{'decisions/s':>13}{'asked/s':>11}"
        f"{'dec/game':>10}{'peak KiB/game':>15}"
    )
    target_rate = None
    for game_id, game in GAMES.items():
        if args.game and game_id != args.game:
            continue
        players = args.players or (TARGET_PLAYERS if game_id == TARGET_GAME else game.players.start)
        row = measure(game_id, players, args.seconds)
        if game_id == TARGET_GAME and players == TARGET_PLAYERS:
            target_rate = row["decisions_per_s"]
        print(
            f"{game_id:<22}{players:>8}{row['games_per_s']:>10.1f}{row['decisions_per_s']:>13,.0f}"
            f"{row['asked_per_s']:>11,.0f}{row['decisions_per_game']:>10.0f}{row['peak_kib_per_game']:>15,.0f}"
        )
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"process peak RSS: {rss_mib:.0f} MiB")
    print("decisions = every seat decision (asked + forced, R-0.2); asked = put to a player.")
    if target_rate is not None:
        verdict = "meets" if target_rate >= TARGET_DECISIONS_PER_SECOND else "MISSES"
        print(
            f"target: {TARGET_GAME} {TARGET_PLAYERS}p {target_rate:,.0f} decisions/s {verdict} "
            f">= {TARGET_DECISIONS_PER_SECOND:,} ({target_rate / TARGET_DECISIONS_PER_SECOND:.2f}x)"
        )


if __name__ == "__main__":
    main()
