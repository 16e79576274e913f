"""House bots kept warm between matches inside one worker process.

Starting a bot is most of what a match costs (a sandboxed Python bot spends about 0.2 s of CPU
importing and binding before its first decision, a match seats three to seven), so a worker keeps
the processes of *house* bots (the platform's own, trusted examples) for its next matches instead of
stopping them. Submitted bots never get this: each of their processes lives for one match only, so
nothing a hostile bot leaves running survives it.

Three rules keep it fair and clean:
- a warm process serves one seat of a match, like every bot process (a version seated twice takes
  two processes), so no process sees two hands;
- a warm process never plays a seed it has played before, so no bot can remember a deal from one
  rotation of a duplicate set to the next;
- only a process that ended its match in good order (alive, no forfeit) goes back; it is stopped
  after `idle_seconds` without a match, and every process dies with the worker (the sandbox's
  --die-with-parent), so warm processes exist only where the sandbox does.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from referee.tools.botfolder import RunningBot
from referee.tools.grpc_player import GrpcPlayer


@dataclass
class WarmBot:
    """A house bot's process, every seed it has played, and the referee's channel to it."""

    bot: RunningBot
    seeds: set[int] = field(default_factory=set)
    idle_since: float = 0.0
    player: GrpcPlayer | None = None
    """The gRPC client of the process, kept for its whole life: a new channel per match cost a
    connection and its HTTP/2 set-up on both sides, for every seat of every match. It holds no
    state of a match (each call carries its own), so the next match starts clean."""

    def stop(self) -> None:
        """Closes the channel and stops the process."""
        if self.player is not None:
            self.player.close()
        self.bot.stop()


class WarmHouseBots:
    """Idle house-bot processes of this worker process, by bot version id; thread-safe."""

    def __init__(self, *, idle_seconds: float = 60.0, per_version: int = 4) -> None:
        self.idle_seconds = idle_seconds
        self.per_version = per_version
        self._idle: dict[int, list[WarmBot]] = {}
        self._lock = threading.Lock()

    def take(self, version_id: int, seed: int) -> WarmBot | None:
        """An idle process of the version that has not played `seed`, or None."""
        with self._lock:
            stale = self._expired()
            idle = self._idle.get(version_id, [])
            stale += [warm for warm in idle if not warm.bot.alive()]  # died while idle
            idle[:] = [warm for warm in idle if warm.bot.alive()]
            found = next((warm for warm in idle if seed not in warm.seeds), None)
            if found is not None:
                idle.remove(found)
        for warm in stale:
            warm.stop()
        return found

    def give_back(self, version_id: int, warm: WarmBot) -> None:
        """Keeps `warm` for a later match, or stops it when the version has enough idle ones."""
        warm.idle_since = time.monotonic()
        with self._lock:
            idle = self._idle.setdefault(version_id, [])
            keep = warm.bot.alive() and len(idle) < self.per_version
            if keep:
                idle.append(warm)
        if not keep:
            warm.stop()

    def stop_all(self) -> None:
        with self._lock:
            every = [warm for idle in self._idle.values() for warm in idle]
            self._idle.clear()
        for warm in every:
            warm.stop()

    def idle(self, version_id: int) -> list[WarmBot]:
        """The version's idle processes now (a copy), for operations and tests."""
        with self._lock:
            return list(self._idle.get(version_id, []))

    def _expired(self) -> list[WarmBot]:
        """Removes and returns processes idle for longer than idle_seconds (lock held)."""
        limit = time.monotonic() - self.idle_seconds
        expired = []
        for version_id, idle in self._idle.items():
            expired += [warm for warm in idle if warm.idle_since < limit]
            self._idle[version_id] = [warm for warm in idle if warm.idle_since >= limit]
        return expired
