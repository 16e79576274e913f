"""A match's live streams in Redis: one per audience, written by the worker that plays the match.

Each audience (the public, and each seat whose player sits outside the worker) has a Redis stream
of its own, `septet:live:<match>:<attempt>:<audience>` (`septet:` is settings.SEPTET_LIVE_PREFIX),
holding what that audience may be sent
(docs/live.md), already filtered by `referee.engine.live.LiveView` on the worker: the omniscient
events never reach Redis, so nothing that reads a stream can show a card its audience may not see.
An entry is one batch of messages (the JSON array in its field `m`) that became known at once; the
first entry is the match's header, the last its `end`.

The attempt is part of the key: a voided attempt's stream ends with `end` (status `voided`) and the
match's next attempt starts a stream of its own, so a viewer never sees two deals mixed.

Publishing never slows or stops a match: the referee's thread only hands each step to the
publisher's own thread (`LivePublisher`), which writes batches in order, pipelined, and retries
while Redis is away (a restart of the embedded Redis, say), keeping what it could not write yet; a
match over while Redis is still away leaves its stream incomplete, never wrong.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import redis

from referee.engine.games.base import Event, Game
from referee.engine.live import LiveView
from referee.engine.match import Asking
from septet_platform.live.connection import decoded, key_prefix, live_redis

log = logging.getLogger(__name__)

PUBLIC = "public"
MESSAGE_FIELD = "m"
PLAYING_TTL_SECONDS = 6 * 3600
"""A stream outlives its match's longest possible play (a human table's time controls)."""
OVER_TTL_SECONDS = 3600
"""How long a finished match's stream is kept for late viewers (its page shows the replay after)."""
MAX_ENTRIES = 50_000
"""A bound on a stream's entries (a match has a few hundred batches; a runaway one stays small)."""
RETRY_SECONDS = 0.5
END_FLUSH_SECONDS = 5.0
"""How long the end of a match waits for its stream to be written before leaving it incomplete."""


def audience_name(audience: int | None) -> str:
    """`public`, or `seat<N>` for seat N's own stream."""
    return PUBLIC if audience is None else f"seat{audience}"


def stream_key(match_id: int, attempt: int, audience: int | None) -> str:
    return f"{key_prefix()}live:{match_id}:{attempt}:{audience_name(audience)}"


def live_end(*, status: str, reason: str = "", replay: bool = False) -> dict[str, Any]:
    """The `end` message: the match is `finished`, `aborted` or `voided`, why (an abort's or a
    void's reason), and whether its full replay is published yet."""
    return {"type": "end", "status": status, "reason": reason, "replay": replay}


def stream_end(
    match_id: int,
    attempt: int,
    audiences: Iterable[int | None],
    message: Mapping[str, Any],
    client: Callable[[], redis.Redis] = live_redis,
) -> None:
    """Ends an attempt's streams from outside its worker (the reaper, when the worker died):
    best effort, since a viewer also learns the match's status from the site."""
    try:
        pipe = client().pipeline(transaction=False)
        for audience in audiences:
            key = stream_key(match_id, attempt, audience)
            pipe.xadd(key, {MESSAGE_FIELD: encode_batch([message])}, maxlen=MAX_ENTRIES, approximate=True)
            pipe.expire(key, OVER_TTL_SECONDS)
        pipe.execute()
    except redis.RedisError as error:
        log.warning("could not end a live stream: %s", error, extra={"match_id": match_id})


def read_batches(
    key: str, after: str, *, block_ms: int = 0, client: Callable[[], redis.Redis] = live_redis
) -> list[tuple[str, str]]:
    """The entries of stream `key` after entry `after` as (id, batch JSON), waiting up to
    `block_ms` for one when there is none yet (a thread's reader: the Arena's FollowMatch)."""
    found = client().xread({key: after}, count=200, block=block_ms or None)
    entries = []
    for _, items in found or []:
        for entry_id, fields in items:
            value = fields.get(MESSAGE_FIELD.encode(), fields.get(MESSAGE_FIELD, b"[]"))
            entries.append((decoded(entry_id), decoded(value)))
    return entries


def batch_ends(batch: str) -> bool:
    """Whether a batch (its JSON text) holds the match's `end` message: a cheap look for the word
    first, so the many batches without it are never parsed."""
    if '"end"' not in batch:
        return False
    try:
        messages = json.loads(batch)
    except ValueError:
        return False
    return isinstance(messages, list) and any(
        isinstance(message, dict) and message.get("type") == "end" for message in messages
    )


def encode_batch(messages: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(list(messages), separators=(",", ":"))


@dataclass(frozen=True)
class _Step:
    events: Sequence[Event]
    asking: Asking | None


@dataclass(frozen=True)
class _Message:
    audience: int | None
    message: Mapping[str, Any]


@dataclass(frozen=True)
class _End:
    message: Mapping[str, Any]
    done: threading.Event


class LivePublisher:
    """Writes one attempt of a match to its live streams (a referee `MatchObserver`).

    `begin()` before the match (the headers), `step` from the referee's loop, `seat_message` for
    what only one seat is sent (its prompts), `end()` after the match: each only queues work for the
    publisher's thread, which filters the events per audience (`LiveView`) and writes them in order.
    """

    def __init__(
        self,
        *,
        match_id: int,
        attempt: int,
        game: Game,
        num_players: int,
        header: Mapping[str, Any],
        seats: Iterable[int] = (),
        client: Callable[[], redis.Redis] = live_redis,
    ) -> None:
        self.match_id = match_id
        self.attempt = attempt
        self.views: dict[int | None, LiveView] = {None: LiveView(game, num_players, None)}
        for seat in seats:
            self.views[seat] = LiveView(game, num_players, seat)
        self.header = dict(header)
        self._client = client
        self._queue: queue.SimpleQueue[_Step | _Message | _End] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=f"live-{match_id}", daemon=True)
        self._failing_since: float | None = None
        self.written = 0
        """Batches written so far (for tests and benchmarks)."""

    def key(self, audience: int | None) -> str:
        return stream_key(self.match_id, self.attempt, audience)

    def begin(self) -> None:
        """Starts the publisher's thread with every audience's header as its first entry."""
        for audience, view in self.views.items():
            self._queue.put(_Message(audience, view.header(self.header)))
        self._thread.start()

    def step(self, events: Sequence[Event], asking: Asking | None) -> None:
        self._queue.put(_Step(events, asking))

    def seat_message(self, seat: int, message: Mapping[str, Any]) -> None:
        """A message for one seat's own stream only (a prompt), after everything queued before."""
        self._queue.put(_Message(seat, message))

    def end(self, message: Mapping[str, Any]) -> bool:
        """Queues the `end` message for every audience, waits (END_FLUSH_SECONDS at most) for the
        thread to write everything, and stops it; whether all was written."""
        if not self._thread.is_alive():
            return False
        done = threading.Event()
        self._queue.put(_End(message, done))
        written = done.wait(END_FLUSH_SECONDS)
        if not written:
            log.warning(
                "live stream left incomplete: Redis did not take it", extra={"match_id": self.match_id}
            )
        return written

    # The publisher's thread.

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            batches: dict[int | None, list[list[Mapping[str, Any]]]] = {}
            ending = self._take(item, batches)
            while ending is None:  # take whatever else is waiting: one pipeline for all of it
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                ending = self._take(item, batches)
            if not self._write(
                batches, expire=OVER_TTL_SECONDS if ending else PLAYING_TTL_SECONDS, ending=ending
            ):
                return
            if ending is not None:
                ending.done.set()
                return

    def _take(
        self, item: _Step | _Message | _End, batches: dict[int | None, list[list[Mapping[str, Any]]]]
    ) -> _End | None:
        """Adds an item's messages to the pending batches, per audience; the `_End` if it is one."""
        if isinstance(item, _Step):
            for audience, view in self.views.items():
                messages = view.step(item.events, item.asking)
                if messages:
                    batches.setdefault(audience, []).append(messages)
            return None
        if isinstance(item, _Message):
            batches.setdefault(item.audience, []).append([item.message])
            return None
        for audience in self.views:
            batches.setdefault(audience, []).append([item.message])
        return item

    def _write(
        self, batches: dict[int | None, list[list[Mapping[str, Any]]]], *, expire: int, ending: _End | None
    ) -> bool:
        """Writes the batches in order, retrying while Redis is away; False once the match's end
        could not wait any longer (the stream is left incomplete)."""
        while True:
            try:
                pipe = self._client().pipeline(transaction=False)
                for audience, pending in batches.items():
                    key = self.key(audience)
                    for messages in pending:
                        pipe.xadd(
                            key, {MESSAGE_FIELD: encode_batch(messages)}, maxlen=MAX_ENTRIES, approximate=True
                        )
                    pipe.expire(key, expire)
                pipe.execute()
                self.written += sum(len(pending) for pending in batches.values())
                if self._failing_since is not None:
                    log.info("live stream written again", extra={"match_id": self.match_id})
                    self._failing_since = None
                return True
            except redis.RedisError as error:
                now = time.monotonic()
                if self._failing_since is None:
                    self._failing_since = now
                    log.warning(
                        "live stream cannot be written now: %s", error, extra={"match_id": self.match_id}
                    )
                if ending is not None and now - self._failing_since > END_FLUSH_SECONDS:
                    return False
                time.sleep(RETRY_SECONDS)
