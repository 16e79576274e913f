"""Real replays for the viewer tests, and the engine's view of them step by step.

The viewer numbers its steps by the shown events (every event but the inputs `chance` and
`action`; docs/replays.md). `engine_moments` re-applies a replay's inputs through the engine and
says, after each input, at which viewer step the table stands and what the engine's state is,
so a test can compare the cards the browser shows with what the engine says each seat holds.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from referee.engine.games import GAMES
from referee.engine.games.base import CHANCE
from referee.engine.match import play_match
from referee.engine.players import GreedyPlayer, PolicyPlayer, RandomPlayer

INPUTS = ("chance", "action")

TABLE_SIZE = {
    "oh7": 5,  # all five suits, the Flowers too
    "oh7-advanced": 4,  # the specials; seed 7 has an Interrobang reveal
    "oh7-duel": 2,
    "oh-hell": 4,
    "black-sevens": 4,
    "seven-up-seven-down": 4,  # two blind one-card rounds
}
SEED = {"oh7-advanced": 7}


def make_replay(game_id: str, seed: int | None = None, *, cheat_seat: int | None = None) -> dict[str, Any]:
    """A real game's replay: greedy in seat 0, seeded random players elsewhere, a fake clock.

    `cheat_seat` plays a bot that answers nonsense there, so the replay holds a forfeit.
    """
    game = GAMES[game_id]
    seed = SEED.get(game_id, 1) if seed is None else seed
    players: list[Any] = [
        RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(TABLE_SIZE[game_id])
    ]
    players[0] = GreedyPlayer(game)
    if cheat_seat is not None:
        players[cheat_seat] = PolicyPlayer(lambda info, legal: "nonsense", "cheat")
    ticks = itertools.count()
    return play_match(game, players, seed=seed, clock=lambda: next(ticks) / 1000).replay


def shown_events(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The events the viewer makes steps of: step k is the table after the k-th of these."""
    return [event for event in document["events"] if event["type"] not in INPUTS]


@dataclass(frozen=True)
class Moment:
    """The engine's state at a viewer step (after an input and every event it produced)."""

    step: int
    state: Any
    round: int | None

    def hand(self, game_id: str, seat: int) -> list[str]:
        """The cards the engine's information state gives `seat` as its own hand."""
        return list(GAMES[game_id].information_state(self.state, seat).hand)

    def info(self, game_id: str, seat: int) -> Any:
        return GAMES[game_id].information_state(self.state, seat)


def engine_moments(document: dict[str, Any]) -> list[Moment]:
    """Every input of the replay applied through the engine, with the viewer step it leads to."""
    game = GAMES[document["game"]]
    state = game.start(len(document["seats"]), document["options"])
    moments: list[Moment] = []
    step = 0
    current_round: int | None = None
    for event in document["events"]:
        if event["type"] == "chance":
            state = game.apply(state, CHANCE, event["outcome"])
        elif event["type"] == "action":
            action = event["action"]
            state = game.apply(state, event["seat"], tuple(action) if isinstance(action, list) else action)
        else:
            step += 1
            if event["type"] == "deal":
                current_round = event["round"]
            if moments and moments[-1].state is state:
                moments[-1] = Moment(step, state, current_round)
            else:
                moments.append(Moment(step, state, current_round))
    return moments
