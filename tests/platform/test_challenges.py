"""Challenges: unrated duplicate sets a bot owner asks for against named opponents.

Through the Arena (in this process, on a free port) and the `septet challenge` command: the
matches a challenge creates (every rotation of every set, unrated, on the challenges queue, each
set its own random seed), results with 95% intervals once played by the worker's own code
(matches.services.match_play, real bot processes), the publication rule for unfinished sets, an
owner's switch that refuses challenges, the per-user match limit, and for every refusal: nothing
created, queued or counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from django.contrib.auth.models import User
from platform_support import EXAMPLES

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.models import CountedAction
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder
from septet_platform.matches import services as match_services
from septet_platform.matches.models import Match, Seat

pytestmark = pytest.mark.django_db(transaction=True)
Metadata = list[tuple[str, str]]


@pytest.fixture
def arena(arena_address: str) -> Iterator[arena_pb2_grpc.ArenaStub]:
    with grpc.insecure_channel(arena_address) as channel:
        yield arena_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]


def _token(username: str) -> tuple[str, Metadata]:
    user, _ = User.objects.get_or_create(username=username)
    _, plaintext = api_token_create(user=user, name="tests")
    return plaintext, [("authorization", f"Bearer {plaintext}")]


def _refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


def _request(names: tuple[str, ...], *, sets: int = 1, seed: int = 0) -> pb.RequestChallengeRequest:
    seats = [pb.ChallengeSeat(bot=name) for name in names]
    return pb.RequestChallengeRequest(game="oh-hell", seats=seats, sets=sets, seed=seed)


def _nothing_stored() -> tuple[int, int, int]:
    return Match.objects.count(), Challenge.objects.count(), CountedAction.objects.count()


def test_two_sets_against_two_opponents_are_two_times_three_rotations_unrated_on_the_challenges_queue(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    queued: dict,
) -> None:
    ladder_bot_factory("ada", "mine")
    ladder_bot_factory("bob", "rival")
    ladder_bot_factory("house", "montecarlo", is_house=True)
    _, md = _token("ada")

    answer = arena.RequestChallenge(_request(("mine", "rival", "montecarlo"), sets=2), metadata=md)

    matches = list(Match.objects.order_by("id"))
    assert [match.pk for match in matches] == list(answer.match_ids) == queued["match"].calls
    assert len(matches) == 2 * 3 and queued["match"].queues == ["challenges"] * 6
    assert all(match.kind == Match.Kind.CHALLENGE and not match.rated for match in matches)
    sets: dict[str, list[Match]] = {}
    for match in matches:
        sets.setdefault(match.duplicate_set, []).append(match)
    assert len(sets) == 2
    for rotations in sets.values():  # one deal, every bot in every seat of it
        assert len({match.seed for match in rotations}) == 1 and rotations[0].seed > 2**20
        seatings = [
            [seat.bot_version.bot.name for seat in match.seats.order_by("seat")] for match in rotations
        ]
        for seat in range(3):
            assert sorted(seating[seat] for seating in seatings) == ["mine", "montecarlo", "rival"]
    assert len({rotations[0].seed for rotations in sets.values()}) == 2  # each set its own seed
    assert answer.match.seed == 0  # hidden until its set is over
    challenge = Challenge.objects.get(pk=answer.challenge_id)
    assert (challenge.sets, challenge.challenger.bot.name, challenge.requester.username) == (2, "mine", "ada")
    assert set(challenge.matches.values_list("id", flat=True)) == {match.pk for match in matches}


def test_the_cli_prints_results_with_intervals_once_played_and_hides_an_unfinished_set(
    septet: Callable,
    queued: dict,
    ladder_oh_hell: Ladder,
    django_user_model: type,
    storage: tuple[Path, Path],
) -> None:
    ada = django_user_model.objects.create_user("ada")
    house = django_user_model.objects.create_user("house")
    version_from_archive(ada, "mine", tar_folder(EXAMPLES / "greedy"), games=["oh-hell"])
    version_from_archive(house, "random-a", tar_folder(EXAMPLES / "random"), games=["oh-hell"], is_house=True)
    version_from_archive(house, "random-b", tar_folder(EXAMPLES / "random"), games=["oh-hell"], is_house=True)
    token, _ = _token("ada")

    code, out, err = septet(
        "challenge", "mine", "random-a", "random-b", "--game", "oh-hell", "--sets", "2", token=token
    )
    assert code == 0, err
    challenge_id = int(re.search(r"challenge (\d+):", out).group(1))  # type: ignore[union-attr]
    assert "2 duplicate sets x 3 rotations = 6 unrated oh-hell matches queued" in out
    first_set = queued["match"].calls[:3]
    second_set = queued["match"].calls[3:]

    assert match_services.match_play(match_id=first_set[0], worker="w").outcome == "recorded"
    code, partly, err = septet("challenge", "--show", str(challenge_id), "--json", token=token)
    assert code == 0, err
    document = json.loads(partly)
    played = next(match for match in document["matches"] if int(match["id"]) == first_set[0])
    assert played["status"] == "finished" and not played.get("has_replay") and int(played.get("seed", 0)) == 0
    assert document.get("sets_over", 0) == 0  # its set is not over: no result, seed or replay yet
    assert all(not result.get("rank", {}).get("n") for result in document["results"])

    for match_id in first_set[1:] + second_set:
        assert match_services.match_play(match_id=match_id, worker="w").outcome == "recorded"
    code, out, err = septet("challenge", "--show", str(challenge_id), "--wait", token=token)

    assert code == 0, err
    assert "2/2 sets over" in out
    rows = {line.split()[0]: line for line in out.splitlines() if re.match(r"\S+ v1 ", line)}
    assert set(rows) == {"mine", "random-a", "random-b"}
    interval = r"[+-]?\d+\.\d+ \[[+-]?\d+\.\d+,[+-]?\d+\.\d+\]"  # mean [low,high]
    assert re.search(rf"mine v1\s+{interval}\s+{interval}\s*$", rows["mine"]), rows["mine"]
    assert re.search(rf"random-a v1\s+{interval}\s+{interval}\s+[+-]\d\.\d\d \[", rows["random-a"])
    assert all(len(row.rstrip()) <= 80 for row in rows.values())  # the table fits 80 columns
    assert sum("mine vs random-" in line or "ranks better than" in line for line in out.splitlines()) == 2
    replay_line = next(
        line for line in out.splitlines() if line.startswith("replays (septet replay fetch ID):")
    )
    assert {int(word) for word in replay_line.split(":")[1].split()} == set(first_set + second_set)
    assert max(len(line) for line in out.splitlines()) <= 100
    assert not Match.objects.filter(rated=True).exists()


def test_an_owner_who_turned_challenges_off_refuses_them_and_nothing_changes(
    arena: arena_pb2_grpc.ArenaStub,
    septet: Callable,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    queued: dict,
) -> None:
    ladder_bot_factory("victor", "shy")
    ladder_bot_factory("victor", "shy-two")
    ladder_bot_factory("mallory", "mine")
    ladder_bot_factory("house", "filler", is_house=True)
    victor_token, victor = _token("victor")
    mallory_token, mallory = _token("mallory")

    code, out, err = septet("challenge", "--refuse", "shy", token=victor_token)
    assert code == 0 and "shy now refuses challenges" in out, err
    before = _nothing_stored()

    error = _refused(
        lambda: arena.RequestChallenge(_request(("mine", "shy", "filler"), sets=3), metadata=mallory)
    )
    flip = septet("challenge", "--accept", "shy", token=mallory_token)  # not her bot
    unknown = _refused(
        lambda: arena.SetChallengesAccepted(
            pb.SetChallengesAcceptedRequest(bot="nobody", accepts=True), metadata=victor
        )
    )
    anonymous = _refused(
        lambda: arena.SetChallengesAccepted(pb.SetChallengesAcceptedRequest(bot="shy", accepts=True))
    )

    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION and "shy" in (error.details() or "")
    assert flip[0] == 2 and "not your bot" in flip[2] and "PERMISSION_DENIED" not in flip[2]
    assert unknown.code() == grpc.StatusCode.NOT_FOUND
    assert anonymous.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _nothing_stored() == before and queued["match"].calls == []
    assert Bot.objects.get(name="shy").accepts_challenges is False
    # Its owner's own challenges still seat it; turned back on, others' are accepted again.
    assert len(arena.RequestChallenge(_request(("shy", "shy-two", "filler")), metadata=victor).match_ids) == 3
    assert septet("challenge", "--accept", "shy", token=victor_token)[0] == 0
    assert len(arena.RequestChallenge(_request(("mine", "shy", "filler")), metadata=mallory).match_ids) == 3


def test_the_limit_counts_matches_and_every_refused_challenge_changes_nothing(
    arena: arena_pb2_grpc.ArenaStub,
    septet: Callable,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    queued: dict,
    settings: Any,
) -> None:
    settings.SEPTET_CHALLENGE_MATCHES_PER_HOUR = 10
    ladder_bot_factory("ada", "mine")
    ladder_bot_factory("bob", "rival")
    ladder_bot_factory("house", "filler", is_house=True)
    token, md = _token("ada")
    accepted = arena.RequestChallenge(_request(("mine", "rival", "filler"), sets=3), metadata=md)
    assert len(accepted.match_ids) == 9
    before = _nothing_stored()

    tried = {  # what ada tried next, and the refusal expected
        "one more set: 9 + 3 matches > 10": (
            _request(("mine", "rival", "filler")),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ),
        "21 sets": (_request(("mine", "rival", "filler"), sets=21), grpc.StatusCode.INVALID_ARGUMENT),
        "-1 sets": (_request(("mine", "rival", "filler"), sets=-1), grpc.StatusCode.INVALID_ARGUMENT),
        "a chosen seed": (_request(("mine", "rival", "filler"), seed=7), grpc.StatusCode.INVALID_ARGUMENT),
        "no bot of hers": (_request(("rival", "filler", "rival")), grpc.StatusCode.PERMISSION_DENIED),
    }
    for what, (request, code) in tried.items():
        error = _refused(lambda request=request: arena.RequestChallenge(request, metadata=md))
        assert error.code() == code, what
        assert error.details(), what
    cli = septet("challenge", "mine", "rival", "filler", "--game", "oh-hell", token=token)
    no_game = septet("challenge", "mine", "rival", token=token)
    alone = septet("challenge", "mine", "--game", "oh-hell", token=token)

    assert cli[0] == 2 and "challenge match limit: 10 matches per hour" in cli[2] and "try again in" in cli[2]
    assert no_game[0] == 2 and "--game" in no_game[2]
    assert alone[0] == 2 and "opponent" in alone[2]
    assert _nothing_stored() == before and len(queued["match"].calls) == 9
    assert not BotVersion.objects.filter(status=BotVersion.Status.RETIRED).exists()


def test_many_users_sets_cannot_flood_one_bot_past_its_match_limit(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    queued: dict,
    settings: Any,
) -> None:
    settings.SEPTET_CHALLENGE_MATCHES_PER_BOT_PER_HOUR = 8
    ladder_bot_factory("victor", "target")
    ladder_bot_factory("house", "filler", is_house=True)
    for user in ("u1", "u2"):
        ladder_bot_factory(user, f"bot-{user}")
    first = arena.RequestChallenge(_request(("bot-u1", "target", "filler"), sets=2), metadata=_token("u1")[1])
    before = _nothing_stored()

    error = _refused(
        lambda: arena.RequestChallenge(_request(("bot-u2", "target", "filler")), metadata=_token("u2")[1])
    )

    assert len(first.match_ids) == 6
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "8 matches per hour seating target, 6 used" in (error.details() or "")
    assert _nothing_stored() == before and len(queued["match"].calls) == 6


def test_get_challenge_needs_a_token_and_shows_forfeit_reasons_and_seeds_only_as_the_rules_allow(
    arena: arena_pb2_grpc.ArenaStub,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    queued: dict,
) -> None:
    ladder_bot_factory("ada", "mine")
    ladder_bot_factory("bob", "rival")
    ladder_bot_factory("house", "filler", is_house=True)
    _, ada = _token("ada")
    _, bob = _token("bob")
    answer = arena.RequestChallenge(_request(("mine", "rival", "filler"), sets=2), metadata=ada)
    first_set = list(answer.match_ids[:3])
    Match.objects.filter(pk__in=first_set).update(status=Match.Status.FINISHED)
    Match.objects.filter(pk=answer.match_ids[3]).update(status=Match.Status.FINISHED)
    Seat.objects.filter(match_id__in=first_set, bot_version__bot__name="mine").update(
        forfeit_status="TIMEOUT", forfeit_reason="mine's secret reason"
    )
    request = pb.GetChallengeRequest(challenge_id=answer.challenge_id)

    as_ada = arena.GetChallenge(request, metadata=ada)
    as_bob = arena.GetChallenge(request, metadata=bob)
    anonymous = _refused(lambda: arena.GetChallenge(request))
    unknown = _refused(lambda: arena.GetChallenge(pb.GetChallengeRequest(challenge_id=9999), metadata=ada))

    assert anonymous.code() == grpc.StatusCode.UNAUTHENTICATED
    assert unknown.code() == grpc.StatusCode.NOT_FOUND
    reasons = {
        who: {seat.forfeit_reason for match in info.matches for seat in match.seats} - {""}
        for who, info in (("ada", as_ada), ("bob", as_bob))
    }
    assert reasons == {"ada": {"mine's secret reason"}, "bob": set()}
    seeds = {match.id: match.seed for match in as_bob.matches}
    assert all(seeds[match_id] > 0 for match_id in first_set)  # its set is over: published
    assert all(seeds[match_id] == 0 for match_id in answer.match_ids[3:])  # one rotation played
    assert (as_bob.sets, as_bob.sets_over, as_bob.challenger, as_bob.requester) == (2, 1, "mine", "ada")
    assert [result.bot for result in as_bob.results] == ["mine", "rival", "filler"]
    assert as_bob.results[0].forfeits == 3
