"""One bidirectional gRPC call driven from the calling thread: the referee's end of a `Play` stream.

grpcio's public streaming client hands every request to a thread of its own and every answer to
the channel's polling thread, three thread switches per message: a stream cost the referee as much
CPU per decision as a unary call. The blocking unary call avoids them by polling a completion queue
of its own on the calling thread (grpcio's `SegregatedCall`); `BlockingStream` does the same for a
stream, so one exchange (send a request, read its answer) is one batch and one wake-up. That is
grpcio's internal layer (`grpc._cython.cygrpc`), used exactly as grpcio's own blocking calls use it;
the version is pinned in pyproject.toml and tests/protocol drives this module over real sockets, so
an upgrade that changes it fails there, not in a match.

Deadlines: a call's own gRPC deadline covers the whole stream, so each exchange is timed by one
`Watchdog` thread for the process, which cancels a stream whose answer is late with
DEADLINE_EXCEEDED. It sleeps until the earliest deadline and is woken only when an earlier one is
set, so timing an exchange costs a lock, not a thread switch.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

import grpc
from grpc._cython import cygrpc  # type: ignore[attr-defined]  # grpcio internals, see the module doc

_STATUS, _METADATA, _EXCHANGE, _CLOSE = "status", "metadata", "exchange", "close"
"""Tags of the call's batches: its status (and initial metadata sent), the initial metadata
received, one exchange (a request sent and its answer read), the closing exchange."""
_NO_FLAGS = 0
_CODES = {code.value[0]: code for code in grpc.StatusCode}
"""Core status numbers -> grpc.StatusCode."""


class StreamError(Exception):
    """The stream ended without the answer: its status code and details, as a unary call's error."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}" if details else code.name)
        self.code = code
        self.details = details


class Watchdog:
    """Cancels streams whose answer is late; one daemon thread, started on first use."""

    def __init__(self) -> None:
        self._condition = threading.Condition(threading.Lock())
        self._armed: dict[int, tuple[float, BlockingStream]] = {}
        self._wake_at = math.inf
        self._thread: threading.Thread | None = None

    def arm(self, stream: BlockingStream, deadline: float) -> None:
        """Cancel `stream` at `deadline` (time.monotonic()) unless disarmed before."""
        with self._condition:
            self._armed[id(stream)] = (deadline, stream)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="septet-stream-deadlines", daemon=True)
                self._thread.start()
            if deadline < self._wake_at:
                self._condition.notify()

    def disarm(self, stream: BlockingStream) -> None:
        with self._condition:
            self._armed.pop(id(stream), None)

    def _run(self) -> None:
        with self._condition:
            while True:
                now = time.monotonic()
                for key, (deadline, stream) in list(self._armed.items()):
                    if deadline <= now:
                        del self._armed[key]
                        stream.expired = True
                        stream.cancel(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
                self._wake_at = min((deadline for deadline, _ in self._armed.values()), default=math.inf)
                self._condition.wait(None if self._wake_at == math.inf else self._wake_at - now)


WATCHDOG = Watchdog()


class BlockingStream:
    """A stream-stream call on `channel`: `exchange` sends one message and returns the one answer.

    Messages are bytes (serialize them yourself). Used by one thread at a time (a seat's decisions
    follow one another); `cancel` may come from any thread.
    """

    def __init__(self, channel: grpc.Channel, method: str) -> None:
        core = getattr(channel, "_channel", None)
        if not isinstance(core, cygrpc.Channel):
            raise TypeError(f"a BlockingStream needs a channel from grpc.insecure_channel, not {channel!r}")
        self._due = {_STATUS, _METADATA}
        """Batches started and not completed yet: the call's queue is freed when none is left, and
        must not be polled after that."""
        self._status: tuple[grpc.StatusCode, str] | None = None
        self.expired = False
        """Cancelled by the watchdog: an answer that came at its deadline leaves a cancelled stream."""
        self._call = core.segregated_call(
            cygrpc.PropagationConstants.GRPC_PROPAGATE_DEFAULTS,
            method.encode(),
            None,
            None,
            None,
            None,
            (
                (
                    (
                        cygrpc.SendInitialMetadataOperation(None, _NO_FLAGS),
                        cygrpc.ReceiveStatusOnClientOperation(_NO_FLAGS),
                    ),
                    _STATUS,
                ),
                ((cygrpc.ReceiveInitialMetadataOperation(_NO_FLAGS),), _METADATA),
            ),
            None,
            None,
        )
        self._lock = threading.Lock()
        """Held while a thread polls the call, so `close_now` never polls it at the same time."""

    @property
    def finished(self) -> bool:
        """Whether the call is over (its status is known or it was never started)."""
        return not self._due

    def exchange(self, request: bytes, timeout: float) -> bytes:
        """Sends `request` and returns the next answer; StreamError when the call ends first
        (DEADLINE_EXCEEDED when no answer came within `timeout` seconds: the stream is cancelled)."""
        answer = self._batch(
            _EXCHANGE,
            (cygrpc.SendMessageOperation(request, _NO_FLAGS), cygrpc.ReceiveMessageOperation(_NO_FLAGS)),
            timeout,
        )
        if answer is None:
            assert self._status is not None
            raise StreamError(*self._status)
        return answer

    def close(self, request: bytes, timeout: float) -> bytes | None:
        """Sends the last request, closes this side, and waits for the call to end: the last answer
        (None if the bot sent none); StreamError unless it ended with OK within `timeout` seconds."""
        answer = self._batch(
            _CLOSE,
            (
                cygrpc.SendMessageOperation(request, _NO_FLAGS),
                cygrpc.SendCloseFromClientOperation(_NO_FLAGS),
                cygrpc.ReceiveMessageOperation(_NO_FLAGS),
            ),
            timeout,
            until_end=True,
        )
        if self._status is None or self._status[0] is not grpc.StatusCode.OK:
            raise StreamError(*(self._status or (grpc.StatusCode.UNKNOWN, "no status")))
        return answer

    def cancel(self, code: grpc.StatusCode = grpc.StatusCode.CANCELLED, details: str = "Cancelled") -> None:
        """Ends the call now, from any thread; the polling thread (if any) sees `code`."""
        if self._due:
            self._call.cancel(code.value[0], details)

    def close_now(self) -> None:
        """Cancels the call and, unless another thread is polling it, reads it to its end."""
        self.cancel()
        if self._lock.acquire(blocking=False):
            try:
                while self._due:
                    self._next_event()
            finally:
                self._lock.release()

    def _batch(
        self, tag: str, operations: tuple[Any, ...], timeout: float, *, until_end: bool = False
    ) -> bytes | None:
        """Starts one batch and polls until it completes (`until_end`: until the call is over too);
        its received message, or None once the call is over without one."""
        with self._lock:
            if not self._due or not self._call.operate(operations, tag):
                raise StreamError(*(self._status or (grpc.StatusCode.CANCELLED, "the stream is over")))
            self._due.add(tag)
            WATCHDOG.arm(self, time.monotonic() + timeout)
            try:
                answer: bytes | None = None
                while tag in self._due or (until_end and self._due):
                    event = self._next_event()
                    if event.tag == tag and event.success:
                        answer = event.batch_operations[-1].message()
            finally:
                WATCHDOG.disarm(self)
            if answer is None:
                while self._due:  # no answer: the call is over, its status says why
                    self._next_event()
            return answer

    def _next_event(self) -> Any:
        try:
            event = self._call.next_event()
        except BaseException:
            # A signal handler raised while waiting (Ctrl-C, SIGTERM): grpcio has then freed the
            # call and its queue, which must never be polled again.
            self._due.clear()
            self._status = self._status or (grpc.StatusCode.CANCELLED, "interrupted")
            raise
        self._due.discard(event.tag)
        if event.tag == _STATUS:
            status = next(
                operation
                for operation in event.batch_operations
                if isinstance(operation, cygrpc.ReceiveStatusOnClientOperation)
            )
            code = _CODES.get(status.code(), grpc.StatusCode.UNKNOWN)
            self._status = (code, status.details() or "")
        return event
