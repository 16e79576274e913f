"""What the Arena keeps secret, tried as a competitor would through a real Arena server: match
reads without a token, the seed and replay of a duplicate set still being played (asked for by
the seated bot's own owner too), other owners' forfeit reasons, and challenge floods. Each
refusal is checked to change nothing."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from django.db import connection

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine import replay as replays
from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import PolicyPlayer, RandomPlayer
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.services import match_claim, match_record

pytestmark = pytest.mark.django_db(transaction=True)

Metadata = list[tuple[str, str]]


@pytest.fixture
def arena(arena_address: str) -> Iterator[arena_pb2_grpc.ArenaStub]:
    with grpc.insecure_channel(arena_address) as channel:
        yield arena_pb2_grpc.ArenaStub(channel)


def token(username: str) -> Metadata:
    user, _ = User.objects.get_or_create(username=username)
    _, plaintext = api_token_create(user=user, name="tests")
    return [("authorization", f"Bearer {plaintext}")]


def refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        result = call()
        if isinstance(result, Iterator):
            list(result)
    return caught.value


def _illegal(info: Any, legal: tuple[Any, ...]) -> Any:
    return "not-an-action"


def played(
    ladder: Ladder, versions: list[BotVersion], *, seed: int, duplicate_set: str = "", rotation: int = 0,
    forfeit_seat: int | None = None,
) -> Match:  # fmt: skip
    """A match played by the referee and recorded by the platform's own services, as a worker
    would; `forfeit_seat` answers an illegal action and forfeits."""
    match = Match.objects.create(ladder=ladder, seed=seed, duplicate_set=duplicate_set, rotation=rotation)
    Seat.objects.bulk_create(Seat(match=match, seat=i, bot_version=v) for i, v in enumerate(versions))
    attempt = match_claim(match_id=match.pk, worker="secrets-tests")
    assert attempt is not None
    players: list[Any] = [
        RandomPlayer(random.Random(f"{seed}/{seat}"), name=version.bot.name)
        for seat, version in enumerate(versions)
    ]
    if forfeit_seat is not None:
        players[forfeit_seat] = PolicyPlayer(_illegal, players[forfeit_seat].name)
    outcome = play_match(get_game(ladder.game), players, seed=seed, match_id=str(match.pk))
    assert match_record(match_id=match.pk, attempt=attempt, outcome=outcome)
    match.refresh_from_db()
    return match


def scheduled(
    ladder: Ladder, versions: list[BotVersion], *, seed: int, duplicate_set: str, rotation: int
) -> Match:
    match = Match.objects.create(ladder=ladder, seed=seed, duplicate_set=duplicate_set, rotation=rotation)
    Seat.objects.bulk_create(Seat(match=match, seat=i, bot_version=v) for i, v in enumerate(versions))
    return match


def rows() -> list[tuple[Any, ...]]:
    """Every match and seat as stored, to show a refused call changed nothing."""
    matches = list(Match.objects.order_by("pk").values_list("pk", "status", "seed", "replay", "attempt"))
    seats = list(Seat.objects.order_by("pk").values_list("pk", "score", "rank", "forfeit_reason"))
    return matches + seats


@pytest.fixture
def table(ladder_oh_hell: Ladder, ladder_bot_factory: Callable) -> list[BotVersion]:
    """ada's bot alpha and bob's beta and gamma, all active on oh-hell."""
    return [
        ladder_bot_factory("ada", "alpha"),
        ladder_bot_factory("bob", "beta"),
        ladder_bot_factory("bob", "gamma"),
    ]


# Reading matches needs a token ---------------------------------------------------------------


def test_anonymous_match_reads_are_unauthenticated_and_change_nothing(
    arena: arena_pb2_grpc.ArenaStub,
    storage: tuple[Path, Path],
    ladder_oh_hell: Ladder,
    table: list[BotVersion],
) -> None:
    match = played(ladder_oh_hell, table, seed=3)
    before = rows()
    tried = {
        "ListMatches by bot": lambda: arena.ListMatches(pb.ListMatchesRequest(bot="alpha")),
        "ListMatches by game": lambda: arena.ListMatches(pb.ListMatchesRequest(game="oh-hell")),
        "GetMatch": lambda: arena.GetMatch(pb.GetMatchRequest(match_id=match.pk)),
        "GetReplay": lambda: arena.GetReplay(pb.GetReplayRequest(match_id=match.pk)),
        "FollowMatch": lambda: arena.FollowMatch(pb.FollowMatchRequest(match_id=match.pk), timeout=10),
    }
    for what, call in tried.items():
        error = refused(call)
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED, what
        assert "API token" in (error.details() or ""), what
    assert rows() == before
    # Public reads stay public: ladders and bots.
    assert arena.GetBot(pb.GetBotRequest(name="alpha")).bot.name == "alpha"
    assert arena.ListLadders(pb.ListLaddersRequest()).ladders


# Seeds and replays of an unfinished duplicate set --------------------------------------------


def test_a_finished_rotations_seed_and_replay_stay_hidden_until_its_whole_set_is_over(
    arena: arena_pb2_grpc.ArenaStub,
    storage: tuple[Path, Path],
    ladder_oh_hell: Ladder,
    table: list[BotVersion],
) -> None:
    """The attack: a bot's build asks for its scheduled and finished matches' seeds or replays
    and deals the rotations still to come. Its owner's token is what it would hold."""
    first = played(ladder_oh_hell, table, seed=987654321, duplicate_set="set-1", rotation=0)
    second = scheduled(
        ladder_oh_hell, table[1:] + table[:1], seed=987654321, duplicate_set="set-1", rotation=1
    )
    lone_scheduled = scheduled(ladder_oh_hell, table, seed=55555, duplicate_set="", rotation=0)
    before = rows()

    for who in ("ada", "carol"):  # ada owns a seated bot; carol is a stranger
        md = token(who)
        for match in (first, second, lone_scheduled):
            shown = arena.GetMatch(pb.GetMatchRequest(match_id=match.pk), metadata=md)
            assert shown.seed == 0 and not shown.has_replay, (who, match.rotation)
        listed = arena.ListMatches(pb.ListMatchesRequest(bot="alpha"), metadata=md).matches
        assert {m.id for m in listed} == {first.pk, second.pk, lone_scheduled.pk}
        assert all(m.seed == 0 and not m.has_replay for m in listed), who
        error = refused(lambda md=md: arena.GetReplay(pb.GetReplayRequest(match_id=first.pk), metadata=md))
        assert error.code() == grpc.StatusCode.FAILED_PRECONDITION, who
        assert "published when its duplicate set is over" in (error.details() or "")
        followed = next(
            iter(arena.FollowMatch(pb.FollowMatchRequest(match_id=first.pk), metadata=md, timeout=10))
        )
        assert followed.match.seed == 0 and not followed.match.has_replay
    assert rows() == before

    Match.objects.filter(pk=second.pk).update(status=Match.Status.ABORTED)  # the set is over now

    md = token("carol")
    shown = arena.GetMatch(pb.GetMatchRequest(match_id=first.pk), metadata=md)
    stored = (storage[1] / first.replay).read_bytes()
    fetched = b"".join(c.data for c in arena.GetReplay(pb.GetReplayRequest(match_id=first.pk), metadata=md))
    assert shown.seed == 987654321 and shown.has_replay
    assert fetched == stored  # nothing to hide in it: the stored file itself
    assert arena.GetMatch(pb.GetMatchRequest(match_id=lone_scheduled.pk), metadata=md).seed == 0


def test_a_set_is_told_apart_by_ladder_too(
    arena: arena_pb2_grpc.ArenaStub,
    storage: tuple[Path, Path],
    ladder_oh_hell: Ladder,
    table: list[BotVersion],
) -> None:
    """A set name reused on another ladder is another set: its unfinished match hides nothing here."""
    sevens = Ladder.objects.create(game="black-sevens", min_players=3, max_players=7)
    first = played(ladder_oh_hell, table, seed=42, duplicate_set="same-name", rotation=0)
    scheduled(sevens, table, seed=43, duplicate_set="same-name", rotation=0)

    shown = arena.GetMatch(pb.GetMatchRequest(match_id=first.pk), metadata=token("carol"))

    assert shown.seed == 42 and shown.has_replay


# Forfeit reasons are the owner's -----------------------------------------------------------------


def _reasons(document: dict[str, Any]) -> dict[int, str]:
    events = [e for e in document["events"] if e.get("type") == "forfeit"]
    return {e["seat"]: e["reason"] for e in events + document["forfeits"]}


def test_forfeit_reasons_reach_only_the_seats_owner_and_the_public_copy_still_verifies(
    arena: arena_pb2_grpc.ArenaStub,
    storage: tuple[Path, Path],
    ladder_oh_hell: Ladder,
    table: list[BotVersion],
) -> None:
    match = played(ladder_oh_hell, table, seed=8, forfeit_seat=0)  # alpha (ada's) forfeits
    stored_path = storage[1] / match.replay
    stored_digest = hashlib.sha256(stored_path.read_bytes()).hexdigest()
    reason = Seat.objects.get(match=match, seat=0).forfeit_reason
    assert reason

    seen = {}
    for who in ("ada", "bob", "carol"):
        md = token(who)
        info = arena.GetMatch(pb.GetMatchRequest(match_id=match.pk), metadata=md)
        listed = arena.ListMatches(pb.ListMatchesRequest(bot="alpha"), metadata=md).matches[0]
        data = b"".join(c.data for c in arena.GetReplay(pb.GetReplayRequest(match_id=match.pk), metadata=md))
        document = json.loads(gzip.decompress(data))
        seen[who] = (info.seats[0].forfeit_reason, listed.seats[0].forfeit_reason, _reasons(document)[0])
        assert info.seats[0].forfeit_status, "that a seat forfeited stays public"
        assert replays.verify(document).events == len(document["events"]), who

    assert seen == {"ada": (reason, reason, reason), "bob": ("", "", ""), "carol": ("", "", "")}
    assert hashlib.sha256(stored_path.read_bytes()).hexdigest() == stored_digest  # the file stays whole


# Challenges -------------------------------------------------------------------------------------


def test_a_challenge_flood_is_held_to_the_hourly_limit_never_rated_and_never_seeded_by_the_caller(
    arena: arena_pb2_grpc.ArenaStub,
    settings: Any,
    queued: dict,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
) -> None:
    """30 calls at once from one user seating a victim's bot: only the limit's worth get in."""
    settings.SEPTET_CHALLENGES_PER_HOUR = 5
    ladder_bot_factory("mallory", "mine")
    ladder_bot_factory("victor", "victim")
    ladder_bot_factory("house", "filler")
    md = token("mallory")
    request = pb.RequestChallengeRequest(
        game="oh-hell", seats=[pb.ChallengeSeat(bot=name) for name in ("victim", "mine", "filler")]
    )

    def attempt(_: int) -> grpc.StatusCode:
        try:
            arena.RequestChallenge(request, metadata=md, timeout=30)
            return grpc.StatusCode.OK
        except grpc.RpcError as error:
            return error.code()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=10) as pool:
        codes = list(pool.map(attempt, range(30)))

    matches = list(Match.objects.all())
    assert codes.count(grpc.StatusCode.OK) == 5
    assert codes.count(grpc.StatusCode.RESOURCE_EXHAUSTED) == 25
    assert len(matches) == 5 * 3 and len(queued["match"].calls) == 5 * 3  # a set of 3 rotations each
    assert set(queued["match"].queues) == {"challenges"}
    assert all(m.kind == Match.Kind.CHALLENGE and not m.rated for m in matches)
    assert len({m.seed for m in matches}) == 5 and all(m.seed > 2**20 for m in matches)
    error = refused(lambda: arena.RequestChallenge(request, metadata=md))
    assert "try again in" in (error.details() or "")


def test_many_users_cannot_flood_one_bot_with_challenges(
    arena: arena_pb2_grpc.ArenaStub,
    settings: Any,
    queued: dict,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
) -> None:
    settings.SEPTET_CHALLENGES_PER_BOT_PER_HOUR = 3
    ladder_bot_factory("victor", "victim")
    ladder_bot_factory("victor", "victim-two")
    codes = []
    for user in range(5):
        ladder_bot_factory(f"user{user}", f"bot{user}")
        seats = [pb.ChallengeSeat(bot=name) for name in ("victim", f"bot{user}", "victim-two")]
        try:
            arena.RequestChallenge(
                pb.RequestChallengeRequest(game="oh-hell", seats=seats), metadata=token(f"user{user}")
            )
            codes.append("ok")
        except grpc.RpcError as error:
            codes.append(error.code().name)
            assert "victim" in (error.details() or "")

    assert codes == ["ok", "ok", "ok", "RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED"]
    assert Match.objects.count() == 3 * 3 and len(queued["match"].calls) == 3 * 3  # 3 rotations each
    # The victim's owner challenging with their own bots is not counted against them as a target.
    ladder_bot_factory("house", "filler")
    mine = [pb.ChallengeSeat(bot=name) for name in ("victim", "victim-two", "filler")]
    try:
        arena.RequestChallenge(
            pb.RequestChallengeRequest(game="oh-hell", seats=mine), metadata=token("victor")
        )
    except grpc.RpcError as error:  # filler (house) has room; victim is victor's own
        pytest.fail(f"the owner's own challenge was refused: {error.details()}")
