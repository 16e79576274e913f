"""Tournament services on the test database: creation and entry refuse every bad request with a
clear error and change nothing; the deadline freezes versions (later submissions do not leak in);
rounds are scheduled once, Swiss rounds follow the standings; pause, resume and cancel."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from tournament_data import Recorder, make_version, play_on_paper

from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Match, Seat
from septet_platform.tournaments import selectors, services
from septet_platform.tournaments.models import Entrant, Tournament

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)


def _enter(tournament: Tournament, *names: str) -> list[Entrant]:
    entrants = []
    for name in names:
        version = make_version(f"{name}-owner", name)
        entrants.append(services.entrant_add(tournament=tournament, user=version.bot.owner, bot=version.bot))
    return entrants


def _close(tournament: Tournament) -> None:
    Tournament.objects.filter(pk=tournament.pk).update(entry_deadline=timezone.now() - timedelta(seconds=1))
    tournament.refresh_from_db()


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"table_size": 8}, "oh-hell is played by 3-7 players, not 8"),
        ({"format": "knockout"}, "unknown format 'knockout'"),
        ({"entry": "anyone"}, "unknown entry rule 'anyone'"),
        ({"duplicate_sets": 0}, "duplicate sets and rounds must be 1 or more"),
        ({"decision_seconds": 0.0}, "positive decision seconds"),
        ({"name": "cup"}, "a tournament named 'cup' exists already"),
    ],
)
def test_a_bad_tournament_is_refused_and_nothing_is_created(
    organiser: User, open_cup: Tournament, changes: dict, message: str
) -> None:
    request = {
        "organiser": organiser,
        "name": "other",
        "title": "Other",
        "game": "oh-hell",
        "table_size": 3,
        "entry_deadline": timezone.now() + HOUR,
    }
    with pytest.raises(services.TournamentError, match=message):
        services.tournament_create(**{**request, **changes})
    assert list(Tournament.objects.values_list("name", flat=True)) == ["cup"]


def test_an_owner_enters_a_bot_that_plays_the_game(open_cup: Tournament) -> None:
    version = make_version("ada", "ada-bot")

    entrant = services.entrant_add(tournament=open_cup, user=version.bot.owner, bot=version.bot)

    assert entrant.bot == version.bot and entrant.version is None  # frozen only at the deadline


def test_every_bad_entry_is_refused_and_nothing_changes(open_cup: Tournament, organiser: User) -> None:
    ada = make_version("ada", "ada-bot")
    services.entrant_add(tournament=open_cup, user=ada.bot.owner, bot=ada.bot)
    duel_only = make_version("bob", "bob-duel", games=["oh7-duel"])
    failed = make_version("bob", "bob-failed", status=BotVersion.Status.FAILED)
    bob = duel_only.bot.owner
    attempts = [
        (bob, ada.bot, "ada-bot is not your bot"),
        (bob, duel_only.bot, "bob-duel has no active version that plays oh-hell"),
        (bob, failed.bot, "bob-failed has no active version that plays oh-hell"),
        (ada.bot.owner, ada.bot, "ada-bot is entered in cup already"),
    ]
    for user, bot, message in attempts:
        with pytest.raises(services.TournamentError, match=message):
            services.entrant_add(tournament=open_cup, user=user, bot=bot)

    late = make_version("cy", "cy-bot")
    with pytest.raises(services.TournamentError, match="entries to cup closed"):
        services.entrant_add(
            tournament=open_cup, user=late.bot.owner, bot=late.bot, now=open_cup.entry_deadline + HOUR
        )
    invited_only = services.tournament_create(
        organiser=organiser, name="invitational", title="Invitational", game="oh-hell", table_size=3,
        entry_deadline=timezone.now() + HOUR, entry=Tournament.Entry.INVITED, invited=[ada.bot.owner],
    )  # fmt: skip
    with pytest.raises(services.TournamentError, match="by invitation and cy is not invited"):
        services.entrant_add(tournament=invited_only, user=late.bot.owner, bot=late.bot)
    services.entrant_add(tournament=invited_only, user=ada.bot.owner, bot=ada.bot)

    assert sorted(Entrant.objects.values_list("tournament__name", "bot__name")) == [
        ("cup", "ada-bot"),
        ("invitational", "ada-bot"),
    ]


def test_nothing_starts_before_the_deadline(open_cup: Tournament, recorder: Recorder) -> None:
    _enter(open_cup, "a", "b", "c")

    assert services.tournament_start(tournament=open_cup, enqueue=recorder) is False
    assert Tournament.objects.get(pk=open_cup.pk).status == Tournament.Status.OPEN
    assert not Match.objects.exists() and recorder.queued == []


def test_more_seats_than_entrants_cannot_start_and_changes_nothing_but_the_reason(
    open_cup: Tournament, recorder: Recorder
) -> None:
    _enter(open_cup, "a", "b")
    _close(open_cup)

    assert services.tournament_start(tournament=open_cup, enqueue=recorder) is False

    open_cup.refresh_from_db()
    assert open_cup.status == Tournament.Status.OPEN
    assert open_cup.problem == "cannot start: tables of 3 need at least 3 entrants, and there are 2"
    assert not Match.objects.exists() and recorder.queued == []
    assert not Entrant.objects.filter(version__isnull=False).exists()


def test_the_deadline_freezes_versions_and_later_submissions_do_not_leak(
    django_capture_on_commit_callbacks: Callable, open_cup: Tournament, recorder: Recorder
) -> None:
    make_version("a-owner", "a", number=1)
    entered = [services.entrant_add(tournament=open_cup, user=User.objects.get(username="a-owner"),
                                    bot=BotVersion.objects.get(bot__name="a").bot)]  # fmt: skip
    entered += _enter(open_cup, "b", "c", "d")
    second = make_version("a-owner", "a", number=2)  # before the deadline: this one is frozen
    _close(open_cup)

    with django_capture_on_commit_callbacks(execute=True):
        assert services.tournament_start(tournament=open_cup, enqueue=recorder) is True
    late = make_version("a-owner", "a", number=3)  # after the deadline
    services.tournament_start(tournament=open_cup, enqueue=recorder)  # a second beat: nothing new

    frozen = {e.bot.name: e.version for e in Entrant.objects.select_related("bot", "version")}
    assert frozen["a"] == second
    matches = Match.objects.filter(tournament=open_cup)
    assert matches.count() == 4 * 3  # C(4, 3) tables x 3 rotations x 1 duplicate set
    assert sorted(recorder.queued) == sorted(matches.values_list("pk", flat=True))
    assert not Seat.objects.filter(bot_version=late).exists()
    assert Seat.objects.filter(bot_version=second).count() == 3 * 3
    assert set(matches.values_list("kind", "rated")) == {(Match.Kind.TOURNAMENT, False)}


def test_an_entrant_without_a_playing_version_at_the_deadline_is_dropped(
    open_cup: Tournament, recorder: Recorder
) -> None:
    entrants = _enter(open_cup, "a", "b", "c", "d")
    BotVersion.objects.filter(bot=entrants[3].bot).update(status=BotVersion.Status.RETIRED)
    _close(open_cup)

    assert services.tournament_start(tournament=open_cup, enqueue=recorder) is True

    assert sorted(e.bot.name for e in services.frozen_entrants(open_cup)) == ["a", "b", "c"]
    assert Tournament.objects.get(pk=open_cup.pk).problem.endswith(": d")


def test_every_table_holds_every_entrant_in_every_seat_equally(organiser: User, recorder: Recorder) -> None:
    cup = services.tournament_create(
        organiser=organiser, name="big", title="Big", game="oh-hell", table_size=4,
        entry_deadline=timezone.now() + HOUR, duplicate_sets=2, seed=3,
    )  # fmt: skip
    _enter(cup, *[f"bot{i}" for i in range(8)])
    _close(cup)
    services.tournament_start(tournament=cup, enqueue=recorder)

    seats = Seat.objects.filter(match__tournament=cup)
    per_seat = {(s.bot_version_id, s.seat) for s in seats}
    counts = {key: seats.filter(bot_version_id=key[0], seat=key[1]).count() for key in per_seat}
    assert len(per_seat) == 8 * 4 and len(set(counts.values())) == 1
    sets = Match.objects.filter(tournament=cup).values_list("duplicate_set", flat=True).distinct()
    assert len(sets) == 2 * 10  # the balanced design's 10 tables, 2 duplicate sets each


def test_standings_mark_overlapping_intervals_as_statistically_tied(
    organiser: User, recorder: Recorder
) -> None:
    cup = services.tournament_create(
        organiser=organiser, name="ties", title="Ties", game="oh-hell", table_size=3,
        entry_deadline=timezone.now() + HOUR, duplicate_sets=3, seed=5,
    )  # fmt: skip
    _enter(cup, "strong", "twin-a", "twin-b", "weak")
    _close(cup)
    services.tournament_start(tournament=cup, enqueue=recorder)
    strength = {"strong": 9.0, "twin-a": 5.0, "twin-b": 5.0, "weak": 1.0}
    play_on_paper(cup, strength.__getitem__)

    rows = selectors.standings(cup)

    assert [row.bot for row in rows] == ["strong", "twin-a", "twin-b", "weak"]
    assert [row.place for row in rows] == [1, 2, 2, 4]
    assert rows[1].tied_with == ["twin-b"] and rows[2].tied_with == ["twin-a"]
    assert not rows[0].tied and not rows[3].tied
    assert rows[0].interval.mean == 1.0 and rows[0].interval.n == 9  # 3 tables x 3 sets
    assert services.tournament_advance(tournament=cup, enqueue=recorder) == Tournament.Status.FINISHED
    cross = selectors.crosstable(cup)
    # strong and weak share 2 of the 4 tables: 2 x 3 sets x 3 rotations games
    assert cross.cells["strong"]["weak"] == (18, 18) and cross.cells["twin-a"]["twin-b"] == (0, 18)


def test_swiss_rounds_follow_the_standings_and_the_event_finishes_after_the_last(
    django_capture_on_commit_callbacks: Callable, organiser: User, recorder: Recorder
) -> None:
    cup = services.tournament_create(
        organiser=organiser, name="swiss", title="Swiss", game="oh-hell", table_size=3,
        entry_deadline=timezone.now() + HOUR, format=Tournament.Format.SWISS, rounds=2, seed=8,
    )  # fmt: skip
    names = [f"s{i}" for i in range(6)]
    _enter(cup, *names)
    _close(cup)
    services.tournament_start(tournament=cup, enqueue=recorder)
    assert services.tournament_advance(tournament=cup, enqueue=recorder) == Tournament.Status.RUNNING
    assert Match.objects.filter(tournament=cup, tournament_round=2).count() == 0  # round 1 not over
    play_on_paper(cup, lambda name: float(name[1:]))
    order = [row.bot for row in selectors.standings(cup)]
    winners = {row.bot for row in selectors.standings(cup) if row.interval.mean == 1.0}

    with django_capture_on_commit_callbacks(execute=True):
        services.tournament_advance(tournament=cup, enqueue=recorder)
        services.tournament_advance(tournament=cup, enqueue=recorder)  # scheduled once

    second = Match.objects.filter(tournament=cup, tournament_round=2)
    assert second.count() == 2 * 3
    tables = {frozenset(s.bot_version.bot.name for s in m.seats.all()) for m in second}
    assert tables == {frozenset(order[:3]), frozenset(order[3:])}
    assert len(winners) == 2 and any(winners <= table for table in tables)  # the round's winners meet
    assert sorted(recorder.queued) == sorted(second.values_list("pk", flat=True))
    play_on_paper(cup, lambda name: float(name[1:]))
    assert services.tournament_advance(tournament=cup, enqueue=recorder) == Tournament.Status.FINISHED


def test_pause_resume_and_cancel(
    django_capture_on_commit_callbacks: Callable, open_cup: Tournament, recorder: Recorder
) -> None:
    with pytest.raises(services.TournamentError, match="open, not running: nothing to pause"):
        services.tournament_pause(tournament=open_cup)
    _enter(open_cup, "a", "b", "c")
    _close(open_cup)
    services.tournament_start(tournament=open_cup, enqueue=recorder)

    services.tournament_pause(tournament=open_cup)
    assert Tournament.objects.get(pk=open_cup.pk).status == Tournament.Status.PAUSED
    with django_capture_on_commit_callbacks(execute=True):
        assert services.tournament_resume(tournament=open_cup, enqueue=recorder) == 3
    assert len(recorder.queued) == 3
    with pytest.raises(services.TournamentError, match="running, not paused"):
        services.tournament_resume(tournament=open_cup, enqueue=recorder)

    assert services.tournament_cancel(tournament=open_cup) == 3
    assert set(Match.objects.values_list("status", flat=True)) == {Match.Status.CANCELLED}
    with pytest.raises(services.TournamentError, match="cancelled already"):
        services.tournament_cancel(tournament=open_cup)
    assert selectors.progress(open_cup).total == 0


def test_places_count_the_entrants_clearly_better_and_never_rise_down_the_list() -> None:
    from referee.tools.stats import MeanInterval

    nan = float("nan")
    listed = [
        MeanInterval(1.0, 0.9, 1.1, 3),
        MeanInterval(2.0, 1.8, 2.2, 3),  # clearly behind the first
        MeanInterval(2.1, 0.5, 3.7, 3),  # overlaps everyone, listed third: not above second place
        MeanInterval(3.0, 2.9, 3.1, 3),  # clearly behind the first two
        MeanInterval(nan, nan, nan, 0),  # no game yet
    ]

    assert selectors.places(listed) == [1, 2, 2, 3, 5]
