"""The exactly-once check of benchmarks/central_ceiling.py, from the database and the files alone.

It reads the tables with plain SQL (a DB-API cursor) and the replay folder with the file system,
and recomputes ratings with openskill itself, so it shares no code with the services it checks:

- every match ended exactly once: none left running (claimed and never recorded); a match still
  scheduled only if its task was still in the broker's queue when the run stopped (`queued`);
  each finished match reported recorded by exactly one simulated worker (`reported`), under the
  attempt stored on it, and every reported match finished;
- each finished match has exactly one replay file, named for its attempt, whose size and SHA-256
  are those stored; no other file is in the folder (a second attempt's, a partial write);
- each rated match has exactly one rating change per seat (a two-seat duplicate set: one per bot,
  on one of its rotations, once all of them are played), ranked as its seats finished;
- replaying every ladder's results in the order of its rating changes (their ids; ladders are
  written at once, so only one ladder's own changes follow each other), from the model's
  defaults, through openskill's Plackett-Luce, gives every stored change and every stored rating.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPLAY_NAME = re.compile(r"^(\d+)-a(\d+)\.json\.gz$")
PROBE_PREFIX = ".septet-probe"
"""The replay folder's writability probe (matches/storage.py) is not a replay."""
TOLERANCE = 1e-9
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0


@dataclass
class Findings:
    """What the check found; `clean` when nothing was lost, doubled or miscomputed."""

    matches: int = 0
    finished: int = 0
    left_queued: int = 0
    replays_checked: int = 0
    rating_changes: int = 0
    lost: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    doubled: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    ratings: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.lost and not self.doubled and not self.ratings

    def summary(self, limit: int = 5) -> list[str]:
        """Lines for a report: the counts, then up to `limit` findings of each kind."""
        lines = [
            f"{self.matches} matches: {self.finished} recorded, {self.left_queued} still queued at the stop; "
            f"{self.replays_checked} replays checked (size and SHA-256), {self.rating_changes} rating changes"
        ]
        for kind, found in (("lost", self.lost), ("doubled", self.doubled)):
            for match_id, why in list(found.items())[:limit]:
                lines.append(f"  {kind}: match {match_id}: {'; '.join(why)}")
            if len(found) > limit:
                lines.append(f"  ... and {len(found) - limit} more {kind}")
        lines += [f"  ratings: {line}" for line in self.ratings[:limit]]
        return lines


@dataclass(frozen=True)
class _Match:
    id: int
    ladder: int
    status: str
    attempt: int
    rated: bool
    applied: bool
    replay: str
    size: int | None
    sha256: str
    duplicate_set: str


def check(
    cursor: Any, replays: Path, *, reported: Iterable[tuple[int, int]], queued: Collection[int]
) -> Findings:
    """Checks the database `cursor` reads (%s parameters) and the folder `replays` against the
    (match id, attempt) pairs the simulated workers reported recorded and the match ids whose task
    was still queued when the run stopped. See the module docstring."""
    findings = Findings()
    cursor.execute(
        "select id, ladder_id, status, attempt, rated, ratings_applied, replay, replay_size, replay_sha256,"
        " duplicate_set from matches_match order by id"
    )
    matches = {row[0]: _Match(*row) for row in cursor.fetchall()}
    cursor.execute("select match_id, seat, bot_version_id, rank from matches_seat order by match_id, seat")
    seats: dict[int, list[tuple[int, int, int | None]]] = defaultdict(list)
    for match_id, seat, version, rank in cursor.fetchall():
        seats[match_id].append((seat, version, rank))
    cursor.execute(
        "select c.id, c.match_id, r.bot_version_id, c.rank, c.mu_before, c.sigma_before, c.mu_after,"
        " c.sigma_after, r.ladder_id from ladders_ratingchange c join ladders_rating r on r.id = c.rating_id"
        " order by c.id"
    )
    changes = cursor.fetchall()
    cursor.execute("select ladder_id, bot_version_id, mu, sigma, games from ladders_rating")
    stored = {
        (ladder, version): (mu, sigma, games) for ladder, version, mu, sigma, games in cursor.fetchall()
    }

    findings.matches = len(matches)
    findings.rating_changes = len(changes)
    _check_ends(findings, matches, reported, queued)
    _check_replays(findings, matches, replays)
    results = _expected_results(findings, matches, seats, changes)
    _check_recomputed(findings, changes, results, stored)
    return findings


def _check_ends(
    findings: Findings,
    matches: dict[int, _Match],
    reported: Iterable[tuple[int, int]],
    queued: Collection[int],
) -> None:
    claims = Counter(match_id for match_id, _ in reported)
    attempts = dict(reported)
    for match_id, times in claims.items():
        if times > 1:
            findings.doubled[match_id].append(f"reported recorded {times} times")
        match = matches.get(match_id)
        if match is None or match.status != "finished":
            findings.lost[match_id].append(f"reported recorded but is {match.status if match else 'missing'}")
        elif attempts[match_id] != match.attempt:
            findings.doubled[match_id].append(
                f"reported under attempt {attempts[match_id]}, stored {match.attempt}"
            )
    for match in matches.values():
        if match.status == "running":
            findings.lost[match.id].append("claimed and never recorded (still running)")
        elif match.status == "scheduled":
            if match.id in queued:
                findings.left_queued += 1
            else:
                findings.lost[match.id].append("scheduled, and its task is in no queue")
        elif match.status == "finished":
            findings.finished += 1
            if match.id not in claims:
                findings.lost[match.id].append("finished, but no worker reported recording it")


def _check_replays(findings: Findings, matches: dict[int, _Match], replays: Path) -> None:
    files: dict[int, list[str]] = defaultdict(list)
    for path in replays.iterdir() if replays.is_dir() else []:
        found = REPLAY_NAME.match(path.name)
        if found:
            files[int(found.group(1))].append(path.name)
        elif not path.name.startswith(PROBE_PREFIX):
            findings.doubled[-1].append(f"a file that is no replay: {path.name} (a partial write?)")
    for match_id, names in files.items():
        match = matches.get(match_id)
        for name in names:
            if match is None or match.status != "finished" or name != match.replay:
                recorded = match.replay if match else "no such match"
                findings.doubled[match_id].append(
                    f"a second replay file {name} (recorded: {recorded or 'none'})"
                )
    for match in matches.values():
        if match.status != "finished":
            continue
        if match.replay != f"{match.id}-a{match.attempt}.json.gz":
            findings.doubled[match.id].append(f"its replay {match.replay!r} is not its attempt's")
        path = replays / match.replay if match.replay else None
        if path is None or not path.is_file():
            findings.lost[match.id].append(f"its replay {match.replay or '(none)'} is missing")
            continue
        data = path.read_bytes()
        if len(data) != match.size or hashlib.sha256(data).hexdigest() != match.sha256:
            findings.lost[match.id].append("its replay does not match the stored size and SHA-256")
            continue
        findings.replays_checked += 1


def _expected_results(
    findings: Findings,
    matches: dict[int, _Match],
    seats: dict[int, list[tuple[int, int, int | None]]],
    changes: list[tuple[Any, ...]],
) -> dict[int, tuple[list[tuple[int, int]], int]]:
    """The result each match's rating changes must stand for: match id -> ([(version, rank)], games
    it counts for). Reports matches rated when they should not be, or not rated, or twice."""
    made: dict[int, list[tuple[Any, ...]]] = defaultdict(list)
    for change in changes:
        made[change[1]].append(change)
    expected: dict[int, tuple[list[tuple[int, int]], int]] = {}
    sets: dict[tuple[int, str], list[_Match]] = defaultdict(list)
    for match in matches.values():
        if match.duplicate_set and len(seats[match.id]) == 2:
            sets[(match.ladder, match.duplicate_set)].append(match)
        elif match.status == "finished" and match.rated:
            ranks = [(version, rank) for _, version, rank in seats[match.id]]
            if any(rank is None for _, rank in ranks):
                findings.ratings.append(f"match {match.id} is finished with unranked seats")
                continue
            expected[match.id] = ([(version, int(rank or 0)) for version, rank in ranks], 1)
            if not match.applied:
                findings.lost[match.id].append("finished and never marked rated")
    for rotations in sets.values():
        finished = [r for r in rotations if r.status == "finished" and r.rated]
        if any(r.status in ("scheduled", "running") for r in rotations) or not finished:
            for rotation in rotations:
                if made.get(rotation.id):
                    findings.doubled[rotation.id].append("rated before its duplicate set was complete")
            continue
        held: dict[int, list[int]] = defaultdict(list)
        for rotation in finished:
            for _, version, rank in seats[rotation.id]:
                held[version].append(int(rank or 0))
        means = {version: sum(ranks) / len(ranks) for version, ranks in held.items()}
        result = [
            (version, 1 + sum(other < mean for other in means.values())) for version, mean in means.items()
        ]
        for rotation in finished:
            if not rotation.applied:
                findings.lost[rotation.id].append("finished and never marked rated")
        rated_on = [rotation.id for rotation in rotations if made.get(rotation.id)]
        if len(rated_on) > 1:
            findings.doubled[rated_on[0]].append(f"its duplicate set is rated on {len(rated_on)} rotations")
        expected[rated_on[0] if rated_on else finished[-1].id] = (result, len(finished))
    for match_id, (result, _) in expected.items():
        count = len(made.get(match_id, []))
        if count < len(result):
            findings.lost[match_id].append(f"{count} rating changes for {len(result)} results")
        elif count > len(result):
            findings.doubled[match_id].append(f"{count} rating changes for {len(result)} results")
    for match_id in made.keys() - expected.keys():
        findings.doubled[match_id].append("rating changes for a match that is not rated")
    return expected


def _check_recomputed(
    findings: Findings,
    changes: list[tuple[Any, ...]],
    expected: dict[int, tuple[list[tuple[int, int]], int]],
    stored: dict[tuple[int, int], tuple[float, float, int]],
) -> None:
    """Replays each ladder's results in the order of its changes' ids and compares."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    beliefs: dict[tuple[int, int], tuple[float, float]] = {}
    games: Counter[tuple[int, int]] = Counter()
    seen: set[int] = set()
    groups: list[list[tuple[Any, ...]]] = []
    last: dict[int, list[tuple[Any, ...]]] = {}  # per ladder, its latest group
    for change in changes:  # one writer at a time per ladder: a match's changes are consecutive there
        group = last.get(change[8])
        if group is not None and group[0][1] == change[1]:
            group.append(change)
        else:
            last[change[8]] = [change]
            groups.append(last[change[8]])
    for group in groups:
        match_id, ladder = group[0][1], group[0][8]
        if match_id in seen:
            findings.ratings.append(f"match {match_id}: its rating changes are not written together")
            continue
        seen.add(match_id)
        if match_id not in expected:
            continue
        result, counts = expected[match_id]
        keys = [(ladder, version) for version, _ in result]
        before = [beliefs.get(key, (DEFAULT_MU, DEFAULT_SIGMA)) for key in keys]
        teams = [[model.rating(mu=mu, sigma=sigma)] for mu, sigma in before]
        after = model.rate(teams, ranks=[float(rank) for _, rank in result])
        by_version = {change[2]: change for change in group}
        for key, (version, rank), old, [new] in zip(keys, result, before, after, strict=True):
            change = by_version.get(version)
            if change is None:
                findings.ratings.append(f"match {match_id}: no rating change for version {version}")
                continue
            if change[3] != rank:
                findings.ratings.append(
                    f"match {match_id}: version {version} rated at rank {change[3]}, not {rank}"
                )
            if not _close((change[4], change[5]), old) or not _close(
                (change[6], change[7]), (new.mu, new.sigma)
            ):
                findings.ratings.append(
                    f"match {match_id}: version {version}'s change does not recompute in order"
                )
            beliefs[key] = (float(new.mu), float(new.sigma))
            games[key] += counts
    for key, (mu, sigma, played) in stored.items():
        if played == 0 and key not in beliefs:
            continue
        if not _close((mu, sigma), beliefs.get(key, (DEFAULT_MU, DEFAULT_SIGMA))) or played != games[key]:
            findings.ratings.append(
                f"ladder {key[0]} version {key[1]}: the stored rating is not the replayed one"
            )


def _close(got: tuple[float, float], want: tuple[float, float]) -> bool:
    return abs(got[0] - want[0]) <= TOLERANCE and abs(got[1] - want[1]) <= TOLERANCE
