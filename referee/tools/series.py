"""Many seeded games between a set of bots: the seating schedule and the per-bot statistics.

`septet match` (and later the platform's challenge matches) plays a series: game k uses seed
`seed + k`; the bots fill the seats in the order given, repeated when there are fewer bots than
seats, and the seating rotates one place per game so no bot keeps the best seat. With
`duplicate`, every seed is played once per cyclic rotation of the seating (RULES.md §0), and the
confidence intervals treat each duplicate set as one independent sample.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.engine.games.base import Game, GameError
from referee.engine.match import MatchResult
from referee.tools.stats import MeanInterval, mean_interval


@dataclass(frozen=True)
class Table:
    """One game of a series: its seed, which bot sits in each seat, and its duplicate set."""

    seed: int
    seating: tuple[int, ...]
    """Index into the series' bots for each seat."""
    rotation: int
    unit: int
    """Games of the same unit share a seed (a duplicate set); units are independent samples."""


def seats_for(game: Game, bots: int, players: int | None) -> int:
    """How many players a series seats: `players` if given, else as many as there are bots."""
    if bots < 1:
        raise GameError("name at least one bot (random, greedy)")
    wanted = players if players is not None else max(bots, game.players.start)
    game.check_players(wanted)
    if bots > wanted:
        raise GameError(f"{bots} bots cannot sit at a {wanted}-player table of {game.id}")
    return wanted


def schedule(num_seats: int, bots: int, games: int, seed: int, duplicate: bool) -> list[Table]:
    """The tables of a series: `games` seeds, each once per rotation when `duplicate`."""
    if games < 1:
        raise GameError(f"--games must be at least 1, not {games}")
    base = tuple(seat % bots for seat in range(num_seats))
    tables = []
    for k in range(games):
        rotations = range(num_seats) if duplicate else (k % num_seats,)
        for rotation in rotations:
            seating = base[-rotation:] + base[:-rotation] if rotation else base
            tables.append(Table(seed + k, seating, rotation, unit=k))
    return tables


@dataclass
class BotRecord:
    """Everything a series learned about one bot."""

    name: str
    max_rank: int
    """The worst possible rank (the table size): intervals are clipped to [1, max_rank]."""
    scores: list[int] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    unit_ranks: dict[int, list[int]] = field(default_factory=dict)
    forfeits: Counter[str] = field(default_factory=Counter)

    @property
    def games(self) -> int:
        return len(self.ranks)

    def rank_interval(self) -> MeanInterval:
        """Mean rank with a 95% interval over independent units (games, or duplicate sets)."""
        means = [sum(ranks) / len(ranks) for ranks in self.unit_ranks.values()]
        interval = mean_interval(means)
        low, high = max(1.0, interval.low), min(float(self.max_rank), interval.high)
        return MeanInterval(interval.mean, low, high, len(self.ranks))

    def to_json(self) -> dict[str, Any]:
        interval = self.rank_interval()
        return {
            "name": self.name,
            "games": self.games,
            "mean_score": sum(self.scores) / len(self.scores) if self.scores else None,
            "mean_rank": interval.mean if self.ranks else None,
            "rank_ci95": [interval.low, interval.high] if len(self.unit_ranks) > 1 else None,
            "rank_counts": {str(rank): count for rank, count in sorted(Counter(self.ranks).items())},
            "forfeits": dict(self.forfeits),
        }


@dataclass
class Summary:
    """A finished (or interrupted) series."""

    game: str
    num_seats: int
    seed: int
    duplicate: bool
    bots: list[BotRecord]
    seat_names: list[str]
    """The bot names as given, indexed by `Table.seating`."""
    played: int = 0
    aborted: int = 0
    decisions: int = 0
    seconds: float = 0.0

    @classmethod
    def start(
        cls, game: Game, bot_names: Sequence[str], *, num_seats: int, seed: int, duplicate: bool
    ) -> Summary:
        """An empty summary; several seats of one bot (two `greedy`) count as that bot's games."""
        bots = [BotRecord(name, num_seats) for name in dict.fromkeys(bot_names)]
        return cls(game.id, num_seats, seed, duplicate, bots, list(bot_names))

    def record(self, table: Table, outcome: MatchResult) -> None:
        """Adds one finished game to the per-bot statistics."""
        by_name = {bot.name: bot for bot in self.bots}
        self.played += 1
        self.decisions += outcome.decisions
        self.seconds += outcome.seconds
        ranks = outcome.result.ranks
        if ranks is None:
            self.aborted += 1
        else:
            for seat, bot in enumerate(table.seating):
                record = by_name[self.seat_names[bot]]
                record.scores.append(outcome.result.scores[seat])
                record.ranks.append(ranks[seat])
                record.unit_ranks.setdefault(table.unit, []).append(ranks[seat])
        for forfeit in outcome.forfeits:
            by_name[self.seat_names[table.seating[forfeit.seat]]].forfeits[str(forfeit.status)] += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "game": self.game,
            "players": self.num_seats,
            "seed": self.seed,
            "duplicate": self.duplicate,
            "games": self.played,
            "aborted": self.aborted,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
            "bots": [bot.to_json() for bot in self.bots],
        }
