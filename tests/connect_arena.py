"""A stand-in Arena for the client side of self-hosted bots: `Arena.Connect` only, over real gRPC.

`ConnectArena` checks the bearer token, answers `attached` and hands each connection to the test as
a `Session`, through which the test sends seat requests and reads the answers. `SeatGame` is one
seat of a real engine game, the other seats played greedily: its requests are what the referee
sends that seat on `Play` (convert.play_decide_request, so every `decide` after the first is a
delta), and it applies the seat's answers, refusing an illegal one. The platform's own Connect is
tested with the platform; this is only what the client needs to be driven.
"""

from __future__ import annotations

import contextlib
import queue
import random
import threading
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc, bot_pb2, convert
from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, Action, Result
from referee.engine.match import TimeControl

ANSWER_SECONDS = 10.0
"""How long a test waits for an answer before it fails (answers come in milliseconds)."""
POLL_SECONDS = 0.05
"""How often a call's handler looks whether its call is still on."""
SERVER_OPTIONS = [
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 5_000),
]


@dataclass(frozen=True)
class _Abort:
    code: grpc.StatusCode
    details: str


class Session:
    """One Connect call as the server sees it: what it sends, and the answers read, per seat."""

    def __init__(
        self, request_iterator: Iterator[arena_pb2.ConnectRequest], metadata: dict[str, str]
    ) -> None:
        self.metadata = metadata
        self._outgoing: queue.Queue[arena_pb2.ConnectResponse | _Abort | None] = queue.Queue()
        self._answers: dict[str, queue.Queue[bot_pb2.PlayResponse]] = {}
        self._lock = threading.Lock()
        self.closed = threading.Event()
        """The client closed its side (or the call ended)."""
        threading.Thread(target=self._read, args=(request_iterator,), daemon=True).start()

    def attach(self, bot: str, connection: str) -> None:
        self._outgoing.put(
            arena_pb2.ConnectResponse(attached=arena_pb2.ConnectAttached(bot=bot, connection=connection))
        )

    def send(self, handle: str, request: bot_pb2.PlayRequest) -> None:
        self._outgoing.put(
            arena_pb2.ConnectResponse(request=arena_pb2.SeatRequest(seat=handle, request=request))
        )

    def answer(self, handle: str, timeout: float = ANSWER_SECONDS) -> bot_pb2.PlayResponse:
        """The seat's next answer (AssertionError when none comes in time)."""
        try:
            return self._queue(handle).get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no answer for seat {handle} within {timeout} s") from None

    def abort(self, code: grpc.StatusCode, details: str) -> None:
        self._outgoing.put(_Abort(code, details))

    def finish(self) -> None:
        """Ends the call with OK, as a server going down gracefully would."""
        self._outgoing.put(None)

    def responses(self, context: grpc.ServicerContext) -> Iterator[arena_pb2.ConnectResponse]:
        """What the test sent, until it finishes the call or the call ends (a handler blocked for
        good would keep its server's thread, and the interpreter waits for it at exit)."""
        while context.is_active():
            try:
                item = self._outgoing.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            if item is None:
                return
            if isinstance(item, _Abort):
                context.abort(item.code, item.details)
            yield item

    def _queue(self, handle: str) -> queue.Queue[bot_pb2.PlayResponse]:
        with self._lock:
            return self._answers.setdefault(handle, queue.Queue())

    def _read(self, request_iterator: Iterator[arena_pb2.ConnectRequest]) -> None:
        with contextlib.suppress(grpc.RpcError):
            for message in request_iterator:
                self._queue(message.seat).put(message.answer)
        self.closed.set()


class ConnectArena(arena_pb2_grpc.ArenaServicer):
    """The Arena's Connect for one bot and its token; every connection is handed to the test."""

    def __init__(self, token: str, bot: str = "connect-test") -> None:
        self.token = token
        self.bot = bot
        self.calls = 0
        """Connect calls received, refused ones included."""
        self.sessions: queue.Queue[Session] = queue.Queue()

    def next_session(self, timeout: float = ANSWER_SECONDS) -> Session:
        try:
            return self.sessions.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no connection within {timeout} s") from None

    def Connect(
        self, request_iterator: Iterator[arena_pb2.ConnectRequest], context: grpc.ServicerContext
    ) -> Iterator[arena_pb2.ConnectResponse]:
        self.calls += 1
        metadata = {key: value for key, value in context.invocation_metadata() if isinstance(value, str)}
        if metadata.get("authorization") != f"Bearer {self.token}":
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "unknown or revoked token")
        session = Session(request_iterator, metadata)
        session.attach(self.bot, f"c{self.calls}")
        self.sessions.put(session)
        yield from session.responses(context)


@contextlib.contextmanager
def serving_arena(arena: ConnectArena, address: str = "127.0.0.1:0") -> Iterator[tuple[grpc.Server, str]]:
    """A real gRPC server for `arena` (port 0: a free one); its bound host:port."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8), options=SERVER_OPTIONS)
    arena_pb2_grpc.add_ArenaServicer_to_server(arena, server)  # type: ignore[no-untyped-call]
    host = address.rpartition(":")[0]
    port = server.add_insecure_port(address)
    server.start()
    try:
        yield server, f"{host}:{port}"
    finally:
        server.stop(None).wait()


class SeatGame:
    """One seat of a real game, the others played by the game's greedy policy: the `Play`
    requests the referee would send that seat, and its answers applied to the game."""

    def __init__(
        self, match_id: str, seat: int, *, game_id: str = "oh-hell", players: int = 3, seed: int = 1
    ):
        self.match_id = match_id
        self.seat = seat
        self.game = get_game(game_id)
        self.rng = random.Random(seed)
        self.state: Any = self.game.start(players)
        self.players = players
        self.sent = convert.SeatSent()
        self.legal: tuple[Action, ...] = ()
        self.infos: list[Any] = []
        """The information states the seat was asked to decide in, whole, in order."""
        self.played: list[Action] = []

    def start(self) -> bot_pb2.PlayRequest:
        return bot_pb2.PlayRequest(
            start=convert.start_match_request(
                match_id=self.match_id,
                game=self.game.id,
                seat=self.seat,
                num_players=self.players,
                options={},
                seat_names=[f"p{seat}" for seat in range(self.players)],
                time_control=TimeControl(),
            )
        )

    def decide(self) -> bot_pb2.PlayRequest | None:
        """The seat's next decision (the game played on to it), or None once the game is over."""
        while (decision := self.game.to_move(self.state)) is not None:
            if decision.is_chance:
                outcome = self.game.sample_chance(self.state, self.rng)
                self.state = self.game.apply(self.state, CHANCE, outcome)
                continue
            others = [seat for seat in decision.seats if seat != self.seat]
            if not others:
                info = self.game.information_state(self.state, self.seat)
                self.legal = self.game.legal_actions(self.state, self.seat)
                self.infos.append(info)
                return convert.play_decide_request(
                    match_id=self.match_id,
                    seat=self.seat,
                    game=self.game.id,
                    kind=decision.kind,
                    info=info,
                    legal=self.legal,
                    decision_ms=1000,
                    bank_ms=10_000,
                    sent=self.sent,
                )
            legal = self.game.legal_actions(self.state, others[0])
            choice = self.game.greedy(self.game.information_state(self.state, others[0]), legal)
            self.state = self.game.apply(self.state, others[0], choice)
        return None

    def apply(self, answer: bot_pb2.PlayResponse) -> Action:
        """Plays the seat's answer (ProtocolError when it is not one of the legal actions)."""
        assert answer.WhichOneof("message") == "decision", f"a decision was due, not {answer}"
        action = convert.action_from_response(answer.decision, self.legal)
        self.state = self.game.apply(self.state, self.seat, action)
        self.played.append(action)
        return action

    def end(self) -> bot_pb2.PlayRequest:
        result = self.game.result(self.state) or Result((0,) * self.players, None, aborted=True)
        return bot_pb2.PlayRequest(
            end=convert.end_match_request(match_id=self.match_id, result=result, forfeits=[])
        )


def play_interleaved(session: Session, games: dict[str, SeatGame], decisions: int) -> dict[str, list[str]]:
    """Plays the seats together: every seat's start, then `decisions` rounds in which each seat is
    sent its next decision before any answer is read, then every seat's end. Returns the kinds of
    the answers each seat gave, in order; an illegal or missing answer fails."""
    kinds: dict[str, list[str]] = {handle: [] for handle in games}

    def take(handle: str) -> bot_pb2.PlayResponse:
        answer = session.answer(handle)
        kinds[handle].append(answer.WhichOneof("message") or "nothing")
        return answer

    for handle, game in games.items():
        session.send(handle, game.start())
    for handle in games:
        take(handle)
    for _ in range(decisions):
        asked = []
        for handle, game in games.items():
            request = game.decide()
            if request is not None:
                session.send(handle, request)
                asked.append(handle)
        for handle in asked:
            games[handle].apply(take(handle))
    for handle, game in games.items():
        session.send(handle, game.end())
    for handle in games:
        take(handle)
    return kinds
