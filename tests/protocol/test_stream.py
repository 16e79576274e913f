"""The `Play` stream (one per seat per match) against the unary calls: real servers, real sockets.

The referee's gRPC player plays on the stream when the bot serves it and falls back to unary calls,
asking once, when it does not; a match plays the same either way, each seat on a stream of its own;
late answers, errors and illegal answers forfeit as they do over unary calls; the deltas a stream
carries merge back into the very information states the engine gave.
"""

from __future__ import annotations

import contextlib
import random
import signal
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest

from referee.botkit.protocol import bot_pb2, bot_pb2_grpc, convert
from referee.botkit.protocol.convert import ProtocolError
from referee.botkit.sdk import Bot, BotServicer, create_server
from referee.engine.games import GAMES, get_game
from referee.engine.games.base import Action
from referee.engine.match import MatchStart, Status, TimeControl, Turn, play_match
from referee.engine.playout import playout
from referee.tools.grpc_player import GrpcPlayer

PLAY = "/septet.v1.Bot/Play"


class Recording(Bot):
    """Answers the last legal action and keeps, per seat, every (info, legal) it was asked."""

    name = "recording"

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[int, list[tuple[Any, tuple[Action, ...]]]] = {}

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.seen.setdefault(info.seat, []).append((info, legal))
        return legal[-1]


@contextlib.contextmanager
def serving(bot: Bot) -> Iterator[str]:
    server, bound = create_server(bot, "127.0.0.1:0")
    server.start()
    try:
        yield bound
    finally:
        server.stop(None).wait()


@contextlib.contextmanager
def serving_servicer(servicer: bot_pb2_grpc.BotServicer, *interceptors: Any) -> Iterator[str]:
    """A plain grpcio server for a servicer of the test's own (no SDK around it)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16), interceptors=list(interceptors))
    bot_pb2_grpc.add_BotServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(None).wait()


def played_both_ways(game_id: str, players: int, seed: int) -> tuple[Recording, Recording, list[Any]]:
    """The same seeded match with a stream-playing and a unary-playing referee; their bots."""
    bots, outcomes = [], []
    for stream in (True, False):
        bot = Recording()
        with serving(bot) as address:
            referee = [GrpcPlayer(address, f"seat{seat}", stream=stream) for seat in range(players)]
            try:
                outcomes.append(play_match(game_id, referee, seed=seed, time_control=TimeControl()))
            finally:
                for player in referee:
                    player.close()
            assert all(player.streaming is stream for player in referee)
        bots.append(bot)
    return bots[0], bots[1], outcomes


@pytest.mark.parametrize("game_id", list(GAMES))
def test_a_match_on_the_stream_gives_the_bot_what_unary_calls_give_it(game_id: str) -> None:
    game = get_game(game_id)
    on_stream, on_unary, outcomes = played_both_ways(game_id, game.players.stop - 1, seed=5)
    assert outcomes[0].forfeits == [] and outcomes[0].result == outcomes[1].result
    assert on_stream.seen == on_unary.seen, "every seat saw the same states and legal actions"
    forced = sum(len(legal) == 1 for asked in on_stream.seen.values() for _, legal in asked)
    assert forced > 0 and sum(map(len, on_stream.seen.values())) == outcomes[0].decisions


class StreamLog(BotServicer):
    """The SDK's servicer, noting every Play stream's messages (kind, seat; -1 for `end`) and how
    many streams are over on the server's side (ended, or cancelled by the referee)."""

    def __init__(self, bot: Bot) -> None:
        super().__init__(bot)
        self.streams: list[list[tuple[str, int]]] = []
        self.over = threading.Semaphore(0)

    def Play(self, request_iterator: Iterator[bot_pb2.PlayRequest], context: grpc.ServicerContext) -> Any:
        log: list[tuple[str, int]] = []
        self.streams.append(log)
        context.add_callback(self.over.release)

        def noted() -> Iterator[bot_pb2.PlayRequest]:
            for request in request_iterator:
                which = request.WhichOneof("message") or ""
                seat = {"start": request.start.seat, "decide": request.decide.seat}.get(which, -1)
                log.append((which, seat))
                yield request

        yield from super().Play(noted(), context)

    def wait_over(self, count: int) -> bool:
        """Whether `count` streams are over (waiting a little for the server to see the last)."""
        return all(self.over.acquire(timeout=10) for _ in range(count))


def test_each_seat_has_a_stream_of_its_own_for_one_match_and_it_ends_cleanly() -> None:
    servicer = StreamLog(Recording())
    with serving_servicer(servicer) as address:
        player = GrpcPlayer(address, "the same bot in every seat")
        try:
            for seed in (1, 2):
                outcome = play_match("oh7", [player] * 4, seed=seed, time_control=TimeControl())
                assert outcome.forfeits == []
        finally:
            player.close()
    assert len(servicer.streams) == 8, "one stream per seat per match"
    assert servicer.wait_over(8)
    for log in servicer.streams:
        (start_kind, seat), *decisions, (end_kind, _) = log
        assert (start_kind, end_kind) == ("start", "end")
        assert decisions and all(kind == "decide" and asked == seat for kind, asked in decisions)
    assert Counter(log[0][1] for log in servicer.streams) == {0: 2, 1: 2, 2: 2, 3: 2}


class UnaryOnly(bot_pb2_grpc.BotServicer):
    """A bot of unary calls only, as a bot generated from an older bot.proto is: Play answers
    UNIMPLEMENTED (the generated base class does)."""

    def StartMatch(self, request: Any, context: Any) -> bot_pb2.StartMatchResponse:
        return bot_pb2.StartMatchResponse()

    def Decide(self, request: bot_pb2.DecideRequest, context: Any) -> bot_pb2.DecideResponse:
        assert not request.changed and request.kept_tricks == 0, "a unary request is whole"
        return bot_pb2.DecideResponse(index=0)

    def EndMatch(self, request: Any, context: Any) -> bot_pb2.EndMatchResponse:
        return bot_pb2.EndMatchResponse()


class Counting(grpc.ServerInterceptor):  # type: ignore[type-arg]
    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def intercept_service(self, continuation: Any, handler_call_details: Any) -> Any:
        self.calls[handler_call_details.method.rsplit("/", 1)[-1]] += 1
        return continuation(handler_call_details)


def test_a_bot_without_the_stream_is_asked_once_then_played_by_unary_calls() -> None:
    counting = Counting()
    with serving_servicer(UnaryOnly(), counting) as address:
        player = GrpcPlayer(address, "unary")
        try:
            outcomes = [
                play_match("oh-hell", [player] * 3, seed=seed, time_control=TimeControl()) for seed in (1, 2)
            ]
        finally:
            player.close()
    assert all(outcome.forfeits == [] for outcome in outcomes)
    assert player.streaming is False
    decisions = sum(outcome.decisions for outcome in outcomes)
    assert counting.calls == {"Play": 1, "StartMatch": 6, "Decide": decisions, "EndMatch": 6}


class Stalling(Bot):
    """Answers at once, except its `stall_at`-th decision, which waits to be released (or 3 s)."""

    name = "stalling"

    def __init__(self, stall_at: int) -> None:
        super().__init__()
        self.stall_at = stall_at
        self.calls = 0
        self.release = threading.Event()

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.calls += 1
        if self.calls == self.stall_at:
            self.release.wait(3)
        return legal[0]


def test_a_late_answer_on_the_stream_forfeits_the_seat_on_time_and_cancels_its_stream() -> None:
    slow = Stalling(stall_at=3)
    servicer = StreamLog(slow)
    with serving_servicer(servicer) as slow_address, serving(Recording()) as other_address:
        players = [
            GrpcPlayer(slow_address, "slow"),
            GrpcPlayer(other_address, "b"),
            GrpcPlayer(other_address, "c"),
        ]
        try:
            outcome = play_match("oh-hell", players, seed=3, time_control=TimeControl(0.2, 0.3))
        finally:
            slow.release.set()
            for player in players:
                player.close()
        assert servicer.wait_over(1), "the late seat's stream was not cancelled"
    assert outcome.forfeits == [outcome.forfeits[0]] and outcome.forfeits[0].seat == 0
    assert outcome.forfeits[0].status is Status.TIMEOUT
    assert outcome.forfeits[0].reason == "no answer within 0.50 s (decision time and bank)"
    assert outcome.result.ranks is not None and outcome.result.ranks[0] == 3
    (log,) = servicer.streams
    assert [kind for kind, _ in log] == ["start", "decide", "decide", "decide"], (
        "no `end` on a cancelled stream"
    )


class Failing(Bot):
    """Raises on its third decision or, if `illegal`, answers something that is no legal action."""

    name = "failing"

    def __init__(self, *, illegal: bool) -> None:
        super().__init__()
        self.illegal = illegal
        self.calls = 0

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.calls += 1
        if self.calls == 3:
            if self.illegal:
                return "no such card"
            raise ValueError("no idea what to play")
        return legal[0]


@pytest.mark.parametrize("illegal", [False, True], ids=["raises", "illegal"])
def test_an_error_or_an_illegal_answer_on_the_stream_forfeits_as_over_unary_calls(illegal: bool) -> None:
    forfeits = []
    for stream in (True, False):
        with serving(Failing(illegal=illegal)) as address:
            player = GrpcPlayer(address, "failing", stream=stream)
            try:
                outcome = play_match("oh-hell", [player] * 3, seed=8, time_control=TimeControl())
            finally:
                player.close()
        forfeits.append(outcome.forfeits)
    assert forfeits[0] == forfeits[1] and len(forfeits[0]) == 1, "the same forfeit either way"
    (forfeit,) = forfeits[0]
    if illegal:
        assert forfeit.status is Status.INVALID and forfeit.reason.startswith(
            "answered a card 'no such card'"
        )
    else:
        assert forfeit.status is Status.ERROR
        assert forfeit.reason == "INTERNAL: failing: decide raised ValueError: no idea what to play"


def test_a_new_match_or_closing_the_player_cancels_the_streams_of_a_match_that_never_ended() -> None:
    servicer = StreamLog(Recording())

    def start(match_id: str, seat: int) -> MatchStart:
        return MatchStart(match_id, "oh-hell", seat, 3, {}, ["a", "b", "c"], None)

    with serving_servicer(servicer) as address:
        player = GrpcPlayer(address, "left in the middle")
        player.start_match(start("m", 1))
        player.start_match(start("n", 0))
        assert servicer.wait_over(1), "the stream of the match that never ended outlived the next start"
        player.close()
        assert servicer.wait_over(1), "the stream outlived its player"
    assert servicer.streams == [[("start", 1)], [("start", 0)]] and player.streaming is True


class Interrupted(Exception):
    """What the test's signal handler raises, as Ctrl-C's raises KeyboardInterrupt."""


def test_a_signal_while_waiting_on_the_stream_leaves_a_player_that_still_closes() -> None:
    seat, asked = next(requests_of_a_game("oh-hell", 3, 4))
    slow = Stalling(stall_at=1)

    def interrupt(signum: int, frame: Any) -> None:
        raise Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt)
    with serving(slow) as address:
        player = GrpcPlayer(address, "interrupted")
        try:
            player.start_match(MatchStart("m", "oh-hell", seat, 3, {}, ["a", "b", "c"], None))
            signal.setitimer(signal.ITIMER_REAL, 0.3)
            with pytest.raises(Interrupted):
                player.decide_turn(
                    Turn("m", "oh-hell", seat, asked["kind"], None, None), asked["info"], asked["legal"]
                )
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            slow.release.set()
            player.close()  # returns: the interrupted stream's freed call is not polled again


# What a stream carries: deltas of the seat's information state


def requests_of_a_game(game_id: str, players: int, seed: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """(seat, decide_request arguments) for every decision a seeded random game asks."""
    game = get_game(game_id)
    for step in playout(game, game.start(players), random.Random(seed)):
        decision = game.to_move(step.state)
        if decision is None or decision.is_chance:
            continue
        for seat in decision.seats:
            yield seat, {
                "match_id": "m", "seat": seat, "game": game_id, "kind": decision.kind,
                "info": game.information_state(step.state, seat),
                "legal": game.legal_actions(step.state, seat), "decision_ms": 1000, "bank_ms": 0,
            }  # fmt: skip


@pytest.mark.parametrize("game_id", list(GAMES))
def test_stream_deltas_merge_back_into_the_engines_states_and_send_each_finished_trick_once(
    game_id: str,
) -> None:
    game = get_game(game_id)
    for players in (game.players.start, game.players.stop - 1):
        sent: dict[int, convert.SeatSent] = {}
        states: dict[int, convert.StreamState] = {}
        tricks_sent: Counter[int] = Counter()
        finished_seen: dict[int, set[tuple[int, int]]] = {}
        for seat, asked in requests_of_a_game(game_id, players, seed=players):
            play = convert.play_decide_request(**asked, sent=sent.setdefault(seat, convert.SeatSent()))
            wire = bot_pb2.PlayRequest.FromString(play.SerializeToString()).decide
            info = convert.info_from_request(wire, states.setdefault(seat, convert.StreamState()))
            assert info == asked["info"] and convert.legal_from_request(wire) == asked["legal"]
            field = convert.INFO_FIELD[game_id]
            finished = "history" if field == "black_sevens" else "tricks"
            tricks_sent[seat] += len(getattr(getattr(wire, field), finished))
            round_key = getattr(info, "round_index" if field == "black_sevens" else "round")
            held = getattr(info, finished)
            finished_seen.setdefault(seat, set()).update((round_key, index) for index in range(len(held)))
        assert tricks_sent == Counter({seat: len(seen) for seat, seen in finished_seen.items() if seen})


def test_a_stream_rejects_what_it_cannot_merge_and_a_unary_request_must_be_whole() -> None:
    asked = next(asked for _, asked in requests_of_a_game("oh-hell", 4, 1) if asked["info"].tricks)
    whole = convert.decide_request(**asked)
    delta = bot_pb2.DecideRequest()
    delta.CopyFrom(whole)
    delta.changed.append("hand")
    with pytest.raises(ProtocolError, match="a Decide request is whole"):
        convert.info_from_request(delta)
    with pytest.raises(ProtocolError, match=r"a delta .* before any whole information state"):
        convert.info_from_request(delta, convert.StreamState())
    state = convert.StreamState()
    convert.info_from_request(whole, state)
    for change, kept, message in (
        ("no_such_field", 0, "`changed` names 'no_such_field', which is not a field of BiddingInfoState"),
        ("tricks", 99, "kept_tricks is 99, but the stream carried"),
        ("hand", 1, "kept_tricks is set but `tricks` did not change"),
    ):
        delta.ClearField("changed")
        delta.changed.append(change)
        delta.kept_tricks = kept
        with pytest.raises(ProtocolError, match=message):
            convert.info_from_request(delta, state)


def test_a_stream_the_sdk_cannot_merge_ends_with_invalid_argument() -> None:
    seat, asked = next(requests_of_a_game("oh-hell", 3, 2))
    delta = convert.decide_request(**asked)
    delta.changed.append("hand")
    start = convert.start_match_request(
        match_id="m", game="oh-hell", seat=seat, num_players=3, options={}, seat_names=["a", "b", "c"],
        time_control=None,
    )  # fmt: skip
    requests = [bot_pb2.PlayRequest(start=start), bot_pb2.PlayRequest(decide=delta)]
    with serving(Recording()) as address, grpc.insecure_channel(address) as channel:
        answers = bot_pb2_grpc.BotStub(channel).Play(iter(requests), timeout=5)  # type: ignore[no-untyped-call]
        assert next(answers).WhichOneof("message") == "started"
        with pytest.raises(grpc.RpcError) as raised:
            next(answers)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "before any whole information state" in str(raised.value.details())
