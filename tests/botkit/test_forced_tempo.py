"""An SDK bot takes about as long over a forced decision as over a chosen one (by default), so
its tempo does not tell the other seats it had no choice; `pad_forced=False` answers at once.

Through the real server (`create_server`, gRPC over a unix socket): a bot whose chosen decisions
take 0.1 s answers a few of them, then a forced one. The mechanism is asserted (the hold is a
duration drawn from the chosen decisions' record), the timing only as an ordering with wide
margins."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.botkit.sdk import Bot, create_server
from referee.botkit.tempo import MAX_SHARE, SEAT_DECISIONS, ForcedTempo, MatchPace
from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, Action, DecisionKind
from referee.engine.match import TimeControl

CHOSEN_SECONDS = 0.1
"""How long the test bot thinks over a decision with a choice."""


class Thinker(Bot):
    """Thinks CHOSEN_SECONDS over a choice; answers a forced decision at once (as montecarlo does)."""

    name = "thinker"

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        if len(legal) > 1:
            time.sleep(CHOSEN_SECONDS)
        return legal[0]


MATCH_ID = "0123456789abcdef"


def _requests() -> tuple[bot_pb2.DecideRequest, bot_pb2.DecideRequest]:
    """A bid with a choice and the same bid with one legal action (forced), of a real deal."""
    game = get_game("oh-hell")
    state = game.start(4)
    state = game.apply(state, CHANCE, game.sample_chance(state, random.Random(3)))
    seat = game.to_move(state).seats[0]
    info, legal = game.information_state(state, seat), game.legal_actions(state, seat)
    assert len(legal) > 1

    def request(actions: tuple[Action, ...]) -> bot_pb2.DecideRequest:
        return convert.decide_request(
            match_id=MATCH_ID, seat=seat, game="oh-hell", kind=DecisionKind.BID,
            info=info, legal=actions, decision_ms=1000, bank_ms=10000,
        )  # fmt: skip

    return request(legal), request(legal[:1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    """serve(bot) -> (stub, tempo): the bot behind a real server, stopped after the test."""
    servers: list[grpc.Server] = []
    channels: list[grpc.Channel] = []

    def serve(bot: Bot) -> tuple[bot_pb2_grpc.BotStub, ForcedTempo]:
        tempo = ForcedTempo(rng=random.Random(5))
        server, address = create_server(bot, f"unix:{tmp_path}/bot{len(servers)}.sock", tempo=tempo)
        server.start()
        servers.append(server)
        channels.append(grpc.insecure_channel(address))
        return bot_pb2_grpc.BotStub(channels[-1]), tempo  # type: ignore[no-untyped-call]

    yield serve
    for channel in channels:
        channel.close()
    for server in servers:
        server.stop(grace=None)


def _timed(stub: bot_pb2_grpc.BotStub, request: bot_pb2.DecideRequest) -> float:
    started = time.perf_counter()
    stub.Decide(request, timeout=5)
    return time.perf_counter() - started


def test_a_forced_decision_is_held_for_a_duration_drawn_from_the_chosen_ones(served: Any) -> None:
    stub, tempo = served(Thinker())
    chosen, forced = _requests()
    chosen_times = [_timed(stub, chosen) for _ in range(4)]
    forced_time = _timed(stub, forced)
    record = tempo.history(("oh-hell", chosen.kind))
    assert len(record) == 4 and min(record) >= CHOSEN_SECONDS, record
    assert tempo.last_drawn in record, "the hold is one of the bot's own chosen durations"
    assert forced_time >= 0.8 * min(record), (forced_time, chosen_times)
    assert forced_time >= 0.5 * min(chosen_times), (forced_time, chosen_times)


def test_with_padding_off_a_forced_decision_is_answered_at_once(served: Any) -> None:
    """Tried: `Bot(pad_forced=False)`: no record is kept, nothing is held."""
    stub, tempo = served(Thinker(pad_forced=False))
    chosen, forced = _requests()
    chosen_times = [_timed(stub, chosen) for _ in range(4)]
    forced_time = _timed(stub, forced)
    assert tempo.history(("oh-hell", chosen.kind)) == () and tempo.last_drawn is None
    assert forced_time < 0.5 * min(chosen_times), (forced_time, chosen_times)


def test_the_hold_is_drawn_from_the_same_game_and_kind_and_bounded_by_the_clock() -> None:
    tempo = ForcedTempo(rng=random.Random(1))
    assert tempo.hold(("oh-hell", 2), 0.0, 1.0) == 0.0 and tempo.last_drawn is None, "no record: no hold"
    for seconds in (0.2, 0.3, 0.4):
        tempo.chosen(("oh-hell", 2), seconds)
    tempo.chosen(("oh-hell", 1), 0.9)
    drawn = {round(tempo.hold(("oh-hell", 2), 0.05, 10.0) + 0.05, 6) for _ in range(60)}
    assert drawn == {0.2, 0.3, 0.4}, "plays draw from plays, not from the slower bids"
    assert tempo.hold(("oh-hell", 2), 0.5, 10.0) == 0.0, "already longer than the draw: answered"
    assert tempo.hold(("oh-hell", 2), 0.0, 0.3) <= MAX_SHARE * 0.3, "never past half the time left"
    assert tempo.hold(("oh-hell", 3), 0.0, 10.0) in {0.2, 0.3, 0.4, 0.9}, "a new kind: the game's record"
    assert tempo.hold(("oh7", 2), 0.0, 10.0) == 0.0, "another game's record is not used"


def test_a_hold_never_spends_the_match_budget_the_bot_needs(served: Any) -> None:
    """Tried: a bot whose chosen decisions (0.1 s) already take more than its share of a tight
    match budget (0.01 s a decision, no bank: 0.6 s for the match, under 5 ms a decision over
    SEAT_DECISIONS): its forced answer is not held, so padding cannot make it forfeit the match."""
    stub, tempo = served(Thinker())
    chosen, forced = _requests()
    stub.StartMatch(
        convert.start_match_request(
            match_id=MATCH_ID, game="oh-hell", seat=chosen.seat, num_players=4, options={},
            seat_names=["thinker"] * 4, time_control=TimeControl(0.01, 0.0),
        ),
        timeout=5,
    )  # fmt: skip
    chosen_times = [_timed(stub, chosen) for _ in range(3)]
    forced_time = _timed(stub, forced)
    assert tempo.last_drawn is not None, "a hold was drawn from the record..."
    assert forced_time < 0.5 * min(chosen_times), "...and cut to nothing by the match's pace"


def test_a_seats_pace_allows_what_keeps_its_average_within_the_budget() -> None:
    pace = MatchPace(budget=SEAT_DECISIONS * 0.1)  # 0.1 s a decision on average
    assert pace.allowed_hold(0.01) == pytest.approx(0.09)
    pace.record(0.05)
    assert pace.allowed_hold(0.01) == pytest.approx(0.14), "what the first decision left over carries"
    pace.record(0.4)
    assert pace.allowed_hold(0.01) == 0.0, "over its pace: no hold"
