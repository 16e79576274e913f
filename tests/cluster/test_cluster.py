"""Three worker hosts and a centre, nothing shared but a bridge: rated matches flow across them,
survive a cut link, a host killed whole, a partition from Redis, Redis and PostgreSQL restarted,
and afterwards the database and the stored replays say that every match ended exactly once, with
one rating change per seat, every replay whole, ratings recomputing, and no process left behind.

The hosts are network namespaces on a bridge of the test's own (tests/cluster/hosts.py); each
worker host has a private /tmp and cannot see the centre's folder. The recovery table is printed
(run with -s to see it; `python benchmarks/cluster.py --faults-only` prints it too).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from faults import ClusterFaults, Recovery, check, table
from hosts import NSENTER, ROOT
from septet_cluster import WORKER_DATA, SeptetCluster

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("cluster"), pytest.mark.timeout(1800)]

HOLD_SECONDS = 15.0
"""How long a cut link or a partition lasts: under the 30 s lease, so the host's match may be
recorded by the host itself after the link returns, or (when it ran out) played again by another."""


QUICK_HOUSE_BOTS = ("random", "greedy", "half-greedy", "node-random")
"""The house bots here: the example bots but montecarlo, which thinks for its whole budget at every
decision (benchmarks/cluster.py keeps it); the faults need matches flowing, not strong play."""


def test_three_worker_hosts_recover_from_every_fault_and_nothing_is_lost_or_doubled(tmp_path: Path) -> None:
    for name in QUICK_HOUSE_BOTS:
        (tmp_path / name).symlink_to(ROOT / "bots" / "examples" / name, target_is_directory=True)
    cluster = SeptetCluster(3, say=print, examples=tmp_path)
    cluster.open()
    recoveries: list[Recovery] = []
    left: list[str] = []
    try:
        cluster.start()
        faults = ClusterFaults(cluster, hold=HOLD_SECONDS)
        assert faults.flowing(600), (
            f"no match finished within 10 minutes:\n{cluster.log_tail('centre', 'septet')}"
        )
        faults.wait_until(
            lambda: all(faults.finished_since(_epoch(), host) for host in cluster.worker_names), 300
        )
        played = {host: faults.finished_since(_epoch(), host) for host in cluster.worker_names}
        assert all(played.values()), f"every worker host plays matches: {played}"
        _check_worker_cannot_see_the_centre(cluster)
        for inject in faults.all_faults():
            recovery = inject()
            print(f"{recovery.fault}: matches flowing again {recovery.seconds:.1f} s after its end")
            recoveries.append(recovery)
        assert faults.drain(), "every match in flight ended once the ladders stopped"
        faults.close()
        for host in [*cluster.worker_names, "centre"]:
            left += cluster.stop(host, "septet")
        findings = check(cluster)
    finally:
        left += cluster.close()
    report, ok = table(recoveries, findings, left)
    print(report)
    assert findings.matches > 0 and findings.replays_verified > 0, report
    assert ok, report


def _epoch() -> object:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(0, UTC)


def _check_worker_cannot_see_the_centre(cluster: SeptetCluster) -> None:
    """From inside a worker host's namespaces, the centre's data folder and the database's files
    are not there, and the centre's /healthz is reachable only over the bridge."""
    worker = cluster.hosts[cluster.worker_names[0]].processes["septet"]
    for centre_file in (cluster.centre_data, cluster.pg_data, cluster.redis_folder):
        assert centre_file.is_dir(), f"the centre has {centre_file}"
        looked = subprocess.run(
            [NSENTER, f"--target={worker.pid}", "--mount", "--", "test", "-e", str(centre_file)], timeout=30
        )
        assert looked.returncode == 1, f"the worker host sees the centre's {centre_file}"
    looked = subprocess.run(
        [NSENTER, f"--target={worker.pid}", "--mount", "--", "test", "-d", WORKER_DATA], timeout=30
    )
    assert looked.returncode == 0, "the worker host has its own data folder"
    assert not Path(WORKER_DATA).exists(), "the worker host's data folder is its own, not this machine's"
