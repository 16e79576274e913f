"""The site's challenges: a form that queues unrated duplicate sets, a page with results and 95%
intervals whose replay links follow the publication rule, and the owner's switch on My bots.
Every refused request is shown why and creates, queues and counts nothing."""

from __future__ import annotations

import re
from typing import Any

import pytest
from bot_versions import version_row
from django.contrib.auth.models import User
from django.test import Client

from septet_platform.accounts.models import CountedAction
from septet_platform.bots.models import Bot
from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

pytestmark = pytest.mark.django_db


@pytest.fixture
def players(storage: Any) -> dict[str, User]:
    """alice owns `mine`, bob owns `rival`, the house owns `filler`; an Oh Hell! ladder."""
    Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    version_row("alice", "mine")
    version_row("bob", "rival")
    version_row("house", "filler", is_house=True)
    return {name: User.objects.get(username=name) for name in ("alice", "bob", "house")}


def _signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _stored() -> tuple[int, int, int]:
    return Match.objects.count(), Challenge.objects.count(), CountedAction.objects.count()


def _finish(match: Match, ranks: dict[str, int]) -> None:
    """As a worker records a played match: finished, ranked, with a replay file name."""
    for seat in match.seats.select_related("bot_version__bot"):
        rank = ranks[seat.bot_version.bot.name]
        seat.rank, seat.score = rank, 10 - rank
        seat.save(update_fields=["rank", "score"])
    Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED, replay=f"{match.pk}.json.gz")


def test_a_challenge_from_the_site_queues_its_sets_and_shows_intervals_and_published_replays_only(
    players: dict[str, User], queued: dict, django_capture_on_commit_callbacks: Any
) -> None:
    alice = _signed_in(players["alice"])
    form = {"bot": "mine", "opponents": "rival filler", "game": "oh-hell", "sets": "2"}

    with django_capture_on_commit_callbacks(execute=True):
        response = alice.post("/challenges/", form)

    challenge = Challenge.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/challenges/{challenge.pk}/"
    matches = list(challenge.matches.order_by("id"))
    assert len(matches) == 6 and queued["match"].queues == ["challenges"] * 6
    assert all(match.kind == "challenge" and not match.rated for match in matches)
    assert len({match.seed for match in matches}) == 2
    first, second = matches[:3], matches[3:]
    for index, match in enumerate(first):
        _finish(match, {"mine": 1 + index % 2, "rival": 2 - index % 2, "filler": 3})
    _finish(second[0], {"mine": 1, "rival": 2, "filler": 3})  # its set still playing

    page = Client().get(f"/challenges/{challenge.pk}/").content.decode()

    assert "1/2</strong> duplicate sets over" in page
    assert page.count(">watch</a>") == 3  # the finished set's three rotations, not second[0]
    for match in first:
        assert f'<a href="/matches/{match.pk}/">watch</a>' in page
    assert f'<a href="/matches/{second[0].pk}/">watch</a>' not in page
    assert str(second[0].seed) not in page and str(first[0].seed) not in page

    for match in second[1:]:
        _finish(match, {"mine": 1, "rival": 3, "filler": 2})
    page = Client().get(f"/challenges/{challenge.pk}/").content.decode()

    assert "2/2</strong> duplicate sets over" in page and page.count(">watch</a>") == 6
    cells = re.findall(r"<td>([^<]*\[[^<]*\])</td>", page)
    assert len(cells) == 3 * 2 + 2  # rank and score per bot, and two opponents' differences
    assert any(cell.startswith("+") for cell in cells)  # a signed difference
    listing = alice.get("/challenges/").content.decode()
    assert f'href="/challenges/{challenge.pk}/"' in listing


def test_the_owner_switch_refuses_challenges_and_only_the_owner_can_flip_it(
    players: dict[str, User], queued: dict, django_capture_on_commit_callbacks: Any
) -> None:
    bob, alice = _signed_in(players["bob"]), _signed_in(players["alice"])
    assert 'action="/challenges/bots/rival/accepted/"' in bob.get("/account/bots/").content.decode()

    flipped = bob.post("/challenges/bots/rival/accepted/", {"accepts": "0"}, follow=True)
    assert "rival now refuses challenges" in flipped.content.decode()
    assert "Challenges from other users: refused." in flipped.content.decode()
    before = _stored()

    with django_capture_on_commit_callbacks(execute=True):
        refused = alice.post(
            "/challenges/", {"bot": "mine", "opponents": "rival filler", "game": "oh-hell", "sets": "3"}
        )
    by_alice = alice.post("/challenges/bots/rival/accepted/", {"accepts": "1"}, follow=True)
    anonymous = Client().post("/challenges/bots/rival/accepted/", {"accepts": "1"})
    by_get = bob.get("/challenges/bots/rival/accepted/")

    assert refused.status_code == 200 and "does not accept challenges" in refused.content.decode()
    assert "rival is not your bot" in by_alice.content.decode()
    assert anonymous.status_code == 302 and "sign-in" in anonymous["Location"]
    assert by_get.status_code == 405
    assert Bot.objects.get(name="rival").accepts_challenges is False
    assert _stored() == before and queued["match"].calls == []


@pytest.mark.parametrize(
    ("what", "form", "says"),
    [
        ("no sets", {"opponents": "rival filler", "sets": "0"}, "greater than or equal to 1"),
        ("21 sets", {"opponents": "rival filler", "sets": "21"}, "less than or equal to 20"),
        ("an unknown opponent", {"opponents": "rival nobody"}, "no bot named"),
        ("too few seats", {"opponents": "rival"}, "3-7 seats"),
        ("another's bot twice", {"opponents": "rival rival"}, "seat it once at most"),
        ("a bot not hers as her own", {"bot": "rival", "opponents": "filler mine"}, "Select a valid choice"),
        ("an unknown game", {"opponents": "rival filler", "game": "nope"}, "Select a valid choice"),
    ],
)
def test_a_refused_site_challenge_says_why_and_creates_nothing(
    players: dict[str, User],
    queued: dict,
    django_capture_on_commit_callbacks: Any,
    what: str,
    form: dict[str, str],
    says: str,
) -> None:
    alice = _signed_in(players["alice"])
    before = _stored()

    with django_capture_on_commit_callbacks(execute=True):
        response = alice.post("/challenges/", {"bot": "mine", "game": "oh-hell", "sets": "1", **form})

    assert response.status_code == 200, what
    assert says in response.content.decode(), what
    assert _stored() == before and queued["match"].calls == [], what


def test_challenge_forms_refuse_a_post_without_its_csrf_token_and_change_nothing(
    players: dict[str, User], queued: dict
) -> None:
    alice = Client(enforce_csrf_checks=True)
    alice.force_login(players["alice"])
    bob = Client(enforce_csrf_checks=True)
    bob.force_login(players["bob"])
    before = _stored()

    asked = alice.post(
        "/challenges/", {"bot": "mine", "opponents": "rival filler", "game": "oh-hell", "sets": "1"}
    )
    switched = bob.post("/challenges/bots/rival/accepted/", {"accepts": "0"})

    assert (asked.status_code, switched.status_code) == (403, 403)
    assert _stored() == before and queued["match"].calls == []
    assert Bot.objects.get(name="rival").accepts_challenges is True
    assert 'name="csrfmiddlewaretoken"' in alice.get("/challenges/").content.decode()
