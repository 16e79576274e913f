"""The Arena gRPC service, served for real on a free port against the test database: submission
with its auth and every refusal (storing nothing), the public reads, replays streamed, challenges
queued, a match followed, health and reflection."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from django.db import connection
from fixtures_intake import BOT_PY, MiB, file_info, good_members, manifest, random_copy, tar_bytes
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.tools.packing import pack_folder
from septet_platform.accounts.services import api_token_create, api_token_revoke
from septet_platform.bots.archives import DEFAULT_LIMITS
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.matches.models import Match, Seat

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def token_for() -> Callable[[str], tuple[User, list[tuple[str, str]]]]:
    """token_for(username) -> (the user, created on first use; call metadata with a new token)."""

    def make(username: str) -> tuple[User, list[tuple[str, str]]]:
        user, _ = User.objects.get_or_create(username=username)
        _, plaintext = api_token_create(user=user, name="cli")
        return user, [("authorization", f"Bearer {plaintext}")]

    return make


def chunks(data: bytes, size: int = 64 * 1024) -> Iterator[pb.SubmitBotChunk]:
    for start in range(0, len(data), size):
        yield pb.SubmitBotChunk(data=data[start : start + size])


def refused(call: Callable[[], Any]) -> grpc.RpcError:
    """The error a call fails with (failing the test if it succeeds)."""
    with pytest.raises(grpc.RpcError) as caught:
        result = call()
        if isinstance(result, Iterator):
            list(result)
    return caught.value


def nothing_stored(archives: Path) -> bool:
    no_files = not archives.exists() or not any(path.is_file() for path in archives.rglob("*"))
    return no_files and not Bot.objects.exists() and not BotVersion.objects.exists()


# Submission ----------------------------------------------------------------------------------


def test_a_packed_example_bot_submitted_with_a_token_is_stored_qualifying_and_queued(
    arena: arena_pb2_grpc.ArenaStub,
    token_for: Callable,
    storage: tuple[Path, Path],
    queued: dict,
    tmp_path: Path,
) -> None:
    user, metadata = token_for("ada")
    archive = pack_folder(random_copy(tmp_path, "ada-random"))

    answer = arena.SubmitBot(chunks(archive, 1000), metadata=metadata)

    assert (answer.bot, answer.version, answer.status) == ("ada-random", 1, "qualifying")
    version = BotVersion.objects.get(bot__name="ada-random")
    assert version.bot.owner == user and version.status == BotVersion.Status.QUALIFYING
    assert answer.archive_sha256 == hashlib.sha256(archive).hexdigest() == version.archive_sha256
    assert (storage[0] / "ada-random" / "v1.tar.gz").read_bytes() == archive
    assert queued["qualify"].calls == [version.pk]
    assert arena.SubmitBot(chunks(archive), metadata=metadata).version == 2


@pytest.mark.parametrize(
    "metadata",
    [
        [],
        [("authorization", "Bearer sep_0123456789abnot-a-real-token")],
        [("authorization", "Bearer sep_0123456789ab" + "x" * 43)],
        [("authorization", "sep_0123456789ab" + "x" * 43)],
    ],
    ids=["no token", "malformed token", "unknown token", "no Bearer scheme"],
)
def test_a_submission_without_a_valid_token_is_unauthenticated_and_stores_nothing(
    arena: arena_pb2_grpc.ArenaStub, storage: tuple[Path, Path], tmp_path: Path, metadata: list
) -> None:
    archive = pack_folder(random_copy(tmp_path))

    error = refused(lambda: arena.SubmitBot(chunks(archive), metadata=metadata))

    assert error.code() == grpc.StatusCode.UNAUTHENTICATED, error.details()
    assert error.details()
    assert nothing_stored(storage[0])


def test_a_revoked_token_is_unauthenticated_saying_so(
    arena: arena_pb2_grpc.ArenaStub, storage: tuple[Path, Path], tmp_path: Path
) -> None:
    user = User.objects.create(username="ada")
    token, plaintext = api_token_create(user=user, name="old")
    api_token_revoke(user=user, prefix=token.prefix)

    error = refused(
        lambda: arena.SubmitBot(
            chunks(pack_folder(random_copy(tmp_path))), metadata=[("authorization", f"Bearer {plaintext}")]
        )
    )

    assert error.code() == grpc.StatusCode.UNAUTHENTICATED and "revoked" in error.details()
    assert nothing_stored(storage[0])


@pytest.mark.parametrize(
    "archive",
    [
        tar_bytes([*good_members(), file_info("../evil.py", BOT_PY)]),
        tar_bytes([file_info("bot.py", BOT_PY)]),
        tar_bytes(
            [file_info("septet-bot.toml", manifest(games='["no-such-game"]')), file_info("bot.py", BOT_PY)]
        ),
        b"not an archive at all",
        b"",
    ],
    ids=["path traversal", "no manifest", "unknown game in manifest", "not an archive", "empty"],
)
def test_a_bad_archive_is_an_invalid_argument_and_stores_nothing(
    arena: arena_pb2_grpc.ArenaStub, token_for: Callable, storage: tuple[Path, Path], archive: bytes
) -> None:
    _, metadata = token_for("ada")

    error = refused(lambda: arena.SubmitBot(chunks(archive), metadata=metadata))

    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error.details()
    assert nothing_stored(storage[0])


def test_submitting_someone_elses_bot_name_is_permission_denied_and_changes_nothing(
    arena: arena_pb2_grpc.ArenaStub, token_for: Callable, storage: tuple[Path, Path], tmp_path: Path
) -> None:
    _, ada = token_for("ada")
    _, bob = token_for("bob")
    archive = pack_folder(random_copy(tmp_path, "ada-random"))
    arena.SubmitBot(chunks(archive), metadata=ada)

    error = refused(lambda: arena.SubmitBot(chunks(archive), metadata=bob))

    assert error.code() == grpc.StatusCode.PERMISSION_DENIED and "ada-random" in error.details()
    assert list(BotVersion.objects.values_list("bot__owner__username", "number")) == [("ada", 1)]
    assert sorted(path.name for path in storage[0].rglob("*.tar.gz")) == ["v1.tar.gz"]


def test_a_stream_past_the_archive_limit_is_resource_exhausted_and_stores_nothing(
    arena: arena_pb2_grpc.ArenaStub, token_for: Callable, storage: tuple[Path, Path]
) -> None:
    _, metadata = token_for("ada")
    sent: list[int] = []

    def oversized() -> Iterator[pb.SubmitBotChunk]:
        block = os.urandom(MiB)
        for _ in range(DEFAULT_LIMITS.max_archive_bytes // MiB + 1):
            sent.append(len(block))
            yield pb.SubmitBotChunk(data=block)

    error = refused(lambda: arena.SubmitBot(oversized(), metadata=metadata))

    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
    assert str(DEFAULT_LIMITS.max_archive_bytes) in error.details()
    assert nothing_stored(storage[0])


# Reads ---------------------------------------------------------------------------------------


def test_ladders_are_listed_and_a_ladder_shows_its_standings_best_first(
    arena: arena_pb2_grpc.ArenaStub, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    Ladder.objects.create(game="black-sevens", min_players=3, max_players=7, active=False)
    strong = ladder_bot_factory("ada", "strong")
    weak = ladder_bot_factory("bob", "weak")
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=strong, mu=30.0, sigma=2.0, games=12)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=weak, mu=20.0, sigma=3.0, games=9)

    ladders = arena.ListLadders(pb.ListLaddersRequest()).ladders
    answer = arena.GetLadder(pb.GetLadderRequest(game="oh-hell"))

    assert [(ladder.game, ladder.active) for ladder in ladders] == [
        ("black-sevens", False),
        ("oh-hell", True),
    ]
    assert (answer.ladder.min_players, answer.ladder.max_players) == (3, 7)
    rows = [(row.rank, row.bot, row.owner, row.version, row.games) for row in answer.standings]
    assert rows == [(1, "strong", "ada", 1, 12), (2, "weak", "bob", 1, 9)]
    first = answer.standings[0]
    assert first.low < first.rating < first.high and first.rating > answer.standings[1].rating


def test_an_unknown_ladder_bot_or_match_is_not_found(
    arena: arena_pb2_grpc.ArenaStub, token_for: Callable
) -> None:
    _, md = token_for("ada")
    tried = {
        "GetLadder no-such-game": lambda: arena.GetLadder(pb.GetLadderRequest(game="no-such-game")),
        "GetBot nobody": lambda: arena.GetBot(pb.GetBotRequest(name="nobody")),
        "GetMatch 999999": lambda: arena.GetMatch(pb.GetMatchRequest(match_id=999999), metadata=md),
        "GetReplay 999999": lambda: arena.GetReplay(pb.GetReplayRequest(match_id=999999), metadata=md),
        "ListMatches bot=nobody": lambda: arena.ListMatches(pb.ListMatchesRequest(bot="nobody"), metadata=md),
        "FollowMatch 999999": lambda: arena.FollowMatch(pb.FollowMatchRequest(match_id=999999), metadata=md),
    }
    for what, call in tried.items():
        error = refused(call)
        assert error.code() == grpc.StatusCode.NOT_FOUND, what
        assert error.details(), what


def test_bots_are_listed_and_a_bot_shows_its_versions_newest_first(
    arena: arena_pb2_grpc.ArenaStub, ladder_bot_factory: Callable
) -> None:
    ladder_bot_factory("ada", "alpha", number=1, status=BotVersion.Status.RETIRED)
    ladder_bot_factory("ada", "alpha", number=2, status=BotVersion.Status.ACTIVE)
    ladder_bot_factory("bob", "beta", games=["oh-hell"])

    everyone = arena.ListBots(pb.ListBotsRequest()).bots
    bobs = arena.ListBots(pb.ListBotsRequest(owner="bob")).bots
    alpha = arena.GetBot(pb.GetBotRequest(name="alpha"))

    assert [(bot.name, bot.owner, bot.latest_version, bot.latest_status) for bot in everyone] == [
        ("alpha", "ada", 2, "active"),
        ("beta", "bob", 1, "active"),
    ]
    assert [bot.name for bot in bobs] == ["beta"]
    assert [(version.number, version.status) for version in alpha.versions] == [(2, "active"), (1, "retired")]
    assert "oh-hell" in alpha.versions[0].games


def test_a_versions_error_log_is_shown_to_its_owner_only(
    arena: arena_pb2_grpc.ArenaStub, ladder_bot_factory: Callable, token_for: Callable
) -> None:
    version = ladder_bot_factory("ada", "alpha", status=BotVersion.Status.FAILED)
    version.error_log = "smoke game: seat 0 timed out"
    version.save()
    _, ada = token_for("ada")
    _, bob = token_for("bob")

    shown = {
        who: arena.GetBot(pb.GetBotRequest(name="alpha"), metadata=metadata).versions[0].error_log
        for who, metadata in {"owner": ada, "another user": bob, "anonymous": []}.items()
    }

    assert shown == {"owner": "smoke game: seat 0 timed out", "another user": "", "anonymous": ""}
    bad = refused(
        lambda: arena.GetBot(pb.GetBotRequest(name="alpha"), metadata=[("authorization", "Bearer x")])
    )
    assert bad.code() == grpc.StatusCode.UNAUTHENTICATED


def test_matches_are_listed_by_bot_or_ladder_newest_first_a_page_at_a_time(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
    token_for: Callable,
) -> None:
    _, md = token_for("ada")
    alpha, beta, gamma = (ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma"))
    sevens = Ladder.objects.create(game="black-sevens", min_players=3, max_players=7)
    made = [
        ladder_match_factory(ladder_oh_hell, [alpha, beta, gamma], [1, 2, 3], seed=seed) for seed in range(5)
    ]
    other = ladder_match_factory(sevens, [beta, gamma, beta], [1, 2, 3])

    pages, token = [], ""
    while True:
        page = arena.ListMatches(
            pb.ListMatchesRequest(bot="alpha", page_size=2, page_token=token), metadata=md
        )
        pages.append([match.id for match in page.matches])
        token = page.next_page_token
        if not token:
            break
    by_ladder = arena.ListMatches(pb.ListMatchesRequest(game="black-sevens"), metadata=md).matches
    both = arena.ListMatches(
        pb.ListMatchesRequest(bot="beta", game="oh-hell", page_size=100), metadata=md
    ).matches

    newest_first = [match.pk for match in reversed(made)]
    assert pages == [newest_first[0:2], newest_first[2:4], newest_first[4:5]]
    assert [match.id for match in by_ladder] == [other.pk]
    assert [match.id for match in both] == newest_first
    error = refused(lambda: arena.ListMatches(pb.ListMatchesRequest(page_size=101), metadata=md))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_match_shows_its_seats_scores_ranks_and_forfeits(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
    token_for: Callable,
) -> None:
    _, ada = token_for("ada")
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    match = ladder_match_factory(ladder_oh_hell, versions, [2, 1, 3])
    for seat, score in zip(match.seats.order_by("seat"), [10, 25, -5], strict=True):
        seat.score = score
        seat.save()
    Seat.objects.filter(match=match, seat=2).update(
        forfeit_status="TIMEOUT", forfeit_reason="no answer in 1s"
    )

    shown = arena.GetMatch(pb.GetMatchRequest(match_id=match.pk), metadata=ada)

    assert (shown.game, shown.kind, shown.rated, shown.status) == ("oh-hell", "ladder", True, "finished")
    assert [(s.seat, s.bot, s.version, s.score, s.rank) for s in shown.seats] == [
        (0, "alpha", 1, 10, 2),
        (1, "beta", 1, 25, 1),
        (2, "gamma", 1, -5, 3),
    ]
    assert (shown.seats[2].forfeit_status, shown.seats[2].forfeit_reason) == ("TIMEOUT", "no answer in 1s")
    assert not shown.seats[0].forfeit_status and shown.finished and not shown.has_replay


def replay_document(seats: int = 3, **extra: Any) -> dict[str, Any]:
    """A replay document's top level, enough for the platform to read (not to verify)."""
    return {
        "format": "septet-replay/1",
        "game": "oh-hell",
        "options": {},
        "seed": 7,
        "seats": [{"seat": seat, "name": f"bot{seat}"} for seat in range(seats)],
        "events": [],
        "forfeits": [],
        "result": {"scores": [0] * seats, "ranks": None, "aborted": False, "reason": ""},
        **extra,
    }


def test_a_replay_is_streamed_in_64_kib_chunks_equal_to_the_stored_file(
    arena: arena_pb2_grpc.ArenaStub,
    storage: tuple[Path, Path],
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
    token_for: Callable,
) -> None:
    _, md = token_for("ada")
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    match = ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])
    padding = os.urandom(150 * 1024).hex()  # incompressible enough for three chunks
    stored = gzip.compress(json.dumps(replay_document(padding=padding)).encode(), mtime=0)
    storage[1].mkdir(parents=True)
    (storage[1] / f"{match.pk}-a1.json.gz").write_bytes(stored)
    no_replay = refused(lambda: arena.GetReplay(pb.GetReplayRequest(match_id=match.pk), metadata=md))
    Match.objects.filter(pk=match.pk).update(replay=f"{match.pk}-a1.json.gz")

    received = [chunk.data for chunk in arena.GetReplay(pb.GetReplayRequest(match_id=match.pk), metadata=md)]

    assert no_replay.code() == grpc.StatusCode.NOT_FOUND
    assert len(stored) > 128 * 1024
    assert [len(data) for data in received[:-1]] == [64 * 1024] * (len(received) - 1)
    assert b"".join(received) == stored
    assert arena.GetMatch(pb.GetMatchRequest(match_id=match.pk), metadata=md).has_replay


# Challenges and following a match --------------------------------------------------------------


def test_a_challenge_creates_an_unrated_match_of_the_given_active_versions_and_queues_it(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    token_for: Callable,
    queued: dict,
) -> None:
    ladder_bot_factory("ada", "alpha", number=1, status=BotVersion.Status.RETIRED)
    ladder_bot_factory("ada", "alpha", number=2)
    ladder_bot_factory("bob", "beta")
    ladder_bot_factory("carol", "gamma")
    _, metadata = token_for("carol")
    seats = [
        pb.ChallengeSeat(bot="alpha"),
        pb.ChallengeSeat(bot="beta", version=1),
        pb.ChallengeSeat(bot="gamma"),
    ]

    answer = arena.RequestChallenge(
        pb.RequestChallengeRequest(game="oh-hell", seats=seats), metadata=metadata
    )

    match = Match.objects.get(pk=answer.match.id)
    assert (match.kind, match.rated, match.status) == ("challenge", False, "scheduled")
    assert match.seed > 0 and answer.match.seed == 0  # random, and hidden until the match is over
    assert queued["match"].queues == ["challenges"] * 3  # one set: a match per seat rotation
    assert [(seat.bot, seat.version) for seat in answer.match.seats] == [
        ("alpha", 2),
        ("beta", 1),
        ("gamma", 1),
    ]
    assert queued["match"].calls == list(answer.match_ids) and answer.match_ids[0] == match.pk


def test_a_bad_challenge_is_refused_and_creates_no_match(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    token_for: Callable,
    queued: dict,
) -> None:
    ladder_bot_factory("ada", "alpha")
    ladder_bot_factory("ada", "beta")
    ladder_bot_factory("ada", "failed", status=BotVersion.Status.FAILED)
    ladder_bot_factory("ada", "sevens-only", games=["black-sevens"])
    _, metadata = token_for("carol")

    def seats(*names: str) -> list[pb.ChallengeSeat]:
        return [pb.ChallengeSeat(bot=name) for name in names]

    tried = {
        "no token": (seats("alpha", "beta", "alpha"), "oh-hell", [], grpc.StatusCode.UNAUTHENTICATED),
        "unknown game": (seats("alpha", "beta", "alpha"), "nope", metadata, grpc.StatusCode.NOT_FOUND),
        "unknown bot": (seats("alpha", "beta", "nobody"), "oh-hell", metadata, grpc.StatusCode.NOT_FOUND),
        "too few seats": (seats("alpha", "beta"), "oh-hell", metadata, grpc.StatusCode.INVALID_ARGUMENT),
        "no active version": (
            seats("alpha", "beta", "failed"),
            "oh-hell",
            metadata,
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        "game not played": (
            seats("alpha", "beta", "sevens-only"),
            "oh-hell",
            metadata,
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    }
    ladder_bot_factory("carol", "mine")
    with_seed = {  # what carol tried, with one of her own bots seated, and the refusal expected
        "a chosen seed": (seats("mine", "alpha", "beta"), 42, grpc.StatusCode.INVALID_ARGUMENT),
        "none of her bots": (seats("alpha", "beta", "alpha"), 0, grpc.StatusCode.PERMISSION_DENIED),
        "another's bot twice": (seats("mine", "alpha", "alpha"), 0, grpc.StatusCode.INVALID_ARGUMENT),
    }
    for what, (chosen, _seed, code) in with_seed.items():
        tried[what] = (chosen, "oh-hell", metadata, code)
    for what, (chosen, game, sent, code) in tried.items():
        seed = with_seed[what][1] if what in with_seed else 0
        request = pb.RequestChallengeRequest(game=game, seats=chosen, seed=seed)
        error = refused(lambda request=request, sent=sent: arena.RequestChallenge(request, metadata=sent))
        assert error.code() == code, what
        assert error.details(), what
    assert not Match.objects.exists() and queued["match"].calls == []


def test_following_a_match_streams_its_status_changes_until_it_is_over(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
    token_for: Callable,
) -> None:
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    match = ladder_match_factory(ladder_oh_hell, versions, None, status=Match.Status.SCHEDULED)
    _, md = token_for("ada")
    events = arena.FollowMatch(pb.FollowMatchRequest(match_id=match.pk), timeout=30, metadata=md)
    seen = [next(events).status]

    Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, attempt=1)
    seen.append(next(events).status)

    def finish_match() -> None:  # as a worker would, from another thread (its own connection)
        Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
        connection.close()

    finish = threading.Timer(0.6, finish_match)
    finish.start()
    rest = list(events)
    finish.join()

    assert seen == ["scheduled", "running"]
    assert [event.status for event in rest] == ["finished"]


# Health and reflection ---------------------------------------------------------------------------


def test_health_is_serving_and_reflection_lists_the_arena(channel: grpc.Channel) -> None:
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", "septet.v1.Arena"):
        answer = health.Check(health_pb2.HealthCheckRequest(service=service))
        assert answer.status == health_pb2.HealthCheckResponse.SERVING, service

    reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
    answers = list(
        reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]))
    )
    listed = {service.name for service in answers[0].list_services_response.service}

    assert {"septet.v1.Arena", "grpc.health.v1.Health"} <= listed
