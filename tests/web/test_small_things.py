"""Issue 18's smaller web fixes that need no browser: a bot page's rank intervals stay within the
ranks a table can give."""

from __future__ import annotations

import pytest
from django.test import Client
from web_data import Site, match_play_recorded

from referee.tools.stats import mean_interval
from septet_platform.matches.models import Match
from septet_platform.web.bot_page import DuplicateSet, duplicate_summary, rank_interval_clipped


def _set(mean_rank: float, players: int = 3) -> DuplicateSet:
    return DuplicateSet(
        game="oh-hell", name="s", seed=1, players=players, rotations=players, mean_rank=mean_rank,
        mean_score=0.0, field=[], first_match_id=1,
    )  # fmt: skip


def test_a_spread_rank_interval_is_clipped_to_the_possible_ranks() -> None:
    """Two sets at a table of 3, mean ranks 1 and 3: the t interval is about -11.7 to 15.7."""
    raw = mean_interval([1.0, 3.0])
    assert raw.low < 1 and raw.high > 3
    [summary] = duplicate_summary([_set(1.0), _set(3.0)])
    assert (summary.mean_rank.low, summary.mean_rank.high) == (1.0, 3.0)
    assert summary.mean_rank.mean == raw.mean and summary.mean_rank.n == 2


def test_an_interval_inside_the_ranks_is_kept_and_an_infinite_one_is_the_whole_range() -> None:
    inside = mean_interval([1.9, 2.0, 2.1, 2.0])
    assert rank_interval_clipped(inside, 4) == inside
    lone = mean_interval([2.0])
    assert (rank_interval_clipped(lone, 5).low, rank_interval_clipped(lone, 5).high) == (1.0, 5.0)


@pytest.mark.django_db
def test_the_bot_page_shows_no_rank_below_one(client: Client, site: Site) -> None:
    """The page's summary row of alpha's sets, built from real matches, shows the clipped bounds."""
    table = [site.alpha, site.beta, site.scripted]
    for seed in (70, 71):
        rotations = [match_play_recorded(site.ladder, table[r:] + table[:r], seed=seed) for r in range(3)]
        for rotation, match in enumerate(rotations):
            Match.objects.filter(pk=match.pk).update(duplicate_set=f"set-{seed}", rotation=rotation)
    profile = client.get("/bots/alpha/").context["profile"]
    [summary] = profile.duplicate_summary
    assert 1.0 <= summary.mean_rank.low <= summary.mean_rank.high <= 3.0
