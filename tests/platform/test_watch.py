"""`septet watch` and the Arena's FollowMatch over a real live stream: a match played through the
worker's publisher (in-process players, the real Redis) is followed from the terminal as it is
played, then its result; nothing hidden is printed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from referee.engine.games import get_game
from referee.engine.games.base import Action
from referee.engine.match import play_match
from referee.engine.players import GreedyPlayer
from septet_platform.accounts.services import api_token_create
from septet_platform.ladders.models import Ladder
from septet_platform.live.streams import LivePublisher, live_end
from septet_platform.matches.models import Match


class Thinking(GreedyPlayer):
    """The greedy policy, taking a few milliseconds a decision as a bot on the platform does (so the
    match is seen being played, not only over)."""

    def decide(self, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        time.sleep(0.01)
        return super().decide(info_state, legal_actions)


@pytest.mark.django_db(transaction=True)
def test_watch_prints_a_match_as_it_is_played_then_its_result(
    septet: Callable[..., tuple[int, str, str]],
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
    django_user_model: type,
) -> None:
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    match = ladder_match_factory(ladder, versions, None, status=Match.Status.SCHEDULED)
    _, token = api_token_create(user=django_user_model.objects.get(username="ada"), name="cli")
    game = get_game("oh-hell")
    outcome: list = []

    def worker() -> None:
        """Plays the match as a worker would: claims it, publishes it live, records the result."""
        from django.db import connection

        time.sleep(0.5)
        Match.objects.filter(pk=match.pk).update(status=Match.Status.RUNNING, attempt=1)
        header = {"format": "septet-replay/1", "game": "oh-hell", "options": {},
                  "seats": [{"seat": s, "name": f"{v.bot.name} v1"} for s, v in enumerate(versions)],
                  "time_control": None}  # fmt: skip
        publisher = LivePublisher(match_id=match.pk, attempt=1, game=game, num_players=3, header=header)
        publisher.begin()
        players = [Thinking(game, name=f"{v.bot.name} v1") for v in versions]
        result = play_match(game, players, seed=11, observer=publisher)
        outcome.append(result)
        for seat, (score, rank) in enumerate(
            zip(result.result.scores, result.result.ranks or (), strict=False)
        ):
            match.seats.filter(seat=seat).update(score=score, rank=rank)
        Match.objects.filter(pk=match.pk).update(status=Match.Status.FINISHED)
        publisher.end(live_end(status="finished", replay=True))
        connection.close()

    playing = threading.Thread(target=worker)
    playing.start()
    code, out, err = septet("watch", str(match.pk), token=token)
    playing.join()
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"match {match.pk}: waiting for a worker to play it"
    assert f"match {match.pk}: being played (attempt 1)" in lines
    assert "=== oh-hell: 0: alpha v1, 1: beta v1, 2: gamma v1" in lines
    bids = [line for line in lines if " bids " in line]
    replay = outcome[0].replay
    assert len(bids) == sum(1 for event in replay["events"] if event["type"] == "bid")
    assert out.count("wins the trick") == sum(1 for event in replay["events"] if event["type"] == "trick")
    assert lines.index(f"match {match.pk}: finished") > lines.index(bids[-1]), "the result comes last"
    assert "seat 0: alpha v1" in out
    # Nothing hidden: a card printed is one that was played or turned up as trump.
    shown = {event["card"] for event in replay["events"] if event["type"] == "play"}
    shown |= {event["trump_card"] for event in replay["events"] if event["type"] == "deal"}
    dealt = {
        card
        for event in replay["events"]
        if event["type"] == "deal"
        for hand in event["hands"]
        for card in hand
    }
    printed = {word.strip(",;:") for line in lines for word in line.split()}
    assert printed & dealt <= shown, "a card was printed that nobody had played"


@pytest.mark.django_db(transaction=True)
def test_watch_refuses_an_unknown_match_and_a_missing_token(
    septet: Callable[..., tuple[int, str, str]], django_user_model: type
) -> None:
    _, token = api_token_create(user=django_user_model.objects.create_user("ada"), name="cli")
    code, _, err = septet("watch", "999999", token=token)
    assert code == 2 and "no match 999999" in err
    code, _, err = septet("watch", "1")
    assert code == 2 and "token" in err
