"""Every bad Arena input answers a clear status with a one-line reason and changes nothing:
bytes that do not parse, page tokens this server never gave, out-of-range strings and ids; and
server reflection is served only where settings allow it. Real gRPC over a real socket, against
the real server (the `arena_address` fixture)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from production_settings import production_setting

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.services import api_token_create
from septet_platform.arena_api.inputs import MAX_TEXT
from septet_platform.arena_api.selectors import BAD_PAGE_TOKEN
from septet_platform.arena_api.server import create_server
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)

ARENA = "/septet.v1.Arena/"


def metadata_of(username: str) -> list[tuple[str, str]]:
    """Call metadata with a new API token of `username` (created on first use)."""
    user, _ = User.objects.get_or_create(username=username)
    _, plaintext = api_token_create(user=user, name="cli")
    return [("authorization", f"Bearer {plaintext}")]


def refusal(call: Callable[[], Any]) -> grpc.RpcError:
    """The error a call fails with (failing the test if it succeeds)."""
    with pytest.raises(grpc.RpcError) as caught:
        result = call()
        if isinstance(result, Iterator):
            list(result)
    return caught.value


def assert_invalid(error: grpc.RpcError, what: str) -> None:
    """INVALID_ARGUMENT with a reason on one line, no Python traceback or conversion message."""
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (what, error.code(), error.details())
    details = error.details() or ""
    assert details and "\n" not in details and len(details) < 200, (what, details)
    assert "Exception" not in details and "int" not in details.split(), (what, details)


def test_request_bytes_that_do_not_parse_are_invalid_argument_on_every_kind_of_method(
    channel: grpc.Channel, ladder_bot_factory: Callable[..., BotVersion]
) -> None:
    ladder_bot_factory("ada", "alpha")
    md = metadata_of("ada")
    garbage = b"\xff\xff\xff"  # a field tag with no end: no message parses from it
    bad_utf8 = b"\x0a\x02\xc3\x28"  # field 1 (a string) holding bytes that are not UTF-8
    identity: dict[str, Any] = {"request_serializer": None, "response_deserializer": None}
    tried: dict[str, Callable[[], Any]] = {
        "GetMatch garbage": lambda: channel.unary_unary(f"{ARENA}GetMatch", **identity)(garbage, metadata=md),
        "GetBot name not UTF-8": lambda: channel.unary_unary(f"{ARENA}GetBot", **identity)(bad_utf8),
        "ListMatches garbage": lambda: channel.unary_unary(f"{ARENA}ListMatches", **identity)(
            garbage, metadata=md
        ),
        "GetReplay garbage (a stream answer)": lambda: channel.unary_stream(f"{ARENA}GetReplay", **identity)(
            garbage, metadata=md
        ),
        "SubmitBot garbage chunk (a stream request)": lambda: channel.stream_unary(
            f"{ARENA}SubmitBot", **identity
        )(iter([garbage]), metadata=md),
        "SetChallengesAccepted garbage": lambda: channel.unary_unary(
            f"{ARENA}SetChallengesAccepted", **identity
        )(garbage, metadata=md),
    }
    for what, call in tried.items():
        assert_invalid(refusal(call), what)
    assert Bot.objects.count() == 1 and BotVersion.objects.count() == 1 and not Match.objects.exists()
    assert Bot.objects.get().accepts_challenges


def test_a_page_token_this_server_did_not_give_is_invalid_argument_saying_so(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable[..., BotVersion],
    ladder_match_factory: Callable[..., Match],
) -> None:
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    for seed in range(3):
        ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3], seed=seed)
    md = metadata_of("ada")
    given = arena.ListMatches(pb.ListMatchesRequest(page_size=1), metadata=md).next_page_token
    when = given.split("|")[0]
    tried = {
        "5,000 digits (past int()'s limit)": "9" * 5000,
        "a good time and a 5,000-digit id": f"{when}|{'9' * 5000}",
        "an id past int64": f"{when}|{'9' * 25}",
        "a superscript digit (isdigit, not int)": f"{when}|\u00b2",
        "a time without a zone": "2026-01-01T00:00:00|5",
        "not a time": "yesterday|5",
        "a control character": f"{when}|1\x00",
        "one character past the bound": given + "x" * 64,
    }
    before = list(Match.objects.order_by("pk").values_list("pk", "status"))
    for what, token in tried.items():
        request = pb.ListMatchesRequest(page_token=token)
        error = refusal(functools.partial(arena.ListMatches, request, metadata=md))
        assert_invalid(error, what)
        assert error.details() == BAD_PAGE_TOKEN, what
    assert list(Match.objects.order_by("pk").values_list("pk", "status")) == before
    assert len(arena.ListMatches(pb.ListMatchesRequest(page_token=given), metadata=md).matches) == 2


def test_out_of_range_strings_and_ids_are_invalid_argument_and_change_nothing(
    arena: arena_pb2_grpc.ArenaStub, ladder_oh_hell: Ladder, ladder_bot_factory: Callable[..., BotVersion]
) -> None:
    ladder_bot_factory("ada", "alpha")
    ladder_bot_factory("ada", "beta")
    md = metadata_of("ada")
    long = "a" * 5000
    seats = [pb.ChallengeSeat(bot=name) for name in ("alpha", "beta", "b" * (MAX_TEXT + 1))]
    tried: dict[str, Callable[[], Any]] = {
        "GetLadder a 5,000-character game": lambda: arena.GetLadder(pb.GetLadderRequest(game=long)),
        "GetBot a 5,000-character name": lambda: arena.GetBot(pb.GetBotRequest(name=long)),
        "GetBot a name with a NUL": lambda: arena.GetBot(pb.GetBotRequest(name="alpha\x00")),
        "ListBots a 5,000-character owner": lambda: arena.ListBots(pb.ListBotsRequest(owner=long)),
        "ListMatches a 5,000-character bot": lambda: arena.ListMatches(
            pb.ListMatchesRequest(bot=long), metadata=md
        ),
        "ListMatches a status with a newline": lambda: arena.ListMatches(
            pb.ListMatchesRequest(status="finished\nforged log line"), metadata=md
        ),
        "GetMatch a negative id": lambda: arena.GetMatch(pb.GetMatchRequest(match_id=-1), metadata=md),
        "GetReplay a negative id": lambda: arena.GetReplay(pb.GetReplayRequest(match_id=-5), metadata=md),
        "FollowMatch a negative id": lambda: arena.FollowMatch(
            pb.FollowMatchRequest(match_id=-1), metadata=md
        ),
        "GetMatchLogs a negative id": lambda: arena.GetMatchLogs(
            pb.GetMatchLogsRequest(match_id=-(2**63)), metadata=md
        ),
        "GetChallenge a negative id": lambda: arena.GetChallenge(
            pb.GetChallengeRequest(challenge_id=-1), metadata=md
        ),
        "RequestChallenge a seat's 151-character bot": lambda: arena.RequestChallenge(
            pb.RequestChallengeRequest(game="oh-hell", seats=seats), metadata=md
        ),
        "RequestChallenge a 5,000-character game": lambda: arena.RequestChallenge(
            pb.RequestChallengeRequest(game=long, seats=seats[:2]), metadata=md
        ),
        "RequestChallenge -3 sets": lambda: arena.RequestChallenge(
            pb.RequestChallengeRequest(game="oh-hell", seats=seats[:2] + seats[:1], sets=-3), metadata=md
        ),
        "RequestChallenge 21 sets": lambda: arena.RequestChallenge(
            pb.RequestChallengeRequest(game="oh-hell", seats=seats[:2] + seats[:1], sets=21), metadata=md
        ),
        "RequestChallenge a seat of version -1": lambda: arena.RequestChallenge(
            pb.RequestChallengeRequest(
                game="oh-hell",
                seats=[pb.ChallengeSeat(bot=name, version=-1) for name in ("alpha", "beta", "alpha")],
            ),
            metadata=md,
        ),
        "ListMatches page_size -1": lambda: arena.ListMatches(
            pb.ListMatchesRequest(page_size=-1), metadata=md
        ),
        "ListMatches an unknown status": lambda: arena.ListMatches(
            pb.ListMatchesRequest(status="all"), metadata=md
        ),
        "SetChallengesAccepted a bot with a NUL": lambda: arena.SetChallengesAccepted(
            pb.SetChallengesAcceptedRequest(bot="alpha\x00", accepts=False), metadata=md
        ),
        "GetTournament a 5,000-character name": lambda: arena.GetTournament(
            pb.GetTournamentRequest(name=long)
        ),
        "EnterTournament a 5,000-character name": lambda: arena.EnterTournament(
            pb.EnterTournamentRequest(name=long, bot="alpha"), metadata=md
        ),
    }
    for what, call in tried.items():
        assert_invalid(refusal(call), what)
    assert not Match.objects.exists()
    assert all(Bot.objects.values_list("accepts_challenges", flat=True))


def reflected_services(address: str) -> set[str]:
    """The services a reflection client lists on `address` (RpcError when reflection is off)."""
    with grpc.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        answers = list(stub.ServerReflectionInfo(iter([request]), timeout=10))
    return {service.name for service in answers[0].list_services_response.service}


@pytest.mark.parametrize("served", [True, False])
def test_reflection_is_served_only_when_the_setting_says_so(settings: Any, served: bool) -> None:
    settings.SEPTET_ARENA_REFLECTION = served
    server, port = create_server("127.0.0.1:0")
    server.start()
    try:
        if served:
            assert "septet.v1.Arena" in reflected_services(f"127.0.0.1:{port}")
        else:
            error = refusal(lambda: reflected_services(f"127.0.0.1:{port}"))
            assert error.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        server.stop(grace=None).wait()


def test_production_turns_reflection_off_unless_the_environment_turns_it_on() -> None:
    assert production_setting("SEPTET_ARENA_REFLECTION") == "False"
    assert production_setting("SEPTET_ARENA_REFLECTION", {"SEPTET_ARENA_REFLECTION": "1"}) == "True"
