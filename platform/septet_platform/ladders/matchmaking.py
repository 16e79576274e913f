"""Matchmaking: which bot versions play the next rated games of a ladder, as duplicate sets.

One table at a time:
1. Candidates: each bot's latest ACTIVE version whose manifest lists the ladder's game (a manifest
   without a `games` list plays every game). A bot's load is its rated games on the ladder plus its
   seats in matches still scheduled or running. A sandboxed ladder takes every bot but the
   self-hosted; an open ladder takes house bots, the sandboxed bots their owners entered
   (`Bot.open_ladders`), and the self-hosted bots connected now, under their daily limit and with
   at most SELF_HOSTED_PENDING matches waiting (one that goes away forfeits only those).
2. Never starve: the candidate with the least load (then the longest since it was last seated,
   never seated first; then at random) always gets a seat; on an open ladder, the self-hosted
   candidate with the least load, so every open table seats one (a ladder with none connected
   schedules nothing: the house bots' games among themselves are the sandboxed ladder's).
3. A table size is drawn uniformly from the ladder's range, among the sizes the candidates can fill
   under the owner rule: two bots of one owner never share a rated table, except house bots.
4. The other seats are drawn one by one, weighted by 1 / (1 + load) times closeness to the table's
   mean mu: exp(-z² / 2), z = (mu - table mean) / sqrt(2 beta² + sigma²), so uncertain bots
   (new ones) meet a wider range of opponents.
5. A duplicate set: one seed, one Match per cyclic rotation of the (shuffled) seating, so every
   player sits in every seat of the same deal; the Matches share `duplicate_set`. Its rotations
   are played one after another by one worker (matches.services.match_play_set), never two at
   once: a self-hosted bot could otherwise see a deal from one seat while playing it from another.
Everything random comes from the `rng` argument: the same database and the same rng give the same
matches.
"""

from __future__ import annotations

import math
import random
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.db.models import Count, OuterRef, Q, QuerySet, Subquery

from septet_platform.bots.models import BotVersion
from septet_platform.bots.self_hosted import daily_limit, matches_today
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.services import ratings_held
from septet_platform.live.bot_relay import bots_connected
from septet_platform.matches.models import Match, Seat

SEED_BITS = 53
"""Seeds stay below 2**53 so every JSON reader (JavaScript's numbers too) keeps them exact."""

_MIN_WEIGHT = 1e-12  # a far-rated bot is unlikely to be drawn, never impossible
SELF_HOSTED_PENDING = 8
"""Matches a self-hosted bot may have waiting or playing at once (on every ladder and challenge
together) before matchmaking seats it again: a bot that goes away forfeits on time only in those,
and the queue never fills with the seats of one that left."""


@dataclass
class _Candidate:
    version: BotVersion
    owner_id: int
    is_house: bool
    mu: float
    sigma: float
    load: int
    last_seated: datetime | None
    tiebreak: float
    self_hosted: bool = False
    pending: int = 0


def matches_schedule(*, ladder: Ladder, rng: random.Random, sets: int = 1) -> list[Match]:
    """Schedules `sets` duplicate sets of rated matches on `ladder` (see the module docstring);
    returns the new Matches in order, or [] when too few eligible bots (or an inactive ladder)."""
    if sets < 0:
        raise ValueError(f"sets must be 0 or more, got {sets}")
    if ladder.min_players < 2 or ladder.max_players < ladder.min_players:
        raise ValueError(
            f"ladder {ladder.game} has no playable table size ({ladder.min_players}..{ladder.max_players})"
        )
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update(no_key=True).get(pk=ladder.pk)  # one scheduler per ladder
        if not ladder.active:
            return []
        candidates = _candidates(ladder, rng)
        matches: list[Match] = []
        for _ in range(sets):
            seatable = [c for c in candidates if not c.self_hosted or c.pending < SELF_HOSTED_PENDING]
            # An open ladder rates self-hosted bots: each of its tables seats one, the most waiting.
            anchors = [c for c in seatable if c.self_hosted] if ladder.is_open else seatable
            capacity = _capacity(seatable)
            sizes = [size for size in range(ladder.min_players, ladder.max_players + 1) if size <= capacity]
            if not sizes or not anchors:
                break
            table = _table(seatable, rng.choice(sizes), rng, anchor=min(anchors, key=_waiting))
            rng.shuffle(table)
            matches.extend(_duplicate_set(ladder, table, rng))
            for candidate in table:
                candidate.load += len(table)
                candidate.pending += len(table)
                candidate.last_seated = matches[-1].created
        return matches


def _candidates(ladder: Ladder, rng: random.Random) -> list[_Candidate]:
    """Each eligible bot's latest ACTIVE version that plays this game (`_eligible`), with its
    rating, load and last seat."""
    latest: dict[int, BotVersion] = {}
    for version in _eligible(ladder).select_related("bot").order_by("bot_id", "-number"):
        if version.bot_id not in latest and _plays(version, ladder.game):
            latest[version.bot_id] = version
    versions = list(latest.values())
    seats = Seat.objects.filter(match__ladder=ladder, bot_version__in=versions)
    pending = dict(
        seats.filter(match__status__in=[Match.Status.SCHEDULED, Match.Status.RUNNING])
        .values_list("bot_version")
        .annotate(n=Count("id"))
    )
    versions = _present(versions) if ladder.is_open else versions
    # A self-hosted bot's cap counts its matches waiting anywhere (every open ladder, challenges).
    waiting_anywhere = dict(
        Seat.objects.filter(
            bot_version__in=[version for version in versions if version.bot.self_hosted],
            match__status__in=[Match.Status.SCHEDULED, Match.Status.RUNNING],
        )
        .values_list("bot_version")
        .annotate(n=Count("id"))
    )
    # Each version's latest seat on this ladder: one index step per version (seats by version and
    # match), not an aggregate over the ladder's whole history.
    latest_seat = (
        Seat.objects.filter(bot_version=OuterRef("pk"), match__ladder=ladder)
        .order_by("-match_id")
        .values("match__created")[:1]
    )
    last = dict(
        BotVersion.objects.filter(pk__in=[version.pk for version in versions])
        .annotate(at=Subquery(latest_seat))
        .values_list("pk", "at")
    )
    held = ratings_held(ladder=ladder, versions=versions)  # a few statements however many bots
    candidates = []
    for version in versions:
        rating = held[version.pk]
        candidates.append(
            _Candidate(
                version=version,
                owner_id=version.bot.owner_id,
                is_house=version.bot.is_house,
                mu=rating.mu,
                sigma=rating.sigma,
                load=rating.games + pending.get(version.pk, 0),
                last_seated=last.get(version.pk),
                tiebreak=rng.random(),
                self_hosted=version.bot.self_hosted,
                pending=waiting_anywhere.get(version.pk, 0),
            )
        )
    return candidates


def _eligible(ladder: Ladder) -> QuerySet[BotVersion]:
    """The ACTIVE versions of the bots that may play on `ladder`: never a self-hosted bot on a
    sandboxed ladder (its results would not be its code's alone); on an open ladder, house bots,
    the sandboxed bots entered there and the self-hosted ones (`_present` keeps those connected)."""
    active = BotVersion.objects.filter(status=BotVersion.Status.ACTIVE)
    if ladder.is_open:
        return active.filter(Q(bot__self_hosted=True) | Q(bot__is_house=True) | Q(bot__open_ladders=True))
    return active.filter(bot__self_hosted=False)


def _present(versions: list[BotVersion]) -> list[BotVersion]:
    """`versions` less the self-hosted bots that cannot be seated now: not connected, or their
    daily matches played (SEPTET_SELF_HOSTED_MATCHES_PER_DAY). One Redis round trip and one
    query for all of them."""
    remote = [version.bot_id for version in versions if version.bot.self_hosted]
    if not remote:
        return versions
    connected = bots_connected(remote)
    today = matches_today(connected)
    absent = {bot_id for bot_id in remote if bot_id not in connected or today.get(bot_id, 0) >= daily_limit()}
    return [version for version in versions if version.bot_id not in absent]


def _plays(version: BotVersion, game: str) -> bool:
    games = version.manifest.get("games") if isinstance(version.manifest, dict) else None
    return not isinstance(games, list) or game in games


def _capacity(candidates: list[_Candidate]) -> int:
    """The largest rated table the candidates can fill: every house bot, one bot per other owner."""
    return sum(1 for c in candidates if c.is_house) + len({c.owner_id for c in candidates if not c.is_house})


def _compatible(candidate: _Candidate, table: list[_Candidate]) -> bool:
    return candidate.is_house or all(
        seated.is_house or seated.owner_id != candidate.owner_id for seated in table
    )


def _table(
    candidates: list[_Candidate], size: int, rng: random.Random, *, anchor: _Candidate
) -> list[_Candidate]:
    """`anchor` (the most-waiting candidate), then `size - 1` others drawn by load and closeness."""
    table = [anchor]
    while len(table) < size:
        pool = [c for c in candidates if c not in table and _compatible(c, table)]
        mean = sum(c.mu for c in table) / len(table)
        weights = [_weight(c, mean) for c in pool]
        table.append(rng.choices(pool, weights=weights)[0])
    return table


def _waiting(candidate: _Candidate) -> tuple[int, float, float]:
    """Sorts the most-waiting first: least load, then seated longest ago (never first), then at random."""
    last = candidate.last_seated.timestamp() if candidate.last_seated else 0.0
    return (candidate.load, last, candidate.tiebreak)


def _weight(candidate: _Candidate, mean: float) -> float:
    z = (candidate.mu - mean) / math.sqrt(2 * ratings.BETA**2 + candidate.sigma**2)
    return max(math.exp(-z * z / 2) / (1 + candidate.load), _MIN_WEIGHT)


def _duplicate_set(ladder: Ladder, table: list[_Candidate], rng: random.Random) -> list[Match]:
    """One Match per cyclic rotation of `table`'s seating, all with one seed; seat i of rotation r
    holds table[(i + r) % n]. Two statements whatever the table's size (the matches, their seats)."""
    seed = rng.getrandbits(SEED_BITS)
    name = str(uuid.UUID(int=rng.getrandbits(128)))
    matches = Match.objects.bulk_create(
        Match(
            ladder=ladder,
            kind=Match.Kind.LADDER,
            rated=True,
            seed=seed,
            duplicate_set=name,
            rotation=rotation,
        )
        for rotation in range(len(table))
    )
    Seat.objects.bulk_create(
        Seat(match=match, seat=seat, bot_version=table[(seat + match.rotation) % len(table)].version)
        for match in matches
        for seat in range(len(table))
    )
    return matches
