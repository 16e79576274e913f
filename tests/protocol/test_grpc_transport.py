"""referee.grpc_transport: gRPC's iomgr endpoints are asked for before grpc loads, in every process
of ours, a user's own setting wins, and the pinned grpcio still knows the switches.

The CPU it saves is a benchmark's figure (benchmarks/grpc_decisions.py), never a test's.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from referee import grpc_transport

# A bot's server and a referee's channel, one decision-sized call between them, in a fresh process.
ROUND_TRIP = """
import os, sys
{first}
import grpc
from concurrent.futures import ThreadPoolExecutor
print(os.environ.get("GRPC_EXPERIMENTS"))
echo = grpc.method_handlers_generic_handler(
    "t.T", {{"Echo": grpc.unary_unary_rpc_method_handler(lambda request, context: request)}}
)
server = grpc.server(ThreadPoolExecutor(1))
server.add_generic_rpc_handlers((echo,))
port = server.add_insecure_port("127.0.0.1:0")
server.start()
with grpc.insecure_channel(f"127.0.0.1:{{port}}") as channel:
    assert channel.unary_unary("/t.T/Echo")(b"seat 0", timeout=10) == b"seat 0"
server.stop(None)
"""


def run(first: str, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != grpc_transport.VARIABLE}
    env.update(environ)
    script = ROUND_TRIP.format(first=first)
    return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "first", ["import referee.sdk", "import referee.tools.grpc_player", "import septet_platform"]
)
def test_our_imports_ask_for_the_legacy_endpoints_before_grpc_loads(first: str) -> None:
    done = run(first, DJANGO_SETTINGS_MODULE="septet_platform.settings.dev")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == grpc_transport.LEGACY_ENDPOINTS
    assert "Unknown experiment" not in done.stderr, "the pinned grpcio no longer knows the switches"


def test_a_grpcio_that_does_not_know_a_switch_says_so_which_is_what_the_check_above_reads() -> None:
    """Tried: a switch grpcio has never had; its core logs the line the test above looks for."""
    done = run("import referee.sdk", GRPC_EXPERIMENTS="-no_such_septet_experiment")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "-no_such_septet_experiment", "a user's own value is kept"
    assert "Unknown experiment" in done.stderr


def test_a_value_already_set_is_kept_and_empty_gives_grpcs_defaults_back() -> None:
    environ = {grpc_transport.VARIABLE: ""}
    grpc_transport.prefer_legacy_endpoints(environ)
    assert environ == {grpc_transport.VARIABLE: ""}
    unset: dict[str, str] = {}
    grpc_transport.prefer_legacy_endpoints(unset)
    assert unset == {grpc_transport.VARIABLE: grpc_transport.LEGACY_ENDPOINTS}
