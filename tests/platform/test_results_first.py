"""`septet matches` and the Arena's ListMatches show results first (issue 18, item 2): a bot's
finished matches with its rank, score and rating change, the queued and running ones apart, and a
filter for each; a filter the Arena does not know is refused and lists nothing."""

from __future__ import annotations

import json
from collections.abc import Callable

import grpc
import pytest
from django.contrib.auth.models import User

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.services import api_token_create
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db(transaction=True)


def _token(username: str) -> str:
    user, _ = User.objects.get_or_create(username=username)
    return api_token_create(user=user, name="results")[1]


@pytest.fixture
def busy(
    ladder_oh_hell: Ladder, ladder_bot_factory: Callable, ladder_match_factory: Callable
) -> dict[str, list[Match]]:
    """alpha's two finished matches (the newer one rated +), then eight newer queued ones."""
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    finished = [ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3]) for _ in range(2)]
    Match.objects.filter(pk__in=[m.pk for m in finished]).update(replay="x.json.gz")
    rating = Rating.objects.create(ladder=ladder_oh_hell, bot_version=versions[0], mu=26.0, sigma=7.0)
    RatingChange.objects.create(
        rating=rating,
        match=finished[1],
        rank=1,
        mu_before=25.0,
        sigma_before=8.0,
        mu_after=26.0,
        sigma_after=7.0,
    )
    waiting = [
        ladder_match_factory(ladder_oh_hell, versions, None, status=Match.Status.SCHEDULED) for _ in range(8)
    ]
    return {"finished": finished, "waiting": waiting}


def test_septet_matches_lists_results_first_and_the_waiting_apart(
    septet: Callable, busy: dict[str, list[Match]]
) -> None:
    token = _token("bob")
    code, out, _ = septet("matches", "alpha", "--limit", "5", token=token)
    listed = json.loads(septet("matches", "alpha", "--json", "--limit", "5", token=token)[1])
    finished, waiting = busy["finished"], busy["waiting"]
    assert code == 0
    results, apart = out.split("queued or running")
    change = ratings.display(26.0, 7.0).rating - ratings.display(25.0, 8.0).rating
    assert str(finished[1].pk) in results and f"{change:+d}" in results and "scheduled" not in results
    assert all(str(match.pk) in apart for match in waiting[-5:]) and str(waiting[0].pk) not in apart
    assert [m["id"] for m in listed] == [str(finished[1].pk), str(finished[0].pk)] + [
        str(m.pk) for m in waiting[:-6:-1]
    ]
    assert listed[0]["seats"][0]["rating_change"] == change and "rating_change" not in listed[1]["seats"][0]
    only_waiting = json.loads(septet("matches", "alpha", "--json", "--status", "waiting", token=token)[1])
    assert [m["id"] for m in only_waiting] == [str(m.pk) for m in waiting[::-1]]
    every = json.loads(septet("matches", "alpha", "--json", "--status", "all", token=token)[1])
    assert len(every) == 10 and every[0]["id"] == str(waiting[-1].pk)


def test_an_unknown_status_filter_is_refused(arena_address: str, busy: dict[str, list[Match]]) -> None:
    with grpc.insecure_channel(arena_address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)
        metadata = [("authorization", f"Bearer {_token('bob')}")]
        with pytest.raises(grpc.RpcError) as refused:
            arena.ListMatches(pb.ListMatchesRequest(bot="alpha", status="everything"), metadata=metadata)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "status must be one of finished, waiting" in (refused.value.details() or "")
