"""Self-hosted bots: a bot dials out to the Arena (Connect) and plays its seats from its own machine.

The relay is tested on real Redis (a database index of the test's own), the Arena over a real
gRPC socket, and matches on the worker's own code with real sandboxed bots in the other seats; the
self-hosted bot here is a small client on the test's thread that speaks the Connect stream as any
bot would. Every refusal is checked to change nothing: the seat's request still waits, and the
worker takes the right answer afterwards.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import grpc
import pytest
import redis
from bot_versions import tar_folder, version_from_archive
from django.contrib.auth.models import AbstractBaseUser
from platform_support import EXAMPLES
from self_hosted_support import BotClient, play_seats, wait_for

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc, bot_pb2
from referee.engine.games import get_game
from referee.tools.grpc_stream import StreamError
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.self_hosted import SelfHostedRefused, self_hosted_bot_register
from septet_platform.challenges.services import ChallengeInvalid, challenge_request
from septet_platform.ladders.matchmaking import _candidates
from septet_platform.ladders.models import Ladder
from septet_platform.live import bot_relay
from septet_platform.live.bot_relay import AnswerRefusal, RelayedBotPlayer, RelayStream, relay_answer
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat

STARTED = bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()).SerializeToString()


# The relay alone (real Redis) --------------------------------------------------------------------


def test_a_relayed_request_takes_one_answer_and_only_from_its_own_bot(live_redis: redis.Redis) -> None:
    stream = RelayStream(7)
    answered: list[bytes] = []
    worker = threading.Thread(target=lambda: answered.append(stream.exchange(b"start", 5.0)))
    worker.start()
    handle = bot_relay.next_handle(7, timeout=5.0)
    assert handle == stream.handle
    assert bot_relay.outstanding_requests(7).get(handle) == (1, b"start")
    # Tried: another bot answering this seat, an unknown handle, then the right answer twice.
    assert relay_answer(bot_id=8, handle=handle, answer=STARTED) is AnswerRefusal.NOT_YOURS
    assert relay_answer(bot_id=7, handle="no-such-seat", answer=STARTED) is AnswerRefusal.NOT_YOURS
    assert bot_relay.outstanding_requests(7).get(handle) == (1, b"start"), "a refusal changed nothing"
    assert relay_answer(bot_id=7, handle=handle, answer=STARTED) is None
    assert relay_answer(bot_id=7, handle=handle, answer=STARTED) is AnswerRefusal.NOT_DUE
    worker.join(timeout=5.0)
    assert answered == [STARTED]
    assert bot_relay.outstanding_requests(7).get(handle) is None


def test_a_seat_that_is_not_answered_in_time_times_out_and_a_late_answer_is_refused(
    live_redis: redis.Redis,
) -> None:
    stream = RelayStream(7)
    began = time.monotonic()
    with pytest.raises(StreamError) as raised:
        stream.exchange(b"decide", 0.3)
    assert raised.value.code is grpc.StatusCode.DEADLINE_EXCEEDED and stream.expired
    assert 0.3 <= time.monotonic() - began < 2.0
    assert relay_answer(bot_id=7, handle=stream.handle, answer=STARTED) is AnswerRefusal.NOT_DUE


# The Arena's Connect stream (real gRPC, real Redis, the test database) ----------------------------


@pytest.fixture
def owner(django_user_model: type) -> AbstractBaseUser:
    return django_user_model.objects.create_user("carol")


@pytest.fixture
def registered(owner: AbstractBaseUser, live_redis: redis.Redis) -> tuple[Bot, str]:
    return self_hosted_bot_register(owner=owner, name="carols-gpu-bot", games=["oh-hell", "oh7"])


@pytest.fixture
def bot_channel(arena_address: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(arena_address) as opened:
        yield opened


def _worker_exchange(stream: RelayStream, request: bytes, timeout: float = 10.0) -> Callable[[], Any]:
    """Starts the worker's side of one exchange on a thread; returns a function that joins it and
    gives the answer (or the error)."""
    found: list[Any] = []

    def run() -> None:
        try:
            found.append(stream.exchange(request, timeout))
        except StreamError as error:
            found.append(error)

    thread = threading.Thread(target=run)
    thread.start()

    def joined() -> Any:
        thread.join(timeout=timeout + 5)
        return found[0]

    return joined


START = bot_pb2.PlayRequest(
    start=bot_pb2.StartMatchRequest(match_id="m1", game="oh-hell", seat=1, num_players=3)
)


@pytest.mark.django_db(transaction=True)
def test_registering_a_self_hosted_bot_checks_its_name_and_games(owner: AbstractBaseUser) -> None:
    for name, games, why in (
        ("Bad Name!", ["oh-hell"], "lower-case"),
        ("fine-name", [], "at least one game"),
        ("fine-name", ["poker"], "unknown game id 'poker'"),
    ):
        with pytest.raises(SelfHostedRefused, match=why):
            self_hosted_bot_register(owner=owner, name=name, games=games)
    assert not Bot.objects.exists(), "a refused registration created nothing"
    bot, token = self_hosted_bot_register(owner=owner, name="fine-name", games=["oh-hell"])
    assert bot.self_hosted and token.startswith("sep_")
    version = BotVersion.objects.get(bot=bot)
    assert version.status == BotVersion.Status.ACTIVE and version.archive == ""
    with pytest.raises(SelfHostedRefused, match="taken"):
        self_hosted_bot_register(owner=owner, name="fine-name", games=["oh7"])


@pytest.mark.django_db(transaction=True)
def test_connect_takes_only_a_token_scoped_to_one_self_hosted_bot_and_that_token_nothing_else(
    bot_channel: grpc.Channel, registered: tuple[Bot, str], owner: AbstractBaseUser
) -> None:
    bot, scoped = registered
    _, account_token = api_token_create(user=owner, name="laptop")
    tried = {
        "an account token on Connect": (account_token, grpc.StatusCode.PERMISSION_DENIED),
        "a malformed token": ("sep_nonsense", grpc.StatusCode.UNAUTHENTICATED),
        "no token at all": ("", grpc.StatusCode.UNAUTHENTICATED),
    }
    for what, (token, code) in tried.items():
        client = BotClient(bot_channel, token) if token else None
        if client is None:
            call = arena_pb2_grpc.ArenaStub(bot_channel).Connect(iter(()))
            with pytest.raises(grpc.RpcError) as raised:
                next(call)
            assert raised.value.code() == code, what
            continue
        client.close()
        assert client.status() == code, what
    # The scoped token may not read or submit anything with the account.
    stub = arena_pb2_grpc.ArenaStub(bot_channel)
    with pytest.raises(grpc.RpcError) as raised:
        stub.ListMatches(arena_pb2.ListMatchesRequest(), metadata=(("authorization", f"Bearer {scoped}"),))
    assert raised.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "may only Connect" in (raised.value.details() or "")
    assert bot_relay.bot_connection(bot.pk) is None, "no refused call left a connection behind"


@pytest.mark.django_db(transaction=True)
def test_a_connected_bot_answers_its_seats_and_refusals_change_nothing(
    bot_channel: grpc.Channel, registered: tuple[Bot, str]
) -> None:
    bot, token = registered
    client = BotClient(bot_channel, token)
    attached = client.next().attached
    assert attached.bot == bot.name and attached.connection
    connected = bot_relay.bot_connection(bot.pk)
    assert connected is not None and connected.connection == attached.connection
    stream = RelayStream(bot.pk)
    answer = _worker_exchange(stream, START.SerializeToString())
    sent = client.next().request
    assert sent.seat == stream.handle and sent.request == START
    # Tried: an answer for a seat this bot was not given, and one with no answer in it.
    client.send("someone-elses-seat", bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    refused = client.next().refused
    assert refused.seat == "someone-elses-seat" and "no seat of this bot" in refused.reason
    client._requests.put(arena_pb2.ConnectRequest(seat=stream.handle))
    assert "needs a seat handle and an answer" in client.next().refused.reason
    assert bot_relay.outstanding_requests(bot.pk).get(stream.handle) is not None, "still waiting"
    client.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    assert bot_pb2.PlayResponse.FromString(answer()).WhichOneof("message") == "started"
    client.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    assert "no request is waiting" in client.next().refused.reason, "an answer is taken once"
    client.close()
    assert client.status() == grpc.StatusCode.OK
    deadline = time.monotonic() + 5
    while bot_relay.bot_connection(bot.pk) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bot_relay.bot_connection(bot.pk) is None, "a closed connection is not shown as connected"


@pytest.mark.django_db(transaction=True)
def test_a_newer_connection_replaces_the_older_and_gets_its_unanswered_requests(
    bot_channel: grpc.Channel, registered: tuple[Bot, str]
) -> None:
    bot, token = registered
    first = BotClient(bot_channel, token)
    first.next()
    stream = RelayStream(bot.pk)
    answer = _worker_exchange(stream, START.SerializeToString())
    assert first.next().request.seat == stream.handle  # sent, then the bot's machine went away
    second = BotClient(bot_channel, token)
    assert second.next().HasField("attached")
    again = second.next().request
    assert again.seat == stream.handle and again.request == START, "the unanswered request, again"
    assert first.status() == grpc.StatusCode.ABORTED
    second.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    assert bot_pb2.PlayResponse.FromString(answer()).WhichOneof("message") == "started"
    second.close()
    assert second.status() == grpc.StatusCode.OK


@pytest.mark.django_db(transaction=True)
def test_a_bot_that_restarted_is_given_its_seat_whole_and_its_answer_is_the_one_the_worker_waits_for(
    bot_channel: grpc.Channel, registered: tuple[Bot, str]
) -> None:
    """A new connection may be a new process that never saw the seat: it gets the seat's `start`
    again (its `started` is not passed on) and the waiting decision whole, with every field, and
    the worker takes its answer to that decision as the answer to the delta it sent."""
    bot, token = registered
    first = BotClient(bot_channel, token)
    first.next()
    stream = RelayStream(bot.pk)
    started = _worker_exchange(stream, START.SerializeToString())
    assert first.next().request.request == START
    first.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    assert bot_pb2.PlayResponse.FromString(started()).WhichOneof("message") == "started"
    delta = bot_pb2.PlayRequest(decide=bot_pb2.DecideRequest(match_id="m1", seat=1, decision_time_ms=900))
    whole = bot_pb2.PlayRequest(
        decide=bot_pb2.DecideRequest(match_id="m1", seat=1, game="oh-hell", decision_time_ms=900)
    )
    stream.remember_whole(whole.SerializeToString())
    decided = _worker_exchange(stream, delta.SerializeToString())
    assert first.next().request.request == delta  # sent; then the bot's process died with its state
    second = BotClient(bot_channel, token)
    assert second.next().HasField("attached")
    given = [second.next().request, second.next().request]
    assert [each.seat for each in given] == [stream.handle] * 2
    assert [each.request for each in given] == [START, whole], "the start again, then the decision whole"
    second.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    second.send(stream.handle, bot_pb2.PlayResponse(decision=bot_pb2.DecideResponse(index=2)))
    answer = bot_pb2.PlayResponse.FromString(decided())
    assert answer.WhichOneof("message") == "decision" and answer.decision.index == 2
    second.close()
    assert second.status() == grpc.StatusCode.OK


@pytest.mark.django_db(transaction=True)
def test_a_flood_of_messages_ends_the_connection_with_resource_exhausted(
    bot_channel: grpc.Channel, registered: tuple[Bot, str]
) -> None:
    _, token = registered
    client = BotClient(bot_channel, token)
    client.next()
    for _ in range(2000):
        client.send("flood", bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
    assert client.status() == grpc.StatusCode.RESOURCE_EXHAUSTED


@pytest.mark.django_db(transaction=True)
def test_connected_bots_hold_no_thread_so_more_connect_than_the_arena_has_threads(
    owner: AbstractBaseUser, live_redis: redis.Redis, settings: Any
) -> None:
    from septet_platform.arena_api.server import create_server

    settings.SEPTET_ARENA_STREAMS = 3
    threads, count = 8, 12
    server, port = create_server("127.0.0.1:0", max_workers=threads)
    server.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        bots = [
            self_hosted_bot_register(owner=owner, name=f"gpu-bot-{n}", games=["oh-hell"])
            for n in range(count)
        ]
        clients = [BotClient(channel, token) for _, token in bots]
        assert all(client.next().HasField("attached") for client in clients), "more bots than threads attach"
        started = time.monotonic()
        arena_pb2_grpc.ArenaStub(channel).ListLadders(arena_pb2.ListLaddersRequest(), timeout=5)
        assert time.monotonic() - started < 2, "a unary call still finds a thread"
        streams = [RelayStream(bot.pk) for bot, _ in bots]
        answers = [_worker_exchange(stream, START.SerializeToString()) for stream in streams]
        for client, stream in zip(clients, streams, strict=True):
            assert client.next().request.seat == stream.handle
            client.send(stream.handle, bot_pb2.PlayResponse(started=bot_pb2.StartMatchResponse()))
        assert all(bot_pb2.PlayResponse.FromString(answer()).HasField("started") for answer in answers)
        for client in clients:
            client.close()
        assert all(client.status() == grpc.StatusCode.OK for client in clients)
    finally:
        channel.close()
        server.stop(grace=None).wait()


# Where self-hosted bots play ---------------------------------------------------------------------


@pytest.fixture
def house(django_user_model: type) -> dict[str, BotVersion]:
    owner = django_user_model.objects.create_user("house")
    games = ["oh-hell", "oh7"]
    return {
        name: version_from_archive(owner, name, tar_folder(EXAMPLES / name), games=games, is_house=True)
        for name in ("greedy", "random")
    }


@pytest.fixture
def oh_hell(db: None) -> Ladder:
    game = get_game("oh-hell")
    return Ladder.objects.create(
        game="oh-hell", min_players=game.players.start, max_players=game.players.stop - 1
    )


@pytest.mark.django_db(transaction=True)
def test_a_self_hosted_bot_is_never_on_the_sandboxed_ladder_and_is_challenged_only_when_connected(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    owner: AbstractBaseUser,
    house: dict[str, BotVersion],
    oh_hell: Ladder,
) -> None:
    bot, token = registered
    assert bot.pk not in {candidate.version.bot_id for candidate in _candidates(oh_hell, random.Random(1))}
    seats = [(bot.name, 0), ("greedy", 0), ("random", 0)]
    with pytest.raises(ChallengeInvalid, match="not connected now"):
        challenge_request(requester=owner, game="oh-hell", seats=seats)
    assert not Match.objects.exists(), "a refused challenge created nothing"
    client = BotClient(bot_channel, token)
    client.next()
    challenge = challenge_request(requester=owner, game="oh-hell", seats=seats)
    assert challenge.matches.count() == 3
    client.close()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("dies_after", [None, 6], ids=["plays-to-the-end", "dies-mid-match"])
def test_a_challenge_with_a_self_hosted_seat_is_played_by_the_worker_and_a_silent_bot_forfeits_on_time(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    owner: AbstractBaseUser,
    house: dict[str, BotVersion],
    oh_hell: Ladder,
    dies_after: int | None,
) -> None:
    bot, token = registered
    client = BotClient(bot_channel, token)
    client.next()
    challenge = challenge_request(
        requester=owner, game="oh-hell", seats=[(bot.name, 0), ("greedy", 0), ("random", 0)]
    )
    match = challenge.matches.order_by("pk").first()
    assert match is not None
    stop, answered = threading.Event(), []
    player = threading.Thread(target=play_seats, args=(client, stop, answered), daemon=True)
    player.start()
    if dies_after is not None:
        threading.Thread(
            target=lambda: (wait_for(lambda: len(answered) >= dies_after), stop.set()), daemon=True
        ).start()
    played = services.match_play(match_id=match.pk, worker="t")
    stop.set()
    client.close()
    assert played.outcome == "recorded"
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    seats = {
        seat.bot_version.bot.name: seat
        for seat in Seat.objects.filter(match=match).select_related("bot_version__bot")
    }
    mine = seats[bot.name]
    if dies_after is None:
        assert answered[0] == "start" and answered.count("decide") > 10 and answered[-1] == "end"
        assert not mine.forfeit_status, mine.forfeit_reason
    else:
        assert mine.forfeit_status == "TIMEOUT", (mine.forfeit_status, mine.forfeit_reason)
    for name in ("greedy", "random"):
        assert not seats[name].forfeit_status, "the other seats' game went on unharmed"


@pytest.mark.django_db(transaction=True)
def test_septet_bots_and_the_arena_show_whether_a_self_hosted_bot_is_connected(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    house: dict[str, BotVersion],
    septet: Callable[..., tuple[int, str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the table's cells whole, whatever the terminal runs it
    bot, token = registered
    code, out, _ = septet("bots")
    assert code == 0 and "self-hosted, not connected" in out and "house" in out
    client = BotClient(bot_channel, token)
    client.next()
    code, out, _ = septet("bots", "--json")
    listed = {entry["name"]: entry for entry in json.loads(out)["bots"]}
    assert listed[bot.name]["self_hosted"] and listed[bot.name]["connected"]
    since = datetime.fromisoformat(listed[bot.name]["connected_since"])
    assert abs((datetime.now(UTC) - since).total_seconds()) < 60, "connected since a moment ago"
    assert not listed["greedy"].get("self_hosted") and not listed["greedy"].get("connected")
    code, out, _ = septet("bots")
    assert code == 0 and f"self-hosted, connected since {since:%H:%M} UTC" in out
    client.close()


def test_a_relayed_seat_whose_bot_never_answers_its_start_forfeits_with_the_reason(
    live_redis: redis.Redis,
) -> None:
    """Nobody is connected for bot 9: its start times out, and its first decision forfeits the
    seat saying why (not a crash of the player), while the other seats play the game out."""
    from referee.engine.match import TimeControl, play_match
    from referee.engine.players import RandomPlayer

    game = get_game("oh-hell")
    relayed = RelayedBotPlayer(9, "nobody-home v1")
    outcome = play_match(
        game,
        [relayed, RandomPlayer(random.Random(1)), RandomPlayer(random.Random(2))],
        seed=5,
        time_control=TimeControl(1.0, 1.0),
        match_id="relay-forfeit",
    )
    relayed.close()
    assert [forfeit.seat for forfeit in outcome.forfeits] == [0]
    reason = outcome.forfeits[0].reason
    assert "did not start or was closed" in reason and "AttributeError" not in reason, reason
    assert bot_relay.outstanding_requests(9) == {}, "nothing is left waiting for the bot"
