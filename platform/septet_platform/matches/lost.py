"""Which matches have a task on its way: read from the broker itself, to tell a lost task from a
match that is merely waiting its turn in a long queue.

A SCHEDULED match is waiting legitimately when a message naming it is in one of the platform's
queues, or is held (delivered, not yet acknowledged) by a worker; it is lost otherwise, e.g. when
the broker restarted without its queue. Waiting time alone cannot tell the two apart: a queue of
a hundred matches takes many minutes to drain, while a lost task should be replaced in seconds.

With the Redis transport (the embedded broker and REDIS_URL), messages wait in a list per queue
and priority, and a delivered message sits in the `unacked` hash, with its delivery time in the
`unacked_index` sorted set, until it is acknowledged (late acks: after the task ran). A held
message whose match is still SCHEDULED after HELD_LIMIT is counted as lost: a live worker starts a
delivered match within one match's time (it prefetches one match per pool process, which waits
for the match that process is playing; countdowns are 10 s at most), while a worker killed with
-9 leaves its messages in `unacked` until Celery's visibility timeout (600 s) restores them. A
duplicate that follows (a live worker's prefetched match waiting behind a match longer than
HELD_LIMIT) is harmless: only one claim of a match succeeds.

Other transports cannot be read this way: `match_ids_in_broker` returns None, and the caller falls
back to waiting time (FALLBACK_STALE).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings

log = logging.getLogger(__name__)

LOST_GRACE = timedelta(seconds=15)
"""A match made or put back this recently is not judged: its message may still be on its way
(sent after the transaction commits)."""
HELD_LIMIT = timedelta(seconds=30)
"""A message held this long by a worker without its match being claimed: that worker is dead (or
its prefetched match waits behind a longer one, and a duplicate does no harm)."""
FALLBACK_STALE = timedelta(minutes=10)
"""Without a readable broker: how long a match may wait before it is queued again anyway."""
MATCH_TASKS = frozenset({"septet.match_run", "septet.tournament_match_run"})


def match_ids_in_broker(*, now: datetime) -> set[int] | None:
    """Ids of the matches with a message waiting in a queue, or held by a live worker; None when
    the broker cannot be read this way (not Redis, or not reachable)."""
    from septet_platform.celery import app

    try:
        with app.connection_for_read(settings.CELERY_BROKER_URL) as broker:
            channel = broker.default_channel
            if not hasattr(channel, "unacked_key"):
                return None
            return _waiting(channel) | _held(channel, now=now)
    except Exception:  # an unreachable broker: nothing can be sent now anyway
        log.warning("cannot read the broker's queues to find lost match tasks", exc_info=True)
        return None


def _waiting(channel: Any) -> set[int]:
    keys = {
        channel._q_for_pri(queue, priority)
        for queue in settings.SEPTET_QUEUES
        for priority in channel.priority_steps
    }
    found: set[int] = set()
    for key in keys:
        found |= _match_ids(channel.client.lrange(key, 0, -1))
    return found


def _held(channel: Any, *, now: datetime) -> set[int]:
    oldest = now.timestamp() - HELD_LIMIT.total_seconds()
    recent = channel.client.zrangebyscore(channel.unacked_index_key, oldest, "+inf")
    if not recent:
        return set()
    entries = channel.client.hmget(channel.unacked_key, recent)
    payloads = []
    for entry in entries:
        if entry is None:
            continue
        try:
            payloads.append(json.dumps(json.loads(entry)[0]))
        except (ValueError, TypeError, IndexError, KeyError):
            continue
    return _match_ids(payloads)


def _match_ids(raw_messages: Iterable[bytes | str]) -> set[int]:
    """The match ids named by the match tasks among Celery messages (protocol 2, JSON body)."""
    found = set()
    for raw in raw_messages:
        try:
            message = json.loads(raw)
            if message.get("headers", {}).get("task") not in MATCH_TASKS:
                continue
            body = message["body"]
            if message.get("properties", {}).get("body_encoding") == "base64":
                body = base64.b64decode(body)
            args = json.loads(body)[0]
            found.add(int(args[0]))
        except (ValueError, TypeError, IndexError, KeyError, AttributeError):
            continue
    return found
