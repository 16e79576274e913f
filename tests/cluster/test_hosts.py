"""The hosts harness itself (no Septet on it): hosts reach each other over the bridge only while
their link is up, a worker host's /tmp is its own, and a process left running on a host, even one
that left the tree it was started in, is found and reported by `close` (the leftovers check seen
failing on purpose), and nothing of the cluster remains afterwards."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hosts import CENTRE_ADDRESS, IP, NSENTER, Cluster, worker_address

pytestmark = pytest.mark.xdist_group("cluster")
PORT = 7001


def _reaches(cluster: Cluster, host: str, address: str) -> bool:
    def connect() -> bool:
        try:
            with socket.create_connection((address, PORT), timeout=2):
                return True
        except OSError:
            return False

    return cluster.in_namespace(host, connect)


def _listening(cluster: Cluster, host: str) -> None:
    server = f"import socket,time; s=socket.create_server(('{CENTRE_ADDRESS}', {PORT})); time.sleep(600)"
    cluster.spawn(host, "listener", [sys.executable, "-c", server])
    deadline = time.monotonic() + 20
    while not _reaches(cluster, "centre", CENTRE_ADDRESS):
        assert time.monotonic() < deadline, "the listener started on the centre"
        time.sleep(0.2)


def test_hosts_reach_each_other_over_the_bridge_only_while_their_link_is_up() -> None:
    with Cluster(2, say=lambda _: None) as cluster:
        _listening(cluster, "centre")
        assert _reaches(cluster, "w1", CENTRE_ADDRESS), "a worker host reaches the centre over the bridge"
        cluster.link("w1", up=False)
        assert not _reaches(cluster, "w1", CENTRE_ADDRESS), "a cut link reaches nothing"
        assert _reaches(cluster, "w2", CENTRE_ADDRESS), "the other host is not affected"
        cluster.link("w1", up=True)
        assert _reaches(cluster, "w1", CENTRE_ADDRESS)
        assert not _reaches(cluster, "w1", "127.0.0.1"), "the machine's loopback is not the host's"
        namespaces = list(cluster.namespaces)
        left = cluster.close()
    assert left == []
    listed = subprocess.run([IP, "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert not any(name in listed for name in namespaces), "every namespace was deleted"
    assert worker_address(1) not in subprocess.run([IP, "-4", "addr"], capture_output=True, text=True).stdout


def test_a_worker_hosts_tmp_is_its_own_and_a_process_left_running_is_reported() -> None:
    cluster = Cluster(1, say=lambda _: None)
    cluster.open()
    try:
        marker = f"septet-cluster-test-{cluster.tag}"
        # The subshell starts the sleep and exits at once: the sleep leaves the host's process
        # tree (it is reparented) and is found only by its network namespace.
        script = f"touch /tmp/{marker}; (setsid sleep 300 &); exec sleep 300"
        cluster.spawn("w1", "escaper", ["/bin/bash", "-c", script], private_files=True, hostname="w1")
        time.sleep(1.0)
        root = cluster.hosts["w1"].processes["escaper"].pid
        seen = subprocess.run(
            [NSENTER, f"--target={root}", "--mount", "--", "test", "-e", f"/tmp/{marker}"], timeout=30
        )
        assert seen.returncode == 0, "the host's own /tmp has its file"
        assert not Path(f"/tmp/{marker}").exists(), "the machine's /tmp does not"
    finally:
        left = cluster.close()
    escaped = [process for process in left if "sleep 300" in process and "found in the namespace" in process]
    assert escaped, f"the escaped sleep was found and reported: {left}"
