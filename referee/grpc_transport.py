"""gRPC's transport for Septet's processes: the older iomgr endpoints, not the EventEngine ones.

grpcio 1.80 turned on its EventEngine clients and listeners for Python. On the short messages of a
match (a few hundred bytes each way, one at a time) they cost about twice the CPU per message:
an exchange on a `Play` stream cost the referee 268 us and the SDK's bot 480 us with them, 133 us
and 238 us without (benchmarks/grpc_decisions.py, grpcio 1.85.1, same run). gRPC reads the
setting once, when its core starts, so it has to be in the environment before `grpc` is imported:
`referee` and `septet_platform` set it first thing, and every process they start inherits it.

A value already in the environment is kept, so `GRPC_EXPERIMENTS=` (empty) gives gRPC's defaults
back. The experiments are grpcio's own switches: a grpcio that no longer knows them logs
"Unknown experiment" at start, which tests/protocol checks for the pinned version.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLE = "GRPC_EXPERIMENTS"
LEGACY_ENDPOINTS = "-event_engine_client,-event_engine_listener"
"""Off: EventEngine TCP clients (the referee's channels) and listeners (a bot's server)."""


def prefer_legacy_endpoints(environ: MutableMapping[str, str] = os.environ) -> None:
    """Asks gRPC for its iomgr endpoints unless the environment already says what it wants."""
    environ.setdefault(VARIABLE, LEGACY_ENDPOINTS)
