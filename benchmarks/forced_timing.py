"""The forced-move timing channel: can a bot tell from the gaps between its own requests whether
another seat's decision was forced (R-0.2, one legal action)?

A listening bot (served over gRPC in this process) notes when each Decide reaches it; three copies
of bots/examples/random (each its own process, over gRPC) fill the other seats of 4-player games.
Every gap between two consecutive card plays of the listener within a round is labelled by the
replay: was another seat's play between them forced (it held one card of the led suit, or one
card left)? A threshold on the gap (either direction) is fitted on half of the games and scored
on the other half, one threshold per context the listener knows anyway (how many seats played
between, how far into the round it is), on gaps balanced between the two labels so that chance
is 50%: the accuracy is what the timing alone tells.

- "before": forced decisions applied without asking (`play_match(..., ask_forced=False)`, the
  referee's old behaviour): a forced seat costs no round trip, so a short gap gives it away
  (the audit measured 98.3%).
- "after": every bot is asked its forced decisions too (the default). Target: at most 60%.

With `--opponent montecarlo` the other seats are the montecarlo example (a search of `--budget`
seconds per chosen decision, none over a forced one), every decision asked, and the two runs
compare its forced-move padding (`referee.botkit.tempo`):

- "padding off" (`--no-pad-forced`): a forced decision answered at once, a chosen one after its
  search: the gap's length gives the forced play away.
- "padding on" (the SDK's default): a forced answer held for a duration drawn from the bot's own
  recent chosen decisions. Target: near 50-60%.

    python benchmarks/forced_timing.py [--games 40] [--game oh-hell] [--mode both|before|after]
    python benchmarks/forced_timing.py --opponent montecarlo [--games 16] [--budget 0.1]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

# benchmarks/referee.py shares its name with the package measured: keep this folder off the path.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from referee.botkit.sdk import Bot, create_server  # noqa: E402
from referee.engine.games import get_game  # noqa: E402
from referee.engine.games.base import Action  # noqa: E402
from referee.engine.match import TimeControl, new_match_id, play_match  # noqa: E402
from referee.tools.botfolder import (  # noqa: E402
    RunningBot,
    start_bot,
    stop_process_group,
    wait_until_serving,
)
from referee.tools.grpc_player import GrpcPlayer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RANDOM_BOT = ROOT / "bots" / "examples" / "random"
MONTECARLO = ROOT / "bots" / "examples" / "montecarlo" / "bot.py"
LISTENER_SEAT = 0


class Listener(Bot):
    """Plays a random legal action and notes when each request arrived, per match."""

    name = "listener"

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: dict[str, list[float]] = {}
        self._lock = threading.Lock()
        self._rng = random.Random(0)

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        with self._lock:
            self.arrivals.setdefault(self.match_id, []).append(time.perf_counter())
            return legal[self._rng.randrange(len(legal))]

    def start_match(self, start: Any) -> None:
        self.match_id = start.match_id


@dataclass(frozen=True)
class Gap:
    seconds: float
    forced_between: bool
    context: tuple[int, int]
    """What the listener knows anyway: (decisions of other seats between, its plays so far this
    round). The classifier is fitted per context, so it learns only what the timing adds."""


def labelled_gaps(replay: dict[str, Any], arrivals: list[float]) -> list[Gap]:
    """The gaps between the listener's consecutive card plays within one round, each labelled by
    the replay's events between them: True when another seat's play there was forced."""
    events = replay["events"]
    asked: list[tuple[int, int, int, str]] = []  # (event index, round, listener's plays so far, kind)
    deal, plays = 0, 0
    for index, event in enumerate(events):
        if event["type"] == "chance":
            deal, plays = deal + 1, 0
        elif event["type"] == "action" and event["seat"] == LISTENER_SEAT:
            if "us" in event:
                asked.append((index, deal, plays, event["kind"]))
            plays += event["kind"] == "play"
    assert len(asked) == len(arrivals), (len(asked), len(arrivals))
    gaps = []
    for (first, second), (then, now) in zip(pairwise(asked), pairwise(arrivals), strict=True):
        if first[1] != second[1] or first[3] != "play" or second[3] != "play":
            continue  # a deal or the bidding between: not the moment a forced play would show
        others = [e for e in events[first[0] + 1 : second[0]] if e["type"] == "action"]
        others = [e for e in others if e["seat"] != LISTENER_SEAT]
        forced = any(e.get("forced") for e in others)
        gaps.append(Gap(now - then, forced, (len(others), first[2])))
    return gaps


def play_games(game_id: str, games: int, *, ask_forced: bool, bots: list[str], address: str,
               listener: Listener) -> list[list[Gap]]:  # fmt: skip
    """Plays `games` games; the listener in seat 0, the bots at `bots` (addresses) in the others."""
    game = get_game(game_id)
    per_game = []
    players = [GrpcPlayer(address, "listener")]
    players += [GrpcPlayer(bot, f"opponent{number}") for number, bot in enumerate(bots)]
    try:
        for seed in range(games):
            match_id = new_match_id()
            outcome = play_match(game, players, seed=seed, time_control=TimeControl(1.0, 10.0),
                                 match_id=match_id, ask_forced=ask_forced)  # fmt: skip
            assert not outcome.forfeits, outcome.forfeits
            per_game.append(labelled_gaps(outcome.replay, listener.arrivals.pop(match_id)))
    finally:
        for player in players:
            player.close()
    return per_game


def by_context(gaps: list[Gap], rng: random.Random) -> dict[tuple[int, int], list[Gap]]:
    """The gaps of each context with both labels, balanced (the larger label subsampled), so
    that chance is 50% in every context."""
    grouped: dict[tuple[int, int], list[Gap]] = {}
    for gap in gaps:
        grouped.setdefault(gap.context, []).append(gap)
    balanced = {}
    for context, group in grouped.items():
        forced = [gap for gap in group if gap.forced_between]
        free = [gap for gap in group if not gap.forced_between]
        keep = min(len(forced), len(free))
        if keep:
            balanced[context] = rng.sample(forced, keep) + rng.sample(free, keep)
    return balanced


def accuracy(gaps: list[Gap], threshold: float, forced_below: bool) -> float:
    right = sum((gap.seconds < threshold) == (gap.forced_between == forced_below) for gap in gaps)
    return right / len(gaps)


def best_threshold(gaps: list[Gap]) -> tuple[float, bool]:
    """The threshold and direction that classify `gaps` best (every midpoint tried)."""
    values = sorted({gap.seconds for gap in gaps})
    candidates = [(a + b) / 2 for a, b in pairwise(values)] or values
    return max(
        ((threshold, below) for threshold in candidates for below in (True, False)),
        key=lambda choice: accuracy(gaps, *choice),
    )


def evaluate(per_game: list[list[Gap]], seed: int = 1) -> tuple[float, int]:
    """A threshold per context fitted on the first half of the games, scored on the second half:
    (accuracy over every scored gap, gaps scored)."""
    rng = random.Random(seed)
    half = len(per_game) // 2
    train = by_context([gap for gaps in per_game[:half] for gap in gaps], rng)
    test = by_context([gap for gaps in per_game[half:] for gap in gaps], rng)
    right = scored = 0
    for context, gaps in test.items():
        if context in train:
            right += round(accuracy(gaps, *best_threshold(train[context])) * len(gaps))
            scored += len(gaps)
    if not scored:
        raise SystemExit("too few gaps of one label: play more games")
    return right / scored, scored


def report(label: str, args: argparse.Namespace, per_game: list[list[Gap]], seconds: float) -> None:
    score, scored = evaluate(per_game)
    every = [gap for gaps in per_game for gap in gaps]
    share = sum(gap.forced_between for gap in every) / len(every)
    print(f"{label}: {args.games} games of {args.game} in {seconds:.1f} s, {len(every)} gaps between")
    print(f"  the listener's plays ({share:.0%} with a forced play between); thresholds fitted per")
    print(f"  context on half the games: accuracy on the other half {score:.1%} over {scored} gaps")
    print("  balanced per context (chance 50%)", flush=True)


@contextlib.contextmanager
def montecarlo_bots(count: int, budget: float, *, pad_forced: bool) -> Iterator[list[str]]:
    """`count` montecarlo processes (the example's own bot.py, `--budget` seconds a search), each
    on a unix socket of its own; `--no-pad-forced` unless `pad_forced`. Stopped on leaving."""
    flags = ["--budget", str(budget)] + ([] if pad_forced else ["--no-pad-forced"])
    with tempfile.TemporaryDirectory(prefix="septet-forced-timing-") as scratch:
        processes: list[subprocess.Popen[bytes]] = []
        addresses = [f"unix:{scratch}/mc{number}.sock" for number in range(count)]
        try:
            for address in addresses:
                processes.append(subprocess.Popen(
                    [sys.executable, str(MONTECARLO), "--address", address, *flags],
                    stderr=subprocess.DEVNULL, start_new_session=True,
                ))  # fmt: skip
            for address, process in zip(addresses, processes, strict=True):
                wait_until_serving(address, 30.0, process=process)
            yield addresses
        finally:
            for process in processes:
                stop_process_group(process)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--games", type=int, default=None, help="default: 40 (random), 16 (montecarlo)")
    parser.add_argument("--game", default="oh-hell")
    before = "before: forced decisions skipped (random), padding off (montecarlo)"
    parser.add_argument("--mode", choices=("both", "before", "after"), default="both", help=before)
    parser.add_argument("--opponent", choices=("random", "montecarlo"), default="random")
    parser.add_argument("--budget", type=float, default=0.1, help="montecarlo's seconds a search")
    args = parser.parse_args()
    args.games = args.games or (16 if args.opponent == "montecarlo" else 40)

    listener = Listener()
    server, address = create_server(listener, "127.0.0.1:0")
    server.start()
    modes = {"before": [False], "after": [True], "both": [False, True]}[args.mode]
    try:
        if args.opponent == "montecarlo":
            for pad_forced in modes:
                with montecarlo_bots(3, args.budget, pad_forced=pad_forced) as bots:
                    started = time.perf_counter()
                    per_game = play_games(args.game, args.games, ask_forced=True, bots=bots, address=address,
                                          listener=listener)  # fmt: skip
                label = "montecarlo, padding " + (
                    "on (the default)" if pad_forced else "off (--no-pad-forced)"
                )
                report(label, args, per_game, time.perf_counter() - started)
            return
        running: list[RunningBot] = [start_bot(RANDOM_BOT) for _ in range(3)]
        try:
            for ask_forced in modes:
                started = time.perf_counter()
                per_game = play_games(args.game, args.games, ask_forced=ask_forced,
                                      bots=[bot.address for bot in running], address=address,
                                      listener=listener)  # fmt: skip
                label = (
                    "after (forced decisions asked)" if ask_forced else "before (forced decisions skipped)"
                )
                report(label, args, per_game, time.perf_counter() - started)
        finally:
            for bot in running:
                bot.stop()
    finally:
        server.stop(grace=None)


if __name__ == "__main__":
    main()
