"""Which queue and priority each task goes to, so that work is taken in a true order.

The broker is Redis (embedded or REDIS_URL). Kombu's Redis transport keeps one list per queue and
priority step (0, 3, 6, 9) and a worker takes its next message with one BRPOP over the lists of
every queue it consumes, ordered by priority step first and queue second. BRPOP pops from the
first non-empty list, so a waiting message of a lower step is always taken before any of a higher
step, whatever the queue. Queue order alone (the worker's -Q list) orders nothing: Kombu rotates
the queues between polls so that none starves.

So the order of play is set here, by priority (0 is taken first):
  qualification, maintenance  0  a new version waits for nothing; scheduling and reaping are tiny
  tournaments                 3  an event finishes in predictable time
  challenges                  6  a user's request comes before the ladder's endless top-up
  matches (the ladder)        9  always has work waiting; takes what is left
A challenge match waits behind qualification and tournament matches and ahead of ladder matches on
any worker that consumes both queues. Challenges are bounded per user and per bot (see
arena_api.services), so they cannot starve the ladder for long.

`route_task` is the Celery router (settings.CELERY_TASK_ROUTES): it keeps a queue given to
apply_async (a challenge match queued again stays on `challenges`) and gives each message the
priority of its queue unless the caller gave one.
"""

from __future__ import annotations

from typing import Any

QUEUE_PRIORITIES: dict[str, int] = {
    "qualification": 0,
    "maintenance": 0,
    "tournaments": 3,
    "challenges": 6,
    "matches": 9,
}
TASK_QUEUES: dict[str, str] = {
    "septet.match_run": "matches",
    "septet.bot_version_qualify": "qualification",
    "septet.matches_schedule": "maintenance",
    "septet.matches_reap": "maintenance",
    "septet.tournament_match_run": "tournaments",
    "septet.tournaments_tick": "maintenance",
}
DEFAULT_QUEUE = "matches"


def route_task(
    name: str, args: Any, kwargs: Any, options: dict[str, Any], task: Any = None, **_: Any
) -> dict[str, Any]:
    """The queue (the one given, else the task's own) and that queue's priority."""
    given = options.get("queue")
    queue = getattr(given, "name", given) or TASK_QUEUES.get(name, DEFAULT_QUEUE)
    route: dict[str, Any] = {"queue": queue}
    if options.get("priority") is None:
        route["priority"] = QUEUE_PRIORITIES.get(queue, QUEUE_PRIORITIES[DEFAULT_QUEUE])
    return route
