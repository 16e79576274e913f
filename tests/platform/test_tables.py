"""Tables: a person starts a game against bots and plays their seat from the site.

The worker plays the table as any match (real sandboxed bot processes); the person's decisions
come through the live relay (real Redis) from the site's answer endpoint (Django's test client,
signed in as they are in the browser). Every refusal is checked to change nothing."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
import redis
from bot_versions import tar_folder, version_from_archive
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from platform_support import EXAMPLES

from referee.engine.games import get_game
from septet_platform.bots.models import BotVersion
from septet_platform.challenges import tables
from septet_platform.challenges.services import ChallengeRefused, ChallengesExhausted
from septet_platform.ladders.models import Ladder
from septet_platform.live.relay import SeatKeys
from septet_platform.live.streams import MESSAGE_FIELD, stream_key
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat


@pytest.fixture
def house(django_user_model: type) -> dict[str, BotVersion]:
    owner = django_user_model.objects.create_user("house")
    return {
        name: version_from_archive(owner, name, tar_folder(EXAMPLES / name), games=list(ALL), is_house=True)
        for name in ("greedy", "random")
    }


ALL = ("oh7", "oh7-advanced", "oh7-duel", "oh-hell", "black-sevens", "seven-up-seven-down")


@pytest.fixture
def ladders(db: None) -> None:
    for game_id in ALL:
        game = get_game(game_id)
        Ladder.objects.create(game=game_id, min_players=game.players.start, max_players=game.players.stop - 1)


@pytest.fixture
def alice(django_user_model: type) -> AbstractBaseUser:
    return django_user_model.objects.create_user("alice", password="a-long-password-1")


def signed_in(user: AbstractBaseUser, **kwargs: Any) -> Client:
    client = Client(**kwargs)
    client.force_login(user)
    return client


# Starting a table: what may be seated, and the limits ------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("tried", "seats", "error"),
    [
        ("no seat for the person", ["greedy", "random", "greedy"], "exactly one seat"),
        ("two seats for the person", ["you", "you", "greedy"], "exactly one seat"),
        ("a table too small for oh-hell", ["you", "greedy"], "3-7 seats"),
        ("a table too large", ["you", *["greedy"] * 7], "3-7 seats"),
        ("an unknown bot", ["you", "greedy", "nobody-such"], "nobody-such"),
    ],
)
def test_a_table_that_cannot_be_played_is_refused_and_creates_nothing(
    ladders: None,
    house: dict[str, BotVersion],
    alice: AbstractBaseUser,
    tried: str,
    seats: list[str],
    error: str,
) -> None:
    with pytest.raises(Exception, match=error):
        tables.table_start(requester=alice, game="oh-hell", seats=seats)
    assert not Match.objects.exists() and not Seat.objects.exists(), tried


@pytest.mark.django_db
def test_other_owners_bots_sit_once_and_only_if_they_accept_challenges(
    ladders: None, house: dict[str, BotVersion], alice: AbstractBaseUser, django_user_model: type
) -> None:
    bob = django_user_model.objects.create_user("bob")
    bobs = version_from_archive(bob, "bobs-bot", tar_folder(EXAMPLES / "random"), games=list(ALL))
    with pytest.raises(Exception, match="seat it once"):
        tables.table_start(requester=alice, game="oh-hell", seats=["you", "bobs-bot", "bobs-bot"])
    bobs.bot.accepts_challenges = False
    bobs.bot.save()
    with pytest.raises(ChallengeRefused):
        tables.table_start(requester=alice, game="oh-hell", seats=["you", "bobs-bot", "greedy"])
    with pytest.raises(Exception, match="unknown clock"):
        tables.table_start(requester=alice, game="oh-hell", seats=["you", "greedy", "random"], clock="blitz")
    assert not Match.objects.exists()
    # A house bot may fill several seats.
    match = tables.table_start(requester=alice, game="oh-hell", seats=["greedy", "you", "greedy"])
    seats = list(match.seats.order_by("seat"))
    assert [seat.player_id for seat in seats] == [None, alice.pk, None]
    assert seats[1].decision_seconds == 30.0 and seats[1].bank_seconds == 120.0
    assert match.kind == Match.Kind.TABLE and not match.rated and match.duplicate_set == ""


@pytest.mark.django_db(transaction=True)
def test_open_tables_are_limited_per_person_under_concurrent_requests(
    ladders: None, house: dict[str, BotVersion], alice: AbstractBaseUser, settings: Any
) -> None:
    from django.db import connection as database

    if database.vendor != "postgresql":
        pytest.skip("concurrent requests need PostgreSQL's row locks (SQLite serialises them anyway)")
    settings.SEPTET_OPEN_TABLES_PER_USER = 2
    outcomes: list[str] = []

    def start() -> None:
        try:
            tables.table_start(requester=alice, game="oh-hell", seats=["you", "greedy", "random"])
            outcomes.append("started")
        except ChallengesExhausted:
            outcomes.append("refused")
        finally:
            database.close()

    threads = [threading.Thread(target=start) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 6 + ["started"] * 2
    assert Match.objects.filter(kind=Match.Kind.TABLE).count() == 2


# Playing a table: the person's answers through the site -------------------------------------------


class SeatStream:
    """Reads a seat's (or the public) live stream as the browser would, from Redis."""

    def __init__(self, client: redis.Redis, key: str) -> None:
        self.client = client
        self.key = key
        self.after = "0-0"
        self.messages: list[dict[str, Any]] = []

    def next_batch(self, timeout: float = 20.0) -> list[dict[str, Any]]:
        found = self.client.xread({self.key: self.after}, count=1, block=int(timeout * 1000))
        assert found, f"nothing on {self.key} for {timeout} s"
        entry_id, fields = found[0][1][0]
        self.after = entry_id.decode()
        batch = json.loads(fields[MESSAGE_FIELD.encode()])
        self.messages.extend(batch)
        return batch


def answer_url(match: Match, seat: int) -> str:
    return f"/live/matches/{match.pk}/seats/{seat}/answer"


def post(client: Client, url: str, body: Any, **headers: str) -> Any:
    return client.post(url, data=json.dumps(body), content_type="application/json", **headers)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("game", ["oh7", "oh-hell"])
def test_a_person_plays_a_whole_table_from_the_site_and_refusals_change_nothing(
    live_redis: redis.Redis,
    ladders: None,
    house: dict[str, BotVersion],
    alice: AbstractBaseUser,
    django_user_model: type,
    game: str,
) -> None:
    match = tables.table_start(requester=alice, game=game, seats=["greedy", "you", "random"], clock="quick")
    played: list[Any] = []
    worker = threading.Thread(
        target=lambda: played.append(services.match_play(match_id=match.pk, worker="t"))
    )
    worker.start()
    mine, public = (
        SeatStream(live_redis, stream_key(match.pk, 1, 1)),
        SeatStream(live_redis, stream_key(match.pk, 1, None)),
    )
    browser = signed_in(alice)
    bob = signed_in(django_user_model.objects.create_user("bob"))
    forged = signed_in(alice, enforce_csrf_checks=True)  # a real CSRF token, sent from another origin
    forged.get("/tables/new/")
    token = forged.cookies["csrftoken"].value
    refusals_tried = False
    answered = 0
    while True:
        batch = mine.next_batch()
        if any(message["type"] == "end" for message in batch):
            break
        prompt = next((message for message in batch if message["type"] == "prompt"), None)
        if prompt is None:
            continue
        url, first = answer_url(match, 1), prompt["legal"][0]
        if not refusals_tried:
            refusals_tried = True
            before = live_redis.xlen(mine.key)
            illegal = "ZZ" if isinstance(first, str) else 99 if isinstance(first, int) else ["ZZ"]
            tried = [
                (
                    "another person's session",
                    post(bob, url, {"decision": prompt["decision"], "action": first}),
                    403,
                ),
                ("a stale decision", post(browser, url, {"decision": "not-this-one", "action": first}), 409),
                (
                    "an illegal action",
                    post(browser, url, {"decision": prompt["decision"], "action": illegal}),
                    400,
                ),
                ("no JSON", browser.post(url, data="bid 3", content_type="text/plain"), 400),
                (
                    "another seat",
                    post(browser, answer_url(match, 0), {"decision": prompt["decision"], "action": first}),
                    403,
                ),
                (
                    "a forged origin",
                    post(
                        forged,
                        url,
                        {"decision": prompt["decision"], "action": first},
                        HTTP_ORIGIN="http://evil.example",
                        HTTP_X_CSRFTOKEN=token,
                    ),
                    403,
                ),
            ]
            for what, response, status in tried:
                assert response.status_code == status, (what, response.content)
            assert all("error" in response.json() for what, response, _ in tried if what != "a forged origin")
            assert b"CSRF" in tried[-1][1].content  # Django's own refusal of another origin
            assert live_redis.xlen(mine.key) == before, "a refused answer changed the seat's stream"
            assert live_redis.llen(SeatKeys(match.pk, 1).answers) == 0, "a refused answer reached the worker"
        if answered == 1:  # the CSRF-checked client, from the site's own origin this time: taken
            origin = {"HTTP_ORIGIN": "http://testserver", "HTTP_X_CSRFTOKEN": token}
            response = post(forged, url, {"decision": prompt["decision"], "action": first}, **origin)
        else:
            response = post(browser, url, {"decision": prompt["decision"], "action": first})
        assert response.status_code == 200, response.content
        answered += 1
        if answered == 1:
            again = post(browser, url, {"decision": prompt["decision"], "action": first})
            assert again.status_code == 409 and again.json()["code"] == "answered"
    worker.join(60)
    assert played[0].outcome == "recorded"
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED
    person = match.seats.get(seat=1)
    assert person.rank is not None and person.score is not None and not person.forfeit_status
    assert answered > 5
    # The stream of the person's seat and the public one: never a hidden card.
    while not any(message["type"] == "end" for message in public.messages):
        public.next_batch()
    public_deals = [message for message in public.messages if message["type"] == "deal"]
    assert public_deals and all(hand is None for deal in public_deals for hand in deal["hands"])
    seat_deals = [message for message in mine.messages if message["type"] == "deal"]
    assert all(
        deal["hands"][0] is None and deal["hands"][2] is None and deal["hands"][1] for deal in seat_deals
    )
    assert not any(message["type"] in ("prompt", "answered") for message in public.messages)
    assert not any("forced" in message for message in public.messages + mine.messages)
    # The match page shows the person's result line and, the table being over, its replay.
    page = browser.get(f"/matches/{match.pk}/").content.decode()
    assert "You finished" in page and "septet-viewer" in page


@pytest.mark.django_db(transaction=True)
def test_a_person_who_never_answers_runs_out_of_time_and_the_game_is_played_out(
    live_redis: redis.Redis, ladders: None, house: dict[str, BotVersion], alice: AbstractBaseUser
) -> None:
    match = tables.table_start(requester=alice, game="oh-hell", seats=["you", "greedy", "random"])
    Seat.objects.filter(match=match, seat=0).update(decision_seconds=0.3, bank_seconds=0.2)
    assert services.match_play(match_id=match.pk, worker="t").outcome == "recorded"
    person = Seat.objects.get(match=match, seat=0)
    assert person.forfeit_status == "TIMEOUT" and person.rank == 3
    assert "did not answer within" in person.forfeit_reason
