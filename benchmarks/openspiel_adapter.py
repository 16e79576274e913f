"""What Septet's games cost through the OpenSpiel adapter, and oh-hell beside OpenSpiel's own oh_hell.

    python benchmarks/openspiel_adapter.py [--seconds 1.0] [--rounds 5]

Prints, all from one run:

1. random playouts per second of every game id through the adapter (`referee.openspiel`): whole
   games, every chance node and every decision drawn uniformly at random, as OpenSpiel's own
   algorithms step a game (`legal_actions`, `chance_outcomes`, `apply_action`);
2. one hand of Oh Hell! (4 players, 10 tricks: the first hand of Septet's game) through the adapter
   and in OpenSpiel's built-in C++ `oh_hell` with `num_tricks_fixed=10`, interleaved blocks;
   goal (issue 28): at least OpenSpiel's own speed;
3. `information_state_tensor` calls per second on the states of such hands, both games;
4. `clone` per second, both games (OpenSpiel's search clones a state for every simulation).

Figures are per CPU second of this process (time.process_time), the median of `--rounds` blocks
of `--seconds` each, so other load on a shared machine counts less. Needs the optional extra
`openspiel`.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

# benchmarks/referee.py would shadow the referee package when this runs as a script.
HERE = Path(__file__).resolve().parent
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != HERE]

import pyspiel  # noqa: E402

from referee.openspiel import GAME_NAMES  # noqa: E402

HAND_PLAYERS = 4
HAND_TRICKS = 10
OURS = ("septet_oh_hell", {"players": HAND_PLAYERS})
THEIRS = ("oh_hell", {"players": HAND_PLAYERS, "num_tricks_fixed": HAND_TRICKS})


def pick(rng: random.Random, count: int) -> int:
    """A uniform index below `count` (`int(random() * n)`: the cheapest draw, the same for both)."""
    return int(rng.random() * count)


def step_randomly(state: pyspiel.State, rng: random.Random) -> None:
    """One random step: a chance outcome by its probability, else a uniform legal action."""
    if state.is_chance_node():
        outcomes = state.chance_outcomes()
        draw, total = rng.random(), 0.0
        for outcome, chance in outcomes:
            total += chance
            if draw < total:
                state.apply_action(outcome)
                return
        state.apply_action(outcomes[-1][0])
    else:
        legal = state.legal_actions()
        state.apply_action(legal[pick(rng, len(legal))])


def playout(game: pyspiel.Game, rng: random.Random) -> int:
    """A whole game at random; returns the steps taken (chance included)."""
    state = game.new_initial_state()
    steps = 0
    while not state.is_terminal():
        step_randomly(state, rng)
        steps += 1
    return steps


def first_hand(game: pyspiel.Game, rng: random.Random, visit: Callable[[pyspiel.State], None]) -> int:
    """One hand at random, from the first deal to the end of its last trick; `visit` sees every
    decision's state. Ends at OpenSpiel's terminal, or at Septet's next deal."""
    state = game.new_initial_state()
    steps = 0
    dealt = False
    while not state.is_terminal():
        if state.is_chance_node() and dealt:
            break  # Septet's game deals its second hand
        if not state.is_chance_node():
            dealt = True
            visit(state)
        step_randomly(state, rng)
        steps += 1
    return steps


def rate(work: Callable[[], int], seconds: float) -> float:
    """Units of `work` per CPU second, over at least `seconds` of CPU."""
    done, started = 0, time.process_time()
    while (elapsed := time.process_time() - started) < seconds:
        done += work()
    return done / elapsed


def median_rates(loops: dict[str, Callable[[], int]], seconds: float, rounds: int) -> dict[str, float]:
    """Each loop measured in turn, `rounds` times (interleaved), the median of each."""
    figures: dict[str, list[float]] = {label: [] for label in loops}
    for _ in range(rounds):
        for label, work in loops.items():
            figures[label].append(rate(work, seconds))
    return {label: statistics.median(values) for label, values in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=1.0, help="CPU seconds per block (default 1)")
    parser.add_argument("--rounds", type=int, default=5, help="blocks per figure (default 5)")
    args = parser.parse_args()
    rng = random.Random(1)

    print("1. random playouts through the adapter (whole games, default players), per CPU second")
    print(f"{'game':34} {'players':>7} {'playouts/s':>11} {'steps/s':>10} {'steps/playout':>14}")
    for name in GAME_NAMES:
        game = pyspiel.load_game(name)
        steps: list[int] = []

        def one(game: pyspiel.Game = game, steps: list[int] = steps) -> int:
            steps.append(playout(game, rng))
            return 1

        per_second = rate(one, args.seconds * 2)
        mean_steps = statistics.mean(steps)
        print(
            f"{name:34} {game.num_players():>7} {per_second:>11.2f} {per_second * mean_steps:>10.0f} "
            f"{mean_steps:>14.0f}"
        )

    ours, theirs = pyspiel.load_game(*OURS), pyspiel.load_game(*THEIRS)
    nothing: Callable[[pyspiel.State], None] = lambda state: None  # noqa: E731
    hand_loops: dict[str, Callable[[], int]] = {
        "adapter": lambda: first_hand(ours, rng, nothing),
        "openspiel": lambda: first_hand(theirs, rng, nothing),
    }
    hands = median_rates(hand_loops, args.seconds, args.rounds)
    steps_ours = statistics.mean(first_hand(ours, rng, nothing) for _ in range(20))
    steps_theirs = statistics.mean(first_hand(theirs, rng, nothing) for _ in range(20))
    print(f"\n2. one random hand of Oh Hell! ({HAND_PLAYERS} players, {HAND_TRICKS} tricks), per CPU second")
    for label, steps_per_hand in (("adapter", steps_ours), ("openspiel", steps_theirs)):
        print(f"   {label:10} {hands[label] / steps_per_hand:9.1f} hands/s  {hands[label]:9.0f} steps/s")
    ratio = (hands["adapter"] / steps_ours) / (hands["openspiel"] / steps_theirs)
    print(f"   adapter / OpenSpiel, hands: {ratio:.2f}x")

    def states_of(game: pyspiel.Game) -> list[pyspiel.State]:
        kept: list[pyspiel.State] = []
        for _ in range(4):
            first_hand(game, rng, lambda state: kept.append(state.clone()))
        return kept

    tensors: dict[str, Callable[[], int]] = {}
    clones: dict[str, Callable[[], int]] = {}
    for label, game in (("adapter", ours), ("openspiel", theirs)):
        states = states_of(game)

        def tensor_each(states: list[pyspiel.State] = states) -> int:
            for state in states:
                state.information_state_tensor(state.current_player())
            return len(states)

        def clone_each(states: list[pyspiel.State] = states) -> int:
            for state in states:
                state.clone()
            return len(states)

        tensors[label], clones[label] = tensor_each, clone_each
    tensor_rates = median_rates(tensors, args.seconds, args.rounds)
    clone_rates = median_rates(clones, args.seconds, args.rounds)
    print("\n3. information_state_tensor of the player to move, per CPU second (states of such hands)")
    for label in tensor_rates:
        print(f"   {label:10} {tensor_rates[label]:10.0f} /s")
    print(f"   adapter / OpenSpiel: {tensor_rates['adapter'] / tensor_rates['openspiel']:.2f}x")
    print("\n4. clone, per CPU second (the same states)")
    for label in clone_rates:
        print(f"   {label:10} {clone_rates[label]:10.0f} /s  ({1e6 / clone_rates[label]:.1f} us each)")


if __name__ == "__main__":
    main()
