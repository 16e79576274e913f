"""Septet's referee, in three rooms:

- `referee.engine`: the rules and the match loop (cards, tricks, games, match, replays, players);
  pure Python that imports nothing of the bot kit, the tools, the wire (gRPC, protobuf), Django
  or Celery.
- `referee.botkit`: what a bot imports: the SDK and the septet.v1 protocol (generated stubs and
  their conversion to the engine's types); nothing of the CLI or the sandbox.
- `referee.tools`: the `septet` command line, check and compare, the Arena client, the sandbox,
  the viewer and the referee's gRPC client for bots in their own processes.

`referee.sdk`, `referee.games` and `referee.protocol` are the stable public names bots use; they
re-export the bot kit's and the engine's modules. No Django or Celery anywhere, so bot authors
can install and run the referee alone.
"""

__version__ = "0.1.0"

# Before anything imports grpc: its core reads the transport setting once (see the module).
from referee import grpc_transport as _grpc_transport

_grpc_transport.prefer_legacy_endpoints()

# Before any engine module loads: the compiled engine, or its pure-Python sources (see the module).
from referee.engine import build as _engine_build  # noqa: E402

_engine_build.select()
