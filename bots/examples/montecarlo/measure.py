"""Measures montecarlo against greedy in every game: `septet compare`'s statistics, in process.

`septet compare bots/examples/montecarlo greedy --game GAME` does the same with the bot as a
process over gRPC; this script constructs `MonteCarloBot` in the same Python instead (no
process, no deadline: each decision still stops at its own budget), which is what the README's
figures were measured with:

    python measure.py --budget 0.05 --games 60 [--game oh-hell ...] [--players N]
"""

from __future__ import annotations

import argparse
import time

from bot import Budget, MonteCarloBot

from referee.engine.match import MatchResult, play_match
from referee.engine.players import GreedyPlayer, Player
from referee.games import all_games, get_game
from referee.tools.compare import A, Comparison, TestSettings, comparison_tables, field_for, run_comparison
from referee.tools.series import Table


def measure(game_id: str, budget: Budget, sets: int, players: int | None, seed: int) -> Comparison:
    """A = greedy, B = montecarlo, the field greedy; stops when the sequential test decides."""
    game = get_game(game_id)
    num_seats, tables = comparison_tables(game, field_size=1, players=players, sets=sets, seed=seed)
    field = field_for(num_seats, ["greedy"])
    comparison = Comparison(
        game, ("greedy", "montecarlo"), tuple(field), num_seats, seed, TestSettings(), sets
    )
    bot = MonteCarloBot(budget)

    def play(table: Table) -> MatchResult:
        seating: list[Player] = [bot if index == 1 else GreedyPlayer(game) for index in table.seating]
        assert table.seating.count(A) == 1
        return play_match(game, seating, seed=table.seed, match_id=f"measure-{table.seed}-{table.rotation}")

    for _ in run_comparison(comparison, tables, play):
        pass
    return comparison


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per decision (default 0.05)")
    parser.add_argument("--max-worlds", type=int, default=200)
    parser.add_argument("--games", type=int, default=60, help="at most this many duplicate sets")
    parser.add_argument("--players", type=int)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--game", action="append", help="game id (repeatable; default: every game)")
    args = parser.parse_args()
    for game_id in args.game or list(all_games()):
        started = time.perf_counter()
        comparison = measure(
            game_id, Budget(args.budget, args.max_worlds), args.games, args.players, args.seed
        )
        ranks, scores = comparison.rank_interval(), comparison.score_interval()
        print(
            f"{game_id}: {comparison.num_seats} players, {len(comparison.rank_outcomes())} sets "
            f"({comparison.games} games); "
            f"rank difference {ranks.mean:+.3f} [{ranks.low:+.3f}, {ranks.high:+.3f}], "
            f"score difference {scores.mean:+.1f} [{scores.low:+.1f}, {scores.high:+.1f}]; "
            f"{comparison.verdict_line()}; {time.perf_counter() - started:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
