"""The CLI's commands over the platform's Arena gRPC API: submit, ladder, matches, tournament,
replay fetch.

They are plain gRPC clients of `septet.v1.Arena`, so a bot author needs only `pip install septet`
and a token from the site; nothing of the platform runs locally. The server address comes from
`--server` or `SEPTET_SERVER` (default: the one-command platform's 127.0.0.1:50051), the API token
from `--token` or `SEPTET_TOKEN`. A refusal by the server is printed as one line with its gRPC
status, exit code 1; a mistake in the call itself is a usage error, exit code 2.
"""

from __future__ import annotations

import argparse
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
from referee.tools import challenge_cli
from referee.tools.packing import pack_folder

DEFAULT_SERVER = "127.0.0.1:50051"
UPLOAD_CHUNK = 64 * 1024
CALL_TIMEOUT = 30.0
REMOTE_FAILED = 1
QUALIFYING = "qualifying"
COMMANDS = ("submit", "ladder", "matches", "tournament", "logs", challenge_cli.COMMAND)
WAITING_SHOWN = 5
"""`septet matches` lists a bot's finished matches and, apart, this many of its waiting ones."""


class ArenaError(Exception):
    """The Arena refused a call or could not be reached; printed as one line, exit code 1."""


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
        "  septet submit bots/examples/greedy --wait",
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
        help="show a game's ladder standings (or every ladder)",
        description="Without GAME, list the ladders; with GAME, its standings, best first.",
        epilog="example:\n  septet ladder oh-hell",
        formatter_class=raw,
    )
    ladder.add_argument("game", nargs="?", metavar="GAME")

    matches = commands.add_parser(
        "matches",
        parents=[connection, as_json],
        help="list a bot's recent matches on the platform: finished first",
        description="A bot's finished matches, newest first, with each seat's score, rank and rating "
        "change, then apart the queued and running ones (needs an API token). Seeds and replays show "
        "once a match's whole duplicate set is over.",
        epilog="examples:\n  septet matches greedy --game oh-hell --limit 5\n"
        "  septet matches greedy --status waiting",
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
        epilog="example:\n  septet logs 1234",
        formatter_class=raw,
    )
    logs.add_argument("match_id", type=int, metavar="MATCH_ID")

    challenge_cli.add_parser(commands, parents=[connection, as_json])

    tournament = commands.add_parser(
        "tournament",
        parents=[connection],
        help="list tournaments, read one's standings, or enter a bot",
        description="Organised events on the platform: list them, read one's progress and standings "
        "(mean rank over duplicate sets with a 95% interval; overlapping intervals are statistically "
        "tied), or enter one of your bots before its deadline (needs a token).",
        epilog="examples:\n  septet tournament list\n  septet tournament standings winter-cup\n"
        "  septet tournament enter winter-cup my-bot",
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
        epilog="example:\n  septet replay fetch 42 && septet replay verify match-42.json.gz",
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
            if args.command == "matches":
                return _matches(client, args, out)
            if args.command == "tournament":
                return _tournament(client, args, out)
            if args.command == "logs":
                return _logs(client, args, out)
            if args.command == challenge_cli.COMMAND:
                return challenge_cli.run(client, args, out)
            return _fetch(client, args, out)
    except ArenaError as error:
        print(f"septet: error: {error}", file=sys.stderr)
        return REMOTE_FAILED


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

    def _error(self, error: grpc.RpcError) -> ArenaError:
        code: grpc.StatusCode = error.code()
        details: str = error.details() or ""
        if code is grpc.StatusCode.UNAVAILABLE:
            return ArenaError(f"cannot reach the Arena at {self.server} (is 'septet up' running?): {details}")
        if code is grpc.StatusCode.UNAUTHENTICATED:
            return ArenaError(f"{details} (pass --token or set SEPTET_TOKEN)")
        return ArenaError(f"{details} ({code.name})")


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
        out.print(f"follow it with: septet submit ... --wait, or septet matches {response.bot}")
        return 0
    version = _await_qualification(client, response.bot, response.version, args.wait_timeout, out)
    if version.status == "active":
        out.print(
            f"{response.bot} version {version.number} qualified and is active on: {', '.join(version.games)}"
        )
        return 0
    out.print(qualification_outcome(response.bot, version.number, version.status))
    if version.error_log:
        out.print(version.error_log.rstrip(), markup=False)
    return REMOTE_FAILED


def qualification_outcome(bot: str, number: int, status: str) -> str:
    """How a version that did not become active ended, in words ("failed qualification")."""
    if status == "failed":
        return f"{bot} version {number} failed qualification"
    return f"{bot} version {number} is {status}"


def _await_qualification(
    client: _Client, bot: str, number: int, timeout: float, out: Console
) -> pb.BotVersionInfo:
    deadline = time.monotonic() + timeout
    with out.status(f"qualifying {bot} version {number}"):
        while True:
            response: pb.GetBotResponse = client.call("GetBot", pb.GetBotRequest(name=bot))
            version = next(v for v in response.versions if v.number == number)
            if version.status != QUALIFYING:
                return version
            if time.monotonic() > deadline:
                raise ArenaError(f"{bot} version {number} is still qualifying after {timeout:.0f} s")
            time.sleep(1.0)


def _ladder(client: _Client, args: argparse.Namespace, out: Console) -> int:
    if args.game is None:
        ladders = client.call("ListLadders", pb.ListLaddersRequest()).ladders
        if args.json:
            print(json.dumps([_as_dict(ladder) for ladder in ladders], indent=2))
            return 0
        table = _table("game", "players", "decision s", "bank s", "active")
        for ladder in ladders:
            players = f"{ladder.min_players}-{ladder.max_players}"
            table.add_row(
                ladder.game,
                players,
                f"{ladder.decision_seconds:g}",
                f"{ladder.bank_seconds:g}",
                _yes(ladder.active),
            )
        out.print(table)
        return 0
    response: pb.GetLadderResponse = client.call("GetLadder", pb.GetLadderRequest(game=args.game))
    if args.json:
        print(json.dumps(_as_dict(response), indent=2))
        return 0
    ladder = response.ladder
    out.print(
        f"[bold]{ladder.game}[/] ladder: {ladder.min_players}-{ladder.max_players} players, "
        f"{ladder.decision_seconds:g} s per decision + {ladder.bank_seconds:g} s bank"
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
    return 0


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
    change) first, then every seat on a line of its own; a `*` after the id marks a published
    replay, and a match that is not a ladder's says its kind beside the game."""
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
            f"{own.rating_change:+d}" if own is not None and own.HasField("rating_change") else "-",
            "\n".join(_seat(seat) for seat in match.seats),
        )
    return table


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
        raise ArenaError(f"{path} does not verify: {error}") from None
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
