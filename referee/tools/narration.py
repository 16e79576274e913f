"""The table in words: one line per message of a live stream (docs/live.md), for a person at the
terminal (`septet match` with a `human` seat) or a spectator (`septet watch`).

It only ever words the messages it is given; what an audience may see is decided before, by
`referee.engine.live.LiveView`, so these lines cannot show a hidden card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.engine.games import oh7, oh7_dummy
from referee.engine.live import Message


def verb_s(who: str) -> str:
    """The verb's ending after `who`: "you play", "greedy plays"."""
    return "" if who == "you" else "s"


class TableNarrator:
    """Words a live stream's messages for the person at `seat` (named `you`), or for a spectator
    (`seat` None). Names that appear twice at a table get their seat number (`random#2`)."""

    def __init__(self, names: Sequence[str], *, seat: int | None) -> None:
        self.seat = seat
        self.names = [
            "you" if number == seat else name if list(names).count(name) == 1 else f"{name}#{number}"
            for number, name in enumerate(names)
        ]

    def who(self, seat: Any) -> str:
        """A seat as the lines name it: `you`, a name, `the Dummy`."""
        if isinstance(seat, int) and 0 <= seat < len(self.names):
            return self.names[seat]
        return "the Dummy" if seat == oh7_dummy.SEAT else f"seat {seat}"

    def per_seat(self, values: Sequence[Any]) -> str:
        return ", ".join(
            f"{self.who(seat)} {'-' if value is None else value}" for seat, value in enumerate(values)
        )

    # The table as it plays (one line per message of the seat's live view)

    def line(self, message: Message) -> str:
        """One line for a live message ("" for those that say nothing on their own)."""
        kind = message["type"]
        who = self.who(message.get("seat"))
        if kind == "deal":
            return self._deal_line(message)
        if kind == "bid":
            return f"{who} bid{verb_s(who)} {message['bid']}"
        if kind == "bets":
            cards = ", ".join(f"{self.who(seat)} {card}" for seat, card in enumerate(message["cards"]))
            again = ": they sum to 7, everyone bets again" if message["total"] == oh7.FORBIDDEN_TOTAL else ""
            return f"bets (attempt {message['attempt'] + 1}): {cards} (total {message['total']}){again}"
        if kind == "redeal":
            return "the third bets summed to 7 too: the cards are dealt again"
        if kind == "reveal":
            return f"{who} reveal{verb_s(who)} the ? and lead{verb_s(who)}"
        if kind == "leader":
            trump = message["trump"] or "none"
            up = f"; the Dummy turns up {' '.join(message['dummy_up'])}" if message.get("dummy_up") else ""
            return f"{who} lead{verb_s(who)} first; trump: {trump}{up}"
        if kind == "play":
            cards = message.get("card") or " ".join(message.get("cards", ()))
            turned = f" (turned up {message['turned']})" if message.get("turned") else ""
            pile = " from its pile" if message.get("from_pile") else ""
            return f"  {who} play{verb_s(who)} {cards}{pile}{turned}"
        if kind in ("trick", "hand"):
            winner = self.who(message["winner"])
            return f"  -> {winner} win{verb_s(winner)} the {kind}"
        if kind == "round_end":
            return f"round {message['round'] + 1} over: points {self.per_seat(message['points'])}; " + (
                f"scores {self.per_seat(message['scores'])}"
            )
        if kind == "game_end":
            ranks = message.get("ranks")
            placed = f"; ranks {self.per_seat(ranks)}" if ranks else " (aborted)"
            return f"=== game over: scores {self.per_seat(message['scores'])}{placed}\n"
        if kind == "forfeit":
            return f"{who} forfeit{verb_s(who)} ({message['status']}); the greedy policy plays on"
        return ""  # action (its event follows) and turn

    def _deal_line(self, message: Message) -> str:
        parts = [f"--- round {message['round'] + 1}"]
        if "dealer" in message:
            parts.append(f"dealer {self.who(message['dealer'])}")
        if message.get("trump_card"):
            parts.append(f"trump card {message['trump_card']}")
        if "leader" in message:
            parts.append(f"{self.who(message['leader'])} lead{verb_s(self.who(message['leader']))}")
        if message.get("redeals"):
            parts.append(f"redeal {message['redeals']}")
        if self.seat is None:
            sizes = message.get("hand_sizes") or []
            if sizes:
                parts.append(f"{sizes[0]} card{'s' if sizes[0] != 1 else ''} each")
            return ", ".join(parts)
        hand = message["hands"][self.seat]
        seen = [
            f"{self.who(seat)} {cards[0]}"
            for seat, cards in enumerate(message["hands"])
            if cards and seat != self.seat
        ]
        if hand is None and seen:
            parts.append(f"your card is on your forehead; you see {', '.join(seen)}")
        elif hand is not None:
            parts.append(f"your hand {' '.join(hand)}")
        return ", ".join(parts)
