"""`septet challenge`: ask the platform for unrated duplicate sets against named opponents, and
read the results with 95% confidence intervals, as `septet compare` reports a local comparison.

    septet challenge MY-BOT OPPONENT... --game oh-hell --sets 10 [--wait]
    septet challenge --show CHALLENGE_ID [--wait]
    septet challenge --refuse MY-BOT   (or --accept MY-BOT): the switch for challenges against it

A set is one random deal played once per seat rotation, so every bot plays every seat of the same
cards; a bot's sample is its mean rank per set. The platform picks every seed: a challenger never
knows the deal in advance. The seeds and replays of a set are published once all of it is over.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any, Protocol

from google.protobuf.json_format import MessageToDict
from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from referee.botkit.protocol import arena_pb2 as pb

COMMAND = "challenge"
POLL_SECONDS = 2.0
DEFAULT_WAIT_SECONDS = 3600.0
WAIT_EXPIRED = 1
USAGE_ERROR = 2
REPLAYS_LISTED = 10


class Caller(Protocol):
    """What this command needs of the Arena client: one authenticated unary call."""

    def call(self, method: str, request: Any) -> Any: ...


def add_parser(commands: Any, parents: list[argparse.ArgumentParser]) -> None:
    """Adds `septet challenge` to the `septet` parser."""
    challenge = commands.add_parser(
        COMMAND,
        parents=parents,
        help="play unrated duplicate sets against named bots on the platform, with a verdict",
        description="Queues SETS duplicate sets of MY-BOT against the OPPONENTs on a game's ladder,\n"
        "unrated (needs an API token). Each bot named takes one seat, so name as many bots as\n"
        "the game has seats (oh-hell: 3-7; a house bot such as greedy fills one). A set is one\n"
        "random deal played in every seat rotation; the platform picks the seeds. Challenges\n"
        "wait behind qualification and tournament matches and go before ladder matches.\n\n"
        "The results give each bot's mean rank and score per set and each opponent's rank\n"
        "difference to MY-BOT, with 95% confidence intervals, as `septet compare` does. A set's\n"
        "seeds and replays are published once all of it is over. Owners may refuse challenges\n"
        "against their bots (--refuse BOT; --accept BOT turns them back on).",
        epilog="examples:\n  septet challenge mine montecarlo greedy --game oh-hell --sets 10 --wait\n"
        "  septet challenge mine montecarlo --game seven-up-seven-down --sets 10   (2-7 seats)\n"
        "  septet challenge --show 12\n  septet challenge --refuse mine\n\n"
        "exit codes: 0 done; 1 --wait ran out before every set was over; 2 a mistake or a refusal;\n"
        "3 the Arena could not be reached or failed inside (try again later)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    challenge.add_argument("bots", nargs="*", metavar="BOT", help="your bot first, then its opponents")
    challenge.add_argument("--game", default="", metavar="GAME", help="the ladder's game id, e.g. oh-hell")
    challenge.add_argument(
        "--sets", type=int, default=1, metavar="N", help="duplicate sets, 1-20 (default 1)"
    )
    challenge.add_argument("--wait", action="store_true", help="wait for every set, then print the results")
    challenge.add_argument(
        "--wait-timeout",
        type=float,
        default=DEFAULT_WAIT_SECONDS,
        metavar="S",
        help=f"give up waiting after S seconds (default {DEFAULT_WAIT_SECONDS:.0f}); the sets still play",
    )
    switch = challenge.add_mutually_exclusive_group()
    switch.add_argument("--show", type=int, default=0, metavar="ID", help="a challenge's results so far")
    switch.add_argument("--refuse", default="", metavar="BOT", help="refuse others' challenges against BOT")
    switch.add_argument("--accept", default="", metavar="BOT", help="accept others' challenges against BOT")


def usage_error(args: argparse.Namespace) -> str:
    """What is wrong with the command line, or "" (the caller prints it as a usage error)."""
    if args.refuse or args.accept or args.show:
        return "BOT names go with a new challenge only" if args.bots else ""
    if len(args.bots) < 2:
        return "name your bot and at least one opponent: septet challenge MY-BOT OPPONENT... --game GAME"
    if not args.game:
        return "--game is needed: the ladder whose game the sets are played on"
    return ""


def run(client: Caller, args: argparse.Namespace, out: Console) -> int:
    """Runs `septet challenge`; returns the exit code (client errors propagate)."""
    problem = usage_error(args)
    if problem:
        print(f"septet: error: {problem}", file=sys.stderr)
        return USAGE_ERROR
    if args.refuse or args.accept:
        bot = args.refuse or args.accept
        switched = client.call(
            "SetChallengesAccepted", pb.SetChallengesAcceptedRequest(bot=bot, accepts=bool(args.accept))
        )
        state = "accepts" if switched.accepts else "refuses"
        out.print(f"{switched.bot} now {state} challenges from other users", markup=False)
        return 0
    challenge_id = args.show or _request(client, args, out)
    if not (args.wait or args.show):
        out.print(
            f"see the results with: septet challenge --show {challenge_id} (add --wait to wait)", markup=False
        )
        return 0
    info = _wait(client, challenge_id, args.wait_timeout, out) if args.wait else _get(client, challenge_id)
    if args.json:
        out.print_json(json.dumps(MessageToDict(info, preserving_proto_field_name=True)))
    else:
        print_results(info, out)
    return 0 if info.sets_over == info.sets or not args.wait else WAIT_EXPIRED


def _request(client: Caller, args: argparse.Namespace, out: Console) -> int:
    seats = [pb.ChallengeSeat(bot=name) for name in args.bots]
    answer = client.call(
        "RequestChallenge", pb.RequestChallengeRequest(game=args.game, seats=seats, sets=args.sets)
    )
    per_set = len(answer.match_ids) // max(1, args.sets)
    out.print(
        f"challenge {answer.challenge_id}: {args.sets} duplicate sets x {per_set} rotations = "
        f"{len(answer.match_ids)} unrated {args.game} matches queued, each set with a random seed",
        markup=False,
        soft_wrap=True,  # one line whatever the width: scripts and tests read it whole
    )
    return int(answer.challenge_id)


def _get(client: Caller, challenge_id: int) -> pb.ChallengeInfo:
    info: pb.ChallengeInfo = client.call("GetChallenge", pb.GetChallengeRequest(challenge_id=challenge_id))
    return info


def _wait(client: Caller, challenge_id: int, timeout: float, out: Console) -> pb.ChallengeInfo:
    deadline = time.monotonic() + timeout
    info = _get(client, challenge_id)
    with out.status(f"challenge {challenge_id}: {info.sets_over}/{info.sets} sets over") as status:
        while info.sets_over < info.sets and time.monotonic() < deadline:
            time.sleep(POLL_SECONDS)
            info = _get(client, challenge_id)
            status.update(f"challenge {challenge_id}: {info.sets_over}/{info.sets} sets over")
    if info.sets_over < info.sets:
        out.print(
            f"gave up waiting after {timeout:.0f} s; the sets still play: "
            f"septet challenge --show {challenge_id}",
            markup=False,
        )
    return info


def interval_text(interval: pb.MeanInterval, *, signed: bool = False, decimals: int = 2) -> str:
    """`mean [low,high]` (the 95% interval, as `septet compare` gives it), narrow enough for an
    80-column table; the mean alone with one set, "-" with none."""
    if interval.n == 0:
        return "-"
    form = f"{{:{'+' if signed else ''}.{decimals}f}}"
    mean = form.format(interval.mean)
    if interval.n < 2 or not math.isfinite(interval.low):
        return mean
    return f"{mean} [{form.format(interval.low)},{form.format(interval.high)}]"


def verdict(challenger: str, result: pb.ChallengeBotResult) -> str:
    """Which of the two ranks better, when the 95% interval of the difference excludes 0."""
    difference = result.rank_difference
    if difference.n < 2:
        return f"{challenger} vs {result.bot}: too few sets for a verdict"
    if difference.low > 0:
        return f"{challenger} ranks better than {result.bot} (95% confidence, {difference.n} sets)"
    if difference.high < 0:
        return f"{result.bot} ranks better than {challenger} (95% confidence, {difference.n} sets)"
    return f"{challenger} vs {result.bot}: no clear difference after {difference.n} sets (play more --sets)"


def print_results(info: pb.ChallengeInfo, out: Console) -> None:
    """The challenge's results table, one verdict line per opponent, and its published replays."""
    out.print(
        f"challenge {info.id}: {info.challenger} on {info.game}, "
        f"{info.sets_over}/{info.sets} sets over (unrated)",
        markup=False,
    )
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    table.add_column("bot", overflow="fold")
    for column in ("rank", "score", "rank diff"):
        table.add_column(column, no_wrap=True)
    for result in info.results:
        own = result.bot == info.challenger
        table.add_row(
            f"{result.bot} v{result.version}",
            interval_text(result.rank),
            interval_text(result.score, decimals=1),
            "" if own else interval_text(result.rank_difference, signed=True),
        )
    out.print(table)
    out.print(
        f"mean per set [95% CI]; rank 1 = best; rank diff: the bot's minus {info.challenger}'s "
        f"(> 0: {info.challenger} ranks better)",
        markup=False,
    )
    forfeits = [f"{result.bot} {result.forfeits}" for result in info.results if result.forfeits]
    if forfeits:
        out.print(f"matches forfeited: {', '.join(forfeits)} (septet logs MATCH_ID says why)", markup=False)
    for result in info.results:
        if result.bot != info.challenger:
            out.print(verdict(info.challenger, result), markup=False)
    replays = [match.id for match in info.matches if match.has_replay]
    if replays:
        shown = " ".join(str(match_id) for match_id in replays[:REPLAYS_LISTED])
        more = f" (+{len(replays) - REPLAYS_LISTED} more)" if len(replays) > REPLAYS_LISTED else ""
        out.print(f"replays (septet replay fetch ID): {shown}{more}", markup=False)
