"""Engine values <-> septet.v1 messages (protos/septet/v1/bot.proto), both ways, exactly.

The referee side builds requests from the engine's values (`decide_request`,
`start_match_request`, `end_match_request`) and reads a bot's answer (`action_from_response`).
The bot side (the SDK) does the reverse (`info_from_request`, `legal_from_request`,
`action_to_proto`, `match_start_from_request`, `match_end_from_request`), so a Python bot sees
the very dataclasses an in-process player sees: `info_from_request(decide_request(info=X)) == X`.

What the proto cannot say by itself, decided here:
- A per-seat int that is None (a bid not made yet) travels as -1; optional scalars are `optional`.
- Options are integers on the wire. A game id's fixed options (Oh 7?'s `variant`) are implied by
  the game id, so they are not sent; an information state's options come back sorted by name.
- Oh Hell! and 7Up7Down tricks carry their winner, computed from the plays and the trump (public
  facts), though the engine's information state does not store it.
- `Forfeit.event_index` is a replay position that is not sent: a bot reads -1.

On a `Play` stream (one per seat per match) a decision carries a delta of the seat's information
state: the fields that changed since the stream's last request (`DecideRequest.changed`), and of
the round's finished tricks (Black Sevens: finished hands) only those not carried yet after the
`kept_tricks` it left out. The referee keeps a `SeatSent` per seat (which also encodes each finished
trick once per match, for unary requests too); the bot side's `StreamState` merges each request back
into the whole state, so `info_from_request` gives the same dataclass either way (and `whole_request`
the unary request of the same decision, for a bridge to a bot that has no `Play`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from referee.botkit.protocol import bot_pb2
from referee.engine.games import get_game
from referee.engine.games import oh7 as oh7_game
from referee.engine.games.base import Action, DecisionKind, Result
from referee.engine.games.bidding import BiddingInfo
from referee.engine.games.black_sevens import InfoState as BlackSevensInfo
from referee.engine.match import Forfeit, MatchEnd, MatchStart, Status, TimeControl
from referee.engine.tricks import trick_winner

Oh7Info = oh7_game.InfoState
InfoState = Oh7Info | BiddingInfo | BlackSevensInfo
"""Any game's information state, as the engine gives it to a seat."""

INFO_FIELD = {
    "oh7": "oh7",
    "oh7-advanced": "oh7",
    "oh7-duel": "oh7",
    "oh-hell": "bidding",
    "seven-up-seven-down": "bidding",
    "black-sevens": "black_sevens",
}
"""Game id -> the `DecideRequest.info_state` field that carries its information state."""

_INFO_TYPE: dict[str, type] = {"oh7": Oh7Info, "bidding": BiddingInfo, "black_sevens": BlackSevensInfo}

KINDS = {
    DecisionKind.BET: bot_pb2.DECISION_KIND_BET,
    DecisionKind.BID: bot_pb2.DECISION_KIND_BID,
    DecisionKind.REVEAL: bot_pb2.DECISION_KIND_REVEAL,
    DecisionKind.PLAY: bot_pb2.DECISION_KIND_PLAY,
}
"""The decisions a bot is asked, engine -> wire (a chance DEAL is never asked)."""

NOT_YET = -1
"""A bid not made yet, in `BiddingInfoState.bids`."""


class ProtocolError(ValueError):
    """A message that does not fit the contract (an unusable answer, a malformed request).

    The message is one line saying what was tried; the gRPC player forfeits the seat with it.
    """


# Actions


def action_to_proto(action: Action) -> bot_pb2.Action:
    """A bid (int), card (str), reveal (bool) or set of cards (tuple of str) as a wire Action."""
    if isinstance(action, bool):  # before int: True is not the bid 1
        return bot_pb2.Action(reveal=action)
    if isinstance(action, int):
        return bot_pb2.Action(bid=action)
    if isinstance(action, str):
        return bot_pb2.Action(card=action)
    if isinstance(action, tuple) and all(isinstance(card, str) for card in action):
        return bot_pb2.Action(cards=bot_pb2.CardList(cards=action))
    raise ProtocolError(
        f"cannot send {_shown(action)} as an action: expected a bid (int), a card (str), "
        "a reveal (bool) or a set of cards (tuple of str)"
    )


def action_from_proto(message: bot_pb2.Action) -> Action:
    """The engine value of a wire Action; an Action with no value set raises ProtocolError."""
    which = message.WhichOneof("value")
    if which == "card":
        return message.card
    if which == "bid":
        return message.bid
    if which == "cards":
        return tuple(message.cards.cards)
    if which == "reveal":
        return message.reveal
    raise ProtocolError("answered an action with no value set (bid, card, reveal or cards)")


def _kind_of(action: Action) -> str:
    if isinstance(action, bool):
        return "reveal"
    if isinstance(action, int):
        return "bid"
    return "card" if isinstance(action, str) else "set of cards"


def action_from_response(response: bot_pb2.DecideResponse, legal: tuple[Action, ...]) -> Action:
    """The legal action a bot chose, by index or by value (a set of cards in any order)."""
    which = response.WhichOneof("choice")
    if which is None:
        raise ProtocolError("answered an empty DecideResponse: set `index` or `action`")
    if which == "index":
        index = response.index
        if not 0 <= index < len(legal):
            raise ProtocolError(f"answered index {index}, but the legal actions are 0..{len(legal) - 1}")
        return legal[index]
    action = action_from_proto(response.action)
    if not legal:
        raise ProtocolError(f"answered {_shown(action)}, but no action was legal")
    wanted, got = _kind_of(legal[0]), _kind_of(action)
    if got != wanted:
        raise ProtocolError(f"answered a {got} {_shown(action)}, but this decision takes a {wanted}")
    if isinstance(action, tuple):
        cards = sorted(action)
        for candidate in legal:
            if isinstance(candidate, tuple) and sorted(candidate) == cards:
                return candidate
    elif action in legal:
        return legal[legal.index(action)]
    raise ProtocolError(f"answered {_shown(action)}, which is not one of the {len(legal)} legal actions")


def legal_from_request(request: bot_pb2.DecideRequest) -> tuple[Action, ...]:
    """The request's legal actions as engine values, in the engine's order."""
    return tuple(action_from_proto(action) for action in request.legal_actions)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


# Decisions


@dataclass(frozen=True)
class _Wire:
    """How one information state goes on the wire: each attribute in the proto field of the same
    name, set through the constructor (`values`: None sends it as is, else a function (info, value)
    -> the field's value) or, for repeated messages, added in place (`added`: (field, value) ->
    None); and its round's finished tricks (`finished`: info -> the round, the tricks, and the
    encoder of the i-th), in `finished_field`, which a stream sends once."""

    values: dict[str, Callable[[Any, Any], Any] | None]
    added: dict[str, Callable[[Any, Any], None]]
    finished_field: str
    finished: Callable[[Any], tuple[int, tuple[Any, ...], Callable[[int], Any]]]

    attributes: tuple[str, ...] = field(init=False, default=())
    """What a stream compares to find what changed (the finished tricks are followed apart)."""
    read: Callable[[Any], tuple[Any, ...]] = field(init=False, default=tuple)
    """info -> the values of `attributes`, in one call."""

    def __post_init__(self) -> None:
        attributes = (*self.values, *self.added)
        object.__setattr__(self, "attributes", attributes)
        object.__setattr__(self, "read", attrgetter(*attributes))


class SeatSent:
    """What one seat's requests carried in a match (the referee keeps one per seat): the last state
    a `Play` stream's request gave, which the next one is a delta of, and the round's finished
    tricks, each encoded once per match rather than once per request."""

    __slots__ = ("encoded", "info", "round", "values")

    def __init__(self) -> None:
        self.info: Any = None
        self.round: int | None = None
        self.values: tuple[Any, ...] = ()
        self.encoded: list[Any] = []

    def tricks(
        self, round_key: int, values: tuple[Any, ...], encode: Callable[[int], Any]
    ) -> tuple[int, bool]:
        """Brings the messages up to `values` (the round's finished tricks); returns how many of
        them were carried already and whether the list changed since the last call."""
        if values is self.values:
            return len(values), False
        kept = len(self.values)
        if round_key != self.round or values[:kept] != self.values:
            kept, self.round, self.encoded = 0, round_key, []
        elif len(values) == kept:
            self.values = values
            return kept, False
        self.encoded.extend(encode(index) for index in range(kept, len(values)))
        self.values = values
        return kept, True


class StreamState:
    """The bot side of a `Play` stream: the information state it carried so far, into which each
    `decide` (its `changed` fields) is merged, so the bot sees whole states."""

    __slots__ = ("message",)

    def __init__(self) -> None:
        self.message: Any = None


def decide_request(
    *,
    match_id: str,
    seat: int,
    game: str,
    kind: DecisionKind,
    info: Any,
    legal: tuple[Action, ...],
    decision_ms: int,
    bank_ms: int,
    sent: SeatSent | None = None,
) -> bot_pb2.DecideRequest:
    """One decision for a bot: the seat's whole information state, its legal actions, its time
    left. With `sent` (the seat's, kept for the match) finished tricks are encoded once."""
    fields, wire, names, finished = _decide_fields(
        match_id, seat, game, kind, info, decision_ms, bank_ms, sent, delta=False
    )
    request = bot_pb2.DecideRequest(**fields)
    _add_messages(request, game, wire, info, legal, names, finished)
    return request


def play_decide_request(
    *,
    match_id: str,
    seat: int,
    game: str,
    kind: DecisionKind,
    info: Any,
    legal: tuple[Action, ...],
    decision_ms: int,
    bank_ms: int,
    sent: SeatSent,
) -> bot_pb2.PlayRequest:
    """A decision on a `Play` stream: only the fields that changed since the stream's last request
    (`changed`; all of them the first time), the finished tricks it did not carry yet after the
    `kept_tricks` it did, built in place inside its PlayRequest."""
    fields, wire, names, finished = _decide_fields(
        match_id, seat, game, kind, info, decision_ms, bank_ms, sent, delta=True
    )
    play = bot_pb2.PlayRequest(decide=fields)
    _add_messages(play.decide, game, wire, info, legal, names, finished)
    return play


def _decide_fields(
    match_id: str,
    seat: int,
    game: str,
    kind: DecisionKind,
    info: Any,
    decision_ms: int,
    bank_ms: int,
    sent: SeatSent | None,
    *,
    delta: bool,
) -> tuple[dict[str, Any], _Wire, list[str] | None, list[Any]]:
    """A DecideRequest's fields but its repeated messages (added in place after: building them
    apart and copying them in costs twice as much), the attributes it sends (None: all), and the
    finished tricks it carries."""
    field = _info_field(game)
    if not isinstance(info, _INFO_TYPE[field]):
        raise ProtocolError(f"{game} needs a {_INFO_TYPE[field].__name__}, not {type(info).__name__}")
    if kind not in KINDS:
        raise ProtocolError(f"a {kind} decision is never asked of a bot")
    wire = _WIRES[field]
    round_key, values, encode = wire.finished(info)
    if sent is None:
        kept, tricks_changed, encoded = 0, True, [encode(index) for index in range(len(values))]
    else:
        kept, tricks_changed = sent.tricks(round_key, values, encode)
        encoded = sent.encoded
    names: list[str] | None = None
    if delta and sent is not None:
        before, sent.info = sent.info, info
        if before is not None:
            names = [
                name
                for name, now, then in zip(wire.attributes, wire.read(info), wire.read(before), strict=True)
                if now is not then and now != then
            ]
            if tricks_changed:
                names.append(wire.finished_field)
            names = names or None  # nothing changed: the whole state, as `changed` empty says
    fields: dict[str, Any] = {
        "match_id": match_id,
        "seat": seat,
        "game": game,
        "kind": KINDS[kind],
        "decision_time_ms": decision_ms,
        "bank_time_ms": bank_ms,
        field: _values(wire, info, names),
    }
    if names is None:
        return fields, wire, None, encoded
    fields["changed"] = names
    if not tricks_changed:
        return fields, wire, names, []
    fields["kept_tricks"] = kept
    return fields, wire, names, encoded[kept:]


def _values(wire: _Wire, info: Any, names: list[str] | None) -> dict[str, Any]:
    """The information state's fields set through the constructor: all, or those in `names`."""
    values = wire.values
    sent: dict[str, Any] = {}
    for name in values if names is None else names:
        if name in values:
            how = values[name]
            value = getattr(info, name)
            sent[name] = value if how is None else how(info, value)
    return sent


def _add_messages(
    request: bot_pb2.DecideRequest,
    game: str,
    wire: _Wire,
    info: Any,
    legal: tuple[Action, ...],
    names: list[str] | None,
    finished: list[Any],
) -> None:
    """The legal actions and the information state's repeated messages, added in place."""
    add = request.legal_actions.add
    for action in legal:
        kind = type(action)
        if kind is str:
            add(card=action)
        elif kind is int:
            add(bid=action)
        elif kind is bool:
            add(reveal=action)
        else:
            request.legal_actions.append(action_to_proto(action))
    message = getattr(request, INFO_FIELD[game])
    for name, adder in wire.added.items():
        if names is None or name in names:
            adder(getattr(message, name), getattr(info, name))
    if finished:
        getattr(message, wire.finished_field).extend(finished)


def info_from_request(request: bot_pb2.DecideRequest, state: StreamState | None = None) -> InfoState:
    """The engine's information state carried by a request (`BiddingInfo`, `oh7.InfoState`, ...).

    On a `Play` stream, `state` (the stream's) puts back what the request left out (the fields not
    in `changed`, the first `kept_tricks` finished tricks) and keeps the result for the next one; a
    unary request must be whole.
    """
    which, message = _carried(request, state)
    wire = _WIRES[which]
    finished = tuple(map(_FINISHED_ITEM[which], getattr(message, wire.finished_field)))
    decoded: InfoState = _DECODERS[which](message, finished)
    return decoded


def whole_request(request: bot_pb2.DecideRequest, state: StreamState) -> bot_pb2.DecideRequest:
    """A `Play` stream's `decide` as the unary `Decide` of the same decision: `state` (the stream's)
    merged in, `changed` and `kept_tricks` cleared. What a bridge to a bot of unary calls sends it:
    the same request the referee would have sent that bot, without decoding the state to the engine's
    values and back."""
    which, message = _carried(request, state)
    whole = bot_pb2.DecideRequest()
    whole.CopyFrom(request)
    whole.ClearField("changed")
    whole.ClearField("kept_tricks")
    getattr(whole, which).CopyFrom(message)
    return whole


def _carried(request: bot_pb2.DecideRequest, state: StreamState | None) -> tuple[str, Any]:
    """The request's information state field and its whole message (merged into `state` on a
    stream); ProtocolError for a request that does not fit its game or its stream."""
    which = request.WhichOneof("info_state")
    if which is None:
        raise ProtocolError(f"the {request.game or 'unnamed'} request holds no information state")
    expected = _info_field(request.game)
    if which != expected:
        raise ProtocolError(f"a {request.game} request carries `{expected}`, not `{which}`")
    message = getattr(request, which)
    if state is not None:
        return which, _merged(state, which, request, message)
    if request.changed or request.kept_tricks:
        raise ProtocolError("`changed` and `kept_tricks` are for a Play stream; a Decide request is whole")
    return which, message


def _merged(state: StreamState, which: str, request: bot_pb2.DecideRequest, message: Any) -> Any:
    """The stream's state with this request's fields merged in (all of them: `changed` empty)."""
    if not request.changed:
        if request.kept_tricks:
            raise ProtocolError("kept_tricks is set on a whole information state (`changed` empty)")
        state.message = type(message)()
        state.message.CopyFrom(message)
        return state.message
    merged = state.message
    if type(merged) is not type(message):
        raise ProtocolError("a delta (`changed` set) before any whole information state on this stream")
    kinds = _FIELD_KINDS[which]
    if request.kept_tricks and _WIRES[which].finished_field not in request.changed:
        raise ProtocolError(f"kept_tricks is set but `{_WIRES[which].finished_field}` did not change")
    for name in request.changed:
        kind = kinds.get(name)
        if kind is None:
            raise ProtocolError(
                f"`changed` names {name!r}, which is not a field of {message.DESCRIPTOR.name}"
            )
        if kind == "finished":
            held, kept = getattr(merged, name), request.kept_tricks
            if kept > len(held):
                raise ProtocolError(f"kept_tricks is {kept}, but the stream carried {len(held)} before")
            del held[kept:]
            held.extend(getattr(message, name))
        elif kind == "map":
            held = getattr(merged, name)
            held.clear()
            held.update(getattr(message, name))
        elif kind == "repeated":
            held = getattr(merged, name)
            del held[:]
            held.extend(getattr(message, name))
        elif kind == "optional" and not message.HasField(name):
            merged.ClearField(name)
        else:
            setattr(merged, name, getattr(message, name))
    return merged


def _info_field(game: str) -> str:
    try:
        return INFO_FIELD[game]
    except KeyError:
        raise ProtocolError(f"unknown game {game!r} (games: {', '.join(INFO_FIELD)})") from None


def _options_to_proto(game: str, options: Iterable[tuple[str, Any]]) -> dict[str, int]:
    """Integer options by name, leaving out those the game id fixes (they are implied by it)."""
    fixed = get_game(game).fixed_options if game in INFO_FIELD else {}
    sent: dict[str, int] = {}
    for name, value in options:
        if name in fixed and fixed[name] == value:
            continue
        if type(value) is not int:
            raise ProtocolError(f"option {name}={value!r} is not an integer, the only kind the wire holds")
        sent[name] = value
    return sent


def _options(info: Any, options: Iterable[tuple[str, Any]]) -> dict[str, int]:
    return _options_to_proto(info.game, options)


def _options_from_proto(game: str, options: Mapping[str, int]) -> tuple[tuple[str, Any], ...]:
    fixed = get_game(game).fixed_options if game in INFO_FIELD else {}
    return tuple(sorted({**options, **fixed}.items()))


def _plays(plays: Iterable[tuple[int, str]]) -> list[bot_pb2.Play]:
    return [bot_pb2.Play(seat=seat, card=card) for seat, card in plays]


def _add_plays(field: Any, plays: Iterable[tuple[int, str]]) -> None:
    add = field.add
    for seat, card in plays:
        add(seat=seat, card=card)


def _plays_back(plays: Iterable[bot_pb2.Play]) -> tuple[tuple[int, str], ...]:
    return tuple((play.seat, play.card) for play in plays)


def _add_card_lists(field: Any, lists: Iterable[Iterable[str]]) -> None:
    add = field.add
    for cards in lists:
        add(cards=cards)


def _card_lists_back(lists: Iterable[bot_pb2.CardList]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(cards.cards) for cards in lists)


def _optional(message: Any, name: str) -> Any:
    """A proto3 `optional` scalar, or None when unset."""
    return getattr(message, name) if message.HasField(name) else None


# Oh 7? (oh7, oh7-advanced, oh7-duel)


def _oh7_finished(info: Oh7Info) -> tuple[int, tuple[Any, ...], Callable[[int], Any]]:
    if len(info.tricks) != len(info.trick_winners):
        raise ProtocolError(f"{len(info.tricks)} tricks but {len(info.trick_winners)} trick winners")
    tricks, winners = info.tricks, info.trick_winners
    return info.round, tricks, lambda i: bot_pb2.Trick(plays=_plays(tricks[i]), winner=winners[i])


_OH7 = _Wire(
    values={
        "game": None, "seat": None, "num_players": None, "num_seats": None, "dummy": None,
        "options": _options, "target": None, "scores": None, "bets_made": None, "round": None,
        "redeals": None, "hand_size": None, "phase": lambda info, phase: str(phase), "attempt": None,
        "bets": lambda info, bets: bets or (), "revealer": None, "first_leader": None, "trump": None,
        "dummy_up": None, "leader": None, "lead_suit": None, "tricks_won": None, "hand": None,
    },
    added={"bet_cards": _add_card_lists, "trick": _add_plays},
    finished_field="tricks",
    finished=_oh7_finished,
)  # fmt: skip
"""The trick winners travel in the finished tricks (`Trick.winner`)."""


def _oh7_from_proto(message: bot_pb2.Oh7InfoState, finished: tuple[Any, ...]) -> Oh7Info:
    try:
        phase = oh7_game.Phase(message.phase)
    except ValueError:
        raise ProtocolError(f"unknown Oh 7? phase {message.phase!r}") from None
    return Oh7Info(
        message.game, message.seat, message.num_players, message.num_seats, _optional(message, "dummy"),
        _options_from_proto(message.game, message.options), message.target, tuple(message.scores),
        tuple(message.bets_made), message.round, message.redeals, message.hand_size, phase,
        _card_lists_back(message.bet_cards), message.attempt, tuple(message.bets) or None,
        _optional(message, "revealer"), _optional(message, "first_leader"), _optional(message, "trump"),
        tuple(message.dummy_up), _optional(message, "leader"), _optional(message, "lead_suit"),
        _plays_back(message.trick), tuple(plays for plays, _ in finished),
        tuple(winner for _, winner in finished), tuple(message.tricks_won), tuple(message.hand),
    )  # fmt: skip


# Oh Hell! and 7Up7Down


def _bidding_finished(info: BiddingInfo) -> tuple[int, tuple[Any, ...], Callable[[int], Any]]:
    tricks, trump = info.tricks, info.trump
    return (
        info.round,
        tricks,
        lambda i: bot_pb2.Trick(plays=_plays(tricks[i]), winner=_winner(tricks[i], trump)),
    )


def _bids(info: BiddingInfo, bids: tuple[int | None, ...]) -> list[int]:
    return [NOT_YET if bid is None else bid for bid in bids]


def _winner(trick: tuple[tuple[int, str], ...], trump: str) -> int:
    """The seat that won a finished trick (the engine's own rule, `referee.engine.tricks`)."""
    return trick[trick_winner([card for _, card in trick], trump)][0]


_BIDDING = _Wire(
    values={
        "game": None, "seat": None, "num_players": None, "options": _options, "scores": None,
        "round": None, "rounds": None, "hand_size": None, "dealer": None, "trump_card": None,
        "trump": None, "hand": None, "bids": _bids, "leader": None, "tricks_won": None,
    },
    added={"visible_cards": _add_plays, "trick": _add_plays},
    finished_field="tricks",
    finished=_bidding_finished,
)  # fmt: skip
"""Oh Hell! and 7Up7Down tricks carry their winner, computed from the plays and the trump."""


def _bidding_from_proto(message: bot_pb2.BiddingInfoState, finished: tuple[Any, ...]) -> BiddingInfo:
    if any(bid < NOT_YET for bid in message.bids):
        raise ProtocolError(f"bids must be -1 (not yet) or a number of tricks, got {list(message.bids)}")
    return BiddingInfo(
        message.game, message.seat, message.num_players,
        _options_from_proto(message.game, message.options), tuple(message.scores), message.round,
        message.rounds, message.hand_size, message.dealer, message.trump_card, message.trump,
        tuple(message.hand), _plays_back(message.visible_cards),
        tuple(None if bid == NOT_YET else bid for bid in message.bids), message.leader,
        _plays_back(message.trick), finished, tuple(message.tricks_won),
    )  # fmt: skip


# Black Sevens


def _set_plays(plays: Iterable[tuple[int, tuple[str, ...]]]) -> list[bot_pb2.SetPlay]:
    return [bot_pb2.SetPlay(seat=seat, cards=cards) for seat, cards in plays]


def _add_set_plays(field: Any, plays: Iterable[tuple[int, tuple[str, ...]]]) -> None:
    add = field.add
    for seat, cards in plays:
        add(seat=seat, cards=cards)


def _set_plays_back(plays: Iterable[bot_pb2.SetPlay]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    return tuple((play.seat, tuple(play.cards)) for play in plays)


def _black_sevens_finished(info: BlackSevensInfo) -> tuple[int, tuple[Any, ...], Callable[[int], Any]]:
    history = info.history
    return (
        info.round_index,
        history,
        lambda i: bot_pb2.BlackSevensHand(winner=history[i][0], plays=_set_plays(history[i][1])),
    )


_BLACK_SEVENS = _Wire(
    values={
        "game": None, "seat": None, "num_players": None, "options": _options, "scores": None,
        "round_index": None, "round_leader": None, "hands_won": None, "leader": None,
        "hand_size": None, "set_size": None, "standing": None, "standing_seat": None, "hand": None,
    },
    added={"table": _add_card_lists, "played": _add_card_lists, "plays": _add_set_plays},
    finished_field="history",
    finished=_black_sevens_finished,
)  # fmt: skip


def _black_sevens_from_proto(
    message: bot_pb2.BlackSevensInfoState, finished: tuple[Any, ...]
) -> BlackSevensInfo:
    return BlackSevensInfo(
        message.game, message.seat, message.num_players,
        _options_from_proto(message.game, message.options), tuple(message.scores),
        _card_lists_back(message.table), message.round_index, _optional(message, "round_leader"),
        finished, tuple(message.hands_won), _card_lists_back(message.played), message.leader,
        message.hand_size, message.set_size, tuple(message.standing),
        _optional(message, "standing_seat"), _set_plays_back(message.plays), tuple(message.hand),
    )  # fmt: skip


_WIRES = {"oh7": _OH7, "bidding": _BIDDING, "black_sevens": _BLACK_SEVENS}
"""Info field -> how its information state goes on the wire."""
_DECODERS: dict[str, Any] = {
    "oh7": _oh7_from_proto,
    "bidding": _bidding_from_proto,
    "black_sevens": _black_sevens_from_proto,
}
"""Info field -> (message, its finished tricks as `_FINISHED_ITEM`s -> the engine's state)."""
_FINISHED_ITEM: dict[str, Callable[[Any], Any]] = {
    "oh7": lambda trick: (_plays_back(trick.plays), trick.winner),
    "bidding": lambda trick: _plays_back(trick.plays),
    "black_sevens": lambda hand: (hand.winner, _set_plays_back(hand.plays)),
}
"""Info field -> one finished trick (hand) message as its decoder takes it."""


def _field_kinds(message_type: Any, finished_field: str) -> dict[str, str]:
    """How a stream merges each field of an information state (`_merged`)."""
    kinds = {}
    for name, descriptor in message_type.DESCRIPTOR.fields_by_name.items():
        if name == finished_field:
            kinds[name] = "finished"
        elif descriptor.is_repeated:
            entry = descriptor.message_type
            kinds[name] = "map" if entry is not None and entry.GetOptions().map_entry else "repeated"
        else:
            kinds[name] = "optional" if descriptor.has_presence else "scalar"
    return kinds


_FIELD_KINDS = {
    which: _field_kinds(message_type, _WIRES[which].finished_field)
    for which, message_type in (
        ("oh7", bot_pb2.Oh7InfoState),
        ("bidding", bot_pb2.BiddingInfoState),
        ("black_sevens", bot_pb2.BlackSevensInfoState),
    )
}


# Match start and end


def start_match_request(
    *,
    match_id: str,
    game: str,
    seat: int,
    num_players: int,
    options: Mapping[str, Any],
    seat_names: Sequence[str],
    time_control: TimeControl | None,
) -> bot_pb2.StartMatchRequest:
    """The StartMatch notification; no time control leaves `time_control` unset."""
    return bot_pb2.StartMatchRequest(
        match_id=match_id,
        game=game,
        seat=seat,
        num_players=num_players,
        options=_options_to_proto(game, options.items()),
        seat_names=seat_names,
        time_control=None
        if time_control is None
        else bot_pb2.TimeControl(
            per_decision_ms=round(time_control.per_decision * 1000), bank_ms=round(time_control.bank * 1000)
        ),
    )


def match_start_from_request(request: bot_pb2.StartMatchRequest) -> MatchStart:
    """The `MatchStart` an in-process player's `start_match` hook gets, from the notification."""
    control = request.time_control if request.HasField("time_control") else None
    return MatchStart(
        match_id=request.match_id,
        game=request.game,
        seat=request.seat,
        num_players=request.num_players,
        options=dict(request.options),
        seat_names=list(request.seat_names),
        time_control=None
        if control is None
        else TimeControl(per_decision=control.per_decision_ms / 1000, bank=control.bank_ms / 1000),
    )


def end_match_request(
    *, match_id: str, result: Result, forfeits: Sequence[Forfeit]
) -> bot_pb2.EndMatchRequest:
    """The EndMatch notification: scores, ranks (empty when aborted) and the forfeits."""
    return bot_pb2.EndMatchRequest(
        match_id=match_id,
        scores=result.scores,
        ranks=result.ranks or (),
        aborted=result.aborted,
        forfeits=[
            bot_pb2.Forfeit(seat=forfeit.seat, status=str(forfeit.status), reason=forfeit.reason)
            for forfeit in forfeits
        ],
    )


def match_end_from_request(request: bot_pb2.EndMatchRequest) -> MatchEnd:
    """The `MatchEnd` an in-process player's `end_match` hook gets (`reason` and events unsent)."""
    forfeits = []
    for forfeit in request.forfeits:
        try:
            status = Status(forfeit.status)
        except ValueError:
            raise ProtocolError(f"unknown forfeit status {forfeit.status!r}") from None
        forfeits.append(Forfeit(forfeit.seat, status, forfeit.reason, -1))
    ranks = tuple(request.ranks) or None
    return MatchEnd(request.match_id, Result(tuple(request.scores), ranks, request.aborted), forfeits)
