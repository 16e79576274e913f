"""Faults between a self-hosted bot and the Arena, on the platform the README starts (once for
this module, with the Arena listening on the host's end of a veth pair of the test's own): the
network delayed and cut (the bot in a network namespace), the bot's client killed (and started
again), and the Arena process killed under a connected bot (the start command restarts it).

Every outcome is read from the command's own database and replay files, not from the code under
test: which seats forfeited, how and when, and that the sandboxed bot in the other seat played
each game to its end. The self-hosted bot is `tests/start/bots/marking` run by `septet bot
connect` as its author would run it; it marks its decisions in a file, so the faults land in the
middle of a match rather than at a guessed moment. The games are seven-up-seven-down with two
seats (two rotations a set, about 70 decisions a seat): the shortest set that still has another
seat to check.
"""

from __future__ import annotations

import contextlib
import gzip
import http.cookiejar
import json
import os
import re
import shutil
import signal
import sqlite3
import statistics
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from network_namespace import BotNetwork, DelayRelay, NamespaceUnavailable
from process_tree import Identity, descendants, identity, left_after
from start_support import (
    READY,
    ROOT,
    SEPTET,
    START,
    SeatRow,
    Started,
    clean_environment,
    demo_api_token,
    seats_of,
    start,
)

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("start-command")]

GAME = "seven-up-seven-down"
OPPONENT = "greedy"
MARKING = Path(__file__).resolve().parent / "bots" / "marking"
PAUSE = 0.05
"""Seconds the marking bot waits before each decision: a match of about 70 decisions a seat then
lasts a few seconds, long enough to act in the middle of it, and far inside 1 s a decision."""
MID_MATCH = 10
"""Decisions the bot has made when a fault is made: well into its first match."""
DELAY_MS = 100
SLACK = 5.0
"""Seconds allowed past a clock's own limit for the worker to notice and the database to say so."""


@dataclass
class Faults:
    """The platform of this module: its run, the demo account's password, and the bot network
    (None where this machine cannot make one: the network tests skip, the others run on the
    loopback)."""

    started: Started
    password: str
    network: BotNetwork | None
    why_no_network: str


@pytest.fixture(scope="module")
def faults(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Faults]:
    folder = tmp_path_factory.mktemp("faults")
    network: BotNetwork | None = None
    why = ""
    try:
        network = BotNetwork(str(os.getpid())).open()
    except NamespaceUnavailable as error:
        why = str(error)
    examples = folder / "examples"  # two house bots: the opponent, and one for its qualification
    for name in (OPPONENT, "random"):
        shutil.copytree(ROOT / "bots" / "examples" / name, examples / name)
    started: Started | None = None
    try:
        started = start(
            START,
            folder,
            "--examples",
            str(examples),
            arena_host=network.host_address if network else "127.0.0.1",
        )
        started.wait_until(READY, 600)
        password = re.search(r"sign in\s+demo, password (\S+)", started.said())
        assert password, started.said()
        yield Faults(started, password[1], network, why)
    finally:
        try:
            if started is not None:
                started.stop()
        finally:
            if network is not None:
                network.close()


def _network(faults: Faults) -> BotNetwork:
    if faults.network is None:
        pytest.skip(f"no network namespace can be made here: {faults.why_no_network}")
    return faults.network


def _register(faults: Faults, name: str) -> str:
    """A self-hosted bot registered on the site's tokens page by plain form posts (the browser
    test does it in chromium); its connect token, shown once."""
    web = faults.started.web
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))

    def form_token(path: str) -> str:
        with opener.open(f"http://{web}{path}", timeout=20) as page:
            found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.read().decode())
        assert found, f"{path} has a form"
        return found[1]

    def post(path: str, fields: dict[str, str], *, form: str = "") -> str:
        """A form post with the token of the form at `form` (default: `path` itself); the page
        it ends on."""
        token = form_token(form or path)
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token, **fields}).encode()
        with opener.open(urllib.request.Request(f"http://{web}{path}", data=data), timeout=20) as answer:
            return str(answer.read().decode())

    post("/account/sign-in/", {"username": "demo", "password": faults.password})
    page = post("/account/self-hosted/", {"name": name, "games": GAME}, form="/account/tokens/")
    shown = re.search(r'id="new-token"[^>]*>\s*(sep_\S+?)\s*<', page)
    assert shown, "the tokens page shows the new bot's connect token"
    return shown[1]


class Client:
    """`septet bot connect` of the marking bot, as its author runs it (inside the namespace when
    `network` is given), its output in a log; stopped, or killed with everything it started."""

    def __init__(self, folder: Path, token: str, server: str, network: BotNetwork | None = None) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.marks, self.log = folder / "marks", folder / "connect.log"
        command = [
            SEPTET, "bot", "connect", str(MARKING), "--server", server,
            "--env", f"SEPTET_MARKS={self.marks}", "--env", f"SEPTET_PAUSE={PAUSE}",
        ]  # fmt: skip
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                network.command(command) if network else command,
                env={**clean_environment(), "SEPTET_TOKEN": token},
                cwd=folder, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            )  # fmt: skip
        self.started: set[Identity] = set()

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def decisions(self) -> int:
        return self.marks.read_text().count("decide") if self.marks.exists() else 0

    def wait_for(self, pattern: str, seconds: float, count: int = 1) -> float:
        """Waits until `pattern` is in the log `count` times; the seconds it took."""
        began = time.monotonic()
        while len(re.findall(pattern, self.said())) < count:
            assert self.process.poll() is None, f"the client exited:\n{self.said()}"
            assert time.monotonic() - began < seconds, f"no {pattern!r} within {seconds} s:\n{self.said()}"
            self.started |= descendants(self.process.pid)
            time.sleep(0.1)
        self.started |= descendants(self.process.pid)
        return time.monotonic() - began

    def wait_for_decisions(self, count: int, seconds: float = 120) -> None:
        deadline = time.monotonic() + seconds
        while self.decisions() < count:
            assert self.process.poll() is None, f"the client exited:\n{self.said()}"
            assert time.monotonic() < deadline, f"fewer than {count} decisions in {seconds} s"
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL to the client and the bot it started (a crash: nothing is cleaned up), by the
        pids this test saw it start."""
        processes = self.started | descendants(self.process.pid)
        myself = identity(self.process.pid)
        for pid, _ in [*([myself] if myself else []), *processes]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        assert not left_after(processes, 10), "the killed client's bot is gone too"

    def stop(self) -> None:
        """SIGTERM, as a service manager stops it: the client and its bot end."""
        processes = self.started | descendants(self.process.pid)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
                raise AssertionError(f"septet bot connect did not stop on SIGTERM:\n{self.said()}") from None
        assert not left_after(processes, 10), "the client's bot stopped with it"


def _challenge(faults: Faults, bot: str) -> subprocess.Popen[str]:
    """`septet challenge BOT greedy --wait` on the host: one set, both rotations."""
    return subprocess.Popen(
        [SEPTET, "challenge", bot, OPPONENT, "--game", GAME, "--wait", "--wait-timeout", "300",
         "--server", faults.started.arena, "--token", demo_api_token(faults.started)],
        env=clean_environment(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip


def _challenged(challenge: subprocess.Popen[str]) -> str:
    output, _ = challenge.communicate(timeout=330)
    assert challenge.returncode == 0, output
    return output


def _challenge_seats(faults: Faults, bot: str) -> list[SeatRow]:
    """The bot's seats in its challenge's matches. A connected self-hosted bot is also seated on
    its game's open ladder meanwhile: those matches take the same faults, and are not checked."""
    return seats_of(faults.started.data, bot, kind="challenge")


def _mid_match(faults: Faults, bot: str, client: Client, seconds: float = 60) -> int:
    """Waits until the bot is well into a match of its challenge: the match running in the
    database, then MID_MATCH more decisions of the bot (some may be an open-ladder match's: the
    replay tells afterwards how far the challenge's match was, `_decisions_before_forfeit`)."""
    deadline = time.monotonic() + seconds
    while True:
        running = [seat.match_id for seat in _challenge_seats(faults, bot) if seat.status == "running"]
        if running:
            break
        assert time.monotonic() < deadline, (
            f"no match of {bot}'s challenge ran: {_challenge_seats(faults, bot)}"
        )
        time.sleep(0.05)
    client.wait_for_decisions(client.decisions() + MID_MATCH)
    return running[0]


def _until_finished(faults: Faults, match_id: int, seconds: float = 120) -> float:
    """Seconds until the match is recorded finished."""
    began = time.monotonic()
    while _match_status(faults.started.data, match_id) != "finished":
        assert time.monotonic() - began < seconds, f"match {match_id} did not finish in {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - began


def _match_status(data: Path, match_id: int) -> str:
    with sqlite3.connect(f"file:{data / 'septet.sqlite3'}?mode=ro", uri=True, timeout=5) as connection:
        row = connection.execute("select status from matches_match where id = ?", [match_id]).fetchone()
    return str(row[0])


def _others(data: Path, match_ids: list[int], bot: str) -> list[tuple[int, str, str, str]]:
    """(match, bot, match status, forfeit status) of every other seat of these matches."""
    marks = ",".join("?" * len(match_ids))
    with sqlite3.connect(f"file:{data / 'septet.sqlite3'}?mode=ro", uri=True, timeout=5) as connection:
        rows = connection.execute(
            "select m.id, b.name, m.status, s.forfeit_status from matches_seat s"
            " join matches_match m on m.id = s.match_id"
            " join bots_botversion v on v.id = s.bot_version_id join bots_bot b on b.id = v.bot_id"
            f" where m.id in ({marks}) and b.name != ? order by m.id",
            [*match_ids, bot],
        ).fetchall()
    return [(int(match), str(name), str(status), str(forfeit)) for match, name, status, forfeit in rows]


def _assert_others_played_on(faults: Faults, bot: str) -> list[int]:
    """Every match of the bot finished, and the sandboxed seat of each played it to its end with
    no forfeit; the matches' ids."""
    ids = [seat.match_id for seat in _challenge_seats(faults, bot)]
    assert len(ids) == 2, ids  # one seat in each rotation of the set
    others = _others(faults.started.data, ids, bot)
    assert len(others) == len(ids), others
    assert all(status == "finished" and not forfeit for _, _, status, forfeit in others), others
    return ids


def _replay(data: Path, match_id: int) -> dict[str, Any]:
    with sqlite3.connect(f"file:{data / 'septet.sqlite3'}?mode=ro", uri=True, timeout=5) as connection:
        (name,) = connection.execute("select replay from matches_match where id = ?", [match_id]).fetchone()
    with gzip.open(data / "replays" / name) as replay:
        loaded: dict[str, Any] = json.load(replay)
    return loaded


def _seconds_per_decision(replay: dict[str, Any], bot: str) -> list[float]:
    """The bot's time on each of its decisions, as the worker's clock charged it (from send to
    answer: network and thinking together)."""
    (seat,) = [entry["seat"] for entry in replay["seats"] if entry["name"].startswith(f"{bot} ")]
    return [
        event["us"] / 1e6
        for event in replay["events"]
        if event.get("type") == "action" and event.get("seat") == seat and "us" in event
    ]


def _decisions_before_forfeit(replay: dict[str, Any], bot: str) -> int:
    """How many decisions the bot's seat made before it forfeited: the fault came mid-match."""
    (seat,) = [entry["seat"] for entry in replay["seats"] if entry["name"].startswith(f"{bot} ")]
    made = 0
    for event in replay["events"]:
        if event.get("type") == "forfeit" and event.get("seat") == seat:
            return made
        made += event.get("type") == "action" and event.get("seat") == seat
    raise AssertionError(f"{bot} did not forfeit")


def _time_control(replay: dict[str, Any]) -> tuple[float, float]:
    control = replay["time_control"]
    return float(control["per_decision"]), float(control["bank"])


# The network delayed and cut (the bot in a namespace) ---------------------------------------------


def test_a_100_ms_delay_each_way_still_plays_the_challenge_within_the_time_control(
    faults: Faults, tmp_path: Path
) -> None:
    network = _network(faults)
    bot = "fault-delayed"
    token = _register(faults, bot)
    relay: DelayRelay | None = None
    if network.netem_delay(DELAY_MS):
        server = faults.started.arena
    else:  # a kernel without sch_netem: the same delay by a relay on the host's end of the link
        relay = DelayRelay(network.host_address, faults.started.arena, DELAY_MS / 1000)
        server = relay.address
    client = Client(tmp_path, token, server, network)
    try:
        client.wait_for("connected to", 60)
        _challenged(_challenge(faults, bot))
        seats = _challenge_seats(faults, bot)
        assert len(seats) == 2 and all(
            seat.status == "finished" and not seat.forfeit_status for seat in seats
        ), seats
        for match_id in _assert_others_played_on(faults, bot):
            replay = _replay(faults.started.data, match_id)
            per_decision, _ = _time_control(replay)
            times = _seconds_per_decision(replay, bot)
            assert len(times) > 50, len(times)
            # Every answer paid the round trip (the delay was there), and none its whole decision time.
            assert min(times) >= 2 * DELAY_MS / 1000, min(times)
            assert max(times) < per_decision, max(times)
            print(f"match {match_id}: {len(times)} decisions, median {statistics.median(times):.3f} s, "
                  f"max {max(times):.3f} s ({'relay' if relay else 'netem'})")  # fmt: skip
    finally:
        client.stop()
        if relay is not None:
            relay.close()
        network.netem_clear()


def test_a_cut_link_forfeits_the_seat_on_time_and_the_other_seat_plays_on(
    faults: Faults, tmp_path: Path
) -> None:
    network = _network(faults)
    bot = "fault-cut"
    client = Client(tmp_path, _register(faults, bot), faults.started.arena, network)
    try:
        client.wait_for("connected to", 60)
        challenge = _challenge(faults, bot)
        cut_match = _mid_match(faults, bot, client)
        network.cut()
        forfeited_after = _until_finished(faults, cut_match)
        _challenged(challenge)
    finally:
        network.restore()
        client.stop()
    seats = {seat.match_id: seat for seat in _challenge_seats(faults, bot)}
    assert seats[cut_match].forfeit_status == "TIMEOUT", seats[cut_match]
    replay = _replay(faults.started.data, cut_match)
    assert _decisions_before_forfeit(replay, bot) >= 1, "the link was cut in the middle of the match"
    per_decision, bank = _time_control(replay)
    assert per_decision <= forfeited_after <= per_decision + bank + SLACK, forfeited_after
    ids = _assert_others_played_on(faults, bot)
    print(f"cut in match {cut_match}: forfeited {forfeited_after:.1f} s after the cut; seats {seats}; "
          f"matches {ids}")  # fmt: skip


# The client killed ------------------------------------------------------------------------------


def test_a_killed_client_forfeits_on_time_within_its_bank_and_the_other_seat_plays_on(
    faults: Faults, tmp_path: Path
) -> None:
    bot = "fault-killed"
    client = Client(tmp_path, _register(faults, bot), faults.started.arena)
    client.wait_for("connected to", 60)
    challenge = _challenge(faults, bot)
    killed_match = _mid_match(faults, bot, client)
    client.kill()
    forfeited_after = _until_finished(faults, killed_match)
    _challenged(challenge)
    seats = {seat.match_id: seat for seat in _challenge_seats(faults, bot)}
    assert seats[killed_match].forfeit_status == "TIMEOUT", seats[killed_match]
    replay = _replay(faults.started.data, killed_match)
    assert _decisions_before_forfeit(replay, bot) >= 1, "the client was killed in the middle of the match"
    per_decision, bank = _time_control(replay)
    assert per_decision <= forfeited_after <= per_decision + bank + SLACK, forfeited_after
    _assert_others_played_on(faults, bot)
    print(f"killed in match {killed_match}: forfeited {forfeited_after:.1f} s after the kill; {seats}")


def test_a_client_killed_and_started_again_within_its_bank_continues_its_match(
    faults: Faults, tmp_path: Path
) -> None:
    bot = "fault-restarted"
    token = _register(faults, bot)
    client = Client(tmp_path / "first", token, faults.started.arena)
    client.wait_for("connected to", 60)
    challenge = _challenge(faults, bot)
    killed_match = _mid_match(faults, bot, client)
    client.kill()
    again = Client(tmp_path / "again", token, faults.started.arena)
    try:
        back_after = again.wait_for("connected to", 60)
        _challenged(challenge)
    finally:
        again.stop()
    per_decision, bank = _time_control(_replay(faults.started.data, killed_match))
    assert back_after < per_decision + bank, f"connected again {back_after:.1f} s after the kill"
    _assert_others_played_on(faults, bot)
    seats = _challenge_seats(faults, bot)
    later = [seat for seat in seats if seat.match_id != killed_match]
    assert later and not any(seat.forfeit_status for seat in later), seats
    print(f"connected again {back_after:.1f} s after the kill; {seats}\n{again.said()}")
    killed = next(seat for seat in seats if seat.match_id == killed_match)
    assert not killed.forfeit_status, killed


# The Arena restarted (last: the platform's Arena is a new process afterwards) ----------------------


def test_the_arena_restarted_the_client_reconnects_with_backoff_and_plays_its_next_match(
    faults: Faults, tmp_path: Path
) -> None:
    bot = "fault-arena"
    client = Client(tmp_path, _register(faults, bot), faults.started.arena)
    try:
        client.wait_for("connected to", 60)
        arena = faults.started.children["arena"]
        os.kill(arena, signal.SIGKILL)  # the pid the start command printed for its Arena child
        back_after = client.wait_for("reconnected to", 90)
        assert faults.started.children["arena"] != arena, "the start command started a new Arena"
        _challenged(_challenge(faults, bot))
        assert client.process.poll() is None, "the client kept running through the restart"
    finally:
        client.stop()
    pauses = [
        float(pause) for pause in re.findall(r"(?:trying again|reconnecting) in ([\d.]+) s", client.said())
    ]
    assert pauses and "lost the connection" in client.said(), client.said()
    assert pauses == sorted(pauses), f"each pause at least the one before: {pauses}"
    seats = _challenge_seats(faults, bot)
    assert len(seats) == 2 and not any(seat.forfeit_status for seat in seats), seats
    _assert_others_played_on(faults, bot)
    print(f"reconnected {back_after:.1f} s after the Arena was killed, pauses {pauses}")
