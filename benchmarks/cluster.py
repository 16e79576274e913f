"""Many machines on one: a centre, its broker and 1, 2, 3 worker hosts (network namespaces on a
bridge, tests/cluster/hosts.py), nothing shared but the network; rated matches per minute with
each number of worker hosts on one game's ladder (--game), the CPU each host spends per match, the
bytes each link carries per match and the broker's commands per match, then (unless --no-faults)
the faults across hosts and the recovery table.

Setup: PostgreSQL (a cluster of this run's own, password auth) on the centre, Redis (a password,
an append-only file) on the broker, `septet up --workers 0` on the centre (site, Arena, beat,
builder), `septet worker --storage database` on each worker host (concurrency --concurrency), in a
mount namespace of its own with a private /tmp. The worker hosts are started one at a time; after
each start the run waits --warmup seconds, then measures --seconds:

- rated matches a minute (finished in the window, from the database);
- CPU ms per match of each kind of host (cpuacct group per host: a worker host's figure is its
  worker, referee and sandboxed bots; the centre's is PostgreSQL and every process of `septet up`;
  the broker's is Redis), beside central_ceiling.py's figure for the centre's share (PostgreSQL +
  Redis + beat: about 6.5 ms a match, deploy/README.md);
- bytes per match through each link (read on the bridge's ports): the worker hosts' links (all
  they moved), the broker's (Celery's messages and the live streams) and the centre's (the
  database: rows, replays and archives, and the site); the replay bytes per match and the
  archive bytes a new host fetches once (its cache keeps unpacked versions by SHA-256).

This machine has two cores, so matches a minute stop growing once the cores are busy; the CPU per
match per host is the figure that carries over to real machines.

Then the faults (tests/cluster/faults.py): a worker host's link cut, a worker host killed whole,
the workers partitioned from Redis only, Redis restarted, PostgreSQL restarted; the ladders are
stopped, the matches in flight drain, everything is stopped, and the database and its stored
replays are checked on their own (benchmarks/reliability.py's `check`). The recovery table:

    fault, recovery (s), lost, doubled, notes

Exits 1 when a match was lost or doubled, a rating does not recompute, a recovery took longer
than 60 s, or a process was left behind. Needs root (namespaces), iproute2 and PostgreSQL's
server binaries (Debian's postgresql package).

    python benchmarks/cluster.py [--hosts 3] [--game oh7] [--seconds 120] [--warmup 30] [--concurrency 1]
        [--hold 20] [--no-faults] [--faults-only] [--keep]

Default run: about 20 minutes.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
sys.path[:0] = [str(ROOT / "tests" / "cluster"), str(ROOT / "tests")]  # the harness, process_tree

from faults import ClusterFaults, Recovery, check, table  # noqa: E402
from hosts import BROKER_ADDRESS, BROKER_PORT, tree_cpu_seconds  # noqa: E402
from septet_cluster import SeptetCluster  # noqa: E402

CENTRE_SHARE_MS = 6.5
"""central_ceiling.py's centre CPU per rated match (PostgreSQL 4.7 + beat 1.4 + Redis 0.3 ms at its
best step, deploy/README.md), with simulated workers and the replays in files."""


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--hosts", type=int, default=3, help="worker hosts, started one at a time (default 3)"
    )
    parser.add_argument(
        "--game", default="oh7", help="the one ladder measured (default oh7; 'all': every ladder)"
    )
    parser.add_argument("--seconds", type=float, default=120.0, help="measured window per step (default 120)")
    parser.add_argument("--warmup", type=float, default=30.0, help="seconds after a host starts (default 30)")
    parser.add_argument(
        "--concurrency", type=int, default=1, help="matches each host plays at once (default 1)"
    )
    parser.add_argument("--hold", type=float, default=20.0, help="seconds a cut link or partition lasts")
    parser.add_argument("--no-faults", action="store_true", help="measure only, no faults")
    parser.add_argument("--faults-only", action="store_true", help="all hosts at once, then the faults")
    parser.add_argument("--keep", action="store_true", help="keep the cluster's folder (its logs)")
    args = parser.parse_args()

    cluster = SeptetCluster(args.hosts, concurrency=args.concurrency, keep=args.keep)
    recoveries: list[Recovery] = []
    left: list[str] = []
    findings = None
    cluster.open()
    print(f"cluster {cluster.tag}: folder {cluster.folder}", flush=True)
    try:
        began = time.monotonic()
        cluster.start(workers=args.hosts if args.faults_only else 1)
        print(f"centre ready in {time.monotonic() - began:.0f} s", flush=True)
        faults = ClusterFaults(cluster, hold=args.hold)
        if not faults.flowing(600):
            print(f"no match finished within 10 minutes:\n{cluster.log_tail('centre', 'septet')}")
            return 1
        if not args.faults_only:
            if args.game != "all":
                _one_ladder(faults, args.game)
            _throughput(cluster, faults, args)
        if not args.no_faults:
            for inject in faults.all_faults():
                recovery = inject()
                print(
                    f"{recovery.fault}: matches flowing again {recovery.seconds:.1f} s after its end",
                    flush=True,
                )
                recoveries.append(recovery)
        drained = faults.drain()
        faults.close()
        if not drained:
            print("the matches in flight did not end within the drain's time")
        for host in [*cluster.worker_names, "centre"]:
            left += cluster.stop(host, "septet")
        findings = check(cluster)
    finally:
        left += cluster.close()
    if findings is None:
        return 1
    report, ok = table(recoveries, findings, left)
    print()
    print(report)
    return 0 if ok else 1


def _one_ladder(faults: ClusterFaults, game: str) -> None:
    """Only `game`'s sandboxed ladder keeps scheduling, and the other ladders' waiting matches are
    cancelled, so each window measures one game's matches: a mix drawn from six games (an Oh Hell!
    set costs twice an oh7-duel's) moved the per-match figures by 2x from one window to the next."""
    kept = faults.rows("select id from ladders_ladder where game = %s and pool = 'sandboxed'", game)
    if not kept:
        raise SystemExit(f"no sandboxed ladder for the game id {game!r}")
    faults.rows("update ladders_ladder set active = (id = %s) returning id", kept[0][0])
    faults.rows(
        "update matches_match set status = 'cancelled' where status = 'scheduled' and ladder_id <> %s"
        " and kind = 'ladder' returning id",
        kept[0][0],
    )


def _redis_counts(cluster: SeptetCluster) -> dict[str, int]:
    """The broker's own counts: commands by name, and bytes in and out (INFO, from the centre)."""
    import redis

    def read() -> dict[str, int]:
        client = redis.Redis(host=BROKER_ADDRESS, port=BROKER_PORT, password=cluster.broker_password)
        try:
            stats = client.info("stats")
            counts = {"bytes": int(stats["total_net_input_bytes"]) + int(stats["total_net_output_bytes"])}
            for name, calls in client.info("commandstats").items():
                counts[name.removeprefix("cmdstat_")] = int(calls["calls"])
            return counts
        finally:
            client.close()

    return cluster.in_namespace("centre", read)


def _throughput(cluster: SeptetCluster, faults: ClusterFaults, args: argparse.Namespace) -> None:
    archives = faults.rows("select coalesce(sum(size), 0) from blobs_blob where area = 'archives'")[0][0]
    print(
        f"\n{'hosts':>5} {'matches/min':>11} {'worker host CPU ms/match':>24} {'centre':>7} {'(PG)':>6} "
        f"{'broker':>7} "
        f"{'worker link KB/match':>20} {'centre link':>11} {'broker link':>11} {'replay KB':>9}"
    )
    for count in range(1, args.hosts + 1):
        if count > 1:
            cluster.start_worker(cluster.worker_names[count - 1])
        time.sleep(args.warmup)
        workers = cluster.worker_names[:count]
        cpu_before = {name: host.cpu.seconds() for name, host in cluster.hosts.items()}
        postgres = cluster.hosts["centre"].processes["postgres"].pid
        postgres_before = tree_cpu_seconds(postgres)
        bytes_before = {name: cluster.link_bytes(name) for name in cluster.hosts}
        redis_before = _redis_counts(cluster)
        start = datetime.now(UTC)
        time.sleep(args.seconds)
        end = datetime.now(UTC)
        cpu = {name: host.cpu.seconds() - cpu_before[name] for name, host in cluster.hosts.items()}
        cpu["postgres"] = tree_cpu_seconds(postgres) - postgres_before
        moved = {name: cluster.link_bytes(name) - bytes_before[name] for name in cluster.hosts}
        redis_after = _redis_counts(cluster)
        commands = {name: redis_after[name] - redis_before.get(name, 0) for name in redis_after}
        done, replay_bytes = faults.rows(
            "select count(*), coalesce(avg(replay_size), 0) from matches_match"
            " where finished > %s and finished <= %s",
            start,
            end,
        )[0]
        if not done:
            print(f"{count:>5} {'none':>11}")
            continue
        per_match = {name: 1000 * seconds / done for name, seconds in cpu.items()}
        worker_cpu = sum(per_match[name] for name in workers)
        worker_bytes = sum(moved[name] for name in workers) / done / 1024
        print(
            f"{count:>5} {done * 60 / args.seconds:>11.0f} {worker_cpu:>24.1f} {per_match['centre']:>7.1f} "
            f"{per_match['postgres']:>6.1f} "
            f"{per_match['broker']:>7.1f} {worker_bytes:>20.1f} {moved['centre'] / done / 1024:>11.1f} "
            f"{moved['broker'] / done / 1024:>11.1f} {float(replay_bytes) / 1024:>9.1f}",
            flush=True,
        )
        busiest = sorted(
            (name for name in commands if name != "bytes"), key=commands.__getitem__, reverse=True
        )
        print(
            f"      Redis per match: {commands['bytes'] / done / 1024:.1f} KB in and out; commands "
            + ", ".join(f"{name} {commands[name] / done:.1f}" for name in busiest[:6]),
            flush=True,
        )
    print(
        f"centre share per match in central_ceiling.py: {CENTRE_SHARE_MS} CPU ms (PostgreSQL 4.7, beat 1.4, "
        "Redis 0.3), without bots, live streams or replays in the database; the centre column above is "
        "every process of the centre (PG: PostgreSQL's part), the broker's is Redis"
    )
    print(
        f"archives: {archives / 1024:.0f} KB in storage, fetched once by each new worker host\n", flush=True
    )


if __name__ == "__main__":
    sys.exit(main())
