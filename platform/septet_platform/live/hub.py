"""Following live streams from the site's event loop: one Redis read per stream, whatever the
number of viewers, and no thread per viewer.

A process keeps one reader per stream that somebody follows: a task that waits on Redis (XREAD
BLOCK) for the stream's next entries and hands each to every follower's queue. A follower first
gets the entries it has not seen (XRANGE from its last entry to where the reader stood when it
joined), then what the reader hands it, so a late joiner or a reconnecting browser gets every
batch once and in order: nothing between the two is lost, since the reader's position is read
and the follower joins in the same step of the event loop. A reader stops once nobody follows.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import redis
import redis.asyncio

from septet_platform.live.connection import decoded, live_redis_async
from septet_platform.live.streams import MESSAGE_FIELD

log = logging.getLogger(__name__)

BLOCK_MILLISECONDS = 2_000
"""How long one read waits on Redis before it looks again whether anybody still follows (redis-py
lets a blocking read finish even when its task is cancelled, so this also bounds a shutdown)."""
READ_COUNT = 200
RETRY_SECONDS = 0.5
START = "0-0"

Entry = tuple[str, str]
"""A stream entry: its id and its batch (a JSON array of messages)."""


def entry_order(entry_id: str) -> tuple[int, int]:
    """A stream entry id (`<ms>-<seq>`) as a sortable pair; a malformed one sorts first."""
    milliseconds, _, sequence = entry_id.partition("-")
    try:
        return int(milliseconds), int(sequence or 0)
    except ValueError:
        return 0, 0


class _Reader:
    """Reads one stream for every follower of it in this process. It first finds where the stream
    ends now (one lookup, however many viewers join at once: a burst of joiners once took every
    connection of the client's pool), then hands each new entry to every follower."""

    def __init__(self, hub: StreamHub, key: str) -> None:
        self.hub = hub
        self.key = key
        self.cursor = START
        """The last entry handed to the followers (or where the reader started)."""
        self.followers: set[_Inbox] = set()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        client = self.hub.client()
        try:
            self.cursor = await self.hub._latest(self.key)
            self.ready.set_result(None)
            while True:  # one read at least: the followers waiting for `ready` join meanwhile
                try:
                    found = await client.xread(
                        {self.key: self.cursor}, count=READ_COUNT, block=BLOCK_MILLISECONDS
                    )
                except (redis.RedisError, OSError) as error:
                    log.warning("cannot read a live stream now: %s", error)
                    await asyncio.sleep(RETRY_SECONDS)
                    found = None
                for _, entries in found or []:
                    for entry_id, fields in entries:
                        entry = (decoded(entry_id), _batch(fields))
                        self.cursor = entry[0]
                        for follower in self.followers:
                            follower.put(entry)
                if not self.followers:
                    return
        finally:
            if self.hub.readers.get(self.key) is self:
                del self.hub.readers[self.key]
            if not self.ready.done():
                self.ready.cancel()


def _batch(fields: Any) -> str:
    value = fields.get(MESSAGE_FIELD.encode()) if isinstance(fields, dict) else None
    if value is None and isinstance(fields, dict):
        value = fields.get(MESSAGE_FIELD)
    return decoded(value) if value is not None else "[]"


class _Inbox:
    """A follower's entries not taken yet, and the future it waits on when there are none: the
    reader wakes it directly (no queue, no task per wait: a spectator costs a few microseconds a
    batch, benchmarks/live_load.py)."""

    __slots__ = ("entries", "waiter")

    def __init__(self) -> None:
        self.entries: deque[Entry] = deque()
        self.waiter: asyncio.Future[None] | None = None

    def put(self, entry: Entry) -> None:
        self.entries.append(entry)
        _wake(self.waiter)


def _wake(waiter: asyncio.Future[None] | None) -> None:
    if waiter is not None and not waiter.done():
        waiter.set_result(None)


class Subscription:
    """One follower of one stream: `await next(timeout)` gives its entries in order (the backlog
    first), or None when nothing came within `timeout`. Used as an async context manager, so the
    follower always leaves its reader (an abandoned async generator would keep it reading)."""

    def __init__(self, hub: StreamHub, key: str, after: str) -> None:
        self.hub = hub
        self.key = key
        self.last = entry_order(after)
        self.backlog: deque[Entry] = deque()
        self.inbox = _Inbox()
        self.reader: _Reader | None = None

    async def __aenter__(self) -> Subscription:
        hub, key = self.hub, self.key
        while True:
            reader = hub.readers.get(key)
            if reader is None:
                reader = hub.readers[key] = _Reader(hub, key)
            await asyncio.shield(reader.ready)
            if hub.readers.get(key) is reader:  # not one that stopped meanwhile
                break
        reader.followers.add(self.inbox)  # in the same step as reading its position: nothing slips by
        self.reader = reader
        upto = reader.cursor
        if self.last < entry_order(upto):
            after = f"{self.last[0]}-{self.last[1]}"
            self.backlog = deque(await hub._range(key, after, upto))
        if not self.backlog:
            self.last = max(self.last, entry_order(upto))
        return self

    async def __aexit__(self, *_: object) -> None:
        if self.reader is not None:
            self.reader.followers.discard(self.inbox)

    async def next(self, timeout: float) -> Entry | None:
        """The next entry after the last one given, or None after `timeout` seconds without one."""
        if self.backlog:
            entry = self.backlog.popleft()
            self.last = entry_order(entry[0])
            return entry
        inbox = self.inbox
        deadline: float | None = None
        while True:
            while inbox.entries:
                entry = inbox.entries.popleft()
                order = entry_order(entry[0])
                if order > self.last:  # the backlog's last entries may come again from the reader
                    self.last = order
                    return entry
            loop = asyncio.get_running_loop()
            if deadline is None:
                deadline = loop.time() + timeout
            left = deadline - loop.time()
            if left <= 0:
                return None
            waiter = inbox.waiter = loop.create_future()
            timer = loop.call_later(left, _wake, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                inbox.waiter = None


class StreamHub:
    """The live streams followed in one event loop (`hub()` gives the running loop's)."""

    def __init__(self, client: Callable[[], redis.asyncio.Redis] = live_redis_async) -> None:
        self.client = client
        self.readers: dict[str, _Reader] = {}

    def subscribe(self, key: str, after: str = START) -> Subscription:
        """A follower of stream `key` from after entry `after` (a stream that does not exist yet
        is waited for): `async with hub.subscribe(key) as feed: entry = await feed.next(15)`."""
        return Subscription(self, key, after)

    async def follow(self, key: str, after: str = START, timeout: float = 3600.0) -> AsyncIterator[Entry]:
        """Every entry of `key` after `after`, as they come (tests and tools; a view uses
        `subscribe` for its keepalives). Close it (`aclose`) when done."""
        async with self.subscribe(key, after) as feed:
            while (entry := await feed.next(timeout)) is not None:
                yield entry

    async def close(self) -> None:
        """Stops every reader (a server's shutdown, a test's end): each ends after its read."""
        readers = list(self.readers.values())
        for reader in readers:
            reader.followers.clear()
        tasks = [reader.task for reader in readers]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _latest(self, key: str) -> str:
        while True:
            try:
                found = await self.client().xrevrange(key, count=1)
                return decoded(found[0][0]) if found else START
            except (redis.RedisError, OSError) as error:
                log.warning("cannot read a live stream now: %s", error)
                await asyncio.sleep(RETRY_SECONDS)

    async def _range(self, key: str, after: str, upto: str) -> list[Entry]:
        while True:
            try:
                found = await self.client().xrange(key, min=f"({after}", max=upto)
                return [(decoded(entry_id), _batch(fields)) for entry_id, fields in found]
            except (redis.RedisError, OSError) as error:
                log.warning("cannot read a live stream now: %s", error)
                await asyncio.sleep(RETRY_SECONDS)


_hubs: dict[asyncio.AbstractEventLoop, StreamHub] = {}


def hub() -> StreamHub:
    """The running event loop's hub."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        for stale in [each for each in _hubs if each.is_closed()]:
            del _hubs[stale]
        found = _hubs[loop] = StreamHub()
    return found


async def close_hub() -> None:
    """Stops the running loop's readers, if it has any (the site's shutdown)."""
    found = _hubs.pop(asyncio.get_running_loop(), None)
    if found is not None:
        await found.close()
