"""`septet watch MATCH_ID`: a platform match in the terminal as it is played.

A client of the Arena's `FollowMatch` stream: the match's status changes, and while it is played
its public live stream (docs/live.md), the same messages the site's spectators get: bids, plays,
tricks and scores as they happen, never a hidden card (the server filters them). It ends when
the match is over, with its result; a voided attempt (a failure of the platform) is followed on
into the next one. Needs an API token, as every match read of the Arena does.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from typing import Any, Protocol

from rich.console import Console

from referee.botkit.protocol import arena_pb2 as pb
from referee.tools.narration import TableNarrator

COMMAND = "watch"
OVER = frozenset({"finished", "aborted", "cancelled"})


class Follower(Protocol):
    """What this command needs of the Arena client: one authenticated stream, however long."""

    def follow(self, method: str, request: Any) -> Iterator[Any]: ...


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Adds `septet watch` to the `septet` parser."""
    watch = commands.add_parser(
        COMMAND,
        parents=parents,
        help="follow a platform match live in the terminal: bids, plays, tricks, scores",
        description="Follows a match on the platform as it is played (needs an API token): every bid,\n"
        "play, trick and round score as it happens, as the site's spectators see it (no hidden\n"
        "card), then its result. A match not started yet is waited for.",
        epilog="example:\n  septet watch 1234          (match ids: septet matches BOT --status waiting)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("match_id", type=int, metavar="MATCH_ID")


def run(client: Follower, args: argparse.Namespace, out: Console) -> int:
    """Prints the match as it goes; 0 once it is over."""
    narrator: TableNarrator | None = None
    status = ""
    for event in client.follow("FollowMatch", pb.FollowMatchRequest(match_id=args.match_id)):
        if event.live_batch:
            narrator = _say_batch(json.loads(event.live_batch), narrator, out)
            continue
        if event.status != status:
            status = event.status
            _say(out, f"match {args.match_id}: {_status_line(event)}")
        if event.status in OVER:
            _say_result(event.match, out)
            return 0
    return 0


def _say_batch(
    batch: list[dict[str, Any]], narrator: TableNarrator | None, out: Console
) -> TableNarrator | None:
    for message in batch:
        kind = message.get("type")
        if kind == "match":
            names = [str(seat.get("name", "?")) for seat in message.get("seats", [])]
            narrator = TableNarrator(names, seat=None)
            table = ", ".join(f"{number}: {name}" for number, name in enumerate(names))
            _say(out, f"=== {message.get('game')}: {table}")
        elif kind == "end":
            if message.get("status") == "voided":
                _say(out, f"(this attempt was voided: {message.get('reason')}; the next one follows)")
        elif narrator is not None:
            line = narrator.line(message)
            if line:
                _say(out, line.rstrip("\n"))
    return narrator


def _status_line(event: Any) -> str:
    if event.status == "scheduled":
        return "waiting for a worker to play it"
    if event.status == "running":
        return f"being played (attempt {event.attempt})"
    return str(event.status)


def _say_result(match: Any, out: Console) -> None:
    for seat in match.seats:
        rank = f"#{seat.rank}" if seat.HasField("rank") else "-"
        score = seat.score if seat.HasField("score") else "-"
        forfeit = f" forfeit {seat.forfeit_status}" if seat.forfeit_status else ""
        name = seat.bot if seat.version == 0 else f"{seat.bot} v{seat.version}"
        _say(out, f"  seat {seat.seat}: {name:<24} {rank:>3}  {score}{forfeit}")


def _say(out: Console, text: str) -> None:
    """One line as it is: no markup, no highlighting, never wrapped (a script may grep it)."""
    out.print(text, markup=False, highlight=False, soft_wrap=True)
