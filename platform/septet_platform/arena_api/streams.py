"""Bounds on the Arena's long-lived streams, so followers cannot take the server from everyone.

The Arena runs its plain methods on a thread pool (threaded.py): a `FollowMatch` stream holds one
of its threads for as long as it stays open, and a slow `GetReplay` reader for as long as it
reads. Sixteen anonymous followers once took all sixteen threads, and every other call, from every
user, then failed with DEADLINE_EXCEEDED. So streams get a share of the threads and no more:

- at most `total` streams at once, always fewer than the server's threads (`create_server`
  refuses otherwise), so unary calls keep threads of their own;
- at most `per_user` of them for any one user (all their tokens together); anonymous callers
  cannot stream at all (the match reads need a token), so they cannot be counted past the bound;
- past either bound a stream is refused at once with RESOURCE_EXHAUSTED saying which bound,
  instead of queueing behind the others;
- a follower whose match has not changed for the idle timeout is ended (see the servicer), so a
  forgotten stream gives its slot back.

A self-hosted bot's Connect holds no thread (a coroutine on the event loop): it is counted by a
limiter of its own, SEPTET_ARENA_CONNECTIONS in all, one key per bot.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager


class StreamsExhausted(Exception):
    """No stream slot for this caller now; the message says which bound was reached."""


class StreamLimiter:
    """Counts open streams, in total and per user, under a lock (one Arena process)."""

    def __init__(self, *, total: int, per_user: int) -> None:
        if total < 1 or per_user < 1:
            raise ValueError("stream bounds must be at least 1")
        self.total = total
        self.per_user = per_user
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()

    @contextmanager
    def slot(self, user_key: str) -> Iterator[None]:
        """Holds one stream slot of `user_key` while the block runs; StreamsExhausted at once
        when the user or the server is at its bound."""
        with self._lock:
            if self._open[user_key] >= self.per_user:
                raise StreamsExhausted(
                    f"you have {self.per_user} streams open, the most one user may: close one first"
                )
            if sum(self._open.values()) >= self.total:
                raise StreamsExhausted(
                    f"the server is following {self.total} streams, the most it serves at once: "
                    "try again shortly (other calls still answer)"
                )
            self._open[user_key] += 1
        try:
            yield
        finally:
            with self._lock:
                self._open[user_key] -= 1
                if self._open[user_key] <= 0:
                    del self._open[user_key]

    def open_streams(self) -> int:
        with self._lock:
            return sum(self._open.values())
