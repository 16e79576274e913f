"""Engine <-> wire conversions (referee.botkit.protocol.convert): exact round trips for every game id and
player count over random positions, nothing on the wire the seat may not know, and a one-line
ProtocolError, saying what was tried, for every answer the referee cannot use."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf.message import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.botkit.protocol import bot_pb2
from referee.botkit.protocol.convert import (
    ProtocolError,
    action_from_response,
    action_to_proto,
    decide_request,
    end_match_request,
    info_from_request,
    legal_from_request,
    match_end_from_request,
    match_start_from_request,
    start_match_request,
)
from referee.engine.games import GAMES, get_game
from referee.engine.games.base import Action, DecisionKind, Result
from referee.engine.match import MatchEnd, MatchStart, Status, TimeControl, play_match
from referee.engine.players import RandomPlayer
from referee.engine.playout import playout

CASES = [(game_id, players) for game_id, game in GAMES.items() for players in game.players]


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (True is not 1, () is not None, enums stay enums)."""
    if type(a) is not type(b):
        return False
    if dataclasses.is_dataclass(a):
        return all(same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def positions(
    game_id: str, players: int, seed: int
) -> Iterator[tuple[DecisionKind, int, Any, tuple[Action, ...]]]:
    """At every decision of one random game, the view of each seat asked and of one seat not asked
    (its legal actions empty): (kind, seat, info, its legal actions)."""
    game = get_game(game_id)
    rng = random.Random(seed)
    for step in playout(game, game.start(players), rng):
        decision = game.to_move(step.state)
        if decision is None or decision.is_chance:
            continue
        for seat in decision.seats:
            yield (
                decision.kind,
                seat,
                game.information_state(step.state, seat),
                game.legal_actions(step.state, seat),
            )
        waiting = [seat for seat in range(players) if seat not in decision.seats]
        if waiting:
            seat = rng.choice(waiting)
            yield decision.kind, seat, game.information_state(step.state, seat), ()


def over_the_wire(message: Message) -> Any:
    """The message as the other side parses it from bytes."""
    return type(message).FromString(message.SerializeToString())


def request_for(kind: DecisionKind, seat: int, info: Any, legal: tuple[Action, ...]) -> bot_pb2.DecideRequest:
    return over_the_wire(
        decide_request(
            match_id="m-1", seat=seat, game=info.game, kind=kind, info=info, legal=legal,
            decision_ms=1000, bank_ms=9500,
        )
    )  # fmt: skip


def strings(value: Any) -> set[str]:
    """Every string inside a dataclass, tuple or protobuf message (keys of maps included)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, Message):
        return set().union(*(strings(v) for _, v in value.ListFields()))
    if dataclasses.is_dataclass(value):
        return set().union(*(strings(getattr(value, f.name)) for f in dataclasses.fields(value)))
    if isinstance(value, dict):
        return set().union(*(strings(k) | strings(v) for k, v in value.items()))
    if isinstance(value, (tuple, list)) or hasattr(value, "__iter__"):
        return set().union(*(strings(v) for v in value))
    return set()


@pytest.mark.parametrize(("game_id", "players"), CASES)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_position_round_trips_exactly(game_id: str, players: int, seed: int) -> None:
    seen = 0
    for kind, seat, info, legal in positions(game_id, players, seed):
        request = request_for(kind, seat, info, legal)
        assert same(info_from_request(request), info), f"{game_id} seat {seat}: info changed on the wire"
        assert same(legal_from_request(request), legal), f"{game_id} seat {seat}: legal actions changed"
        assert (request.match_id, request.seat, request.game) == ("m-1", seat, game_id)
        assert (request.decision_time_ms, request.bank_time_ms) == (1000, 9500)
        assert request.kind == getattr(bot_pb2, f"DECISION_KIND_{kind.name}")
        wire = getattr(request, request.WhichOneof("info_state"))
        leaked = strings(wire) - strings(info)
        assert not leaked, f"{game_id}: the wire holds {leaked}, which the information state does not"
        seen += 1
    assert seen > 0


@pytest.mark.parametrize("game_id", ["oh-hell", "seven-up-seven-down"])
@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_bidding_tricks_carry_the_seat_that_won_them(game_id: str, seed: int) -> None:
    for kind, seat, info, legal in positions(game_id, 4, seed):
        if not info.tricks or not legal:
            continue
        winners = [trick.winner for trick in request_for(kind, seat, info, legal).bidding.tricks]
        next_leaders = [trick[0][0] for trick in info.tricks[1:]] + [info.leader]
        assert winners == next_leaders  # the winner of a trick leads the next one


def _first(game_id: str, players: int, wanted: Any) -> tuple[DecisionKind, int, Any, tuple[Action, ...]]:
    for seed in range(200):
        for position in positions(game_id, players, seed):
            if position[3] and wanted(position):
                return position
    raise AssertionError(f"no such position in {game_id}")


def test_bids_not_made_yet_travel_as_minus_one() -> None:
    kind, seat, info, legal = _first(
        "oh-hell", 4, lambda p: p[0] is DecisionKind.BID and p[2].bids.count(None) == 3
    )
    wire = request_for(kind, seat, info, legal).bidding
    assert sorted(wire.bids) == [-1, -1, -1, next(bid for bid in info.bids if bid is not None)]
    assert list(wire.bids) == [-1 if bid is None else bid for bid in info.bids]


def test_seven_up_one_card_round_sends_the_others_cards_and_not_the_own() -> None:
    kind, seat, info, legal = _first(
        "seven-up-seven-down", 3, lambda p: p[2].hand_size == 1 and p[0] is DecisionKind.BID
    )
    wire = request_for(kind, seat, info, legal).bidding
    assert list(wire.hand) == []
    assert [(play.seat, play.card) for play in wire.visible_cards] == list(info.visible_cards)
    assert seat not in [play.seat for play in wire.visible_cards] and len(wire.visible_cards) == 2


def test_oh7_duel_names_the_dummy_and_the_game_fixes_the_variant() -> None:
    kind, seat, info, legal = _first("oh7-duel", 2, lambda p: p[0] is DecisionKind.PLAY)
    wire = request_for(kind, seat, info, legal).oh7
    assert wire.HasField("dummy") and wire.dummy == 2 and wire.num_seats == 3
    assert dict(wire.options) == {"target": 35}  # the variant is the game id, not an option
    assert info_from_request(request_for(kind, seat, info, legal)).options == (
        ("target", 35),
        ("variant", "oh7-duel"),
    )


def test_unset_optionals_stay_unset_on_the_wire() -> None:
    kind, seat, info, legal = _first("oh7", 3, lambda p: p[0] is DecisionKind.BET)
    wire = request_for(kind, seat, info, legal).oh7
    assert info.bets is None and info.trump is None and info.dummy is None
    assert not wire.HasField("dummy") and not wire.HasField("trump") and list(wire.bets) == []


@pytest.mark.parametrize(
    ("action", "field"),
    [(3, "bid"), (0, "bid"), ("7S", "card"), (True, "reveal"), (False, "reveal"), (("5H", "5S"), "cards")],
)
def test_each_action_type_has_its_own_field_and_comes_back_typed(action: Action, field: str) -> None:
    message = over_the_wire(action_to_proto(action))
    assert message.WhichOneof("value") == field
    request = bot_pb2.DecideRequest(legal_actions=[message])
    assert same(legal_from_request(request), (action,))


@pytest.mark.parametrize("action", [None, 1.5, ["7S"], ("7S", 3), b"7S"])
def test_an_action_the_wire_cannot_hold_is_refused(action: Any) -> None:
    with pytest.raises(ProtocolError, match=r"cannot send .* as an action"):
        action_to_proto(action)


# The answers a bot may give

CARDS: tuple[Action, ...] = ("2S", "9S", "KS")
SETS: tuple[Action, ...] = (("5S",), ("5H", "5S"), ("9C",))


def by_index(index: int) -> bot_pb2.DecideResponse:
    return bot_pb2.DecideResponse(index=index)


def by_value(**value: Any) -> bot_pb2.DecideResponse:
    if "cards" in value:
        value["cards"] = bot_pb2.CardList(cards=value["cards"])
    return bot_pb2.DecideResponse(action=bot_pb2.Action(**value))


@pytest.mark.parametrize(
    ("response", "legal", "expected"),
    [
        (by_index(0), CARDS, "2S"),
        (by_index(2), CARDS, "KS"),
        (by_value(card="9S"), CARDS, "9S"),
        (by_value(bid=0), (0, 1, 3), 0),
        (by_value(reveal=False), (False, True), False),
        (by_value(cards=["5S", "5H"]), SETS, ("5H", "5S")),  # a set in any order
    ],
)
def test_an_answer_by_index_or_value_gives_the_legal_action(
    response: bot_pb2.DecideResponse, legal: tuple[Action, ...], expected: Action
) -> None:
    chosen = action_from_response(over_the_wire(response), legal)
    assert same(chosen, expected)
    assert any(chosen is candidate for candidate in legal), "the engine's own object comes back"


@pytest.mark.parametrize(
    ("response", "legal", "message"),
    [
        (bot_pb2.DecideResponse(), CARDS, r"^answered an empty DecideResponse: set `index` or `action`$"),
        (by_index(3), CARDS, r"^answered index 3, but the legal actions are 0\.\.2$"),
        (by_index(-1), CARDS, r"^answered index -1, but the legal actions are 0\.\.2$"),
        (by_value(), CARDS, r"^answered an action with no value set"),
        (by_value(bid=2), CARDS, r"^answered a bid 2, but this decision takes a card$"),
        (by_value(reveal=True), (0, 1), r"^answered a reveal True, but this decision takes a bid$"),
        (by_value(card="AS"), CARDS, r"^answered 'AS', which is not one of the 3 legal actions$"),
        (by_value(bid=2), (0, 1, 3), r"^answered 2, which is not one of the 3 legal actions$"),
        (by_value(cards=["5H"]), SETS, r"^answered \('5H',\), which is not one of the 3 legal actions$"),
        (by_value(card="5S"), SETS, r"^answered a card '5S', but this decision takes a set of cards$"),
        (by_value(card="x" * 200), CARDS, r"^answered 'x+\.\.\., which is not one"),
    ],
)
def test_an_unusable_answer_raises_protocol_error_saying_what_was_tried(
    response: bot_pb2.DecideResponse, legal: tuple[Action, ...], message: str
) -> None:
    with pytest.raises(ProtocolError, match=message) as raised:
        action_from_response(over_the_wire(response), legal)
    assert isinstance(raised.value, ValueError) and "\n" not in str(raised.value)


def test_a_request_is_refused_for_the_wrong_info_type_an_unknown_game_or_a_chance_decision() -> None:
    kind, seat, info, legal = _first("oh-hell", 3, lambda p: True)
    base = {"match_id": "m", "seat": seat, "info": info, "legal": legal, "decision_ms": 1, "bank_ms": 0}
    with pytest.raises(ProtocolError, match=r"^oh7 needs a InfoState, not BiddingInfo$"):
        decide_request(game="oh7", kind=kind, **base)
    with pytest.raises(ProtocolError, match=r"^unknown game 'hearts' \(games: oh7, "):
        decide_request(game="hearts", kind=kind, **base)
    with pytest.raises(ProtocolError, match=r"^a deal decision is never asked of a bot$"):
        decide_request(game="oh-hell", kind=DecisionKind.DEAL, **base)


def test_a_request_without_the_games_information_state_is_refused() -> None:
    kind, seat, info, legal = _first("oh-hell", 3, lambda p: True)
    with pytest.raises(ProtocolError, match=r"^the oh-hell request holds no information state$"):
        info_from_request(bot_pb2.DecideRequest(game="oh-hell"))
    request = request_for(kind, seat, info, legal)
    request.game = "black-sevens"
    with pytest.raises(
        ProtocolError, match=r"^a black-sevens request carries `black_sevens`, not `bidding`$"
    ):
        info_from_request(request)
    request = request_for(kind, seat, info, legal)
    request.bidding.bids[0] = -2
    with pytest.raises(ProtocolError, match=r"^bids must be -1 \(not yet\) or a number of tricks, got \[-2"):
        info_from_request(request)
    request = request_for(*_first("oh7", 3, lambda p: True))
    request.oh7.phase = "dance"
    with pytest.raises(ProtocolError, match=r"^unknown Oh 7\? phase 'dance'$"):
        info_from_request(request)


def test_only_integer_options_go_on_the_wire() -> None:
    with pytest.raises(ProtocolError, match=r"^option speed='fast' is not an integer, the only kind"):
        start_match_request(
            match_id="m", game="oh7", seat=0, num_players=3, options={"speed": "fast"},
            seat_names=["a", "b", "c"], time_control=None,
        )  # fmt: skip


# Match start and end


class Recorder:
    """An in-process player that keeps what the match runner tells its hooks."""

    def __init__(self, name: str, fail: bool = False) -> None:
        self.name = name
        self.fail = fail
        self.starts: list[MatchStart] = []
        self.ends: list[MatchEnd] = []
        self.rng = random.Random(name)

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if self.fail:
            raise RuntimeError("out of ideas")
        return legal[self.rng.randrange(len(legal))]

    def start_match(self, start: MatchStart) -> None:
        self.starts.append(start)

    def end_match(self, end: MatchEnd) -> None:
        self.ends.append(end)


@pytest.mark.parametrize("time_control", [TimeControl(), TimeControl(0.25, 3.5), None])
def test_match_start_round_trips_as_the_runner_tells_it(time_control: TimeControl | None) -> None:
    players = [Recorder("a"), Recorder("b"), Recorder("c")]
    play_match("oh7", players, seed=3, time_control=time_control, match_id="m-7")
    start = players[1].starts[0]
    request = over_the_wire(
        start_match_request(
            match_id=start.match_id, game=start.game, seat=start.seat, num_players=start.num_players,
            options=start.options, seat_names=start.seat_names, time_control=start.time_control,
        )
    )  # fmt: skip
    assert request.HasField("time_control") is (time_control is not None)
    assert dict(request.options) == {"target": 35} and request.seat == 1
    assert match_start_from_request(request) == start


def test_match_end_round_trips_with_its_forfeits_but_not_their_replay_position() -> None:
    players: list[Any] = [
        Recorder("a"),
        Recorder("b", fail=True),
        RandomPlayer(random.Random(1)),
        Recorder("d"),
    ]
    play_match("oh-hell", players, seed=5, match_id="m-9")
    end = players[0].ends[0]
    assert [forfeit.status for forfeit in end.forfeits] == [Status.ERROR]
    request = over_the_wire(
        end_match_request(match_id=end.match_id, result=end.result, forfeits=end.forfeits)
    )
    back = match_end_from_request(request)
    assert back.match_id == "m-9" and back.result == end.result
    assert [(f.seat, f.status, f.reason, f.event_index) for f in back.forfeits] == [
        (1, Status.ERROR, end.forfeits[0].reason, -1)
    ]
    assert back.result.ranks is not None and back.result.ranks[1] == 4  # the forfeit ranks last


def test_an_aborted_result_has_no_ranks_on_either_side() -> None:
    request = over_the_wire(
        end_match_request(match_id="m", result=Result((3, 4), None, aborted=True), forfeits=[])
    )
    assert list(request.ranks) == [] and request.aborted
    assert match_end_from_request(request).result == Result((3, 4), None, aborted=True)


def test_an_unknown_forfeit_status_is_refused() -> None:
    request = bot_pb2.EndMatchRequest(forfeits=[bot_pb2.Forfeit(seat=0, status="SULKED")])
    with pytest.raises(ProtocolError, match=r"^unknown forfeit status 'SULKED'$"):
        match_end_from_request(request)
