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

A request's finished tricks (Black Sevens: finished hands) are the only part of an information state
that grows through a round: with a `SentTricks` per seat (the referee keeps one for a match), each is
encoded once per match rather than once per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
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
    encoder of the i-th), in `finished_field`."""

    values: dict[str, Callable[[Any, Any], Any] | None]
    added: dict[str, Callable[[Any, Any], None]]
    finished_field: str
    finished: Callable[[Any], tuple[int, tuple[Any, ...], Callable[[int], Any]]]


class SentTricks:
    """The finished tricks of one seat's round that its requests carried, as engine values and as
    messages, so each is encoded once per match rather than once per request (the referee keeps
    one per seat of a match)."""

    __slots__ = ("encoded", "round", "values")

    def __init__(self) -> None:
        self.round: int | None = None
        self.values: tuple[Any, ...] = ()
        self.encoded: list[Any] = []

    def tricks(self, round_key: int, values: tuple[Any, ...], encode: Callable[[int], Any]) -> list[Any]:
        """The messages of `values` (the round's finished tricks), encoding only the new ones."""
        if values is not self.values:
            kept = len(self.values)
            if round_key != self.round or values[:kept] != self.values:
                kept, self.round, self.encoded = 0, round_key, []
            self.encoded.extend(encode(index) for index in range(kept, len(values)))
            self.values = values
        return self.encoded


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
    sent: SentTricks | None = None,
) -> bot_pb2.DecideRequest:
    """One decision for a bot: the seat's information state, its legal actions, its time left.
    With `sent` (the seat's, kept for the match) finished tricks are encoded once.

    The information state's repeated messages are added in place: building them apart and copying
    them in costs about twice as much.
    """
    field = _info_field(game)
    if not isinstance(info, _INFO_TYPE[field]):
        raise ProtocolError(f"{game} needs a {_INFO_TYPE[field].__name__}, not {type(info).__name__}")
    if kind not in KINDS:
        raise ProtocolError(f"a {kind} decision is never asked of a bot")
    wire = _WIRES[field]
    round_key, values, encode = wire.finished(info)
    if sent is None:
        finished = [encode(index) for index in range(len(values))]
    else:
        finished = sent.tricks(round_key, values, encode)
    info_fields: dict[str, Any] = {
        field: {name: _value(info, name, how) for name, how in wire.values.items()}
    }
    request = bot_pb2.DecideRequest(
        match_id=match_id,
        seat=seat,
        game=game,
        kind=KINDS[kind],
        decision_time_ms=decision_ms,
        bank_time_ms=bank_ms,
        **info_fields,
    )
    add = request.legal_actions.add
    for action in legal:
        action_type = type(action)
        if action_type is str:
            add(card=action)
        elif action_type is int:
            add(bid=action)
        elif action_type is bool:
            add(reveal=action)
        else:
            request.legal_actions.append(action_to_proto(action))
    message = getattr(request, field)
    for name, adder in wire.added.items():
        adder(getattr(message, name), getattr(info, name))
    getattr(message, wire.finished_field).extend(finished)
    return request


def _value(info: Any, name: str, how: Callable[[Any, Any], Any] | None) -> Any:
    value = getattr(info, name)
    return value if how is None else how(info, value)


def info_from_request(request: bot_pb2.DecideRequest) -> InfoState:
    """The engine's information state carried by a request (`BiddingInfo`, `oh7.InfoState`, ...)."""
    which = request.WhichOneof("info_state")
    if which is None:
        raise ProtocolError(f"the {request.game or 'unnamed'} request holds no information state")
    expected = _info_field(request.game)
    if which != expected:
        raise ProtocolError(f"a {request.game} request carries `{expected}`, not `{which}`")
    message = getattr(request, which)
    finished = tuple(map(_FINISHED_ITEM[which], getattr(message, _WIRES[which].finished_field)))
    decoded: InfoState = _DECODERS[which](message, finished)
    return decoded


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
