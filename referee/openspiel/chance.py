"""The engine's deals as OpenSpiel chance nodes: one card (or one seat) per node.

The engine settles a whole deal in one step (`sample_chance` returns every hand at once). An
OpenSpiel game shows chance as nodes with enumerated outcomes and their probabilities, so that
algorithms can weigh them and a history replays exactly; a 52-card shuffle is far too many
outcomes for one node. A `DealPlan` therefore splits each deal into draws: first a seat, where
the deal draws one (Oh Hell!'s and 7Up7Down's first dealer, Black Sevens' first leader), then
every dealt card, one per node, uniform over the cards not yet drawn: hands round the table
(card k to seat k mod n, as OpenSpiel's own card games deal), then the trump card, then the
Dummy's face-down pile top first. Cards nobody draws from (Oh 7?'s discard, the undealt deck)
are what is left. Drawing one card at a time uniformly from what is left gives every deal the
probability the engine's shuffle gives it.

Only public facts shape a plan: the structure of an engine deal (its keys and sizes) and the
cards still in the game (every game's deck, less Black Sevens' last cards on the table, which are
public, R-3.9). Outcome ids are the card columns of the PettingZoo encoding (`CARD_INDEX`,
`OH7_INDEX`), and seat numbers for a seat draw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import repeat
from typing import Any

from referee.engine.cards import DECK_52
from referee.engine.games.base import ChanceOutcome, Game
from referee.pettingzoo.encoding import CARD_INDEX, OH7_CARDS, OH7_INDEX

SEAT_KEYS = ("dealer", "leader")
"""Keys of an engine deal that draw a seat (uniform over the players)."""


@dataclass(frozen=True, slots=True)
class DealPlan:
    """How one engine deal is drawn node by node, and how the draws make the engine's outcome."""

    seat_key: str | None
    """The deal's seat draw ("dealer" or "leader"), if it has one; it comes first."""
    num_players: int
    hand_size: int
    trump: bool
    """Whether a trump card is drawn after the hands."""
    pile: int
    """Cards of the Dummy's pile drawn in order after the hands (0 without a Dummy)."""
    rest_key: str | None
    """The engine's key for the undrawn cards ("discard"), or None when the engine takes none."""
    cards: tuple[str, ...]
    """Card code of every outcome id."""
    counts: tuple[int, ...]
    """Copies of each outcome id in the cards being dealt (Oh 7? advanced has `N` twice)."""

    @property
    def card_draws(self) -> int:
        return self.num_players * self.hand_size + int(self.trump) + self.pile

    @property
    def length(self) -> int:
        """Chance nodes of the whole deal."""
        return int(self.seat_key is not None) + self.card_draws

    @property
    def pool(self) -> tuple[int, ...]:
        """The outcome ids of the cards to deal, once per copy, ascending (the draws remove them)."""
        return tuple(card for card, count in enumerate(self.counts) for _ in range(count))

    def draws_seat(self, drawn: tuple[int, ...]) -> bool:
        """Whether the next node draws the seat (the deal's first, where it has one)."""
        return self.seat_key is not None and not drawn

    def outcomes(self, drawn: tuple[int, ...], pool: tuple[int, ...]) -> list[tuple[int, float]]:
        """The next node's outcomes and probabilities, after the draws `drawn`, which left `pool`."""
        if self.draws_seat(drawn):
            chance = 1.0 / self.num_players
            return [(seat, chance) for seat in range(self.num_players)]
        chance = 1.0 / len(pool)
        if max(self.counts) == 1:
            return list(zip(pool, repeat(chance), strict=False))
        copies: dict[int, int] = {}
        for card in pool:
            copies[card] = copies.get(card, 0) + 1
        return [(card, count * chance) for card, count in copies.items()]

    def without(self, pool: tuple[int, ...], card: int) -> tuple[int, ...]:
        """`pool` after drawing `card` (one copy); a card not in it raises ValueError."""
        at = pool.index(card)
        return pool[:at] + pool[at + 1 :]

    def outcome(self, drawn: tuple[int, ...]) -> ChanceOutcome:
        """The engine's deal outcome of a complete set of draws."""
        outcome: ChanceOutcome = {}
        if self.seat_key is not None:
            outcome[self.seat_key] = drawn[0]
            drawn = drawn[1:]
        codes = self.cards
        n, dealt = self.num_players, self.num_players * self.hand_size
        outcome["hands"] = [[codes[card] for card in drawn[seat:dealt:n]] for seat in range(n)]
        if self.trump:
            outcome["trump_card"] = codes[drawn[dealt]]
        if self.pile:
            outcome["pile"] = [codes[card] for card in drawn[dealt : dealt + self.pile]]
        if self.rest_key is not None:
            left = list(self.counts)
            for card in drawn:
                left[card] -= 1
            outcome[self.rest_key] = [codes[card] for card, count in enumerate(left) for _ in range(count)]
        return outcome


def plan_deal(game: Game, state: Any) -> DealPlan:
    """The plan of the deal an engine state waits for (its next step is chance).

    The structure is read off one engine deal drawn with a throwaway generator (which keys, how
    many cards); the cards from the game's public facts."""
    template = game.sample_chance(state, random.Random(0))
    hands: list[list[str]] = template["hands"]
    seat_key = next((key for key in SEAT_KEYS if key in template), None)
    pile = len(template.get("pile", ()))
    rest_key = "discard" if "discard" in template else None
    if game.id.startswith("oh7"):
        codes, index = OH7_CARDS, OH7_INDEX
        rest: list[str] = template.get("pile") or template.get("discard") or []
        in_game = [card for hand in hands for card in hand] + rest
    else:
        codes, index = DECK_52, CARD_INDEX
        table = getattr(game.information_state(state, 0), "table", ())
        gone = {card for cards in table for card in cards}  # Black Sevens' last cards (R-3.9)
        in_game = [card for card in DECK_52 if card not in gone]
    counts = [0] * len(codes)
    for card in in_game:
        counts[index[card]] += 1
    return DealPlan(
        seat_key=seat_key,
        num_players=len(hands),
        hand_size=len(hands[0]),
        trump="trump_card" in template,
        pile=pile,
        rest_key=rest_key,
        cards=tuple(codes),
        counts=tuple(counts),
    )


def outcome_name(plan: DealPlan, drawn: tuple[int, ...], outcome: int) -> str:
    """A chance outcome in words, for `action_to_string`: "dealer 2", "deal TH to seat 1", ..."""
    step = len(drawn)
    if plan.seat_key is not None:
        if step == 0:
            return f"{plan.seat_key} {outcome}"
        step -= 1
    card = plan.cards[outcome]
    dealt = plan.num_players * plan.hand_size
    if step < dealt:
        return f"deal {card} to seat {step % plan.num_players}"
    if plan.trump and step == dealt:
        return f"trump card {card}"
    return f"pile {card}"
