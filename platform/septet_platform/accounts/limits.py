"""Rate limits over a rolling window, counted in the database.

A limit per process (Django's default local-memory cache) lets a caller multiply it by the number
of site or Arena processes, and forgets on restart; the database is shared by all of them. Each
counted action is a row (scope, key, time); a limit counts the rows of its key inside the window.
Rows older than a day are deleted now and then by the writes themselves.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from septet_platform.accounts.models import CountedAction

KEPT_FOR = timedelta(days=1)
KEY_CHARS = 200
PRUNE_ONE_IN = 200  # writes between two deletions of expired rows, on average


def _clip(key: str) -> str:
    return key[:KEY_CHARS]


@dataclass(frozen=True)
class Limit:
    """At most `count` actions of `scope` per key in any rolling `window`."""

    scope: str
    count: int
    window: timedelta

    def used(self, key: str, *, now: datetime | None = None) -> int:
        """How many actions of this key fall inside the window ending `now`."""
        since = (now or timezone.now()) - self.window
        return CountedAction.objects.filter(scope=self.scope, key=_clip(key), at__gt=since).count()

    def exhausted(self, key: str, *, now: datetime | None = None) -> bool:
        """True when the key has used up its actions in the current window."""
        return self.used(key, now=now) >= self.count

    def wait_minutes(self, key: str, *, now: datetime | None = None) -> int:
        """Whole minutes until the oldest counted action leaves the window (at least 1)."""
        now = now or timezone.now()
        oldest = (
            CountedAction.objects.filter(scope=self.scope, key=_clip(key), at__gt=now - self.window)
            .order_by("at")
            .values_list("at", flat=True)
            .first()
        ) or now
        return max(1, math.ceil((oldest + self.window - now).total_seconds() / 60))

    def record(self, key: str, *, now: datetime | None = None) -> None:
        """Counts one action of the key."""
        now = now or timezone.now()
        CountedAction.objects.create(scope=self.scope, key=_clip(key), at=now)
        if random.randrange(PRUNE_ONE_IN) == 0:
            CountedAction.objects.filter(at__lt=now - KEPT_FOR).delete()

    def forget(self, key: str) -> None:
        """Drops the key's counted actions (a successful sign-in clears its failures)."""
        CountedAction.objects.filter(scope=self.scope, key=_clip(key)).delete()
