"""The montecarlo house bot against OpenSpiel's ISMCTS at equal wall time per decision, every game id.

    python benchmarks/openspiel_strength.py --seconds 0.03 --sets 12 --minutes 3 [--game oh7 ...]

`septet compare`'s statistics (duplicate sets, the mean rank difference with its 95% interval,
the SPRT verdict), with both bots in this process: A is OpenSpiel's ISMCTS through the adapter
(`openspiel-ismcts:<seconds>s`, `referee.openspiel.bots`), B the montecarlo example bot
(`bots/examples/montecarlo`, its `MonteCarloBot` with a budget of the same seconds), the field
(at tables of three or more) the greedy bot. Each decision of either bot stops at its time; a
forced decision (one legal action) is answered at once by both. Each game id stops at the SPRT's
verdict, the set cap, or the first set that ends after `--minutes`; the table is printed in
Markdown (docs/openspiel.md shows one). Needs the optional extra `openspiel`.
"""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import sys
import time
from typing import Any

# benchmarks/referee.py would shadow the referee package when this runs as a script.
HERE = pathlib.Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if pathlib.Path(entry or ".").resolve() != HERE]

from referee.engine.games import all_games, get_game  # noqa: E402
from referee.engine.match import MatchResult, play_match  # noqa: E402
from referee.engine.players import GreedyPlayer, Player  # noqa: E402
from referee.openspiel.bots import openspiel_player  # noqa: E402
from referee.tools.compare import A, B, Comparison, TestSettings, comparison_tables, field_for  # noqa: E402
from referee.tools.series import Table  # noqa: E402

MONTECARLO = pathlib.Path(__file__).resolve().parents[1] / "bots" / "examples" / "montecarlo" / "bot.py"


def montecarlo_module() -> Any:
    """The montecarlo example bot's module, loaded from its folder (a bot folder is no package)."""
    spec = importlib.util.spec_from_file_location("montecarlo_bot", MONTECARLO)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(game_id: str, seconds: float, sets: int, minutes: float, seed: int) -> tuple[Comparison, float]:
    """One game id: A = ISMCTS, B = montecarlo, the field greedy; returns the comparison and its
    wall time."""
    game = get_game(game_id)
    montecarlo = montecarlo_module()
    ismcts_word = f"openspiel-ismcts:{seconds:g}s"
    num_seats, tables = comparison_tables(game, field_size=1, players=None, sets=sets, seed=seed)
    comparison = Comparison(
        game, (ismcts_word, "montecarlo"), tuple(field_for(num_seats, ["greedy"])), num_seats, seed,
        TestSettings(), sets,
    )  # fmt: skip
    started = time.perf_counter()
    deadline = started + minutes * 60

    def players(table: Table) -> list[Player]:
        seated: list[Player] = []
        for seat, bot in enumerate(table.seating):
            if bot == A:
                seated.append(openspiel_player(ismcts_word, game, table.seed, seat))
            elif bot == B:
                bot_b = montecarlo.MonteCarloBot(montecarlo.Budget(seconds), seed=f"{table.seed}/{seat}")
                seated.append(bot_b)
            else:
                seated.append(GreedyPlayer(game))
        return seated

    left_in_set: dict[int, int] = {}
    for table in tables:
        left_in_set[table.unit] = left_in_set.get(table.unit, 0) + 1
    for table in tables:
        outcome: MatchResult = play_match(
            game, players(table), seed=table.seed, match_id=f"strength-{table.seed}-{table.rotation}"
        )
        comparison.record(table, outcome)
        left_in_set[table.unit] -= 1
        if left_in_set[table.unit] == 0:
            comparison.close_set()
            if comparison.test.verdict is not None or time.perf_counter() > deadline:
                break
    return comparison, time.perf_counter() - started


def row(comparison: Comparison, seconds: float, wall: float) -> str:
    """One Markdown row: game id, players, seconds per decision, games, sets, mean rank difference
    (ISMCTS minus montecarlo: positive when montecarlo ranks better) with its interval, verdict."""
    ranks = comparison.rank_interval()
    interval = f"[{ranks.low:+.2f}, {ranks.high:+.2f}]" if ranks.n > 1 else "-"
    verdict = {
        "B is better": "montecarlo better",
        "A is better": "ISMCTS better",
    }.get(str(comparison.verdict), str(comparison.verdict))
    return (
        f"| {comparison.game.id} | {comparison.num_seats} | {seconds:g} s | {comparison.games} | "
        f"{len(comparison.rank_outcomes())} | {ranks.mean:+.2f} {interval} | {verdict} | "
        f"{wall / 60:.1f} min |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=0.03, help="seconds per decision, both bots")
    parser.add_argument("--sets", type=int, default=12, help="at most this many duplicate sets per game id")
    parser.add_argument("--minutes", type=float, default=3.0, help="no new set after this, per game id")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", action="append", help="game id (repeatable; default: every game)")
    args = parser.parse_args()
    print(
        "| game id | players | time per decision | games | duplicate sets | mean rank difference "
        "(95% CI; + = montecarlo better) | SPRT verdict | wall |"
    )
    print("|---|---:|---:|---:|---:|---|---|---:|")
    for game_id in args.game or list(all_games()):
        comparison, wall = measure(game_id, args.seconds, args.sets, args.minutes, args.seed)
        print(row(comparison, args.seconds, wall), flush=True)


if __name__ == "__main__":
    main()
