"""Matchmaking and standings: who plays whom, at which table size, as duplicate sets."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable

import pytest

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.matchmaking import matches_schedule
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.ladders.selectors import ladder_standings
from septet_platform.ladders.services import ratings_apply
from septet_platform.matches.models import Match, Seat

MakeBot = Callable[..., BotVersion]
MakeMatch = Callable[..., Match]

pytestmark = pytest.mark.django_db


def _seating(match: Match) -> list[BotVersion]:
    return [seat.bot_version for seat in Seat.objects.filter(match=match).select_related("bot_version__bot")]


def _play_out(matches: list[Match], rng: random.Random) -> None:
    """Finishes scheduled matches with random ranks and rates them, as the workers would."""
    for match in matches:
        seats = list(Seat.objects.filter(match=match))
        for seat, rank in zip(seats, rng.sample(range(1, len(seats) + 1), len(seats)), strict=True):
            seat.rank = rank
            seat.save()
        Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
        match.refresh_from_db()
        ratings_apply(match=match)


def _ladder(game: str, low: int, high: int) -> Ladder:
    return Ladder.objects.create(game=game, min_players=low, max_players=high)


# Empty cases --------------------------------------------------------------------------------------


def test_no_bots_schedule_nothing(ladder_oh_hell: Ladder) -> None:
    assert matches_schedule(ladder=ladder_oh_hell, rng=random.Random(1)) == []
    assert not Match.objects.exists()


def test_fewer_eligible_bots_than_the_games_minimum_schedule_nothing(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    ladder_bot_factory("alice", "one")
    ladder_bot_factory("bob", "two")
    ladder_bot_factory("carol", "qualifying", status=BotVersion.Status.QUALIFYING)
    ladder_bot_factory("dave", "failed", status=BotVersion.Status.FAILED)
    ladder_bot_factory("erin", "retired", status=BotVersion.Status.RETIRED)
    ladder_bot_factory("frank", "elsewhere", games=["oh7"])  # does not play oh-hell
    assert matches_schedule(ladder=ladder_oh_hell, rng=random.Random(1)) == []
    assert not Match.objects.exists()


def test_three_bots_of_one_owner_cannot_fill_a_rated_table(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for name in ("a", "b", "c", "d"):
        ladder_bot_factory("alice", name)
    assert matches_schedule(ladder=ladder_oh_hell, rng=random.Random(1)) == []


def test_an_inactive_ladder_schedules_nothing(ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot) -> None:
    for owner in ("alice", "bob", "carol"):
        ladder_bot_factory(owner, owner)
    Ladder.objects.filter(pk=ladder_oh_hell.pk).update(active=False)
    assert matches_schedule(ladder=ladder_oh_hell, rng=random.Random(1)) == []


@pytest.mark.parametrize(
    ("sets", "low", "high", "complaint"),
    [
        (-1, 3, 7, "sets must be 0 or more"),
        (1, 1, 7, "no playable table size"),
        (1, 5, 4, "no playable table size"),
    ],
)
def test_bad_arguments_are_refused_and_schedule_nothing(
    ladder_bot_factory: MakeBot, sets: int, low: int, high: int, complaint: str
) -> None:
    ladder = _ladder("oh-hell", low, high)
    for owner in ("alice", "bob", "carol"):
        ladder_bot_factory(owner, owner)
    with pytest.raises(ValueError, match=complaint):
        matches_schedule(ladder=ladder, rng=random.Random(1), sets=sets)
    assert not Match.objects.exists()


# Who sits at a table ------------------------------------------------------------------------------


def test_two_bots_of_one_owner_never_share_a_rated_table(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for name in ("a1", "a2", "a3"):
        ladder_bot_factory("alice", name)
    for owner in ("bob", "carol", "dave"):
        ladder_bot_factory(owner, owner)
    rng = random.Random(7)
    seen = Counter()
    for _ in range(30):
        for match in matches_schedule(ladder=ladder_oh_hell, rng=rng):
            owners = [version.bot.owner_id for version in _seating(match)]
            assert len(owners) == len(set(owners)), f"match {match.pk} seats one owner twice"
            assert 3 <= len(owners) <= 4  # alice, bob, carol, dave: four owners at most
            seen.update(version.bot.name for version in _seating(match))
    assert {"a1", "a2", "a3"} <= set(seen)


def test_house_bots_may_share_a_table_with_their_owners_other_bots(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for name in ("random", "greedy", "node-random"):
        ladder_bot_factory("house", name, is_house=True)
    ladder_bot_factory("house", "house-experiment")  # the house owner's own, not a house bot
    ladder_bot_factory("alice", "a1")
    ladder_bot_factory("alice", "a2")
    rng = random.Random(3)
    sizes = Counter()
    for _ in range(30):
        for match in matches_schedule(ladder=ladder_oh_hell, rng=rng):
            seated = _seating(match)
            sizes[len(seated)] += 1
            others = [version.bot.owner_id for version in seated if not version.bot.is_house]
            assert len(others) == len(set(others))
    assert max(sizes) == 5  # three house bots, one of the house owner's own, one of alice's


def test_only_each_bots_latest_active_version_plays(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    ladder_bot_factory("alice", "climber", number=1)
    latest = ladder_bot_factory("alice", "climber", number=2)
    ladder_bot_factory("alice", "climber", number=3, status=BotVersion.Status.QUALIFYING)
    for owner in ("bob", "carol"):
        ladder_bot_factory(owner, owner)
    matches = matches_schedule(ladder=ladder_oh_hell, rng=random.Random(5), sets=5)
    climbers = {version for match in matches for version in _seating(match) if version.bot.name == "climber"}
    assert climbers == {latest}


# Table sizes and duplicate sets -------------------------------------------------------------------


def test_table_sizes_stay_in_the_ladders_range_and_cover_it(ladder_bot_factory: MakeBot) -> None:
    ladder = _ladder("seven-up-seven-down", 2, 7)
    for i in range(9):
        ladder_bot_factory(f"owner{i}", f"bot{i}")
    rng = random.Random(11)
    sizes = Counter()
    for _ in range(60):
        matches = matches_schedule(ladder=ladder, rng=rng)
        sizes[len(_seating(matches[0]))] += 1
        Match.objects.all().delete()
    assert set(sizes) == set(range(2, 8)), sizes


def test_only_sizes_the_bots_can_fill_are_chosen(ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot) -> None:
    for owner in ("alice", "bob", "carol", "dave"):
        ladder_bot_factory(owner, owner)
    rng = random.Random(2)
    sizes = {
        len(_seating(match)) for _ in range(20) for match in matches_schedule(ladder=ladder_oh_hell, rng=rng)
    }
    assert sizes == {3, 4}


def test_a_duplicate_set_plays_one_seed_in_every_cyclic_rotation_of_the_seating(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for i in range(6):
        ladder_bot_factory(f"owner{i}", f"bot{i}")
    matches = matches_schedule(ladder=ladder_oh_hell, rng=random.Random(4), sets=3)
    by_set: dict[str, list[Match]] = {}
    for match in matches:
        by_set.setdefault(match.duplicate_set, []).append(match)
    assert len(by_set) == 3
    assert len({group[0].seed for group in by_set.values()}) == 3
    for group in by_set.values():
        first = _seating(group[0])
        n = len(first)
        assert [match.rotation for match in group] == list(range(n))
        assert {match.seed for match in group} == {group[0].seed}
        assert all(match.kind == Match.Kind.LADDER and match.rated for match in group)
        assert all(match.status == Match.Status.SCHEDULED for match in group)
        for match in group:
            assert _seating(match) == [first[(seat + match.rotation) % n] for seat in range(n)]
        for seat in range(n):  # every player sits in every seat once
            assert {_seating(match)[seat] for match in group} == set(first)


def test_the_same_rng_gives_the_same_matches(ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot) -> None:
    for i in range(8):
        ladder_bot_factory(f"owner{i}", f"bot{i}")

    def schedule() -> list[tuple[int, str, int, list[int]]]:
        matches = matches_schedule(ladder=ladder_oh_hell, rng=random.Random(99), sets=4)
        plan = [(m.seed, m.duplicate_set, m.rotation, [v.pk for v in _seating(m)]) for m in matches]
        Match.objects.all().delete()
        return plan

    first = schedule()
    assert first and schedule() == first


# Fairness: no starving, few games and close ratings first ----------------------------------------


def test_over_many_rounds_every_active_bot_gets_games(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(10)]
    outlier = versions[0]
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=outlier, mu=80.0, sigma=0.5)  # far above all
    rng = random.Random(5)
    for _ in range(40):
        _play_out(matches_schedule(ladder=ladder_oh_hell, rng=rng), rng)
    games = {
        rating.bot_version.bot.name: rating.games
        for rating in Rating.objects.select_related("bot_version__bot")
    }
    assert len(games) == 10
    assert min(games.values()) >= 0.5 * max(games.values()), games


def test_a_newly_active_bot_is_seated_in_the_next_round(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for i in range(8):
        ladder_bot_factory(f"owner{i}", f"bot{i}")
    rng = random.Random(8)
    for _ in range(10):
        _play_out(matches_schedule(ladder=ladder_oh_hell, rng=rng), rng)
    newcomer = ladder_bot_factory("newcomer", "newcomer")
    [first, *_] = matches_schedule(ladder=ladder_oh_hell, rng=rng)
    assert newcomer in _seating(first)


def test_rounds_scheduled_before_any_is_played_still_reach_every_bot(ladder_bot_factory: MakeBot) -> None:
    ladder = _ladder("oh7-duel", 2, 2)
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(6)]
    rng = random.Random(6)
    tables = []
    for _ in range(6):  # nothing is played: seats in scheduled matches count as load
        [match, _] = matches_schedule(ladder=ladder, rng=rng)
        tables.append(_seating(match))
    assert {version for table in tables for version in table} == set(versions)


def test_opponents_with_close_ratings_and_few_games_are_favoured(ladder_bot_factory: MakeBot) -> None:
    ladder = _ladder("oh7-duel", 2, 2)
    anchor = ladder_bot_factory("anchor", "anchor")
    close = ladder_bot_factory("close", "close")
    far = ladder_bot_factory("far", "far")
    busy = ladder_bot_factory("busy", "busy")
    Rating.objects.create(ladder=ladder, bot_version=anchor, mu=25.0, sigma=2.0, games=0)
    Rating.objects.create(ladder=ladder, bot_version=close, mu=26.0, sigma=2.0, games=10)
    Rating.objects.create(ladder=ladder, bot_version=far, mu=50.0, sigma=2.0, games=10)
    Rating.objects.create(ladder=ladder, bot_version=busy, mu=26.0, sigma=2.0, games=200)
    rng = random.Random(12)
    opponents = Counter()
    for _ in range(200):
        [match, _] = matches_schedule(ladder=ladder, rng=rng)
        seated = _seating(match)
        assert anchor in seated  # the fewest games always plays
        opponents[next(version.bot.name for version in seated if version != anchor)] += 1
        Match.objects.all().delete()
    assert opponents["close"] > 150
    assert opponents["close"] > 5 * opponents["busy"]
    assert opponents["far"] < 10


# Standings ----------------------------------------------------------------------------------------


def test_standings_list_each_bots_current_version_best_first_on_the_display_scale(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    old = ladder_bot_factory("alice", "climber", number=1, status=BotVersion.Status.RETIRED)
    climber = ladder_bot_factory("alice", "climber", number=2)
    bob, carol = ladder_bot_factory("bob", "bob"), ladder_bot_factory("carol", "carol")
    gone = ladder_bot_factory("dave", "gone", status=BotVersion.Status.RETIRED)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=old, mu=40.0, sigma=1.0)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=gone, mu=45.0, sigma=1.0)
    match = ladder_match_factory(ladder_oh_hell, [climber, bob, carol], [1, 2, 3])
    ratings_apply(match=match)
    match.refresh_from_db()
    rows = ladder_standings(ladder=ladder_oh_hell)
    assert [(row.rank, row.bot, row.owner, row.version) for row in rows] == [
        (1, "climber", "alice", 2),
        (2, "bob", "bob", 1),
        (3, "carol", "carol", 1),
    ]
    assert rows[0].rating > rows[1].rating > rows[2].rating
    assert all(row.low < row.rating < row.high and row.games == 1 for row in rows)
    assert all(row.last_match is not None and row.last_match >= match.finished for row in rows), (
        "rated after it finished"
    )
    assert rows[0].rating > 1500 > rows[2].rating


def test_standings_show_a_scheduled_bot_with_no_games_yet(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    for owner in ("alice", "bob", "carol"):
        ladder_bot_factory(owner, owner)
    assert ladder_standings(ladder=ladder_oh_hell) == []
    matches_schedule(ladder=ladder_oh_hell, rng=random.Random(1))
    rows = ladder_standings(ladder=ladder_oh_hell)
    assert [(row.bot, row.rating, row.games, row.last_match) for row in rows] == [
        ("alice", 1500, 0, None),
        ("bob", 1500, 0, None),
        ("carol", 1500, 0, None),
    ]


# The beat's scheduling task ----------------------------------------------------------------------


@pytest.mark.django_db
def test_the_beat_tops_each_ladder_up_to_its_target_and_no_further(
    ladder_oh_hell: Ladder,
    ladder_bot_factory: MakeBot,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable,
) -> None:
    from septet_platform.matches import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.match_run_task, "delay", queued.append)  # the broker's side of it
    for owner in ("ada", "bob", "cy"):
        ladder_bot_factory(owner, owner, games=["oh-hell"])
    empty = Ladder.objects.create(game="oh7", min_players=3, max_players=5)  # nobody plays oh7

    with django_capture_on_commit_callbacks(execute=True):
        first = tasks.matches_schedule_task(min_waiting=10)
    queued_first = sorted(queued)
    waiting = Match.objects.filter(ladder=ladder_oh_hell, status=Match.Status.SCHEDULED)
    with django_capture_on_commit_callbacks(execute=True):
        again = tasks.matches_schedule_task(min_waiting=10)
    waiting.filter(pk__in=list(waiting.values_list("pk", flat=True))[:4]).update(status=Match.Status.FINISHED)
    with django_capture_on_commit_callbacks(execute=True):
        topped = tasks.matches_schedule_task(min_waiting=10)

    # Three bots make 3-seat tables: duplicate sets of 3 matches, 4 of them to reach 10 waiting.
    assert first == 12 and queued_first == sorted(Match.objects.values_list("pk", flat=True))[:12]
    assert again == 0, "a ladder at its target gets nothing more"
    assert topped == 3 and waiting.count() == 11, "8 left waiting: one more set tops it up"
    assert len(queued) == 15, "every scheduled match was queued once"
    assert not Match.objects.filter(ladder=empty).exists()


@pytest.mark.django_db
def test_the_beat_keeps_a_busy_ladder_as_many_matches_waiting_as_it_finished_lately(
    ladder_oh_hell: Ladder,
    ladder_bot_factory: MakeBot,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Callable,
) -> None:
    """No fixed cap: a ladder whose workers finished 400 matches in the last window gets about
    that many waiting (three beat intervals of its pace), a quiet one the floor; matches finished
    long ago do not count."""
    from django.utils import timezone

    from septet_platform.matches import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.match_run_task, "delay", queued.append)
    versions = [ladder_bot_factory(owner, owner, games=["oh-hell", "oh7"]) for owner in ("ada", "bob", "cy")]
    quiet = Ladder.objects.create(game="oh7", min_players=3, max_players=3)
    now = timezone.now()
    for ladder, recent, old in ((ladder_oh_hell, 400, 0), (quiet, 0, 500)):
        played = Match.objects.bulk_create(
            Match(ladder=ladder, seed=1, status=Match.Status.FINISHED, finished=finished)
            for finished in [now] * recent + [now - 10 * tasks.COMPLETION_WINDOW] * old
        )
        Seat.objects.bulk_create(
            Seat(match=match, seat=i, bot_version=v) for match in played for i, v in enumerate(versions)
        )

    with django_capture_on_commit_callbacks(execute=True):
        scheduled = tasks.matches_schedule_task(min_waiting=10)

    busy = Match.objects.filter(ladder=ladder_oh_hell, status=Match.Status.SCHEDULED).count()
    idle = Match.objects.filter(ladder=quiet, status=Match.Status.SCHEDULED).count()
    assert 400 <= busy < 400 + 3, "the busy ladder's own pace: 400 finished in the window"
    assert 10 <= idle < 10 + 3, "the quiet ladder: the floor (its 500 matches are old)"
    assert scheduled == busy + idle == len(queued)
    assert tasks.waiting_target(ladder_oh_hell, min_waiting=10, now=now) == (busy, 400)
