"""The busiest pages read in plain SQL (septet_platform.web.sql, web.bot_page, web.selectors'
match_read): on real rows in every state that matters, they give what matches.selectors' rules
and a plain recomputation from the ORM give. Nothing is stored apart from the matches, seats and
ratings, so these are the reads to hold equal."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import astuple
from datetime import timedelta
from typing import Any

import pytest
from django.template.defaultfilters import floatformat
from django.utils import timezone
from web_data import Site, match_play_recorded, version_make

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.selectors import rating_changes
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.selectors import match_is_published, published_match_ids
from septet_platform.tournaments.models import Tournament
from septet_platform.web import bot_page, selectors
from septet_platform.web.tables import decimal_text

pytestmark = pytest.mark.django_db

FINISHED, RUNNING, SCHEDULED = Match.Status.FINISHED, Match.Status.RUNNING, Match.Status.SCHEDULED
ABORTED, CANCELLED = Match.Status.ABORTED, Match.Status.CANCELLED


def _match(
    ladder: Ladder,
    versions: list[BotVersion],
    *,
    status: str,
    name: str = "",
    seed: int = 1,
    ranked: bool = True,
    tournament: Tournament | None = None,
) -> Match:
    """A match in `status` seating `versions` (ranks in seat order when `ranked`), with a replay name."""
    match = Match.objects.create(
        ladder=ladder,
        seed=seed,
        duplicate_set=name,
        status=status,
        tournament=tournament,
        replay=f"made-{seed}-{name or 'alone'}.json.gz",
    )
    Seat.objects.bulk_create(
        Seat(
            match=match,
            seat=seat,
            bot_version=version,
            rank=seat + 1 if ranked else None,
            score=10 - seat if ranked else None,
        )
        for seat, version in enumerate(versions)
    )
    return match


def _tournament(site: Site) -> Tournament:
    return Tournament.objects.create(
        name="cup",
        title="Cup",
        game="oh-hell",
        table_size=3,
        entry_deadline=timezone.now() + timedelta(hours=1),
        organiser=site.alice,
        seed=5,
    )


def test_the_publication_read_with_the_match_equals_the_matches_rule(site: Site) -> None:
    """Sets over, still played, over with aborted and cancelled rotations, a name shared with
    another ladder and with a tournament's set, and matches alone: the match page's and the
    replay's one-statement read says published exactly when match_is_published does, and the
    bot page's replay links follow published_match_ids."""
    table = [site.alpha, site.beta, site.scripted]
    other = Ladder.objects.create(game="black-sevens", min_players=3, max_players=7)
    cup = _tournament(site)
    plan: list[tuple[Ladder, str, str, Tournament | None]] = [
        (site.ladder, "over", FINISHED, None),
        (site.ladder, "over", FINISHED, None),
        (site.ladder, "playing", FINISHED, None),
        (site.ladder, "playing", RUNNING, None),
        (site.ladder, "playing", SCHEDULED, None),
        (site.ladder, "last-one", FINISHED, None),
        (site.ladder, "last-one", RUNNING, None),
        (site.ladder, "broken", FINISHED, None),
        (site.ladder, "broken", ABORTED, None),
        (site.ladder, "broken", CANCELLED, None),
        (site.ladder, "shared", FINISHED, None),
        (other, "shared", SCHEDULED, None),
        (site.ladder, "cup-set", FINISHED, cup),
        (site.ladder, "cup-set", RUNNING, None),
        (site.ladder, "", FINISHED, None),
        (site.ladder, "", RUNNING, None),
        (site.ladder, "", ABORTED, None),
        (site.ladder, "", SCHEDULED, None),
    ]
    made = [
        _match(ladder, table, status=status, name=name, seed=100 + index, tournament=tournament)
        for index, (ladder, name, status, tournament) in enumerate(plan)
    ]
    everything = list(Match.objects.all())
    published = published_match_ids(everything)
    assert published & {match.pk for match in made}, "some of them are published"
    assert {match.pk for match in made} - published, "and some are not"
    for match in everything:
        read, is_published = selectors.match_read(match.pk)
        assert is_published == match_is_published(match) == (match.pk in published), match.duplicate_set
        assert (read.pk, read.status, read.ladder.game) == (match.pk, match.status, match.ladder.game)
        assert read.tournament == match.tournament

    rows = bot_page.bot_results(bot=bot_page.bot_named("alpha"), page=1).object_list
    rows += bot_page.bot_results(bot=bot_page.bot_named("alpha"), page=2).object_list
    finished = [match for match in everything if match.status in (FINISHED, ABORTED, CANCELLED)]
    assert [row.match_id for row in rows] == sorted((match.pk for match in finished), reverse=True)
    changes = rating_changes(everything)
    for row in rows:
        assert row.replay == (row.match_id in published), row
        assert row.rating_change == changes.get((row.match_id, site.alpha.pk))
        assert row.players == Seat.objects.filter(match_id=row.match_id).count()


def _duplicate_sets_recomputed(bot_name: str, limit: int) -> list[tuple[Any, ...]]:
    """The bot's recent complete duplicate sets, recomputed from model instances the plain way
    (the rule the bot page has always used): the newest `limit` sets with a finished seat among
    the bot's last `limit * 8` seats in sets; complete when every match named like the set is
    finished and every one of the bot's seats there is ranked."""
    seats = (
        Seat.objects.filter(bot_version__bot__name=bot_name)
        .exclude(match__duplicate_set="")
        .select_related("match")
        .order_by("-match_id")[: limit * 8]
    )
    own: dict[str, list[Seat]] = {}
    for seat in seats:
        name = seat.match.duplicate_set
        if seat.match.status == FINISHED and (name in own or len(own) < limit):
            own.setdefault(name, []).append(seat)
    found = []
    for name, mine in own.items():
        rotations = list(Match.objects.filter(duplicate_set=name).order_by("id"))
        if any(rotation.status != FINISHED for rotation in rotations) or any(s.rank is None for s in mine):
            continue
        first = rotations[0]
        table = sorted(first.seats.values_list("bot_version__bot__name", flat=True))
        found.append(
            (
                first.ladder.game,
                name,
                first.seed,
                len(table),
                len(rotations),
                sum(seat.rank or 0 for seat in mine) / len(mine),
                sum(seat.score or 0 for seat in mine) / len(mine),
                sorted(set(table) - {bot_name}),
                first.pk,
            )
        )
    return found


@pytest.mark.parametrize("limit", [4, 200])
def test_the_bot_pages_duplicate_sets_equal_a_recomputation_from_the_rows(site: Site, limit: int) -> None:
    """Forty sets of two to four rotations in random states (finished, running, scheduled,
    aborted; a seat left unranked; a name reused on another ladder; a match of the set without
    alpha), then those being played finished: the page's statements give the recomputation's
    sets, newest first, at a small window and a large."""
    rng = random.Random(limit)
    gamma = version_make(site.bob, "gamma")
    other = Ladder.objects.create(game="black-sevens", min_players=2, max_players=7)
    table = [site.alpha, site.beta, site.scripted, gamma]
    states = [FINISHED] * 6 + [RUNNING, SCHEDULED, ABORTED]
    played: dict[str, list[Match]] = defaultdict(list)
    for number in range(40):
        name = f"set-{number}"
        size = rng.choice([2, 3, 4])
        seated = [site.alpha, *rng.sample(table[1:], size - 1)]
        for rotation in range(size):
            status = rng.choice(states)
            ranked = status == FINISHED and rng.random() > 0.05
            ladder = other if number % 13 == 12 and rotation == 0 else site.ladder
            seating = seated[rotation:] + seated[:rotation]
            match = _match(ladder, seating, status=status, name=name, seed=number, ranked=ranked)
            played[name].append(match)
        if number % 7 == 3:  # a match of the set alpha does not play in
            status = rng.choice(states)
            stranger = _match(site.ladder, table[1:], status=status, name=name, seed=number, ranked=True)
            played[name].append(stranger)
    alpha = bot_page.bot_named("alpha")

    def compare() -> None:
        shown = [astuple(played) for played in bot_page.duplicate_sets(bot=alpha, limit=limit, named=limit)]
        assert shown == _duplicate_sets_recomputed("alpha", limit)

    compare()
    for matches in played.values():  # the matches still being played end, and are ranked
        for match in matches:
            if match.status in (RUNNING, SCHEDULED):
                Match.objects.filter(pk=match.pk).update(status=FINISHED)
                Seat.objects.filter(match=match, rank=None).update(rank=2, score=3)
    compare()
    assert bot_page.duplicate_sets(bot=alpha, limit=limit), "some sets are complete"


def test_the_bot_pages_ratings_and_results_are_those_of_the_recorded_matches(site: Site) -> None:
    """Played and rated matches (site's two and three more): the rating shown is the version's,
    charted over every change; results newest first with their ranks and scores."""
    for seed in (41, 42, 43):
        match_play_recorded(site.ladder, [site.alpha, site.beta, site.scripted], seed=seed)
    alpha = bot_page.bot_named("alpha")
    [rating] = bot_page.bot_ratings(alpha)
    stored = site.alpha.ratings.get()
    assert (rating.game, rating.version, rating.games) == ("oh-hell", 1, stored.games)
    assert rating.chart is not None and rating.chart.points == stored.changes.count() == 5
    rows = bot_page.bot_results(bot=alpha).object_list
    seats = Seat.objects.filter(bot_version__bot__name="alpha", match__status=FINISHED).order_by("-match_id")
    assert [(row.match_id, row.seat, row.rank, row.score) for row in rows] == [
        (seat.match_id, seat.seat, seat.rank, seat.score) for seat in seats
    ]


def test_numbers_are_written_as_the_floatformat_filter_writes_them() -> None:
    values = [0.0, -0.0, 2.125, 2.135, 1 / 3, 2 / 3, 3.5, -0.04, -0.05, -2.675, 1234.5678, 7.0, 1e-9, 99.995]
    values += [random.Random(seed).uniform(-50, 50) for seed in range(200)]
    values += [n / d for n in range(1, 30) for d in (2, 3, 4, 6, 8, 16)]
    for value in values:
        for places in (1, 2):
            assert decimal_text(value, places) == floatformat(value, places), (value, places)


def test_the_chart_of_beliefs_is_the_chart_of_their_displayed_ratings() -> None:
    """The bot page charts (mu, sigma) rows straight away: the same chart as of `ratings.display`."""
    from septet_platform.ladders.ratings import display
    from septet_platform.web.charts import belief_chart, rating_chart

    rng = random.Random(3)
    for count in (1, 2, 7, 200):
        beliefs = [(rng.gauss(25, 6), rng.uniform(0.5, 8.4)) for _ in range(count)]
        assert belief_chart(beliefs) == rating_chart([display(mu, sigma) for mu, sigma in beliefs])
    assert belief_chart([]) is None
