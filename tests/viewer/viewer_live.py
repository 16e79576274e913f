"""Live streams for the viewer tests: real games filtered per audience by referee.engine.live.

`filtered_document` is what a page that joins a finished match late is sent (`replay_view`: the
header, then every event filtered), as one document. `live_batches` plays a game with an
observer feeding a `LiveView`, so the batches are exactly what the worker publishes, with its
`turn` messages. `public_hands` is the test's own account, from the omniscient replay, of which
cards of each hand the public may see at every step.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from viewer_replays import SEED, TABLE_SIZE, shown_events

from referee.engine.games import GAMES
from referee.engine.games.base import CHANCE, Action, Event
from referee.engine.live import LiveView, replay_view
from referee.engine.match import Asking, TimeControl, play_match
from referee.engine.players import GreedyPlayer, RandomPlayer

Audience = int | None
TIME_CONTROL = TimeControl(per_decision=1.0, bank=10.0)


def filtered_document(replay: dict[str, Any], audience: Audience) -> dict[str, Any]:
    """The replay as `audience` may see it, as one document: the `match` header with its events."""
    header, *events = replay_view(replay, audience)
    return {**header, "events": events}


def _players(game_id: str, seed: int) -> list[Any]:
    players: list[Any] = [
        RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(TABLE_SIZE[game_id])
    ]
    players[0] = GreedyPlayer(GAMES[game_id])
    return players


class _Recorder:
    """The worker's side of a live stream: one LiveView fed by the match loop's observer."""

    def __init__(self, view: LiveView) -> None:
        self.view = view
        self.batches: list[list[dict[str, Any]]] = []

    def step(self, events: Sequence[Event], asking: Asking | None) -> None:
        messages = self.view.step(events, asking)
        if messages:
            self.batches.append(messages)


def live_batches(game_id: str, audience: Audience) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """(the replay, the batches `audience` is sent while it is played: header first, then events
    and `turn` messages as the loop shows them), for the same game as `make_replay(game_id)`."""
    game = GAMES[game_id]
    seed = SEED.get(game_id, 1)
    players = _players(game_id, seed)
    recorder = _Recorder(LiveView(game, len(players), audience))
    ticks = itertools.count()
    replay = play_match(
        game,
        players,
        seed=seed,
        time_control=TIME_CONTROL,
        clock=lambda: next(ticks) / 1000,
        observer=recorder,
    ).replay
    return replay, [[recorder.view.header(replay)], *recorder.batches]


def public_hands(replay: dict[str, Any]) -> list[list[tuple[Counter[str], int]]]:
    """Per step (docs/replays.md: step k is after the k-th shown event), per player seat: the
    cards of its hand every seat may see (Oh 7?'s bet cards and a revealed `?` while held; none in
    a 7Up7Down one-card round) and how many cards it holds."""
    game_id = replay["game"]
    players = len(replay["seats"])
    hands: list[list[str]] = [[] for _ in range(players)]
    public: list[Counter[str]] = [Counter() for _ in range(players)]
    blind = False

    def shot() -> list[tuple[Counter[str], int]]:
        return [(Counter() if blind else +public[seat], len(hands[seat])) for seat in range(players)]

    steps = [shot()]
    for event in shown_events(replay):
        kind = event["type"]
        if kind == "deal":
            hands = [list(hand) for hand in event["hands"]]
            public = [Counter() for _ in range(players)]
            blind = game_id == "seven-up-seven-down" and event.get("hand_size") == 1
        elif kind == "bets":
            for seat, card in enumerate(event["cards"]):
                if public[seat][card] < hands[seat].count(card):
                    public[seat][card] += 1
        elif kind == "reveal":
            public[event["seat"]]["?"] += 1
        elif kind == "play" and event["seat"] < players:  # not the Dummy's
            seat = event["seat"]
            for card in event.get("cards") or [event["card"]]:
                hands[seat].remove(card)
                if public[seat][card]:
                    public[seat][card] -= 1
        elif kind == "round_end" and game_id == "black-sevens":
            hands = [[] for _ in range(players)]  # the last cards go to the table
            public = [Counter() for _ in range(players)]
        steps.append(shot())
    return steps


@dataclass(frozen=True)
class Asked:
    """A decision of a real replay: the events before it, who was asked, and the engine's legal actions."""

    before: list[dict[str, Any]]
    seat: int
    kind: str
    legal: list[Any]
    hand: list[str]

    def prompt(
        self, decision: str = "d-1", decision_seconds: float = 30.0, bank_seconds: float = 120.0
    ) -> dict[str, Any]:
        """The `prompt` message a person in that seat would be sent (docs/live.md)."""
        return {
            "type": "prompt", "decision": decision, "kind": self.kind, "legal": self.legal, "hand": self.hand,
            "decision_seconds": decision_seconds, "bank_seconds": bank_seconds,
        }  # fmt: skip


def _json_action(action: Action) -> Any:
    return list(action) if isinstance(action, tuple) else action


def asked(
    replay: dict[str, Any], kind: str, want: Callable[[list[Any]], bool] = lambda legal: len(legal) > 1
) -> Asked:
    """The first decision of `kind` in the replay whose legal actions satisfy `want`."""
    game = GAMES[replay["game"]]
    state = game.start(len(replay["seats"]), replay["options"])
    for index, event in enumerate(replay["events"]):
        if event["type"] == "chance":
            state = game.apply(state, CHANCE, event["outcome"])
            continue
        if event["type"] != "action":
            continue
        seat = event["seat"]
        if event["kind"] == kind:
            legal = [_json_action(action) for action in game.legal_actions(state, seat)]
            if want(legal):
                hand = list(game.information_state(state, seat).hand)
                return Asked(replay["events"][:index], seat, kind, legal, hand)
        action = event["action"]
        state = game.apply(state, seat, tuple(action) if isinstance(action, list) else action)
    raise LookupError(f"no {kind} decision of {replay['game']} fits")
