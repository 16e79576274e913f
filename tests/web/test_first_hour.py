"""Issue 24, the site's first hour: the home page's install steps are the ones that work (a clone,
scripts/start, the venv, an example bot copied, check, submit with SEPTET_SERVER and
SEPTET_TOKEN) and link the guides in the source repository; every ladder's leaders are on the
home page and on /ladders/, as the ladder ranks them, in the same few statements whatever the
number of ladders; My bots says why a version failed only for a failed one; the challenge form's
example is a challenge the platform accepts."""

from __future__ import annotations

from typing import Any

import pytest
from bot_versions import version_row
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from web_data import SCRIPT_NAME, Site, version_make

from referee.engine.games import all_games
from septet_platform.bots.models import BotVersion
from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.ladders.selectors import ladder_standings
from septet_platform.matches.models import Seat
from septet_platform.web.challenge_views import EXAMPLE_GAME, EXAMPLE_OPPONENTS
from septet_platform.web.selectors import ARENA_PORT

pytestmark = pytest.mark.django_db


def _text(response: Any) -> str:
    return str(response.content.decode())


SOURCE = "https://git.example.org/fork/septet.git"


def test_the_home_page_shows_the_install_steps_that_work_and_names_this_sites_arena(
    client: Client, site: Site, settings: Any
) -> None:
    settings.SEPTET_SOURCE_URL = SOURCE
    page = _text(client.get("/", HTTP_HOST="localhost:8000"))
    steps = [
        f"git clone {SOURCE} septet",
        "bash scripts/start",
        "source .venv/bin/activate",
        "cp -r bots/examples/random bots/mine",
        "septet check bots/mine",
        f"export SEPTET_SERVER=localhost:{ARENA_PORT}",
        "export SEPTET_TOKEN=sep_...",
        "septet submit bots/mine --wait",
    ]
    at = [page.find(step) for step in steps]
    assert -1 not in at, dict(zip(steps, at, strict=True))
    assert at == sorted(at), "in the order they are typed"
    assert "pip install" not in page


def test_the_home_page_links_the_sites_own_guides_and_the_configured_repository(
    client: Client, site: Site, settings: Any
) -> None:
    settings.SEPTET_SOURCE_URL = SOURCE
    page = _text(client.get("/"))
    assert f'href="{SOURCE}"' in page
    for slug in ("bots", "examples", "rules"):
        assert f'href="/docs/{slug}/"' in page, slug
        assert client.get(f"/docs/{slug}/").status_code == 200, slug


def test_with_no_repository_configured_the_home_page_guesses_none(
    client: Client, site: Site, settings: Any
) -> None:
    settings.SEPTET_SOURCE_URL = ""
    page = _text(client.get("/"))
    assert "git clone SEPTET_REPOSITORY septet" in page, "a placeholder, plainly one"
    assert "github.com" not in page
    assert 'href="/docs/bots/"' in page


def test_a_guide_is_rendered_with_anchors_and_links_between_guides(
    client: Client, site: Site, settings: Any, tmp_path: Any
) -> None:
    """Tried: a guide linking another guide at an anchor, a file the site does not serve, an
    outside address, raw HTML (not rendered), and a guide that does not exist (404)."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "bots.md").write_text(
        "# Writing a bot\n\n## Time controls & clocks\n\nSee [forfeits](rules.md#forfeits), "
        "[the manifest](../pyproject.toml), [gRPC](https://grpc.io/).\n\n<script>alert(1)</script>\n"
    )
    (tmp_path / "docs" / "rules.md").write_text("# Rules\n\n## Forfeits\n")
    settings.SEPTET_GUIDES_ROOT = tmp_path
    page = _text(client.get("/docs/bots/"))
    assert '<h2 id="time-controls--clocks">' in page
    assert 'href="/docs/rules/#forfeits"' in page
    assert "<a>the manifest</a>" in page, "a file the site does not serve is plain text, not a broken link"
    assert 'href="https://grpc.io/"' in page
    assert "<script>alert(1)</script>" not in page
    assert '<h2 id="forfeits">' in _text(client.get("/docs/rules/"))
    assert client.get("/docs/examples/").status_code == 404, "a guide whose file is missing"
    assert client.get("/docs/no-such-guide/").status_code == 404


def _leaders_shown(page: str, game: str) -> str:
    card = page[page.index(f'data-game="{game}"') :]
    return card[: card.index("</article>")]


def test_every_ladders_first_three_are_on_the_home_page_and_ladders_as_the_ladder_ranks_them(
    client: Client, site: Site
) -> None:
    """Four bots on the oh-hell ladder: the first three by rating are shown in order with their
    ratings, the fourth is not; a game without a ladder is listed with its rules."""
    version = version_make(site.bob, "fourth")
    Rating.objects.create(ladder=site.ladder, bot_version=version, mu=1.0, sigma=8.0)
    first_three = ladder_standings(ladder=site.ladder)[:3]
    assert "fourth" not in [standing.bot for standing in first_three]
    ladder_page = client.get("/ladders/oh-hell/").context["page"].object_list
    assert [row.bot for row in ladder_page[:3]] == [standing.bot for standing in first_three]
    for address in ("/", "/ladders/"):
        response = client.get(address)
        assert response.status_code == 200
        card = _leaders_shown(_text(response), "oh-hell")
        at = [
            card.find(f">{standing.bot.replace('<', '&lt;').replace('>', '&gt;')}</a>")
            for standing in first_three
        ]
        assert -1 not in at and at == sorted(at), card
        for standing in first_three:
            assert '<span class="rating"' in card and f">{standing.rating}</span>" in card
        assert "fourth" not in card
        for game in all_games().values():
            assert f'data-game="{game.id}"' in _text(response)
            assert reverse("web:rules", args=[game.id]) in _text(response)
    assert SCRIPT_NAME not in _text(client.get("/ladders/")), "names are escaped"


def test_a_bot_with_no_rated_games_is_ranked_after_every_played_one_on_every_page(
    client: Client, site: Site
) -> None:
    """A new version (0 games, the default mu, a wide interval) above bots that proved a lower mu
    was what a newcomer saw at #3 of 6; the site, the leaders and `ladder_standings` agree."""
    for rating in Rating.objects.filter(ladder=site.ladder):
        rating.mu, rating.games = 20.0, 12
        rating.save()
    newcomer = version_make(site.bob, "newcomer")
    Rating.objects.create(ladder=site.ladder, bot_version=newcomer, mu=25.0, sigma=8.3, games=0)
    assert ladder_standings(ladder=site.ladder)[-1].bot == "newcomer"
    rows = client.get("/ladders/oh-hell/").context["page"].object_list
    assert rows[-1].bot == "newcomer" and len(rows) > 1
    assert "newcomer" not in _leaders_shown(_text(client.get("/ladders/")), "oh-hell")


def test_the_ladders_link_of_every_page_goes_to_the_ladders_page(client: Client, site: Site) -> None:
    page = _text(client.get("/rules/"))
    assert f'<a href="{reverse("web:ladders")}">Ladders</a>' in page
    assert reverse("web:ladders") == "/ladders/"
    assert "<h1>Ladders</h1>" in _text(client.get("/ladders/"))


def test_the_home_pages_statements_do_not_grow_with_the_ladders(client: Client, site: Site) -> None:
    """One ladder, then six, each with rated bots: the home page reads the same statements."""
    with CaptureQueriesContext(connection) as one_ladder:
        assert client.get("/").status_code == 200
    for game in ("oh7", "oh7-advanced", "oh7-duel", "black-sevens", "seven-up-seven-down"):
        ladder = Ladder.objects.create(game=game, min_players=2, max_players=7)
        for number in range(3):
            Rating.objects.create(
                ladder=ladder,
                bot_version=version_make(site.bob, f"{game}-{number}"),
                mu=25.0 - number,
                sigma=8.0,
            )
    with CaptureQueriesContext(connection) as six_ladders:
        page = _text(client.get("/"))
    assert "oh7-duel-0" in page
    # 8: the ladders and their leaders, the recent matches and their seats, what is live now (one
    # statement), the session and the page's own reads.
    assert len(six_ladders.captured_queries) == len(one_ladder.captured_queries) <= 8


def test_my_bots_says_why_only_for_a_failed_version(client: Client, site: Site) -> None:
    """An active version whose log holds qualification's notes gets no "Why it failed"."""
    version_make(site.alice, "noted", error_log="qualification: noted v1 passed oh-hell in 0.4 s")
    client.force_login(site.alice)
    page = _text(client.get("/account/bots/"))
    assert page.count("Why it failed") == 1
    assert "no module named numpy" in page  # alpha v2 failed
    assert "passed oh-hell in 0.4 s" not in page
    assert BotVersion.objects.get(bot__name="noted").status == BotVersion.Status.ACTIVE


def test_the_challenge_forms_example_is_a_challenge_the_platform_queues(
    client: Client, storage: Any, queued: dict[str, Any]
) -> None:
    Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    Ladder.objects.create(game="oh7-duel", min_players=2, max_players=2)
    mine = version_row("alice", "mine")
    for name in EXAMPLE_OPPONENTS.split():
        version_row("house", name, is_house=True)
    client.force_login(mine.bot.owner)
    page = _text(client.get("/challenges/"))
    assert f'placeholder="{EXAMPLE_OPPONENTS}"' in page
    assert f"septet challenge mine {EXAMPLE_OPPONENTS} --game {EXAMPLE_GAME}" in page
    assert '<option value="oh-hell" selected>oh-hell (3-7 players)</option>' in page
    assert '<option value="oh7-duel">oh7-duel (2 players)</option>' in page
    form = {"bot": "mine", "opponents": EXAMPLE_OPPONENTS, "game": EXAMPLE_GAME, "sets": "1"}
    response = client.post("/challenges/", form)
    assert response.status_code == 302, _text(response)
    challenge = Challenge.objects.get()
    assert response["Location"] == reverse("web:challenge", args=[challenge.pk])
    seated = {seat.bot_version.bot.name for seat in Seat.objects.filter(match__challenges=challenge)}
    assert seated == {"mine", *EXAMPLE_OPPONENTS.split()}
