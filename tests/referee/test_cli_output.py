"""What the local tools print: tables within 80 columns, bots given by address under the name they
report, and qualification outcomes in words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from referee.botkit.sdk import Bot, _NameInterceptor, create_server
from referee.tools.arena_cli import qualification_outcome
from referee.tools.cli import main
from referee.tools.lineup import reported_name


class Named(Bot):
    """Plays the first legal action; its name is set per test."""

    def decide(self, info: object, legal: tuple) -> object:  # type: ignore[type-arg]
        return legal[0]


@pytest.fixture
def served() -> Iterator[object]:
    """Starts SDK bots on free local ports for a test; stops them after."""
    servers: list[grpc.Server] = []

    def serve(name: str) -> str:
        server, address = create_server(Named(name), "127.0.0.1:0")
        server.start()
        servers.append(server)
        return address

    yield serve
    for server in servers:
        server.stop(grace=None)


def _run(capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code = main(list(words))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


@pytest.mark.parametrize("players", [3, 7])
def test_match_table_fits_80_columns_with_seven_seats(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, players: int
) -> None:
    """Tried: the widest table (7 seats, every rank column, intervals) at COLUMNS=80."""
    monkeypatch.setenv("COLUMNS", "80")
    out = _run(capsys, "match", "--game", "oh-hell", "--players", str(players), "--games", "4",
               "--seed", "2", "--duplicate", "greedy", "random")  # fmt: skip
    lines = out.splitlines()
    assert max(map(len, lines)) <= 80, "\n".join(line for line in lines if len(line) > 80)
    rows = [line for line in lines if line.startswith(("greedy", "random"))]
    assert len(rows) == 2 and all("[" in row and "]" in row for row in rows), "the CI is on the bot's row"
    assert "forfeits: none" in out


def test_compare_differences_table_fits_80_columns_and_the_verdict_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = _run(capsys, "compare", "--game", "oh7", "--games", "8", "--seed", "1", "random", "greedy")
    table = [line for line in out.splitlines() if line.startswith(("per game", "rank A-B", "score B-A"))]
    assert len(table) == 3 and max(map(len, table)) <= 80, out
    assert all(row.count("[") == 1 and "]" in row for row in table[1:]), "each interval on its row"
    assert any(line.startswith("B (greedy) is better than A (random) (SPRT") for line in out.splitlines())


def test_a_bot_given_by_address_is_shown_by_the_name_it_reports(
    capsys: pytest.CaptureFixture[str], served: object
) -> None:
    address = served("lowest-first")  # type: ignore[operator]
    assert reported_name(address) == "lowest-first"
    summary = json.loads(_run(capsys, "match", "--game", "oh7", "--games", "2", "--seed", "1", "--json",
                              address, "greedy", "random"))  # fmt: skip
    assert {bot["name"] for bot in summary["bots"]} == {"lowest-first", "greedy", "random"}
    report = json.loads(_run(capsys, "check", address, "--game", "oh7-duel", "--games", "1", "--json"))
    assert report["bot"] == "lowest-first"


def test_two_addresses_reporting_one_name_are_told_apart_by_address(
    capsys: pytest.CaptureFixture[str], served: object
) -> None:
    first, second = served("twin"), served("twin")  # type: ignore[operator]
    summary = json.loads(_run(capsys, "match", "--game", "oh7", "--games", "1", "--seed", "1", "--json",
                              first, second, "greedy"))  # fmt: skip
    assert {bot["name"] for bot in summary["bots"]} == {first, second, "greedy"}


@pytest.mark.parametrize(
    "hostile", ["[bold red]boss[/]", "a" * 41, "name with spaces", "-dash-first", "caf\u00e9"]
)
def test_a_reported_name_that_is_not_a_plain_short_name_is_ignored(
    capsys: pytest.CaptureFixture[str], hostile: str
) -> None:
    """Tried: a bot naming itself with markup, spaces, too long, or non-ASCII: shown by its address."""
    server = grpc.server(ThreadPoolExecutor(max_workers=2), interceptors=[_NameInterceptor(hostile)])
    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        assert reported_name(f"127.0.0.1:{port}") is None
    finally:
        server.stop(grace=None)


def test_a_bot_that_reports_no_name_is_shown_by_its_address(capsys: pytest.CaptureFixture[str]) -> None:
    server = grpc.server(ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        assert reported_name(f"127.0.0.1:{port}") is None
    finally:
        server.stop(grace=None)


def test_a_failed_version_is_said_to_have_failed_qualification() -> None:
    assert qualification_outcome("mine", 2, "failed") == "mine version 2 failed qualification"
    assert "is failed" not in qualification_outcome("mine", 2, "failed")
    assert qualification_outcome("mine", 3, "retired") == "mine version 3 is retired"


def test_check_table_fits_80_columns_uncut(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tried: every game id (the longest id, seven-up-seven-down, included) at COLUMNS=80."""
    monkeypatch.setenv("COLUMNS", "80")
    out = _run(capsys, "check", "greedy", "--games", "1")
    assert max(map(len, out.splitlines())) <= 80, out
    assert "\u2026" not in out, "no header or game id cut short"
    assert any(line.startswith("seven-up-seven-down ") for line in out.splitlines())


def test_check_table_of_a_slow_bot_on_every_table_size_still_fits_80_columns() -> None:
    """Tried: the widest row there can be: the longest game id, every table size of oh-hell, four-
    digit counts and decision times of seconds (a slow bot, or a slow machine under load)."""
    from rich.console import Console

    from referee.tools.check import GameReport
    from referee.tools.cli import check_table

    slow = [0.0009, 0.012, 0.95, 2.4]  # seconds: up to 2400 ms
    reports = [
        GameReport("seven-up-seven-down", (2, 3, 4, 5, 6, 7), games=1200, decisions=9999, latencies=slow),
        GameReport("oh-hell", (3, 4, 5, 6, 7), games=1200, decisions=9999, latencies=slow),
    ]
    console = Console(width=80, record=True)
    console.print(check_table(reports))
    out = console.export_text()
    assert max(map(len, out.splitlines())) <= 80, out
    assert "\u2026" not in out, out
