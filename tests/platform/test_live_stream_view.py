"""The site's live stream endpoint (server-sent events) over a real Redis: who may read which
stream, resuming where a browser broke off, a held deal, and the end of a match."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import redis
from asgiref.sync import sync_to_async
from bot_versions import version_row
from django.db import connections
from django.test import AsyncClient

from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.live.hub import close_hub
from septet_platform.live.streams import MESSAGE_FIELD, stream_key
from septet_platform.matches.models import Match, Seat


def table(
    person: Any, *, status: str = Match.Status.RUNNING, duplicate_set: str = "", attempt: int = 1
) -> Match:
    ladder, _ = Ladder.objects.get_or_create(
        game="oh-hell", pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    match = Match.objects.create(
        ladder=ladder,
        seed=5,
        status=status,
        attempt=attempt,
        duplicate_set=duplicate_set,
        kind=Match.Kind.TABLE,
    )
    bot = greedy()
    Seat.objects.create(match=match, seat=0, player=person, decision_seconds=30, bank_seconds=60)
    Seat.objects.create(match=match, seat=1, bot_version=bot)
    Seat.objects.create(match=match, seat=2, bot_version=bot)
    return match


def greedy() -> BotVersion:
    """The house bot greedy's version (made on first use)."""
    return BotVersion.objects.filter(bot__name="greedy").first() or version_row(
        "house", "greedy", is_house=True
    )


def write(client: redis.Redis, key: str, *batches: list[dict[str, Any]]) -> list[str]:
    return [client.xadd(key, {MESSAGE_FIELD: json.dumps(batch)}).decode() for batch in batches]


def read_events(
    url: str, *, user: Any = None, last_event_id: str = "", limit: int = 20
) -> tuple[int, list[dict[str, str]]]:
    """The response status and the server-sent events of `url` (until it ends, or `limit`)."""

    async def fetch() -> tuple[int, list[dict[str, str]]]:
        client = AsyncClient()
        if user is not None:
            await client.aforce_login(user)
        headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
        response = await client.get(url, headers=headers)
        if response.status_code != 200:
            return response.status_code, [json.loads(response.content)]
        assert response["Content-Type"] == "text/event-stream"
        assert response["Cache-Control"] == "no-store" and response["X-Accel-Buffering"] == "no"
        text = ""
        events: list[dict[str, str]] = []
        async for chunk in response.streaming_content:
            text += chunk.decode() if isinstance(chunk, bytes) else chunk
            while "\n\n" in text:
                block, text = text.split("\n\n", 1)
                fields = dict(
                    line.split(": ", 1)
                    for line in block.splitlines()
                    if ": " in line and not line.startswith(":")
                )
                if "data" in fields:
                    events.append(fields)
            if len(events) >= limit:
                break
        return response.status_code, events

    async def fetched() -> tuple[int, list[dict[str, str]]]:
        try:
            return await asyncio.wait_for(fetch(), 20)
        finally:  # the view's database connection is on asgiref's thread: close it there
            await sync_to_async(connections.close_all)()
            await close_hub()

    return asyncio.run(fetched())


@pytest.mark.django_db(transaction=True)
def test_a_spectator_gets_the_public_stream_so_far_then_resumes_after_its_last_event(
    live_redis: redis.Redis, django_user_model: type
) -> None:
    match = table(django_user_model.objects.create_user("alice"))
    key = stream_key(match.pk, 1, None)
    ids = write(
        live_redis, key, [{"type": "match", "view": "public"}], [{"type": "bid", "seat": 1, "bid": 2}]
    )
    ids += write(live_redis, key, [{"type": "end", "status": "finished", "reason": "", "replay": True}])
    status, events = read_events(f"/live/matches/{match.pk}/events")
    assert status == 200
    assert [event["id"] for event in events] == [f"1:{entry}" for entry in ids]
    assert [json.loads(event["data"])[0]["type"] for event in events] == ["match", "bid", "end"]
    # A browser that reconnects sends its last event id and gets only what follows it.
    status, events = read_events(f"/live/matches/{match.pk}/events", last_event_id=f"1:{ids[0]}")
    assert [json.loads(event["data"])[0]["type"] for event in events] == ["bid", "end"]
    # An id of another attempt (a voided one) starts the stream of this attempt from its beginning.
    status, events = read_events(f"/live/matches/{match.pk}/events", last_event_id=f"7:{ids[1]}")
    assert len(events) == 3


@pytest.mark.django_db(transaction=True)
def test_only_the_person_in_a_seat_reads_its_stream(live_redis: redis.Redis, django_user_model: type) -> None:
    alice, bob = (django_user_model.objects.create_user(name) for name in ("alice", "bob"))
    match = table(alice)
    write(
        live_redis,
        stream_key(match.pk, 1, 0),
        [{"type": "match", "view": 0}],
        [{"type": "end", "status": "finished", "reason": "", "replay": True}],
    )
    url = f"/live/matches/{match.pk}/events?seat=0"
    tried = {
        "nobody signed in": read_events(url),
        "another person": read_events(url, user=bob),
        "a bot's seat": read_events(f"/live/matches/{match.pk}/events?seat=1", user=alice),
        "a seat that is not a number": read_events(f"/live/matches/{match.pk}/events?seat=x", user=alice),
        "an unknown match": read_events("/live/matches/999999/events"),
    }
    assert {what: status for what, (status, _) in tried.items()} == {
        "nobody signed in": 403,
        "another person": 403,
        "a bot's seat": 403,
        "a seat that is not a number": 400,
        "an unknown match": 404,
    }
    assert all("error" in body[0] for _, body in tried.values())
    status, events = read_events(url, user=alice)
    assert status == 200 and json.loads(events[0]["data"])[0]["view"] == 0


@pytest.mark.django_db(transaction=True)
def test_a_deal_a_person_still_has_to_play_is_held_from_spectators(
    live_redis: redis.Redis, django_user_model: type
) -> None:
    alice = django_user_model.objects.create_user("alice")
    watched = table(alice, duplicate_set="set-1")
    Seat.objects.filter(match=watched, seat=0).update(player=None, bot_version=greedy())
    waiting = table(alice, status=Match.Status.SCHEDULED, duplicate_set="set-1", attempt=0)
    assert Seat.objects.filter(match=waiting, player=alice).exists()
    write(live_redis, stream_key(watched.pk, 1, None), [{"type": "match", "view": "public"}])
    status, events = read_events(f"/live/matches/{watched.pk}/events")
    assert status == 200 and events[0]["event"] == "held" and "data" in events[0]
    assert "person" in json.loads(events[0]["data"])["held"]
    Match.objects.filter(pk=waiting.pk).update(status=Match.Status.FINISHED)
    status, events = read_events(f"/live/matches/{watched.pk}/events", limit=1)
    assert json.loads(events[0]["data"])[0]["type"] == "match"


@pytest.mark.django_db(transaction=True)
def test_a_match_over_whose_stream_expired_says_so_at_once(
    live_redis: redis.Redis, django_user_model: type
) -> None:
    match = table(django_user_model.objects.create_user("alice"), status=Match.Status.CANCELLED)
    Match.objects.filter(pk=match.pk).update(end_reason="the game was stopped by a failure of the platform")
    status, events = read_events(f"/live/matches/{match.pk}/events")
    assert status == 200
    end = json.loads(events[0]["data"])[0]
    assert end == {
        "type": "end",
        "status": "voided",
        "reason": "the game was stopped by a failure of the platform",
        "replay": True,
    }
