"""The bound on a match's length that each ladder shows: every seat's budget for the whole match
(docs/rules.md, Forfeits) times the largest table."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from referee.engine.match import TimeControl
from septet_platform.ladders.models import Ladder


@pytest.mark.django_db
def test_the_ladder_page_shows_each_seats_budget_and_a_matchs_bound(client: Client) -> None:
    ladder = Ladder.objects.create(
        game="oh-hell", min_players=3, max_players=7, decision_seconds=1.0, bank_seconds=10.0
    )
    assert ladder.seat_budget_seconds == TimeControl(1.0, 10.0).seat_budget == 70.0
    assert ladder.max_match_seconds == 7 * 70.0
    page = client.get(reverse("web:ladder", args=["oh-hell"]))
    assert page.status_code == 200
    assert "at most 70 s a seat and 490 s of thinking a match" in page.content.decode()


@pytest.mark.django_db
def test_the_arena_ladder_message_carries_the_same_bound() -> None:
    from septet_platform.arena_api.servicer import _ladder

    ladder = Ladder.objects.create(
        game="oh7", min_players=3, max_players=5, decision_seconds=0.5, bank_seconds=5.0
    )
    message = _ladder(ladder)
    assert (message.seat_budget_seconds, message.max_match_seconds) == (35.0, 175.0)
