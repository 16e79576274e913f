"""The public pages with real data: what each shows, 404s for unknown ids, and escaping."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape
from web_data import SCRIPT_NAME, Site, match_play_recorded, version_make

from referee.engine.games import all_games
from septet_platform.matches.models import Match

ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


def _text(response: object) -> str:
    return response.content.decode()  # type: ignore[attr-defined]


def test_home_lists_every_game_the_recent_matches_and_the_real_commands(client: Client, site: Site) -> None:
    page = _text(client.get("/"))
    for game in all_games().values():
        assert game.title in page.replace("&#x27;", "'") or game.id in page
        assert reverse("web:rules", args=[game.id]) in page
    assert reverse("web:ladder", args=["oh-hell"]) in page
    assert reverse("web:match", args=[site.match.pk]) in page
    for command in ("git clone", "septet check bots/mine", "septet submit bots/mine --wait"):
        assert command in page


def test_ladder_shows_rank_bot_owner_rating_interval_games_and_last_match(client: Client, site: Site) -> None:
    response = client.get("/ladders/oh-hell/")
    page = _text(response)
    standings = response.context["page"].object_list
    assert [row.rank for row in standings] == [1, 2, 3]
    assert {row.bot for row in standings} == {"alpha", "beta", SCRIPT_NAME}
    for row in standings:
        assert row.games == 2
        assert site.forfeited.finished < row.last_match < timezone.now()  # when the last rating was saved
        assert f"{row.low}–{row.high}" in page
        assert row.low < row.rating < row.high
    assert ">alice<" in page and ">bob<" in page


def test_ladder_sorts_by_the_asked_column_and_ignores_unknown_sorts(client: Client, site: Site) -> None:
    by_name = client.get("/ladders/oh-hell/?sort=-bot").context["page"].object_list
    assert [row.bot for row in by_name] == sorted([row.bot for row in by_name], reverse=True)
    by_rank = client.get("/ladders/oh-hell/?sort=rank").context["page"].object_list
    by_last = client.get("/ladders/oh-hell/?sort=-last").context["page"].object_list
    assert [row.last_match for row in by_last] == sorted([row.last_match for row in by_last], reverse=True)
    odd = client.get("/ladders/oh-hell/?sort=__class__")
    assert odd.status_code == 200 and odd.context["sort"] == "rank"
    assert [row.bot for row in odd.context["page"].object_list] == [row.bot for row in by_rank]


def test_ladder_pages_hold_fifty_rows_and_a_page_out_of_range_shows_the_last(
    client: Client, site: Site
) -> None:
    from septet_platform.ladders.models import Rating

    for index in range(60):
        version = version_make(site.alice, f"filler-{index:02d}")
        Rating.objects.create(ladder=site.ladder, bot_version=version, mu=20 + index / 10, sigma=5)
    first = client.get("/ladders/oh-hell/")
    assert len(first.context["page"].object_list) == 50
    assert "Page 1 of 2" in _text(first)
    last = client.get("/ladders/oh-hell/?page=99")
    assert last.context["page"].number == 2 and len(last.context["page"].object_list) == 13
    assert client.get("/ladders/oh-hell/?page=abc").context["page"].number == 1


def test_bot_page_shows_versions_rating_chart_and_recent_matches(client: Client, site: Site) -> None:
    response = client.get("/bots/alpha/")
    page = _text(response)
    assert "v1" in page and "v2" in page and "Failed" in page
    assert '<svg class="chart"' in page and "<polyline" in page
    profile = response.context["profile"]
    assert [row.match_id for row in profile.results] == [site.forfeited.pk, site.match.pk]
    assert [seat.match_id for seat in profile.waiting] == [site.running.pk]
    assert profile.ratings[0].chart is not None and profile.ratings[0].chart.points == 2


@pytest.mark.parametrize("viewer", ["anonymous", "bob"])
def test_others_never_see_an_owners_error_logs_or_forfeit_reasons(
    client: Client, site: Site, viewer: str
) -> None:
    if viewer == "bob":
        client.force_login(site.bob)
    page = _text(client.get("/bots/alpha/"))
    assert "no module named numpy" not in page
    assert "only you see these" not in page


def test_the_owner_sees_qualification_logs_and_forfeit_reasons(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    page = _text(client.get("/bots/alpha/"))
    assert "no module named numpy" in page
    seat = site.forfeited.seats.get(seat=1)
    assert seat.forfeit_status == "INVALID" and seat.forfeit_reason
    assert seat.forfeit_reason.replace("'", "&#x27;").replace('"', "&quot;")[:40] in page


def test_match_page_shows_seating_results_rounds_and_embeds_the_viewer(client: Client, site: Site) -> None:
    response = client.get(f"/matches/{site.match.pk}/")
    page = _text(response)
    detail = response.context["detail"]
    replay = json.loads(gzip.decompress((Path(settings.SEPTET_REPLAYS_DIR) / site.match.replay).read_bytes()))
    round_ends = [event for event in replay["events"] if event["type"] == "round_end"]
    assert len(detail.rounds) == len(round_ends) > 0
    assert [total for _, total in detail.rounds[-1].cells] == [str(n) for n in round_ends[-1]["scores"]]
    replay_url = reverse("web:match-replay", args=[site.match.pk])
    assert f'<div class="septet-viewer" data-replay-url="{replay_url}"></div>' in page
    assert "septet-viewer/viewer.js" in page and "septet-viewer/viewer.css" in page
    for seat in site.match.seats.all():
        assert f'<td class="num">{seat.score}</td>' in page
    assert "web/live.js" not in page


def test_match_page_shows_each_forfeit_with_its_reason(client: Client, site: Site) -> None:
    page = _text(client.get(f"/matches/{site.forfeited.pk}/"))
    assert "<strong>INVALID</strong>" in page


def test_a_running_match_page_follows_the_match_and_works_without_javascript(
    client: Client, site: Site
) -> None:
    page = _text(client.get(f"/matches/{site.running.pk}/"))
    assert 'id="live-table"' in page and "web/live.js" in page
    assert f'data-events-url="/live/matches/{site.running.pk}/events"' in page  # the public stream
    assert "data-answer-url" not in page  # nobody sits here in person
    assert '<noscript><meta http-equiv="refresh"' in page
    assert "data-replay-url" not in page  # no replay before the match is over
    state = client.get(f"/matches/{site.running.pk}/status.json").json()
    assert state["status"] == "running" and state["done"] is False and state["attempt"] == 1
    assert client.get(f"/matches/{site.match.pk}/status.json").json()["done"] is True


def test_replay_document_is_the_stored_gzip_with_content_encoding_or_plain_json(
    client: Client, site: Site
) -> None:
    stored = (Path(settings.SEPTET_REPLAYS_DIR) / site.match.replay).read_bytes()
    zipped = client.get(f"/matches/{site.match.pk}/replay.json", HTTP_ACCEPT_ENCODING="gzip, br")
    assert zipped["Content-Type"] == "application/json" and zipped["Content-Encoding"] == "gzip"
    assert zipped.content == stored
    plain = client.get(f"/matches/{site.match.pk}/replay.json")
    assert plain["Content-Type"] == "application/json" and not plain.has_header("Content-Encoding")
    document = plain.json()
    assert document["format"] == "septet-replay/1" and document["match_id"] == str(site.match.pk)


def test_replay_document_of_a_match_without_one_is_a_404(client: Client, site: Site) -> None:
    assert client.get(f"/matches/{site.running.pk}/replay.json").status_code == 404
    (Path(settings.SEPTET_REPLAYS_DIR) / site.match.replay).unlink()
    assert client.get(f"/matches/{site.match.pk}/replay.json").status_code == 404
    page = client.get(f"/matches/{site.match.pk}/")
    assert page.status_code == 200 and "is missing from storage" in _text(page)  # not "No replay yet"


def test_a_tampered_replay_file_shows_an_error_not_a_broken_page(client: Client, site: Site) -> None:
    (Path(settings.SEPTET_REPLAYS_DIR) / site.match.replay).write_bytes(gzip.compress(b"{not json"))
    response = client.get(f"/matches/{site.match.pk}/")
    assert response.status_code == 200 and "the replay is unreadable" in _text(response)


@pytest.mark.parametrize(
    "url",
    [
        "/ladders/no-such-game/",
        "/bots/nobody/",
        "/bots/%3Cimg%20src%3Dx%3E/",
        "/matches/999999/",
        "/matches/999999/replay.json",
        "/matches/999999/status.json",
        "/matches/99999999999999999999999/",
        "/rules/no-such-game/",
        "/no/such/page/",
    ],
)
def test_unknown_ids_and_names_give_the_404_page(client: Client, site: Site, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 404
    if not url.endswith(".json"):
        assert "<h1>Not found</h1>" in _text(response)
    assert "<img" not in _text(response)


def test_a_bot_named_like_a_script_is_text_on_every_page(client: Client, site: Site) -> None:
    client.force_login(site.bob)
    urls = [
        "/",
        "/ladders/oh-hell/",
        reverse("web:bot", args=[SCRIPT_NAME]),
        f"/matches/{site.match.pk}/",
        f"/matches/{site.forfeited.pk}/",
        "/account/bots/",
    ]
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        page = _text(response)
        assert SCRIPT_NAME not in page, url
        assert ESCAPED_SCRIPT in page, url


def test_rules_page_per_game_shows_the_engines_rules_and_options(client: Client, db: None) -> None:
    for game in all_games().values():
        response = client.get(f"/rules/{game.id}/")
        assert response.status_code == 200
        page = _text(response)
        assert str(escape(game.rules.strip())) in page
        for name, spec in game.options.items():
            assert f"<code>{name}</code>" in page
            assert ", ".join(str(value) for value in spec.allowed) in page
    assert client.get("/rules/").status_code == 200


def test_how_ratings_work_states_the_scale_the_ladders_use(client: Client, db: None) -> None:
    page = _text(client.get("/ratings/"))
    assert "1500 + 29.5 × (μ − 25.0)" in page


def test_results_of_a_busy_bot_come_twenty_a_page(client: Client, site: Site) -> None:
    for seed in range(21):
        match_play_recorded(site.ladder, [site.alpha, site.beta, site.scripted], seed=100 + seed)
    response = client.get("/bots/beta/")
    profile = response.context["profile"]
    assert len(profile.results.object_list) == 20 and profile.results.has_next()
    assert profile.results.object_list[0].match_id == Match.objects.order_by("-id").first().pk
    assert 'href="?status=finished&amp;page=2#matches">older</a>' in _text(response)
    older = client.get("/bots/beta/?page=2").context["profile"].results
    assert len(older.object_list) == 3 and not older.has_next() and older.has_previous()  # 23 in all
    beyond = client.get("/bots/beta/?page=9")
    assert not beyond.context["profile"].results.object_list and "No older matches." in _text(beyond)


def test_bot_page_shows_its_complete_duplicate_sets_and_their_mean_rank(client: Client, site: Site) -> None:
    table = [site.alpha, site.beta, site.scripted]
    rotations = [match_play_recorded(site.ladder, table[r:] + table[:r], seed=77) for r in range(len(table))]
    for rotation, match in enumerate(rotations):
        Match.objects.filter(pk=match.pk).update(duplicate_set="set-77", rotation=rotation)
    unfinished = Match.objects.create(ladder=site.ladder, seed=78, duplicate_set="set-78", rotation=0)
    for seat, version in enumerate(table):
        unfinished.seats.create(seat=seat, bot_version=version)
    alpha_ranks = [match.seats.get(bot_version=site.alpha).rank for match in rotations]

    response = client.get("/bots/alpha/")

    profile = response.context["profile"]
    assert [played.name for played in profile.duplicate_sets] == ["set-77"], "the unplayed set is left out"
    played = profile.duplicate_sets[0]
    assert (played.game, played.players, played.rotations) == ("oh-hell", 3, 3)
    assert played.mean_rank == pytest.approx(sum(alpha_ranks) / 3)
    assert played.field == sorted(["beta", SCRIPT_NAME])
    summary = profile.duplicate_summary
    assert [(row.game, row.players, row.sets) for row in summary] == [("oh-hell", 3, 1)]
    page = _text(response)
    assert "Duplicate results" in page and f"{played.mean_rank:.2f}" in page
    assert SCRIPT_NAME not in page and ESCAPED_SCRIPT in page


def test_ladder_marks_bots_with_few_rated_games_provisional(client: Client, site: Site) -> None:
    from septet_platform.ladders.models import Rating
    from septet_platform.ladders.ratings import PROVISIONAL_GAMES

    Rating.objects.filter(bot_version=site.beta).update(games=PROVISIONAL_GAMES)
    rows = {row.bot: row for row in client.get("/ladders/oh-hell/").context["page"]}
    assert rows["alpha"].provisional and not rows["beta"].provisional
    page = _text(client.get("/ladders/oh-hell/"))
    assert page.count('class="muted provisional"') == sum(row.provisional for row in rows.values())
