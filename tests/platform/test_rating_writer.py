"""The rating writer applies a ladder's waiting results in batches (ladders/rating_writer.py): the
ratings it stores are those of applying the results one at a time, in the order of the ladder's
rating changes; two writers at once apply each match exactly once; a batch costs a fixed number of
statements whatever its size."""

from __future__ import annotations

import itertools
import random
import threading
from collections import defaultdict
from collections.abc import Callable

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from septet_platform.bots.models import BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.ladders.services import ratings_apply, ratings_apply_waiting
from septet_platform.matches.models import Match, Seat

MakeBot = Callable[..., BotVersion]
MakeMatch = Callable[..., Match]


def _beliefs(ladder: Ladder) -> dict[int, ratings.Belief]:
    return {
        rating.bot_version_id: ratings.Belief(rating.mu, rating.sigma)
        for rating in Rating.objects.filter(ladder=ladder)
    }


def _replayed_in_change_order(ladder: Ladder) -> dict[int, ratings.Belief]:
    """The ladder's results replayed one match at a time, in the order of its rating changes' ids,
    from the seats' own ranks (each match's result, not the ranks its changes stored)."""
    order: list[int] = []
    for match_id in (
        RatingChange.objects.filter(rating__ladder=ladder).order_by("id").values_list("match_id", flat=True)
    ):
        if not order or order[-1] != match_id:
            order.append(match_id)
    assert len(order) == len(set(order)), "a match's changes are not together in one place of the order"
    games = [
        [(seat.bot_version_id, seat.rank) for seat in Seat.objects.filter(match_id=match_id).order_by("seat")]
        for match_id in order
    ]
    return dict(ratings.replay(games))


def _results(versions: list[BotVersion], count: int, seed: int) -> list[tuple[list[BotVersion], list[int]]]:
    rng = random.Random(seed)
    played = []
    for _ in range(count):
        table = rng.sample(versions, rng.randint(3, 5))
        played.append((table, [rng.randint(1, len(table)) for _ in table]))  # ties included
    return played


@pytest.mark.django_db
def test_ratings_applied_in_one_batch_equal_those_applied_one_match_at_a_time(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    one_by_one = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    batched = Ladder.objects.create(game="oh7", min_players=3, max_players=7)
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(7)]
    played = _results(versions, 40, seed=11)
    for table, ranks in played:
        ratings_apply(match=ladder_match_factory(one_by_one, table, ranks))
    waiting = [ladder_match_factory(batched, table, ranks) for table, ranks in played]

    changes = ratings_apply(match=waiting[-1])  # the last one asks: every waiting match goes with it

    assert len(changes) == len(played[-1][0]) and {change.match_id for change in changes} == {waiting[-1].pk}
    assert Match.objects.filter(ladder=batched, ratings_applied=True).count() == len(played)
    assert all(ratings_apply(match=match) == [] for match in waiting), "each applied once"
    assert _beliefs(batched) == _beliefs(one_by_one) == _replayed_in_change_order(batched)
    expected = ratings.replay([[(v.pk, rank) for v, rank in zip(t, r, strict=True)] for t, r in played])
    assert _beliefs(batched) == expected
    games = {rating.bot_version_id: rating.games for rating in Rating.objects.filter(ladder=batched)}
    assert games == {version.pk: sum(version in table for table, _ in played) for version in versions}


@pytest.mark.django_db
def test_a_new_version_in_a_batch_starts_from_its_predecessors_mean_at_that_point_of_the_order(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    one_by_one = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    batched = Ladder.objects.create(game="oh7", min_players=3, max_players=7)
    v1 = ladder_bot_factory("alice", "climber", number=1)
    others = [ladder_bot_factory(owner, owner) for owner in ("bob", "carol")]
    v2 = ladder_bot_factory("alice", "climber", number=2)
    tables = [[v1, *others]] * 4 + [[v2, *others]] * 2
    for table in tables:
        ratings_apply(match=ladder_match_factory(one_by_one, table, [1, 2, 3]))
    waiting = [ladder_match_factory(batched, table, [1, 2, 3]) for table in tables]

    ratings_apply(match=waiting[0])

    first_of_v2 = RatingChange.objects.filter(rating__ladder=batched, rating__bot_version=v2).order_by("id")[
        0
    ]
    v1_after_four = Rating.objects.get(ladder=batched, bot_version=v1).mu
    assert (first_of_v2.mu_before, first_of_v2.sigma_before) == (v1_after_four, ratings.DEFAULT_SIGMA)
    assert _beliefs(batched) == _beliefs(one_by_one)


@pytest.mark.django_db
def test_two_seat_duplicate_sets_in_a_batch_are_rated_once_each_and_open_sets_wait(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    duel = Ladder.objects.create(game="oh7-duel", min_players=2, max_players=2)
    ada, bob = ladder_bot_factory("ada", "ada"), ladder_bot_factory("bob", "bob")
    rotations: dict[str, list[Match]] = defaultdict(list)
    for name, ranks in (("closed", [1, 2]), ("open", [2, 1])):
        for rotation, seated in enumerate(([ada, bob], [bob, ada])):
            status = Match.Status.RUNNING if (name, rotation) == ("open", 1) else Match.Status.FINISHED
            match = ladder_match_factory(duel, seated, ranks, status=status)
            Match.objects.filter(pk=match.pk).update(duplicate_set=name, rotation=rotation)
            rotations[name].append(match)

    ratings_apply(match=rotations["closed"][0])

    applied = set(Match.objects.filter(ratings_applied=True).values_list("pk", flat=True))
    assert applied == {match.pk for match in rotations["closed"]}
    assert RatingChange.objects.count() == 2, "one result for the closed set, nothing for the open one"
    tied = ratings.rate([ratings.initial(), ratings.initial()], [1, 1])  # seat 0 won both: a tie
    assert _beliefs(duel) == {ada.pk: tied[0], bob.pk: tied[1]}
    Match.objects.filter(pk=rotations["open"][1].pk).update(
        status=Match.Status.FINISHED, finished=timezone.now()
    )
    changes = ratings_apply(match=rotations["open"][1])
    assert {change.match_id for change in changes} == {rotations["open"][1].pk} and len(changes) == 2
    assert Match.objects.filter(ratings_applied=True).count() == 4


@pytest.mark.django_db
def test_a_batch_costs_the_same_statements_for_five_matches_as_for_fifty(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite splits an INSERT past 999 parameters: this is about PostgreSQL")
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(7)]
    statements = []
    for game, count in (("oh-hell", 5), ("oh7", 50)):
        ladder = Ladder.objects.create(game=game, min_players=3, max_players=7)
        waiting = [
            ladder_match_factory(ladder, table, ranks) for table, ranks in _results(versions, count, 3)
        ]
        with CaptureQueriesContext(connection) as queries:
            ratings_apply(match=waiting[0])
        assert Match.objects.filter(ladder=ladder, ratings_applied=True).count() == count
        statements.append(len(queries))
    assert statements[0] == statements[1], statements


@pytest.mark.django_db
def test_a_match_that_cannot_be_rated_does_not_stop_the_others_in_its_batch(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    broken = ladder_match_factory(ladder_oh_hell, versions, None)  # finished, no ranks
    good = ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])
    assert len(ratings_apply(match=good)) == 3
    broken.refresh_from_db()
    assert not broken.ratings_applied and RatingChange.objects.filter(match=broken).count() == 0


@pytest.mark.django_db(transaction=True)
def test_two_writers_recording_and_rating_one_ladder_at_once_apply_every_match_exactly_once(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks (and serializes writers anyway); this needs PostgreSQL")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(6)]
    played = _results(versions, 60, seed=5)
    running = [
        ladder_match_factory(ladder, table, ranks, status=Match.Status.RUNNING) for table, ranks in played
    ]
    halves = [running[0::2], running[1::2]]
    start = threading.Barrier(2, timeout=60)
    errors: list[BaseException] = []

    def writer(matches: list[Match]) -> None:
        """As workers do: record a match (FINISHED), then ask for its ratings; then every
        match of the other writer too, which must find them applied or apply them once."""
        try:
            start.wait()
            for match in matches:
                Match.objects.filter(pk=match.pk).update(
                    status=Match.Status.FINISHED, finished=timezone.now()
                )
                ratings_apply(match=Match.objects.get(pk=match.pk))
            start.wait()  # every match recorded
            for match in running:
                ratings_apply(match=Match.objects.get(pk=match.pk))
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(half,)) for half in halves]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors
    assert Match.objects.filter(ladder=ladder, ratings_applied=True).count() == len(played)
    per_match = defaultdict(list)
    for change in RatingChange.objects.order_by("id"):
        per_match[change.match_id].append(change)
    assert {match_id: len(made) for match_id, made in per_match.items()} == {
        match.pk: len(table) for match, (table, _) in zip(running, played, strict=True)
    }, "exactly one rating change per seat of every match"
    for rating in Rating.objects.filter(ladder=ladder):
        chain = list(rating.changes.order_by("id"))
        assert len(chain) == rating.games
        for earlier, later in itertools.pairwise(chain):
            assert (later.mu_before, later.sigma_before) == (earlier.mu_after, earlier.sigma_after)
        assert (rating.mu, rating.sigma) == (chain[-1].mu_after, chain[-1].sigma_after)
    assert _beliefs(ladder) == _replayed_in_change_order(ladder)


@pytest.mark.django_db(transaction=True)
def test_a_writer_never_waits_for_the_ladders_lock_and_its_holder_applies_the_match_once_it_lets_go(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks (and serializes writers anyway); this needs PostgreSQL")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    locked, recorded = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def holder() -> None:
        """Holds the ladder's lock (as the scheduler does) while the match is recorded and rated,
        then lets go and looks for waiting matches, as every holder of the lock must."""
        try:
            with transaction.atomic():
                Ladder.objects.select_for_update(no_key=True).get(pk=ladder.pk)
                locked.set()
                assert recorded.wait(60)
            ratings_apply_waiting(ladder=ladder)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=holder)
    thread.start()
    assert locked.wait(60)
    match = ladder_match_factory(ladder, versions, [1, 2, 3])
    asked = ratings_apply(match=match)  # returns at once: the lock is taken
    untouched = Match.objects.get(pk=match.pk).ratings_applied
    recorded.set()
    thread.join(timeout=60)

    assert not errors
    assert asked == [] and not untouched, "left to the lock's holder, without waiting for it"
    assert Match.objects.get(pk=match.pk).ratings_applied
    assert RatingChange.objects.filter(match=match).count() == 3
