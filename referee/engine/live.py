"""The live view of a match: its replay events as they happen, filtered for one audience.

docs/live.md is the contract. A `LiveView` is made per audience (`None`: the public, every
spectator; a seat number: the person in that seat) and fed what `play_match` shows its observer
(`referee.engine.match.MatchObserver`): the events since the last step and what is asked next.
It answers the messages that audience may be sent now. `replay_view` gives the same messages for
a finished replay, all at once.

The filter fails closed: every event type lists the keys that may be sent, so a key a game adds
later (or an event type nobody audited) is dropped until someone decides it is public. The only
hidden facts in the events are the deal's (`deal.hands`, Oh 7?'s `discard`, the Dummy's `pile`),
the `chance` outcomes they came from, which decisions were forced, a declined Interrobang, and a
forfeit's reason and replay index; the test that swaps hidden cards
(tests/referee/test_live_view.py) checks that nothing else depends on them.

The public view is what every seat knows (the intersection of their views, RULES.md §5), so a
7Up7Down one-card round (R-4.4), where each seat sees every card but its own, shows the public
no card at all.

This runs on the loop's thread for every decision of every match: it copies the few keys of the
step's events, never a whole replay. Messages share the replay's nested lists (a trick's plays):
serialise them, never change them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from referee.engine.games import get_game, oh_hell, seven_up_seven_down
from referee.engine.games.base import DecisionKind, Event, Game, GameError
from referee.engine.match import REPLAY_FORMAT, Asking, TimeControl

Message = dict[str, Any]
"""One JSON object of a live stream (docs/live.md, Messages)."""

PUBLIC_VIEW: Final = "public"
"""The header's `view` for the public audience (a seat's stream says its seat number)."""


def _keys(names: str) -> frozenset[str]:
    return frozenset(("type", *names.split()))


_PUBLIC_KEYS: Final[dict[str, frozenset[str]]] = {
    # A decision: `forced` is never sent, nor is `forfeit.event` (an index into the whole replay,
    # which counts the events a view drops: a declined Interrobang would show in it).
    "action": _keys("seat kind action us fallback"),
    "forfeit": _keys("seat status reason"),
    # Oh Hell! and 7Up7Down: bids are spoken aloud.
    "bid": _keys("seat bid"),
    # Oh 7?: every attempt's bet cards are shown at once and stay public for the round;
    # a redeal, a revealed `?`, the first leader, trump and the Dummy's face-up cards.
    "bets": _keys("attempt cards bets total"),
    "redeal": _keys("round redeals"),
    "reveal": _keys("seat"),
    "leader": _keys("seat trump bets dummy_up"),
    # Cards played face up; the Dummy's `turned` card is turned face up as it plays.
    "play": _keys("seat card cards turned from_pile"),
    "trick": _keys("winner plays"),
    "hand": _keys("winner cards plays"),  # Black Sevens
    # Totals and the round's facts; Black Sevens' last cards stay face up on the table (R-3.9).
    "round_end": _keys(
        "round hand_size bids bets tricks points scores bet_cards made last_cards hands_won next_leader"
    ),
    "game_end": _keys("scores ranks aborted"),
}
"""Event type -> the keys every seat may know. A type not here (`chance`, or one nobody
audited) is not sent; `deal` is filtered by `LiveView._deal`."""

_DEAL_KEYS: Final = _keys("round hand_size dealer trump_card redeals leader")
"""The public keys of a `deal`: who deals or leads and the turned-up trump card. Its `hands` are
shown per audience, its `discard` (Oh 7?) and `pile` (the Dummy's) only as sizes."""

_BLIND_ONE_CARD_GAMES: Final = frozenset(
    rules.game_id for rules in (oh_hell.RULES, seven_up_seven_down.RULES) if rules.blind_one_card_rounds
)
"""Games whose one-card rounds are played with the card on the forehead (7Up7Down, R-4.4)."""

_REVEAL: Final = DecisionKind.REVEAL


class LiveView:
    """One audience's live stream of one match: the public (`audience` None) or a seat's.

    `step` is called with each step's events in order, as `play_match` shows them to its
    observer; it keeps only the events held back for the Interrobang question (R-1.4).
    """

    def __init__(self, game: Game, num_players: int, audience: int | None) -> None:
        game.check_players(num_players)
        if audience is not None and (type(audience) is not int or not 0 <= audience < num_players):
            seats = f"0-{num_players - 1}"
            raise GameError(f"a live view is public (None) or a player's seat {seats}, not {audience!r}")
        self.game = game
        self.num_players = num_players
        self.audience = audience
        self._blind = game.id in _BLIND_ONE_CARD_GAMES
        self._held: list[Message] = []
        """Messages held back while another seat is asked the Interrobang question."""

    @property
    def view(self) -> int | str:
        """The header's `view`: "public" or the seat number."""
        return PUBLIC_VIEW if self.audience is None else self.audience

    def header(self, replay_header: Mapping[str, Any]) -> Message:
        """The `match` message: the replay document's header as far as it is public. Never the
        seed (it would deal every hand again) nor the match id (a ladder match's id is published
        with its replay, once its duplicate set is over). `replay_header` is the replay document
        or anything with its keys; its options get their defaults, as in the replay."""
        control = replay_header.get("time_control")
        seats = replay_header.get("seats") or ()
        return {
            "type": "match",
            "format": REPLAY_FORMAT,
            "game": self.game.id,
            "options": self.game.check_options(replay_header.get("options")),
            "seats": [
                {key: value for key, value in seat.items() if key in ("seat", "name", "time_control")}
                for seat in seats
            ],
            "time_control": control.to_json() if isinstance(control, TimeControl) else control,
            "view": self.view,
        }

    def step(self, events: Sequence[Event], asking: Asking | None) -> list[Message]:
        """The messages this audience gets for one step of the match (possibly none): `events`
        are the replay events since the last step, `asking` the decision asked next (None once
        the game is over), which becomes a `turn` message.

        While another seat is asked the Interrobang question, the step's events (the bets that
        tied) are held back, with no `turn`: the others' information states still show the
        betting as it stood (referee.engine.games.oh7.information_state), so their stream must
        not move either. They are sent with the next step, after the answer.
        """
        messages = self._held
        audience = self.audience
        for event in events:
            kind = event.get("type")
            if kind == "deal":
                messages.append(self._deal(event))
            elif kind == "action":
                # A declined Interrobang is known to the seat asked only: anyone else would
                # learn that a tied bettor holds the `?`.
                if _declined_reveal(event) and event.get("seat") != audience:
                    continue
                messages.append(_public(event, _ACTION_KEYS))
            elif kind == "forfeit":
                message = _public(event, _FORFEIT_KEYS)
                if "reason" in message and event.get("seat") != audience:
                    message["reason"] = ""  # a bot's own trouble (its crash report) is its own
                messages.append(message)
            else:
                keys = _PUBLIC_KEYS.get(kind) if isinstance(kind, str) else None
                if keys is not None:
                    messages.append(_public(event, keys))
        if asking is not None and asking.kind is _REVEAL and audience not in asking.seats:
            self._held = messages
            return []
        self._held = []
        if asking is not None:
            messages.append(turn_message(asking))
        return messages

    def _deal(self, event: Event) -> Message:
        """A deal as this audience sees it: its own hand (in a blind one-card round, the others'
        cards and not its own), `null` for every other, every hand's size, and of the rest of
        the deck (Oh 7?'s discard, the Dummy's pile) only its size."""
        blind = self._blind and event.get("hand_size") == 1
        audience = self.audience
        message: Message = {}
        for key, value in event.items():
            if key == "hands":
                if audience is None:
                    message[key] = [None] * len(value)
                else:
                    message[key] = [
                        list(hand) if (seat == audience) is not blind else None
                        for seat, hand in enumerate(value)
                    ]
                message["hand_sizes"] = [len(hand) for hand in value]
            elif key == "discard" or key == "pile":
                message[f"{key}_size"] = len(value)
            elif key in _DEAL_KEYS:
                message[key] = value
        return message


_ACTION_KEYS: Final = _PUBLIC_KEYS["action"]
_FORFEIT_KEYS: Final = _PUBLIC_KEYS["forfeit"]


def _declined_reveal(event: Event) -> bool:
    return event.get("action") is False and event.get("kind") == "reveal"


def _public(event: Event, keys: frozenset[str]) -> Message:
    """The event's keys that may be sent, in the event's order."""
    return {key: value for key, value in event.items() if key in keys}


def turn_message(asking: Asking) -> Message:
    """Who is asked now, with each asked seat's clock (null when untimed)."""
    return {
        "type": "turn",
        "kind": asking.kind.value,
        "seats": [
            {
                "seat": clock.seat,
                "decision_seconds": _seconds(clock.decision_time),
                "bank_seconds": _seconds(clock.bank_time),
            }
            for clock in asking.clocks
        ],
    }


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def replay_view(replay: Mapping[str, Any], audience: int | None) -> list[Message]:
    """The messages a finished replay gives `audience`: its header, then its events filtered,
    with no `turn` (a replay does not say when each seat was asked). Live, the same messages
    arrive in batches with `turn` messages between them."""
    game = get_game(str(replay["game"]))
    view = LiveView(game, len(replay["seats"]), audience)
    return [view.header(replay), *view.step(replay["events"], None)]
