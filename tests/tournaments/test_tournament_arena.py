"""The tournament RPCs of the Arena, served for real in this process: the list, one tournament with
its progress and standings, entering with a token, and every refusal with nothing changed."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
import pytest
from django.contrib.auth.models import User
from tournament_data import make_version

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.services import api_token_create
from septet_platform.tournaments.models import Entrant, Tournament

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def arena(arena_address: str) -> Iterator[arena_pb2_grpc.ArenaStub]:
    with grpc.insecure_channel(arena_address) as channel:
        yield arena_pb2_grpc.ArenaStub(channel)


def _token(user: User) -> list[tuple[str, str]]:
    _, plaintext = api_token_create(user=user, name="cli")
    return [("authorization", f"Bearer {plaintext}")]


def test_tournaments_are_listed_and_read_with_progress_and_standings(
    arena: arena_pb2_grpc.ArenaStub, running_cup: Tournament
) -> None:
    listed = arena.ListTournaments(pb.ListTournamentsRequest()).tournaments
    assert [(t.name, t.game, t.format, t.table_size, t.status, t.entrants) for t in listed] == [
        ("cup", "oh-hell", "round-robin", 3, "running", 4)
    ]

    response = arena.GetTournament(pb.GetTournamentRequest(name="cup"))

    assert (response.progress.done, response.progress.total, response.progress.current_round) == (12, 12, 1)
    assert [row.bot for row in response.standings] == ["ann-bot", "ben-bot", "cat-bot", "dan-bot"]
    assert response.standings[0].place == 1 and response.standings[0].mean_rank == 1.0
    assert response.standings[0].sets == 3 and response.standings[0].games == 9
    assert [e.version for e in response.entrants] == [1, 1, 1, 1]


def test_an_owner_enters_a_bot_with_a_token(arena: arena_pb2_grpc.ArenaStub, open_cup: Tournament) -> None:
    version = make_version("ada", "ada-bot")

    response = arena.EnterTournament(
        pb.EnterTournamentRequest(name="cup", bot="ada-bot"), metadata=_token(version.bot.owner)
    )

    assert response.bot == "ada-bot" and response.tournament.entrants == 1
    assert list(Entrant.objects.values_list("bot__name", flat=True)) == ["ada-bot"]


def test_every_refused_entry_is_answered_with_its_code_and_changes_nothing(
    arena: arena_pb2_grpc.ArenaStub, open_cup: Tournament
) -> None:
    ada = make_version("ada", "ada-bot")
    make_version("bob", "bob-bot")
    make_version("ada", "ada-duel", games=["oh7-duel"])
    token = _token(ada.bot.owner)
    attempts = [
        ("cup", "ada-bot", [], grpc.StatusCode.UNAUTHENTICATED, "needs an API token"),
        ("cup", "bob-bot", token, grpc.StatusCode.PERMISSION_DENIED, "bob-bot is not your bot"),
        ("cup", "ada-duel", token, grpc.StatusCode.FAILED_PRECONDITION, "does not play|no active version"),
        ("nope", "ada-bot", token, grpc.StatusCode.NOT_FOUND, "no tournament named 'nope'"),
        ("cup", "nobody", token, grpc.StatusCode.NOT_FOUND, "no bot named 'nobody'"),
    ]
    for name, bot, metadata, code, message in attempts:
        with pytest.raises(grpc.RpcError) as refused:
            arena.EnterTournament(pb.EnterTournamentRequest(name=name, bot=bot), metadata=metadata)
        assert refused.value.code() == code, (name, bot)
        assert any(part in refused.value.details() for part in message.split("|")), refused.value.details()
    assert not Entrant.objects.exists()

    with pytest.raises(grpc.RpcError) as missing:
        arena.GetTournament(pb.GetTournamentRequest(name="nope"))
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
