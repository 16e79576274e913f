"""`manage.py tournament_demo`: eight example-derived bots, submitted and qualified for real,
entered into a published event whose entries close at once; starting it freezes all eight and
schedules a balanced design (every bot in the same number of games, every seat equally)."""

from __future__ import annotations

import io
import itertools
from collections import Counter

import pytest
from django.core.management import CommandError, call_command
from tournament_data import Recorder

from septet_platform.bots.models import BotVersion
from septet_platform.matches.models import Seat
from septet_platform.tournaments import services
from septet_platform.tournaments.models import Tournament

pytestmark = pytest.mark.django_db


@pytest.mark.slow
def test_the_demo_makes_a_runnable_event_of_eight_example_bots(recorder: Recorder) -> None:
    out = io.StringIO()
    call_command("tournament_demo", "demo-cup", "--table-size", "4", stdout=out)

    assert "demo-cup: 8 entrants, entries closed" in out.getvalue()
    cup = Tournament.objects.get(name="demo-cup")
    assert cup.published and cup.status == Tournament.Status.OPEN
    assert set(BotVersion.objects.values_list("status", flat=True)) == {BotVersion.Status.ACTIVE}
    assert services.tournament_start(tournament=cup, enqueue=recorder)

    entrants = services.frozen_entrants(cup)
    assert len(entrants) == 8 and {e.version.manifest["games"][0] for e in entrants} == {"oh-hell"}
    seats = Seat.objects.filter(match__tournament=cup)
    games = Counter(seat.bot_version_id for seat in seats)
    assert len(games) == 8 and len(set(games.values())) == 1
    in_seat = Counter((seat.bot_version_id, seat.seat) for seat in seats)
    assert len(set(in_seat.values())) == 1 and len(in_seat) == 8 * 4
    tables = {
        m: frozenset(s.bot_version_id for s in seats if s.match_id == m) for m in {s.match_id for s in seats}
    }
    pairs = Counter(
        pair for table in set(tables.values()) for pair in itertools.combinations(sorted(table), 2)
    )
    assert len(pairs) == 28 and max(pairs.values()) - min(pairs.values()) <= 1  # every pair meets, evenly


def test_a_bad_demo_is_refused_before_any_bot_is_made() -> None:
    with pytest.raises(CommandError, match="oh-hell is played by 3-7 players, not 9"):
        call_command("tournament_demo", "demo-cup", "--table-size", "9", stdout=io.StringIO())
    assert not Tournament.objects.exists() and not BotVersion.objects.exists()
