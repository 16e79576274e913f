"""Ladders and ratings: one ladder per game, openskill updates from ranks, applied once per match,
one writer per ladder, and the Elo-like display."""

from __future__ import annotations

import itertools
import math
import random
import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

from referee.engine.games import all_games
from septet_platform.bots.models import BotVersion
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.ladders.services import (
    RatingError,
    ladders_ensure,
    rating_get_or_create,
    ratings_apply,
)
from septet_platform.matches.models import Match

MakeBot = Callable[..., BotVersion]
MakeMatch = Callable[..., Match]


def _belief(version: BotVersion, ladder: Ladder) -> ratings.Belief:
    rating = Rating.objects.get(ladder=ladder, bot_version=version)
    return ratings.Belief(rating.mu, rating.sigma)


# Ladders ------------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_ladders_ensure_makes_two_ladders_per_game_with_its_players_and_the_default_time_control() -> None:
    ladders = ladders_ensure()
    assert [(ladder.game, ladder.pool) for ladder in ladders] == [
        (game, pool) for game in all_games() for pool in ("sandboxed", "open")
    ]
    for ladder in ladders:
        players = all_games()[ladder.game].players
        assert (ladder.min_players, ladder.max_players) == (players.start, players.stop - 1)
        assert (ladder.decision_seconds, ladder.bank_seconds) == (1.0, 10.0)
    assert Ladder.objects.get(game="oh-hell", pool="sandboxed").max_players == 7


@pytest.mark.django_db
def test_ladders_ensure_twice_adds_nothing_and_keeps_an_organisers_settings() -> None:
    ladders_ensure()
    Ladder.objects.filter(game="oh-hell", pool="open").update(bank_seconds=30.0, active=False)
    again = ladders_ensure()
    assert Ladder.objects.count() == 2 * len(all_games()) == len(again)
    ladder = Ladder.objects.get(game="oh-hell", pool="open")
    assert (ladder.bank_seconds, ladder.active) == (30.0, False)


# The display scale --------------------------------------------------------------------------------


def test_a_new_bot_shows_1500_with_an_interval_of_two_sigma_either_side() -> None:
    shown = ratings.display(ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA)
    assert shown.rating == 1500
    half = 2 * ratings.DEFAULT_SIGMA * ratings.ELO_PER_MU
    assert (shown.low, shown.high) == (round(1500 - half), round(1500 + half)) == (1009, 1991)


def test_400_display_points_are_10_to_1_odds_under_the_plackett_luce_likelihood() -> None:
    gap_mu = 400 / ratings.ELO_PER_MU
    c = math.sqrt(2 * ratings.BETA**2)  # two well-known bots: sigma ≈ 0
    p = math.exp((25 + gap_mu) / c) / (math.exp((25 + gap_mu) / c) + math.exp(25 / c))
    assert p == pytest.approx(10 / 11)
    assert ratings.display(25 + gap_mu, 1.0).rating - ratings.display(25, 1.0).rating == 400


@pytest.mark.parametrize(("mu", "sigma"), [(25.0, 8.0), (10.0, 1.0), (40.0, 0.5), (25.0, 0.0)])
def test_the_display_is_increasing_in_mu_and_its_interval_holds_the_rating(mu: float, sigma: float) -> None:
    shown = ratings.display(mu, sigma)
    assert shown.low <= shown.rating <= shown.high
    assert ratings.display(mu + 1, sigma).rating > shown.rating
    assert shown.high - shown.low == pytest.approx(4 * sigma * ratings.ELO_PER_MU, abs=1)


@pytest.mark.parametrize(
    ("beliefs", "ranks", "complaint"),
    [
        ([ratings.initial()], [1], "at least 2"),
        ([ratings.initial()] * 3, [1, 2], "3 beliefs but 2 ranks"),
        ([ratings.initial()] * 2, [0, 1], "positive integers"),
    ],
)
def test_rate_refuses_a_game_it_cannot_rate(
    beliefs: list[ratings.Belief], ranks: list[int], complaint: str
) -> None:
    with pytest.raises(ValueError, match=complaint):
        ratings.rate(beliefs, ranks)


# Starting ratings ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_new_bot_starts_from_the_models_defaults(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    rating = rating_get_or_create(ladder=ladder_oh_hell, bot_version=ladder_bot_factory("alice", "fresh"))
    assert (rating.mu, rating.sigma, rating.games) == (25.0, 25 / 3, 0)
    assert rating_get_or_create(ladder=ladder_oh_hell, bot_version=rating.bot_version).pk == rating.pk


@pytest.mark.django_db
def test_a_new_version_starts_from_its_predecessors_mean_with_fresh_uncertainty(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    v1 = ladder_bot_factory("alice", "climber", number=1)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=v1, mu=31.5, sigma=2.0, games=80)
    v2 = ladder_bot_factory("alice", "climber", number=2)
    rating = rating_get_or_create(ladder=ladder_oh_hell, bot_version=v2)
    assert (rating.mu, rating.sigma, rating.games) == (31.5, ratings.DEFAULT_SIGMA, 0)


@pytest.mark.django_db
def test_the_predecessor_is_the_latest_earlier_version_rated_on_this_ladder(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot
) -> None:
    other_ladder = Ladder.objects.create(game="oh7", min_players=3, max_players=5)
    v1 = ladder_bot_factory("alice", "climber", number=1)
    v2 = ladder_bot_factory("alice", "climber", number=2, status=BotVersion.Status.FAILED)
    v3 = ladder_bot_factory("alice", "climber", number=3)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=v1, mu=28.0, sigma=3.0)
    Rating.objects.create(ladder=other_ladder, bot_version=v2, mu=40.0, sigma=3.0)  # another game's
    Rating.objects.create(
        ladder=ladder_oh_hell, bot_version=ladder_bot_factory("bob", "other"), mu=50.0, sigma=1.0
    )
    assert rating_get_or_create(ladder=ladder_oh_hell, bot_version=v3).mu == 28.0
    assert rating_get_or_create(ladder=other_ladder, bot_version=v1).mu == 25.0  # v1 has no predecessor


# Applying a match ---------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_winner_goes_up_the_loser_down_and_every_seat_gets_surer(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    match = ladder_match_factory(ladder_oh_hell, versions, [2, 1, 3])
    changes = ratings_apply(match=match)
    assert [change.rating.bot_version for change in changes] == versions
    middle, winner, last = (_belief(version, ladder_oh_hell) for version in versions)
    assert winner.mu > 25 > last.mu
    assert last.mu < middle.mu < winner.mu
    assert all(belief.sigma < ratings.DEFAULT_SIGMA for belief in (middle, winner, last))
    assert all(rating.games == 1 for rating in Rating.objects.all())
    for change, version in zip(changes, versions, strict=True):
        assert (change.mu_before, change.sigma_before) == (25.0, 25 / 3)
        assert (change.mu_after, change.sigma_after) == tuple(_belief(version, ladder_oh_hell))
    match.refresh_from_db()
    assert match.ratings_applied


@pytest.mark.django_db
def test_tied_seats_with_equal_ratings_move_together(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol", "dave")]
    ratings_apply(match=ladder_match_factory(ladder_oh_hell, versions, [1, 1, 3, 4]))
    first, second, third, fourth = (_belief(version, ladder_oh_hell) for version in versions)
    assert first == second
    # Weng-Lin's tie rule gives each tied winner half a win: third place here gains as much as
    # they do (openskill 6.2.0 does the same), never more; last place loses.
    assert second.mu >= third.mu > 25 > fourth.mu


@pytest.mark.django_db
def test_applying_a_match_twice_changes_nothing_the_second_time(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    match = ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])
    assert len(ratings_apply(match=match)) == 3
    after_once = [_belief(version, ladder_oh_hell) for version in versions]
    stale = Match.objects.get(pk=match.pk)
    stale.ratings_applied = False  # a second task holding an old copy of the row
    assert ratings_apply(match=stale) == []
    assert ratings_apply(match=match) == []
    assert [_belief(version, ladder_oh_hell) for version in versions] == after_once
    assert RatingChange.objects.count() == 3
    assert all(rating.games == 1 for rating in Rating.objects.all())


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "rated"),
    [(Match.Status.ABORTED, True), (Match.Status.CANCELLED, True), (Match.Status.FINISHED, False)],
)
def test_an_aborted_cancelled_or_unrated_match_changes_nothing(
    ladder_oh_hell: Ladder,
    ladder_bot_factory: MakeBot,
    ladder_match_factory: MakeMatch,
    status: str,
    rated: bool,
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    ranks = [1, 2, 3] if status == Match.Status.FINISHED else None
    match = ladder_match_factory(ladder_oh_hell, versions, ranks, status=status, rated=rated)
    assert ratings_apply(match=match) == []
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    match.refresh_from_db()
    assert not match.ratings_applied


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("status", "ranks", "complaint"),
    [
        (Match.Status.SCHEDULED, None, "is scheduled, not finished"),
        (Match.Status.RUNNING, None, "is running, not finished"),
        (Match.Status.FINISHED, None, r"seats \[0, 1, 2\] have no rank"),
    ],
)
def test_a_match_not_finished_or_without_ranks_is_refused_and_changes_nothing(
    ladder_oh_hell: Ladder,
    ladder_bot_factory: MakeBot,
    ladder_match_factory: MakeMatch,
    status: str,
    ranks: list[int] | None,
    complaint: str,
) -> None:
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    match = ladder_match_factory(ladder_oh_hell, versions, ranks, status=status)
    with pytest.raises(RatingError, match=complaint):
        ratings_apply(match=match)
    assert not Rating.objects.exists() and not RatingChange.objects.exists()
    match.refresh_from_db()
    assert not match.ratings_applied


@pytest.mark.django_db
def test_a_match_seating_one_version_twice_is_refused(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    alice, bob = ladder_bot_factory("alice", "alice"), ladder_bot_factory("bob", "bob")
    match = ladder_match_factory(ladder_oh_hell, [alice, bob, alice], [1, 2, 3])
    with pytest.raises(RatingError, match="one bot version twice"):
        ratings_apply(match=match)
    assert not RatingChange.objects.exists()


@pytest.mark.django_db
def test_a_new_version_carries_its_predecessors_mean_into_its_first_rated_match(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    v1 = ladder_bot_factory("alice", "climber", number=1)
    others = [ladder_bot_factory(owner, owner) for owner in ("bob", "carol")]
    for _ in range(5):
        ratings_apply(match=ladder_match_factory(ladder_oh_hell, [v1, *others], [1, 2, 3]))
    strong = _belief(v1, ladder_oh_hell)
    v2 = ladder_bot_factory("alice", "climber", number=2)
    [change, *_] = ratings_apply(match=ladder_match_factory(ladder_oh_hell, [v2, *others], [1, 2, 3]))
    assert (change.mu_before, change.sigma_before) == (strong.mu, ratings.DEFAULT_SIGMA)


@pytest.mark.django_db
def test_replaying_the_same_results_in_order_gives_the_same_ratings(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    versions = [ladder_bot_factory(f"owner{i}", f"bot{i}") for i in range(6)]
    second = Ladder.objects.create(game="oh7", min_players=3, max_players=5)
    rng = random.Random(2026)
    games = []
    for _ in range(30):
        table = rng.sample(versions, rng.randint(3, 5))
        ranks = [rng.randint(1, len(table)) for _ in table]
        games.append([(version.pk, rank) for version, rank in zip(table, ranks, strict=True)])
        for ladder in (ladder_oh_hell, second):
            ratings_apply(match=ladder_match_factory(ladder, table, ranks))
    replayed = ratings.replay(games)
    for version in versions:
        assert _belief(version, ladder_oh_hell) == _belief(version, second) == replayed[version.pk]


# Two-seat duplicate sets, rated once ---------------------------------------------------------------


def _duplicate_set(
    make_match: MakeMatch, ladder: Ladder, table: list[BotVersion], ranks: list[list[int]], name: str
) -> list[Match]:
    """Rotation r seats table rotated by r, with ranks[r] ready; every rotation is still RUNNING
    (`_finish` ends one)."""
    rotations = []
    for rotation, finished in enumerate(ranks):
        seated = table[rotation:] + table[:rotation]
        match = make_match(ladder, seated, finished, status=Match.Status.RUNNING)
        Match.objects.filter(pk=match.pk).update(duplicate_set=name, rotation=rotation)
        match.refresh_from_db()
        rotations.append(match)
    return rotations


def _finish(match: Match, status: str = Match.Status.FINISHED) -> Match:
    Match.objects.filter(pk=match.pk).update(status=status)
    match.refresh_from_db()
    return match


@pytest.mark.django_db
def test_a_two_seat_duplicate_set_is_rated_once_on_the_mean_ranks_when_its_last_rotation_finishes(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    duel = Ladder.objects.create(game="oh7-duel", min_players=2, max_players=2)
    ada, bob = ladder_bot_factory("ada", "ada"), ladder_bot_factory("bob", "bob")
    # Seat 0 wins both rotations: ada in rotation 0, bob in rotation 1 (seated [bob, ada]), a tie.
    first, second = _duplicate_set(ladder_match_factory, duel, [ada, bob], [[1, 2], [1, 2]], "set-a")

    assert ratings_apply(match=_finish(first)) == [], "the set is not over: nothing is rated yet"
    assert not Rating.objects.filter(games__gt=0).exists()
    changes = ratings_apply(match=_finish(second))

    assert [change.rank for change in changes] == [1, 1]
    assert {change.match_id for change in changes} == {second.pk}
    tied = ratings.rate([ratings.initial(), ratings.initial()], [1, 1])
    assert _belief(ada, duel) == _belief(bob, duel) == tied[0]
    assert all(rating.games == 2 for rating in Rating.objects.filter(ladder=duel))
    assert Match.objects.filter(duplicate_set="set-a", ratings_applied=True).count() == 2
    assert ratings_apply(match=first) == [] and ratings_apply(match=second) == [], "applied once"
    assert RatingChange.objects.count() == 2


@pytest.mark.django_db
def test_a_set_won_on_both_rotations_rates_the_winner_first_and_an_aborted_rotation_is_left_out(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    duel = Ladder.objects.create(game="oh7-duel", min_players=2, max_players=2)
    ada, bob = ladder_bot_factory("ada", "ada"), ladder_bot_factory("bob", "bob")
    won = _duplicate_set(ladder_match_factory, duel, [ada, bob], [[1, 2], [2, 1], [1, 2]], "set-b")
    # ada won rotations 0 and 2; rotation 1 is aborted, and it is the last to end: it rates the set.
    assert ratings_apply(match=_finish(won[0])) == ratings_apply(match=_finish(won[2])) == []
    changes = ratings_apply(match=_finish(won[1], Match.Status.ABORTED))

    assert [(change.rating.bot_version, change.rank) for change in changes] == [(ada, 1), (bob, 2)]
    expected = ratings.rate([ratings.initial(), ratings.initial()], [1, 2])
    assert (_belief(ada, duel), _belief(bob, duel)) == (expected[0], expected[1])
    assert {change.match_id for change in changes} == {won[2].pk}, "recorded on the last finished rotation"
    assert all(rating.games == 2 for rating in Rating.objects.filter(ladder=duel))


@pytest.mark.django_db
def test_sets_of_three_seats_are_still_rated_match_by_match(
    ladder_oh_hell: Ladder, ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    table = [ladder_bot_factory(owner, owner) for owner in ("ada", "bob", "cy")]
    first, *_ = _duplicate_set(ladder_match_factory, ladder_oh_hell, table, [[1, 2, 3]] * 3, "set-c")
    assert len(ratings_apply(match=_finish(first))) == 3
    assert all(rating.games == 1 for rating in Rating.objects.filter(ladder=ladder_oh_hell))


# One writer per ladder ----------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_workers_applying_matches_of_one_ladder_at_once_lose_no_update(
    ladder_bot_factory: MakeBot, ladder_match_factory: MakeMatch
) -> None:
    if connection.vendor == "sqlite":
        pytest.skip("SQLite has no row locks (and serializes writers anyway); this needs PostgreSQL")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    versions = [ladder_bot_factory(owner, owner) for owner in ("alice", "bob", "carol")]
    per_worker = 8
    batches = [
        [
            ladder_match_factory(
                ladder, versions, [1 + (i + w) % 3, 1 + (i + w + 1) % 3, 1 + (i + w + 2) % 3]
            )
            for i in range(per_worker)
        ]
        for w in range(2)
    ]
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def worker(matches: list[Match]) -> None:
        try:
            start.wait()
            for match in matches:
                ratings_apply(match=match)
        except BaseException as error:  # reported by the main thread
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert all(rating.games == 2 * per_worker for rating in Rating.objects.all())
    for rating in Rating.objects.all():
        chain = list(rating.changes.order_by("id"))
        assert len(chain) == 2 * per_worker
        assert (chain[0].mu_before, chain[0].sigma_before) == (25.0, 25 / 3)
        for earlier, later in itertools.pairwise(chain):
            assert (later.mu_before, later.sigma_before) == (earlier.mu_after, earlier.sigma_after)
        assert (rating.mu, rating.sigma) == (chain[-1].mu_after, chain[-1].sigma_after)
