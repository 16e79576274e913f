"""The tournament pages with Django's test client: the list (published only), a tournament's page
(progress, standings with intervals and ties, crosstable, every match linked to its replay page),
entering from the web with every refusal shown and nothing changed, and the replay archive."""

from __future__ import annotations

import gzip
import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from tournament_data import make_version

from septet_platform.matches.models import Match
from septet_platform.tournaments import services
from septet_platform.tournaments.models import Entrant, Tournament

pytestmark = pytest.mark.django_db


def test_the_list_shows_published_tournaments_only(
    client: Client, open_cup: Tournament, organiser: User
) -> None:
    services.tournament_create(
        organiser=organiser, name="draft", title="Secret draft", game="oh-hell", table_size=3,
        entry_deadline=timezone.now(), published=False,
    )  # fmt: skip

    page = client.get(reverse("tournaments:list")).content.decode()

    assert "The Cup" in page and reverse("tournaments:detail", args=["cup"]) in page
    assert f'<a href="{reverse("tournaments:list")}">Tournaments</a>' in page  # in the site's menu
    assert "Secret draft" not in page
    assert client.get(reverse("tournaments:detail", args=["draft"])).status_code == 404
    assert client.get(reverse("tournaments:detail", args=["nothing"])).status_code == 404


def test_a_tournament_page_shows_progress_standings_crosstable_and_every_match(
    client: Client, running_cup: Tournament
) -> None:
    page = client.get(reverse("tournaments:detail", args=["cup"])).content.decode()

    assert "<strong>12</strong> of 12 matches played (100%)" in page
    for name in ("ann-bot", "ben-bot", "cat-bot", "dan-bot"):
        assert name in page
    assert "Crosstable" in page and "6/6" in page  # ann ahead of dan in all 6 games they shared
    for match in Match.objects.filter(tournament=running_cup):
        assert f'href="{reverse("web:match", args=[match.pk])}"' in page
    assert reverse("tournaments:replays", args=["cup"]) in page
    assert "Mean rank" in page and "95% interval" in page


def test_an_owner_enters_from_the_web_and_refusals_change_nothing(
    client: Client, open_cup: Tournament
) -> None:
    mine = make_version("ada", "ada-bot")
    make_version("bob", "bob-bot")
    make_version("ada", "ada-duel", games=["oh7-duel"])
    enter = reverse("tournaments:enter", args=["cup"])
    assert client.post(enter, {"bot": "ada-bot"}).status_code == 302  # to the sign-in page
    assert not Entrant.objects.exists()
    client.force_login(mine.bot.owner)

    assert 'name="bot"' in client.get(reverse("tournaments:detail", args=["cup"])).content.decode()
    for bot, message in (
        ("bob-bot", "bob-bot is not your bot"),
        ("ada-duel", "ada-duel has no active version that plays oh-hell"),
        ("nobody", "no bot named &#x27;nobody&#x27;"),
    ):
        page = client.post(enter, {"bot": bot}, follow=True).content.decode()
        assert message in page, bot
    assert not Entrant.objects.exists()

    page = client.post(enter, {"bot": "ada-bot"}, follow=True).content.decode()
    assert "ada-bot is entered in The Cup" in page
    assert list(Entrant.objects.values_list("bot__name", flat=True)) == ["ada-bot"]


def test_the_replay_archive_holds_every_played_match_with_its_seating(
    client: Client, running_cup: Tournament, settings: object, tmp_path: Path
) -> None:
    settings.SEPTET_REPLAYS_DIR = tmp_path  # type: ignore[attr-defined]
    played = list(Match.objects.filter(tournament=running_cup).order_by("pk"))
    document = {  # the top level of a replay: the archive's copies are read to blank forfeit reasons
        "format": "septet-replay/1", "game": running_cup.game, "options": {}, "seed": 1, "seats": [],
        "events": [], "forfeits": [], "result": {},
    }  # fmt: skip
    for match in played[:5]:
        (tmp_path / f"{match.pk}-a1.json.gz").write_bytes(gzip.compress(json.dumps(document).encode()))
        Match.objects.filter(pk=match.pk).update(replay=f"{match.pk}-a1.json.gz")

    response = client.get(reverse("tournaments:replays", args=["cup"]))

    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    index = json.loads(archive.read("matches.json"))
    assert [entry["match"] for entry in index["matches"]] == [m.pk for m in played[:5]]
    assert sorted(archive.namelist()) == sorted(
        ["matches.json", *(f"match-{m.pk}.json.gz" for m in played[:5])]
    )
    assert json.loads(gzip.decompress(archive.read(f"match-{played[0].pk}.json.gz"))) == document
    assert {seat["bot"] for seat in index["matches"][0]["seats"]} <= {
        "ann-bot",
        "ben-bot",
        "cat-bot",
        "dan-bot",
    }


def test_an_organiser_creates_a_tournament_in_the_admin_and_a_bad_one_is_refused(
    client: Client, organiser: User
) -> None:
    organiser.is_superuser = True
    organiser.save()
    client.force_login(organiser)
    form = {
        "name": "admin-cup", "title": "Admin cup", "game": "oh-hell", "format": "round-robin",
        "table_size": "8", "duplicate_sets": "1", "tables": "0", "rounds": "3", "decision_seconds": "1.0",
        "bank_seconds": "10.0", "entry_deadline_0": "2030-01-01", "entry_deadline_1": "12:00:00",
        "entry": "open", "organiser": str(organiser.pk), "published": "on", "seed": "5",
        "entrants-TOTAL_FORMS": "0", "entrants-INITIAL_FORMS": "0",
    }  # fmt: skip
    add = reverse("admin:tournaments_tournament_add")

    page = client.post(add, form).content.decode()
    assert "oh-hell is played by 3-7 players, not 8" in page
    assert not Tournament.objects.exists()

    assert client.post(add, {**form, "table_size": "4"}).status_code == 302
    cup = Tournament.objects.get(name="admin-cup")
    assert (cup.table_size, cup.status, cup.published) == (4, Tournament.Status.OPEN, True)


def test_a_tournament_matchs_page_links_back_to_its_event_and_round(
    client: Client, running_cup: Tournament
) -> None:
    match = Match.objects.filter(tournament=running_cup).order_by("pk").first()
    assert match is not None
    page = client.get(reverse("web:match", args=[match.pk])).content.decode()
    assert f'href="{reverse("tournaments:detail", args=["cup"])}"' in page
    assert f"{running_cup.title}</a>, round {match.tournament_round}" in page
