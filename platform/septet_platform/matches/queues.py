"""Which queue each task goes to, and in what shares a worker takes waiting work from its queues.

The broker is Redis (embedded or REDIS_URL). Kombu's Redis transport keeps one list per queue and
a worker takes its next message with one BRPOP over the lists of every queue it consumes; BRPOP
pops from the first non-empty list, so the order of that list of queues decides what is taken.
Kombu asks the channel's "queue order strategy" for that order before each BRPOP and tells it
which queue the message came from after; `WeightedQueueCycle` below is ours
(settings.CELERY_BROKER_TRANSPORT_OPTIONS["queue_order_strategy"]).

It is start-time fair queuing over the queues: each queue has a weight, and of the queues with
work waiting, one of weight w is given w shares of the takes. So with every queue full, of 33
takes maintenance gets 16, qualification 8, tournaments 4, challenges 3 and the ladder 2: each
queue with waiting work is served, none waits for another to empty (strict priority, the old
order, let ten challenges stop every ladder for two minutes). A queue that was empty earns no
credit while it was, so it cannot take a burst when work arrives: it starts level with the rest.

  maintenance    16  scheduling and reaping: tiny, and everything else waits for them
  qualification   8  a new version should not wait behind anything
  tournaments     4  an event finishes in predictable time
  challenges      3  a user's request comes before the ladder's endless top-up ...
  matches         2  ... but the ladder (always with work waiting) keeps flowing
  builds          -  never on a match worker: a pool of its own (septet up's `builder`)

Every message goes at one Redis priority (0): message priority would be strict again, since
BRPOP looks at every queue's priority-0 list before any queue's next one. Each worker orders its
own takes; across workers the shares hold on average.

`route_task` is the Celery router (settings.CELERY_TASK_ROUTES): it keeps a queue given to
apply_async (a challenge match queued again stays on `challenges`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

QUEUE_WEIGHTS: dict[str, int] = {
    "maintenance": 16,
    "qualification": 8,
    "tournaments": 4,
    "challenges": 3,
    "matches": 2,
}
UNKNOWN_QUEUE_WEIGHT = 1
TASK_QUEUES: dict[str, str] = {
    "septet.match_run": "matches",
    "septet.bot_version_qualify": "qualification",
    "septet.bot_version_build": "builds",
    "septet.matches_schedule": "maintenance",
    "septet.matches_reap": "maintenance",
    "septet.tournament_match_run": "tournaments",
    "septet.tournaments_tick": "maintenance",
}
DEFAULT_QUEUE = "matches"
MESSAGE_PRIORITY = 0


def route_task(
    name: str, args: Any, kwargs: Any, options: dict[str, Any], task: Any = None, **_: Any
) -> dict[str, Any]:
    """The queue (the one given, else the task's own), at the one message priority."""
    given = options.get("queue")
    queue = getattr(given, "name", given) or TASK_QUEUES.get(name, DEFAULT_QUEUE)
    return {"queue": queue, "priority": MESSAGE_PRIORITY}


class WeightedQueueCycle:
    """Kombu's queue order strategy interface (`update`, `consume`, `rotate`; see
    kombu.utils.scheduling.round_robin_cycle) with weighted fair shares.

    Each queue carries the virtual time at which its last take finished; its next take would
    start at max(that, the virtual clock) and last 1/weight(q). The queues are offered to BRPOP
    in the order their next take would start (the queue whose share is most behind first; ties
    to the one that would finish first), and the clock moves to the start of each take: a queue
    that sat empty falls behind the clock and restarts from it, with no saved-up credit."""

    def __init__(self, items: Iterable[str] | None = None, weights: dict[str, int] | None = None) -> None:
        self.items: list[str] = list(items or [])
        self.weights = dict(weights if weights is not None else QUEUE_WEIGHTS)
        self.finished_at: dict[str, float] = {}
        self.clock = 0.0

    def update(self, items: Iterable[str]) -> None:
        """The queues consumed now (Kombu calls this when a consumer starts or stops)."""
        self.items[:] = list(items)

    def consume(self, count: int) -> list[str]:
        """The first `count` queues in the order BRPOP should look at them."""
        return sorted(self.items, key=self._order)[:count]

    def rotate(self, last_used: str) -> str:
        """Charge `last_used` one take (Kombu calls this with the queue a message came from)."""
        start = max(self.finished_at.get(last_used, 0.0), self.clock)
        self.finished_at[last_used] = start + 1.0 / self._weight(last_used)
        self.clock = start
        return last_used

    def _weight(self, queue: str) -> int:
        return self.weights.get(queue, UNKNOWN_QUEUE_WEIGHT)

    def _order(self, queue: str) -> tuple[float, float, str]:
        start = max(self.finished_at.get(queue, 0.0), self.clock)
        return start, start + 1.0 / self._weight(queue), queue
