"""The bot page shows results first (issue 18, item 2) and the match page shows a bot's own output
to its owner only (item 3), with real matches played by the referee and recorded by the platform.
"""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from web_data import Site, match_play_recorded

from septet_platform.matches.models import Match, Seat, SeatLog

OWN_LINE = "my hand this deal: AS KD 7H"


def _text(response: object) -> str:
    return response.content.decode()  # type: ignore[attr-defined]


def _queue(site: Site, count: int) -> list[Match]:
    """`count` scheduled matches seating alpha, as a busy ladder leaves them."""
    queued = []
    for seed in range(count):
        match = Match.objects.create(ladder=site.ladder, seed=500 + seed)
        Seat.objects.bulk_create(
            Seat(match=match, seat=i, bot_version=v)
            for i, v in enumerate([site.beta, site.alpha, site.scripted])
        )
        queued.append(match)
    return queued


@pytest.mark.django_db
def test_finished_matches_come_first_with_rank_score_rating_change_and_replay_waiting_ones_apart(
    client: Client, site: Site
) -> None:
    """25 newer scheduled matches (a busy ladder) do not push alpha's two results off its page."""
    queued = _queue(site, 25)
    response = client.get("/bots/alpha/")
    profile = response.context["profile"]
    page = _text(response)
    assert [row.match_id for row in profile.results] == [site.forfeited.pk, site.match.pk]
    first = profile.results.object_list[1]
    assert first.players == 3 and first.rank is not None and first.replay
    assert first.rating_change is not None and first.rating_change != 0
    assert f"{first.rank} of 3" in page and f"{first.rating_change:+d}" in page
    assert f'href="/matches/{site.match.pk}/#replay"' in page
    assert profile.waiting_count == 26 and len(profile.waiting) == 10  # 25 queued and the running one
    assert 'href="?status=waiting#matches"' in page and "queued or running (26)" in page
    waiting = client.get("/bots/alpha/?status=waiting").context["profile"]
    assert waiting.status == "waiting" and len(waiting.results) == 20 and waiting.results.has_next()
    assert waiting.results.object_list[0].match_id == queued[-1].pk
    second = client.get("/bots/alpha/?status=waiting&page=2").context["profile"]
    assert [row.match_id for row in second.results] == [
        queued[4].pk,
        *[m.pk for m in queued[3::-1]],
        site.running.pk,
    ]


@pytest.mark.django_db
def test_an_unknown_filter_or_page_shows_the_results(client: Client, site: Site) -> None:
    for query in ("?status=<script>", "?status=all&page=abc", "?page=999"):
        response = client.get(f"/bots/alpha/{query}")
        assert response.status_code == 200 and response.context["profile"].status == "finished", query
        assert "<script>" not in _text(response).split("<main")[-1].replace("&lt;script&gt;", "")


@pytest.mark.django_db
def test_a_replay_is_linked_only_once_its_duplicate_set_is_over(client: Client, site: Site) -> None:
    Match.objects.filter(pk=site.match.pk).update(duplicate_set="set-11")
    waiting = Match.objects.create(
        ladder=site.ladder, seed=site.match.seed, duplicate_set="set-11", rotation=1
    )
    page = _text(client.get("/bots/alpha/"))
    assert f'href="/matches/{site.match.pk}/#replay"' not in page and "after its set" in page
    Match.objects.filter(pk=waiting.pk).update(status=Match.Status.FINISHED)
    assert f'href="/matches/{site.match.pk}/#replay"' in _text(client.get("/bots/alpha/"))


def _log(site: Site, match: Match) -> None:
    """alpha's seat in `match` wrote its hand, as the worker stores it."""
    seat = Seat.objects.get(match=match, bot_version=site.alpha)
    SeatLog.objects.update_or_create(seat=seat, defaults={"text": f"{OWN_LINE}\nthinking...\n"})


@pytest.mark.django_db
@pytest.mark.parametrize("viewer", ["owner", "opponent", "stranger", "anonymous"])
def test_a_bots_output_is_on_the_match_page_for_its_owner_only(
    client: Client, site: Site, viewer: str
) -> None:
    """alice owns alpha; bob owns the other seats of the match (he sees only his own seats' part),
    carol has no bot there; none but alice sees alpha's output or forfeit reason."""
    _log(site, site.forfeited)
    if viewer != "anonymous":
        users = {"owner": site.alice, "opponent": site.bob}
        client.force_login(users.get(viewer) or User.objects.create_user("carol"))
    page = _text(client.get(f"/matches/{site.forfeited.pk}/"))
    alpha_seat = Seat.objects.get(match=site.forfeited, bot_version=site.alpha).seat
    if viewer == "owner":
        assert OWN_LINE in page and "septet logs" in page and f"Seat {alpha_seat}: alpha" in page
        assert re.search(r"Forfeited \(<strong>INVALID</strong>\) at replay event \d+", page)
        return
    assert OWN_LINE not in page and f"Seat {alpha_seat}: alpha" not in page and "Forfeited (" not in page
    assert ("seat-logs" in page) == (viewer == "opponent")  # bob's own seats, without output


@pytest.mark.django_db
def test_the_owner_sees_no_output_before_the_duplicate_set_is_over(client: Client, site: Site) -> None:
    _log(site, site.match)
    Match.objects.filter(pk=site.match.pk).update(duplicate_set="set-11")
    waiting = Match.objects.create(
        ladder=site.ladder, seed=site.match.seed, duplicate_set="set-11", rotation=1
    )
    client.force_login(site.alice)
    early = _text(client.get(f"/matches/{site.match.pk}/"))
    assert OWN_LINE not in early and "shown when its duplicate set is over" in early
    Match.objects.filter(pk=waiting.pk).update(status=Match.Status.FINISHED)
    assert OWN_LINE in _text(client.get(f"/matches/{site.match.pk}/"))


@pytest.mark.django_db
def test_a_busy_bots_results_page_costs_a_bounded_number_of_queries(
    client: Client, site: Site, django_assert_max_num_queries: object
) -> None:
    """The results page reads a page of seats, then one query each for table sizes, rating changes
    and publication: 30 more matches add no query."""
    for seed in range(30):
        match_play_recorded(site.ladder, [site.alpha, site.beta, site.scripted], seed=300 + seed)
    with django_assert_max_num_queries(25):  # type: ignore[operator]
        assert client.get("/bots/alpha/").status_code == 200


@pytest.mark.django_db
def test_the_match_list_shows_results_first_and_the_waiting_ones_behind_a_filter(
    client: Client, site: Site
) -> None:
    queued = _queue(site, 21)
    finished = client.get("/matches/")
    ids = [match.pk for match in finished.context["page"].object_list]
    assert ids == [site.forfeited.pk, site.match.pk]
    waiting = client.get("/matches/?status=waiting")
    assert waiting.context["page"].paginator.count == 22 and len(waiting.context["page"].object_list) == 20
    assert waiting.context["page"].object_list[0].pk == queued[-1].pk
    assert 'href="?status=waiting&amp;page=2"' in _text(waiting)
    assert client.get("/matches/?status=nonsense").context["status"] == "finished"
    assert 'href="/matches/?status=waiting"' in _text(client.get("/"))
