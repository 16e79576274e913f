"""The CLI's commands over the platform's Arena gRPC API: submit, ladder, matches, tournament,
replay fetch.

They are plain gRPC clients of `septet.v1.Arena`, so a bot author needs only `pip install septet`
and a token from the site; nothing of the platform runs locally. The server address comes from
`--server` or `SEPTET_SERVER` (default: the one-command platform's 127.0.0.1:50051), the API token
from `--token` or `SEPTET_TOKEN`.

Every error is one line, `septet: error: ...`, and its exit code says whose move it is:
2 (USAGE_ERROR) for a mistake, caught here or refused by the server (an unknown game or bot, a bad
or missing token, input the Arena rejects, a limit reached): calling again unchanged fails again;
3 (ARENA_FAILED) only when the Arena could not be reached or failed inside: the same call may work
later, so a script can retry on 3 alone. 1 (OUTCOME_FAILED) is not an error of the call: the
command worked and its answer is "no" (a version failed qualification, a fetched replay does not
verify, a wait ran out), as 1 means for `septet check` and `septet replay verify`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf.json_format import MessageToDict
from rich import box
from rich.console import Console
from rich.table import Table as RichTable

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine import replay
from referee.tools import challenge_cli, watch_cli
from referee.tools.packing import pack_folder

DEFAULT_SERVER = "127.0.0.1:50051"
UPLOAD_CHUNK = 64 * 1024
CALL_TIMEOUT = 30.0
OUTCOME_FAILED = 1
USAGE_ERROR = 2
ARENA_FAILED = 3
EXIT_CODES_HELP = (
    "exit codes: 0 done; 1 the answer is no (qualification failed, a replay does not verify,\n"
    "a wait ran out); 2 a mistake or a refusal (unknown game or bot, bad token, invalid input);\n"
    "3 the Arena could not be reached or failed inside (try again later)"
)
SERVER_FAULTS = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DATA_LOSS,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.CANCELLED,
    }
)
"""gRPC statuses that are the server's (or the network's) failing, not the caller's mistake."""
QUALIFYING = "qualifying"
COMMANDS = (
    "submit",
    "ladder",
    "bots",
    "matches",
    "tournament",
    "logs",
    challenge_cli.COMMAND,
    watch_cli.COMMAND,
)
WAIT_POLL_SECONDS = 1.0
"""How often `submit --wait` asks how the qualification is going."""
WAITING_SHOWN = 5
"""`septet matches` lists a bot's finished matches and, apart, this many of its waiting ones."""


class ArenaError(Exception):
    """Why a command stopped, printed as one line; `exit_code` says whose move it is (see the
    module docstring): USAGE_ERROR by default, ARENA_FAILED or OUTCOME_FAILED when given."""

    def __init__(self, message: str, exit_code: int = USAGE_ERROR) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def add_parsers(commands: Any, replay_commands: Any) -> None:
    """Adds `submit`, `ladder`, `matches` and `replay fetch` to the `septet` parser."""
    connection = argparse.ArgumentParser(add_help=False)
    connection.add_argument(
        "--server",
        default=os.environ.get("SEPTET_SERVER", DEFAULT_SERVER),
        metavar="ADDR",
        help=f"the Arena gRPC service (env SEPTET_SERVER; default {DEFAULT_SERVER})",
    )
    connection.add_argument(
        "--token",
        default=os.environ.get("SEPTET_TOKEN", ""),
        metavar="TOKEN",
        help="your API token, sep_... (env SEPTET_TOKEN); needed to submit, enter, list matches "
        "and fetch replays",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of a table")
    raw = argparse.RawDescriptionHelpFormatter

    submit = commands.add_parser(
        "submit",
        parents=[connection],
        help="upload a bot folder to the platform as a new version of its bot",
        description="Pack a bot folder (its manifest names the bot) and upload it as a new version. "
        "The platform qualifies it with a smoke game of each game it declares before it plays rated "
        "matches. With --wait, follow the qualification and print why it failed if it did.",
        epilog="example:\n  export SEPTET_TOKEN=sep_...   # printed by 'septet up', or made on the site\n"
        "  septet submit bots/examples/greedy --wait\n\n" + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    submit.add_argument("folder", type=Path, metavar="FOLDER")
    submit.add_argument("--wait", action="store_true", help="wait until the version qualifies or fails")
    submit.add_argument(
        "--wait-timeout", type=float, default=300.0, metavar="SECONDS", help="with --wait (default: 300)"
    )

    ladder = commands.add_parser(
        "ladder",
        parents=[connection, as_json],
        help="show a game's ladder standings (or every ladder's leaders)",
        description="Without GAME, every ladder with its leaders; with GAME, its time control and "
        "whole standings, best first (bots that have played no rated game yet last). Each game has "
        "a sandboxed ladder and an open one, where self-hosted bots play (--open).",
        epilog="examples:\n  septet ladder\n  septet ladder oh-hell\n  septet ladder oh-hell --open\n\n"
        + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    ladder.add_argument("game", nargs="?", metavar="GAME")
    ladder.add_argument(
        "--open",
        action="store_true",
        help="the game's open ladder (self-hosted bots, house bots and the sandboxed bots entered)",
    )

    bots = commands.add_parser(
        "bots",
        parents=[connection, as_json],
        help="list the platform's bots: house, sandboxed and self-hosted (connected now or not)",
        description="Every bot on the platform (or one owner's), with its latest version and whether "
        "it is a house bot or self-hosted; a self-hosted bot shows whether it is connected now.",
        epilog="examples:\n  septet bots\n  septet bots --owner alice\n\n" + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    bots.add_argument("--owner", default="", metavar="USER", help="only this user's bots")

    matches = commands.add_parser(
        "matches",
        parents=[connection, as_json],
        help="list a bot's recent matches on the platform: finished first",
        description="A bot's finished matches, newest first (by when they finished), with each seat's "
        "score, rank and rating change, then apart the queued and running ones (needs an API "
        "token). Seeds and replays show once a match's whole duplicate set is over.",
        epilog="examples:\n  septet matches greedy --game oh-hell --limit 5\n"
        "  septet matches greedy --status waiting\n\n" + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    matches.add_argument("bot", metavar="BOT")
    matches.add_argument("--game", default="", metavar="GAME", help="only this ladder's matches")
    matches.add_argument("--limit", type=int, default=20, metavar="N", help="at most N matches (default: 20)")
    matches.add_argument(
        "--status",
        choices=("finished", "waiting", "all"),
        default="",
        help="only finished matches, only queued or running ones, or all newest first "
        "(default: finished, then a few waiting ones apart)",
    )

    logs = commands.add_parser(
        "logs",
        parents=[connection, as_json],
        help="what your bots wrote in a platform match (stdout and stderr), and why they forfeited",
        description="Your own bots' output in a match (the last 64 KiB of each seat's stdout and stderr) "
        "with each forfeit's full reason and the replay event it happened at (needs an API token). "
        "Shown once the match's duplicate set is over, like its replay; nobody else sees it.",
        epilog="example:\n  septet logs 1234\n\n" + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    logs.add_argument("match_id", type=int, metavar="MATCH_ID")

    challenge_cli.add_parser(commands, parents=[connection, as_json])
    watch_cli.add_parser(commands, parents=[connection])

    tournament = commands.add_parser(
        "tournament",
        parents=[connection],
        help="list tournaments, read one's standings, or enter a bot",
        description="Organised events on the platform: list them, read one's progress and standings "
        "(mean rank over duplicate sets with a 95% interval; overlapping intervals are statistically "
        "tied), or enter one of your bots before its deadline (needs a token).",
        epilog="examples:\n  septet tournament list\n  septet tournament standings winter-cup\n"
        "  septet tournament enter winter-cup my-bot\n\n" + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    actions = tournament.add_subparsers(dest="tournament_command", metavar="ACTION", required=True)
    actions.add_parser("list", parents=[connection, as_json], help="every published tournament")
    standings = actions.add_parser(
        "standings", parents=[connection, as_json], help="a tournament's progress and standings"
    )
    standings.add_argument("name", metavar="TOURNAMENT")
    enter = actions.add_parser("enter", parents=[connection], help="enter one of your bots")
    enter.add_argument("name", metavar="TOURNAMENT")
    enter.add_argument("bot", metavar="BOT")

    fetch = replay_commands.add_parser(
        "fetch",
        parents=[connection],
        help="download a platform match's replay and verify it",
        description="Download the replay of a match (.json.gz) and re-play it through the engine. "
        "Needs an API token. A replay is published once every rotation of its duplicate set is over; "
        "forfeit reasons of seats you do not own come blanked (verification does not read them).",
        epilog="example:\n  septet replay fetch 42 && septet replay verify match-42.json.gz\n\n"
        + EXIT_CODES_HELP,
        formatter_class=raw,
    )
    fetch.add_argument("match_id", type=int, metavar="MATCH_ID")
    fetch.add_argument(
        "--out", type=Path, metavar="FILE", help="where to write it (default: match-ID.json.gz)"
    )
    fetch.add_argument("--no-verify", action="store_true", help="skip re-playing it through the engine")


def run(args: argparse.Namespace, out: Console) -> int:
    """Runs one of this module's commands; returns the exit code."""
    try:
        with grpc.insecure_channel(args.server) as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)  # type: ignore[no-untyped-call]
            metadata = (("authorization", f"Bearer {args.token}"),) if args.token else ()
            client = _Client(arena, metadata, args.server)
            if args.command == "submit":
                return _submit(client, args, out)
            if args.command == "ladder":
                return _ladder(client, args, out)
            if args.command == "bots":
                return _bots(client, args, out)
            if args.command == "matches":
                return _matches(client, args, out)
            if args.command == "tournament":
                return _tournament(client, args, out)
            if args.command == "logs":
                return _logs(client, args, out)
            if args.command == challenge_cli.COMMAND:
                return challenge_cli.run(client, args, out)
            if args.command == watch_cli.COMMAND:
                return watch_cli.run(client, args, out)
            return _fetch(client, args, out)
    except ArenaError as error:
        print(f"septet: error: {error}", file=sys.stderr)
        return error.exit_code


class _Client:
    """Calls the Arena with the token and turns gRPC failures into one-line ArenaErrors."""

    def __init__(self, arena: arena_pb2_grpc.ArenaStub, metadata: tuple[tuple[str, str], ...], server: str):
        self.arena = arena
        self.metadata = metadata
        self.server = server

    def call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.arena, method)(request, metadata=self.metadata, timeout=CALL_TIMEOUT)
        except grpc.RpcError as error:
            raise self._error(error) from None

    def stream(self, method: str, request: Any) -> Iterator[Any]:
        try:
            yield from getattr(self.arena, method)(request, metadata=self.metadata, timeout=CALL_TIMEOUT)
        except grpc.RpcError as error:
            raise self._error(error) from None

    def follow(self, method: str, request: Any) -> Iterator[Any]:
        """A stream that lasts as long as what it follows (a match being played): no deadline."""
        try:
            yield from getattr(self.arena, method)(request, metadata=self.metadata)
        except grpc.RpcError as error:
            raise self._error(error) from None

    def _error(self, error: grpc.RpcError) -> ArenaError:
        """The failure in words a person acts on, never a bare status code: the server's own
        sentence for a refusal (exit 2), what went wrong where for a fault of the server (exit 3)."""
        code: grpc.StatusCode = error.code()
        details: str = (error.details() or "").strip()
        if code is grpc.StatusCode.UNAVAILABLE:
            return ArenaError(
                f"cannot reach the Arena at {self.server} (is 'septet up' running? another server: "
                f"--server or SEPTET_SERVER){': ' + details if details else ''}",
                ARENA_FAILED,
            )
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return ArenaError(
                f"the Arena at {self.server} did not answer within {CALL_TIMEOUT:.0f} s; try again later",
                ARENA_FAILED,
            )
        if code is grpc.StatusCode.UNIMPLEMENTED:
            return ArenaError(
                f"the Arena at {self.server} does not offer this call (an older server?): {details}",
                ARENA_FAILED,
            )
        if code in SERVER_FAULTS:
            failure = details or code.name.lower()
            return ArenaError(f"the Arena at {self.server} failed: {failure}", ARENA_FAILED)
        if code is grpc.StatusCode.UNAUTHENTICATED:
            return ArenaError(f"{details} (pass --token sep_... or set SEPTET_TOKEN)")
        return ArenaError(details or f"the Arena refused the call ({code.name.lower().replace('_', ' ')})")


def _submit(client: _Client, args: argparse.Namespace, out: Console) -> int:
    if not client.metadata:
        raise ArenaError("submitting needs an API token: pass --token sep_... or set SEPTET_TOKEN")
    archive = pack_folder(args.folder, build_first=True)  # the platform builds offline: ship node_modules
    chunks = (
        pb.SubmitBotChunk(data=archive[i : i + UPLOAD_CHUNK]) for i in range(0, len(archive), UPLOAD_CHUNK)
    )
    response: pb.SubmitBotResponse = client.call("SubmitBot", chunks)
    out.print(
        f"submitted {response.bot} version {response.version} ({len(archive):,} bytes, "
        f"sha256 {response.archive_sha256[:12]}): {response.status}"
    )
    if not args.wait:
        out.print(
            f"its qualification goes on: the bot's page on the site shows how it ends (next time, "
            f"submit with --wait to follow it here); then septet matches {response.bot}"
        )
        return 0
    version = _await_qualification(client, response.bot, response.version, args.wait_timeout, out)
    warning = name_warning(response.bot, version.reported_name)
    if warning:
        out.print(warning, markup=False, soft_wrap=True)  # one line: a script may grep it
    if version.status == "active":
        out.print(
            f"{response.bot} version {version.number} qualified and is active on: {', '.join(version.games)}"
        )
        return 0
    out.print(qualification_outcome(response.bot, version.number, version.status))
    if version.error_log:
        out.print(version.error_log.rstrip(), markup=False)
    return OUTCOME_FAILED


def qualification_outcome(bot: str, number: int, status: str) -> str:
    """How a version that did not become active ended, in words ("failed qualification")."""
    if status == "failed":
        return f"{bot} version {number} failed qualification"
    return f"{bot} version {number} is {status}"


def name_warning(bot: str, reported: str) -> str:
    """A warning when the bot process calls itself otherwise than its manifest does ("" when
    alike or when it reports no name): the platform lists it by the manifest's name, while
    `septet match` and `check` by address show the reported one, and a copied example keeps
    the example's name (`name = "random"`) unless its author changes both."""
    if not reported or reported == bot:
        return ""
    return (
        f"warning: the bot calls itself {reported!r} (the `name` in its code) but its manifest names "
        f"it {bot!r}: the platform shows {bot!r}, `septet match` by address {reported!r}; give both "
        "the same name"
    )


def progress_text(progress: pb.QualificationProgress) -> str:
    """Where a qualification is, in a few words: "waiting for a worker", "building", "playing
    oh-hell (game 4 of 6; 1 failed so far)"."""
    if progress.step == "queued":
        return "waiting for a worker"
    if progress.step == "building":
        return "building"
    if progress.step != "playing" or not progress.games:
        return progress.step or "waiting for a worker"
    failed = f"; {progress.games_failed} failed so far" if progress.games_failed else ""
    total = len(progress.games)
    if progress.game:
        return f"playing {progress.game} (game {min(progress.games_over + 1, total)} of {total}{failed})"
    return f"{progress.games_over} of {total} games played{failed}"


def _await_qualification(
    client: _Client, bot: str, number: int, timeout: float, out: Console
) -> pb.BotVersionInfo:
    """Polls the version until it is no longer qualifying, showing how far it has got: a status
    line redrawn in place on a terminal, else a plain line each time the step changes (a log or
    CI job shows what it is waiting for, without a line per second)."""
    started = time.monotonic()
    label = f"qualifying {bot} version {number}"
    shown = ""
    with contextlib.ExitStack() as stack:
        status = stack.enter_context(out.status(label)) if out.is_terminal else None
        while True:
            response: pb.GetBotResponse = client.call("GetBot", pb.GetBotRequest(name=bot))
            version = next(v for v in response.versions if v.number == number)
            if version.status != QUALIFYING:
                return version
            elapsed = time.monotonic() - started
            text = progress_text(version.progress) if version.HasField("progress") else ""
            if status is not None:
                status.update(f"{label}: {text}, {elapsed:.0f} s" if text else f"{label}, {elapsed:.0f} s")
            elif text != shown:
                out.print(f"{label}: {text} ({elapsed:.0f} s)", markup=False, soft_wrap=True)
                shown = text
            if elapsed > timeout:
                raise ArenaError(
                    f"{bot} version {number} is still qualifying after {timeout:.0f} s "
                    f"({text or 'no progress reported'}); it goes on, and the bot's page on the site "
                    "shows how it ends",
                    OUTCOME_FAILED,
                )
            time.sleep(WAIT_POLL_SECONDS)


def _bots(client: _Client, args: argparse.Namespace, out: Console) -> int:
    response: pb.ListBotsResponse = client.call("ListBots", pb.ListBotsRequest(owner=args.owner))
    if args.json:
        print(json.dumps(_as_dict(response), indent=2))
        return 0
    if not response.bots:
        out.print("no bots" + (f" of {args.owner}" if args.owner else ""))
        return 0
    table = _table("bot", "owner", "kind", "version", "status", "since")
    for bot in response.bots:
        kind = "house" if bot.is_house else "sandboxed"
        if bot.self_hosted:
            kind = "self-hosted, " + (_connected_text(bot) if bot.connected else "not connected")
        table.add_row(
            bot.name,
            bot.owner,
            kind,
            str(bot.latest_version or "-"),
            bot.latest_status or "-",
            bot.created[:10],
        )
    out.print(table)
    return 0


def _ladder(client: _Client, args: argparse.Namespace, out: Console) -> int:
    if args.game is None:
        return _ladders_overview(client, args, out)
    pool = "open" if args.open else "sandboxed"
    response: pb.GetLadderResponse = client.call("GetLadder", pb.GetLadderRequest(game=args.game, pool=pool))
    if args.json:
        print(json.dumps(_as_dict(response), indent=2))
        return 0
    ladder = response.ladder
    out.print(
        f"[bold]{_ladder_label(ladder)}[/] ladder: {_players(ladder)} players, "
        f"{ladder.decision_seconds:g} s per decision + {ladder.bank_seconds:g} s bank"
        + ("" if ladder.active else " (inactive: no new matches)")
    )
    if not response.standings:
        out.print("no rated bots yet")
        return 0
    table = _table("#", "bot", "owner", "version", "rating", "interval", "games", "last match")
    for row in response.standings:
        table.add_row(
            str(row.rank),
            row.bot,
            row.owner,
            str(row.version),
            str(row.rating),
            f"{row.low}..{row.high}",
            str(row.games),
            row.last_match[:19].replace("T", " "),
        )
    out.print(table)
    out.print(STANDINGS_LEGEND, markup=False)
    return 0


LEADERS_SHOWN = 3
"""`septet ladder` without a game shows this many of each ladder's standings."""
STANDINGS_LEGEND = "rating: a new bot has 1500 (interval about 95%); unplayed bots are listed last"


def _ladders_overview(client: _Client, args: argparse.Namespace, out: Console) -> int:
    """Every ladder with its leaders (the question a newcomer asks is who is winning, not what
    the time controls are), and how to see one ladder whole."""
    ladders = list(client.call("ListLadders", pb.ListLaddersRequest()).ladders)
    standings = {
        _ladder_label(ladder): list(
            client.call("GetLadder", pb.GetLadderRequest(game=ladder.game, pool=ladder.pool)).standings
        )
        for ladder in ladders
    }
    if args.json:
        listed = [
            {
                **_as_dict(ladder),
                "leaders": [_as_dict(row) for row in standings[_ladder_label(ladder)][:LEADERS_SHOWN]],
            }
            for ladder in ladders
        ]
        print(json.dumps(listed, indent=2))
        return 0
    if not ladders:
        out.print("this server has no ladder yet")
        return 0
    table = _table("game", "players", "#", "bot", "rating", "games", "bots")
    for ladder in ladders:
        rows = standings[_ladder_label(ladder)]
        game = _ladder_label(ladder) + ("" if ladder.active else " (inactive)")
        if not rows:
            table.add_row(game, _players(ladder), "-", "no rated bots yet", "", "", "0")
            continue
        for index, row in enumerate(rows[:LEADERS_SHOWN]):
            first = index == 0
            table.add_row(
                game if first else "",
                _players(ladder) if first else "",
                str(row.rank),
                row.bot,
                f"{row.rating} ({row.low}..{row.high})",
                str(row.games),
                str(len(rows)) if first else "",
            )
    out.print(table)
    out.print(
        f"the top {LEADERS_SHOWN} of each ladder; one in full, with its time control: "
        "septet ladder GAME [--open]",
        markup=False,
    )
    return 0


def _connected_text(bot: pb.BotSummary) -> str:
    """ "connected since 12:04 UTC, answers in 38 ms" (the time from send to receive: network and
    thinking), as far as the Arena knows them."""
    since = f" since {bot.connected_since[11:16]} UTC" if len(bot.connected_since) >= 16 else ""
    answers = f", answers in {bot.answer_ms:.0f} ms" if bot.answer_ms > 0 else ""
    return f"connected{since}{answers}"


def _ladder_label(ladder: pb.Ladder) -> str:
    """The game id, with "(open)" for its open ladder (as the site names them)."""
    return f"{ladder.game} (open)" if ladder.pool == "open" else ladder.game


def _players(ladder: pb.Ladder) -> str:
    if ladder.min_players == ladder.max_players:
        return str(ladder.min_players)
    return f"{ladder.min_players}-{ladder.max_players}"


def _token_needed(args: argparse.Namespace, what: str) -> None:
    """Refuses before calling the Arena when the command needs a token and none was given."""
    if not args.token:
        raise ArenaError(f"{what} needs an API token: pass --token sep_... or set SEPTET_TOKEN")


def _matches(client: _Client, args: argparse.Namespace, out: Console) -> int:
    _token_needed(args, "listing matches")
    if not 1 <= args.limit <= 100:
        raise ArenaError(f"--limit must be 1-100, not {args.limit}")
    status = args.status or "finished"
    matches = _list_matches(client, args, "" if status == "all" else status, args.limit)
    waiting = _list_matches(client, args, "waiting", WAITING_SHOWN) if not args.status else []
    if args.json:
        print(json.dumps([_as_dict(match) for match in [*matches, *waiting]], indent=2))
        return 0
    if matches:
        out.print(_matches_table(matches, args.bot))
        if any(_rating_cell(match, args.bot) in ("-", "set") for match in matches):
            out.print(_rating_legend(args.bot), markup=False)
        if any(match.has_replay for match in matches):
            out.print("* replay published: septet replay fetch MATCH; your bot's output: septet logs MATCH")
    else:
        out.print(f"{args.bot} has no {'' if status == 'all' else status + ' '}matches yet")
    if waiting:
        out.print(f"\nqueued or running (all of them: septet matches {args.bot} --status waiting):")
        out.print(_matches_table(waiting, args.bot))
    return 0


def _list_matches(client: _Client, args: argparse.Namespace, status: str, limit: int) -> list[pb.MatchInfo]:
    request = pb.ListMatchesRequest(bot=args.bot, game=args.game, page_size=limit, status=status)
    return list(client.call("ListMatches", request).matches)


def _matches_table(matches: list[pb.MatchInfo], bot: str) -> RichTable:
    """One row per match, narrow enough for 80 columns: `bot`'s result (rank, score, rating
    change: `_rating_cell`) first, then every seat on a line of its own; a `*` after the id marks
    a published replay, and a match that is not a ladder's says its kind beside the game."""
    table = _table("match", "game", "finished", "rank", "score", "rating", "seats (score, rank)")
    for match in matches:
        own = next((seat for seat in match.seats if seat.bot == bot), None)
        kind = "" if match.kind == "ladder" else f" ({match.kind})"
        table.add_row(
            str(match.id) + ("*" if match.has_replay else ""),
            match.game + kind,
            match.finished[5:16].replace("T", " ") if match.finished else match.status,
            f"#{own.rank}" if own is not None and own.HasField("rank") else "-",
            str(own.score) if own is not None and own.HasField("score") else "-",
            _rating_cell(match, bot),
            "\n".join(_seat(seat) for seat in match.seats),
        )
    return table


def _rating_cell(match: pb.MatchInfo, bot: str) -> str:
    """The change the match made to `bot`'s rating ("+12"); "set" for a finished rated match
    that made none (a duplicate set is rated once, at its last rotation), "-" for an unrated
    one, "" for a rated one not over yet."""
    own = next((seat for seat in match.seats if seat.bot == bot), None)
    if own is not None and own.HasField("rating_change"):
        return f"{own.rating_change:+d}"
    if not match.rated:
        return "-"
    return "set" if match.status == "finished" else ""


def _rating_legend(bot: str) -> str:
    """What the rating column's values mean, in lines that fit 80 columns."""
    return (
        f"rating: the match's change to {bot}'s rating; -: unrated (a challenge or qualification)\n"
        "set: rated with its duplicate set, which changes ratings once, at its last rotation"
    )


def _logs(client: _Client, args: argparse.Namespace, out: Console) -> int:
    _token_needed(args, "reading a match's logs")
    response = client.call("GetMatchLogs", pb.GetMatchLogsRequest(match_id=args.match_id))
    if args.json:
        print(json.dumps(_as_dict(response), indent=2))
        return 0
    for log in response.seats:
        out.print(f"[bold]seat {log.seat}: {log.bot} v{log.version}[/bold]", highlight=False)
        if log.forfeit_status:
            at = f" at replay event {log.forfeit_event}" if log.HasField("forfeit_event") else ""
            out.print(
                f"forfeited ({log.forfeit_status}){at}: {log.forfeit_reason}", markup=False, highlight=False
            )
        if log.truncated:
            out.print("(earlier output dropped: the last 64 KiB of whole lines are kept)", highlight=False)
        if log.output:
            sys.stdout.write(log.output if log.output.endswith("\n") else log.output + "\n")
            sys.stdout.flush()
        else:
            out.print("(no output)", highlight=False)
    return 0


def _tournament(client: _Client, args: argparse.Namespace, out: Console) -> int:
    if args.tournament_command == "enter":
        if not client.metadata:
            raise ArenaError("entering needs an API token: pass --token sep_... or set SEPTET_TOKEN")
        request = pb.EnterTournamentRequest(name=args.name, bot=args.bot)
        entered: pb.EnterTournamentResponse = client.call("EnterTournament", request)
        out.print(
            f"{entered.bot} is entered in {entered.tournament.title}; its latest active version is "
            f"frozen when entries close at {entered.tournament.entry_deadline[:16].replace('T', ' ')} UTC"
        )
        return 0
    if args.tournament_command == "list":
        tournaments = client.call("ListTournaments", pb.ListTournamentsRequest()).tournaments
        if args.json:
            print(json.dumps([_as_dict(tournament) for tournament in tournaments], indent=2))
            return 0
        if not tournaments:
            out.print("no tournament yet")
            return 0
        table = _table("name", "title", "game", "format", "table", "entries close", "entrants", "status")
        for t in tournaments:
            table.add_row(
                t.name,
                t.title,
                t.game,
                t.format,
                str(t.table_size),
                t.entry_deadline[:16].replace("T", " "),
                str(t.entrants),
                t.status,
            )
        out.print(table)
        return 0
    response: pb.GetTournamentResponse = client.call("GetTournament", pb.GetTournamentRequest(name=args.name))
    if args.json:
        print(json.dumps(_as_dict(response), indent=2))
        return 0
    t, progress = response.tournament, response.progress
    left = f", about {_duration(progress.seconds_left)} left" if progress.seconds_left else ""
    out.print(
        f"[bold]{t.title}[/] ({t.name}): {t.game}, {t.format}, tables of {t.table_size}, {t.status}; "
        f"{progress.done} of {progress.total} matches played{left}",
        soft_wrap=True,  # one line a script can search, however narrow the terminal
    )
    if response.problem:
        out.print(response.problem, markup=False)
    if not response.standings:
        out.print(f"{len(response.entrants)} entrant(s); standings appear when entries close")
        return 0
    table = _table("place", "bot", "version", "mean rank", "95% interval", "sets", "tied with")
    for row in response.standings:
        interval = f"{row.low:.2f}..{row.high:.2f}" if row.sets > 1 else "needs 2 sets"
        table.add_row(
            f"{row.place}{'=' if row.tied_with else ''}",
            row.bot,
            str(row.version),
            "-" if row.sets == 0 else f"{row.mean_rank:.2f}",
            interval,
            str(row.sets),
            ", ".join(row.tied_with),
        )
    out.print(table)
    out.print("lower mean rank is better; '=' marks entrants statistically tied with another")
    return 0


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def _seat(seat: pb.SeatInfo) -> str:
    score = f" {seat.score}" if seat.HasField("score") else ""
    rank = f" #{seat.rank}" if seat.HasField("rank") else ""
    forfeit = f" forfeit {seat.forfeit_status}" if seat.forfeit_status else ""
    return f"{seat.bot} v{seat.version}{score}{rank}{forfeit}"


def _fetch(client: _Client, args: argparse.Namespace, out: Console) -> int:
    _token_needed(args, "fetching a replay")
    path: Path = args.out or Path(f"match-{args.match_id}.json.gz")
    data = b"".join(
        chunk.data for chunk in client.stream("GetReplay", pb.GetReplayRequest(match_id=args.match_id))
    )
    partial = path.with_name(path.name + ".part")
    try:
        partial.write_bytes(data)
        partial.replace(path)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ArenaError(f"cannot write {path}: {error.strerror}") from None
    out.print(f"wrote {path} ({len(data):,} bytes)")
    if args.no_verify:
        return 0
    try:
        verified = replay.verify(replay.load(path))
    except replay.ReplayError as error:
        raise ArenaError(f"{path} does not verify: {error}", OUTCOME_FAILED) from None
    out.print(f"verified: {verified.game}, {verified.events} events re-played through the engine")
    return 0


def _table(*columns: str) -> RichTable:
    """A plain table whose columns keep to one line but the last, which wraps on a narrow terminal
    (the seats of a match, say) so ids and names are never cut short."""
    table = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for column in columns[:-1]:
        table.add_column(column, no_wrap=True)
    table.add_column(columns[-1], overflow="fold")
    return table


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _as_dict(message: Any) -> dict[str, Any]:
    return MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
