"""OpenSpiel's bots playing a Septet game through referee.openspiel (docs/openspiel.md).

    python docs/examples/openspiel_bots.py [GAME_ID] [--games 4] [--simulations 20]

Seat 0 is OpenSpiel's information-set MCTS (it resamples the hidden cards from each information
state, `resample_from_infostate`); the other seats are OpenSpiel's uniform random bot. Prints
ISMCTS's mean return (ranks: +1 for first place down to -1 for last) and each game's returns.
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from referee.openspiel import short_name  # importing referee.openspiel registers the games


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("game_id", nargs="?", default="oh7-duel")
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--simulations", type=int, default=20, help="ISMCTS simulations per decision")
    args = parser.parse_args()

    game = pyspiel.load_game(short_name(args.game_id))
    rng = np.random.RandomState(1)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    searcher = ismcts.ISMCTSBot(
        game, evaluator, uct_c=2.0, max_simulations=args.simulations, random_state=rng
    )
    # Worlds drawn from the same seeded generator (OpenSpiel's default sampler is not seeded).
    searcher.set_resampler(lambda state, player: state.resample_from_infostate(player, rng.uniform))
    others = [pyspiel.make_uniform_random_bot(seat, seat) for seat in range(1, game.num_players())]
    bots = [searcher, *others]

    totals = []
    for number in range(args.games):
        returns = pyspiel.evaluate_bots(game.new_initial_state(), bots, number)
        totals.append(returns[0])
        print(f"game {number + 1}: returns {' '.join(f'{value:+.2f}' for value in returns)}")
    print(f"{game}: ISMCTS ({args.simulations} simulations) mean return {sum(totals) / len(totals):+.2f}")


if __name__ == "__main__":
    main()
