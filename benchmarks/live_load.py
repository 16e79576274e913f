"""Live streams under load: 500 spectators and 20 people playing, against a real `septet up`.

It starts `septet up` itself (its embedded SQLite and Redis, a temporary data folder, free ports;
the tables pool as large as the number of tables, per-user table limits out of the way), waits
until ladder matches flow and counts them over a calm window (`--calm-seconds`). Then one asyncio
client process (a small HTTP/1.1 and server-sent events client of its own) signs in `--tables`
users over the site's form, starts a table for each (`--game`, the person in seat 0 against the
house bots greedy and random, `--clock`), and opens at once every person's own seat stream and
`--spectators` public streams spread evenly over those matches. When all are open, the people
start answering: each prompt at once, with its first legal action (POST .../answer). A person whose
table ends before `--seconds` have passed starts another, and that table's spectators follow it.
After the load, every stream is read whole from the embedded Redis and compared with what each
connection received; ladder matches are counted again over a window after the load.

Printed, with the goals of issue 26:
- (a) event-to-viewer latency p50/p95/p99 over every spectator delivery: the batch's arrival
  minus its Redis entry id's millisecond part (Redis's clock at XADD; same machine), for batches
  added after the connection was open (a late joiner's backlog is no latency); goal p95 < 250 ms.
  Arrival is the kernel's receive time on the client's socket (SO_TIMESTAMPNS), so the client's
  own lag on the shared cores is not counted (it is printed);
- (b) per connection, batches lost, out of order, duplicated or changed against the stream in
  Redis; goal 0;
- (c) memory per connection: the resident memory of the site's processes (`septet up`'s web child
  and its gunicorn workers) before the streams are opened and with all of them open, the
  difference over the number of connections;
- (d) CPU per delivered batch: the site processes' CPU seconds over the load over the batches
  delivered to spectators and seats (and every other part's CPU over the same window);
- (e) ladder matches finished per minute before, during and after the load (from the database);
- (f) a person's round trip: from sending the answer to the next batch on their seat stream (the
  `answered` the centre adds) and to the batch with their own `action` (the worker applied it:
  the card shows on the table), p50/p95; goal p95 < 150 ms.

And where the time goes: every part's CPU over the load (the bots' in their worker's), the
site's event-loop threads apart from its page threads, how long each waited runnable for a core,
the first byte of a static file through the site's page path every 0.2 s, the client's loop lag,
the live parts' warnings in `septet up`'s log, and ladder matches per 15 s.

    python benchmarks/live_load.py [--tables 20] [--spectators 500] [--seconds 60]
                                   [--calm-seconds 60] [--after-seconds 60] [--game oh-hell]

Everything runs on this machine's cores (the platform, its bots and the client): note the load
average it prints; about 5-8 minutes with the house bots' qualification first. Ctrl-C or SIGTERM
stops everything it started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import itertools
import json
import os
import resource
import shutil
import signal
import socket
import sqlite3
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

# benchmarks/referee.py would shadow the referee package: this folder goes last on the path (for
# process_table, a sibling module).
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
sys.path.append(str(Path(__file__).resolve().parent))

from process_table import process_table  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PR_SET_PDEATHSIG = 1
STARTUP_LIMIT_SECONDS = 900.0
FLOWING_LADDER_MATCHES = 10
STOP_LIMIT_SECONDS = 120.0
GOAL_LATENCY_P95_MS = 250.0
GOAL_ROUND_TRIP_P95_MS = 150.0
LIVE_PREFIX = "septet:"
MATCH_PATH = "/matches/"
SITE_CHILD = "web"
PROBE_PATH = "/static/web/site.css"
PROBE_SECONDS = 0.2
OPEN_LIMIT_SECONDS = 120.0
CHECK_COUNTS = (
    "connections",
    "lost",
    "out_of_order",
    "duplicated",
    "changed",
    "unfinished",
    "bad_connections",
    "failed",
    "stream_entries",
)
SERIES_SECONDS = 15.0
MIB = 2**20
USERS_SCRIPT = """
import json, secrets, sys
import django
django.setup()
from django.contrib.auth import get_user_model
users = []
for name in sys.argv[1:]:
    password = secrets.token_urlsafe(12)
    user, _ = get_user_model().objects.get_or_create(username=name)
    user.set_password(password)
    user.save()
    users.append([name, password])
print(json.dumps(users))
"""


# The platform ---------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _die_with_us() -> None:
    """In a child before it runs: SIGTERM when this benchmark dies, however (SIGKILL included)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)  # the way out runs every cleanup (the client, the platform)


def _utc_text(wall: float) -> str:
    """A wall time as Django stores a datetime in SQLite (naive UTC), for comparing in SQL."""
    return datetime.fromtimestamp(wall, UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


class Platform:
    """A `septet up` of this tree in its own data folder, and how to read its database."""

    def __init__(self, data: Path, *, table_workers: int) -> None:
        self.data = data
        self.web = f"127.0.0.1:{_free_port()}"
        self.arena = f"127.0.0.1:{_free_port()}"
        unset = ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "SEPTET_LIVE_REDIS_URL")
        env = {key: value for key, value in os.environ.items() if key not in unset}
        env["SEPTET_TABLE_WORKERS"] = str(table_workers)
        env["SEPTET_OPEN_TABLES_PER_USER"] = "1000"
        env["SEPTET_TABLES_PER_HOUR"] = "100000"
        self.env = env
        self.log = data / "up.log"
        command = [sys.executable, "-c", "import sys; from referee.tools.cli import main; sys.exit(main())"]
        command += ["up", "--data", str(data), "--web", self.web, "--arena", self.arena]
        with self.log.open("wb") as output:
            self.up = subprocess.Popen(
                command,
                env=env,
                cwd=ROOT,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a terminal's Ctrl-C reaches us, and we stop it in order
                preexec_fn=_die_with_us,
            )

    @property
    def redis_socket(self) -> Path:
        return self.data / "redis.socket"

    def children(self) -> dict[str, int]:
        """The launcher's children by name (`web`, `tables`, `worker1`, `redis`, ...): their pids."""
        try:
            state = json.loads((self.data / "supervision.json").read_text())
        except (OSError, ValueError):
            return {}
        return {name: child["pid"] for name, child in state.get("children", {}).items() if child.get("pid")}

    def query(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        """One read-only query on the platform's SQLite database (no rows until it is migrated)."""
        database = self.data / "septet.sqlite3"
        if not database.exists():
            return []
        try:
            with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=10) as connection:
                return connection.execute(sql, params).fetchall()
        except sqlite3.OperationalError:
            return []

    def ladder_finished(self, since: float | None = None, until: float | None = None) -> int:
        """Ladder matches finished (between two wall times, when given)."""
        sql = "select count(*) from matches_match where kind = 'ladder' and status = 'finished'"
        params: list[str] = []
        if since is not None and until is not None:
            sql += " and finished >= ? and finished < ?"
            params = [_utc_text(since), _utc_text(until)]
        rows = self.query(sql, *params)
        return int(rows[0][0]) if rows else 0

    def ladder_series(self, since: float, until: float, step: float) -> list[int]:
        """Ladder matches finished in each `step` seconds from `since` to `until`."""
        rows = self.query(
            "select finished from matches_match where kind = 'ladder' and status = 'finished'"
            " and finished >= ? and finished < ?",
            _utc_text(since),
            _utc_text(until),
        )
        counts = [0] * max(1, int((until - since) // step))
        for (finished,) in rows:
            moment = datetime.fromisoformat(str(finished)).replace(tzinfo=UTC).timestamp()
            counts[min(len(counts) - 1, int((moment - since) // step))] += 1
        return counts

    def alive(self) -> None:
        if self.up.poll() is not None:
            raise SystemExit(f"septet up exited with code {self.up.returncode}:\n{self.tail()}")

    def log_lines(self, text: str) -> list[str]:
        """The lines of `septet up`'s output (its children's included) that contain `text`."""
        with contextlib.suppress(OSError):
            return [line for line in self.log.read_text(errors="replace").splitlines() if text in line]
        return []

    def tail(self) -> str:
        with contextlib.suppress(OSError):
            return self.log.read_text(errors="replace")[-3000:]
        return ""

    def wait_flowing(self) -> None:
        """Until the site answers and ladder matches flow (the house bots have qualified)."""
        deadline = time.monotonic() + STARTUP_LIMIT_SECONDS
        while "ready in" not in self.tail() or self.ladder_finished() < FLOWING_LADDER_MATCHES:
            self.alive()
            if time.monotonic() > deadline:
                raise SystemExit(f"ladder matches did not flow within {STARTUP_LIMIT_SECONDS:.0f} s")
            time.sleep(1)

    def users(self, names: list[str]) -> list[list[str]]:
        """Makes the users (name, password) with the platform's own settings and database."""
        env = {
            **self.env,
            "DJANGO_SETTINGS_MODULE": "septet_platform.settings.local",
            "SEPTET_DATA_DIR": str(self.data),
            "SEPTET_SECRET_KEY_FILE": str(self.data / "secret_key"),
            "REDIS_URL": f"redis+socket://{self.redis_socket}",
            "PYTHONPATH": str(ROOT / "platform"),
        }
        done = subprocess.run(
            [sys.executable, "-c", USERS_SCRIPT, *names], env=env, cwd=ROOT, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"cannot make the benchmark's users:\n{done.stderr[-3000:]}")
        return list(json.loads(done.stdout.strip().splitlines()[-1]))

    def stop(self) -> None:
        """SIGTERM to the launcher (it stops its children), then whatever of theirs is left."""
        children = self.children()
        if self.up.poll() is None:
            self.up.send_signal(signal.SIGTERM)
            try:
                self.up.wait(timeout=STOP_LIMIT_SECONDS)
            except subprocess.TimeoutExpired:
                self.up.kill()
                self.up.wait()
        for pid in children.values():  # each child leads a process group of its own
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)


# Processes: CPU and memory of process trees (Linux /proc) ---------------------------------------


def _members(roots: dict[str, int]) -> tuple[dict[int, str], dict[int, tuple[int, int]]]:
    """Every process of the named trees (pid: the root's name), and the process table's figures."""
    parents, figures = process_table()
    members = {}
    for name, root in roots.items():
        todo = [root]
        while todo:
            pid = todo.pop()
            if pid in figures:
                members[pid] = name
            todo += parents.get(pid, [])
    return members, figures


def tree_rss(root: int) -> int:
    """Resident bytes of a process and its descendants."""
    members, figures = _members({"tree": root})
    return sum(figures[pid][1] for pid in members) * os.sysconf("SC_PAGE_SIZE")


class TreeCpu:
    """CPU seconds of named process trees over a window, processes that ended within it included:
    each process counts its CPU as last seen (sample() often: a bot's sandbox ends with a kill, so
    its CPU never reaches a parent's count of waited-for children)."""

    def __init__(self, roots: dict[str, int]) -> None:
        self.roots = roots
        self.first: dict[int, int] = {}
        self.last: dict[int, tuple[str, int]] = {}
        self.sample()
        self.first = {pid: ticks for pid, (_, ticks) in self.last.items()}

    def sample(self) -> None:
        members, figures = _members(self.roots)
        for pid, name in members.items():
            self.last[pid] = (name, figures[pid][0])

    def seconds(self) -> dict[str, float]:
        self.sample()
        spent = dict.fromkeys(self.roots, 0.0)
        for pid, (name, ticks) in self.last.items():
            spent[name] += (ticks - self.first.get(pid, 0)) / os.sysconf("SC_CLK_TCK")
        return spent


def site_threads(master: int) -> dict[str, Any]:
    """The site's gunicorn workers (children of `master`): seconds so far that their main threads
    (each one's event loop: the streams) and their other threads (the page pool, Django's
    sync_to_async thread) ran and waited runnable for a core (/proc's schedstat), and each
    worker's open sockets."""
    parents, _ = process_table()
    found = {"loop": 0.0, "others": 0.0, "loop_waited": 0.0, "others_waited": 0.0}
    sockets = []
    for worker in parents.get(master, []):
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{worker}/task").iterdir():
                ran, waited = (int(value) / 1e9 for value in (task / "schedstat").read_text().split()[:2])
                kind = "loop" if int(task.name) == worker else "others"
                found[kind] += ran
                found[f"{kind}_waited"] += waited
            descriptors = Path(f"/proc/{worker}/fd").iterdir()
            sockets.append(sum(1 for fd in descriptors if os.readlink(fd).startswith("socket:")))
    return {**found, "sockets": sockets}


def cores_busy(before: tuple[int, int], after: tuple[int, int]) -> float:
    """The machine's cores in use on average between two `machine_ticks()`."""
    busy, total = (a - b for a, b in zip(after, before, strict=True))
    return busy / max(total, 1) * (os.cpu_count() or 1)


def machine_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine so far, from /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


# The client: HTTP/1.1 and server-sent events on asyncio ----------------------------------------


def now_ms() -> float:
    return time.time() * 1000.0


@dataclass
class Response:
    status: int
    headers: list[tuple[str, str]]
    body: bytes = b""

    def header(self, name: str) -> str:
        return next((value for key, value in self.headers if key == name), "")


async def _read_head(reader: asyncio.StreamReader) -> Response:
    line = await reader.readline()
    if not line:
        raise ConnectionResetError("the server closed the connection")
    status = int(line.split()[1])
    headers: list[tuple[str, str]] = []
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b"\n", b""):
            return Response(status, headers)
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip().lower(), value.strip()))


async def _chunks(reader: asyncio.StreamReader) -> AsyncIterator[bytes]:
    """The chunks of a chunked body, as they arrive."""
    while True:
        size_line = await reader.readline()
        if not size_line:
            raise ConnectionResetError("the server closed the stream mid-body")
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                pass  # trailers
            return
        yield (await reader.readexactly(size + 2))[:-2]


async def _read_body(reader: asyncio.StreamReader, response: Response) -> bytes:
    if response.header("transfer-encoding").lower() == "chunked":
        return b"".join([chunk async for chunk in _chunks(reader)])
    length = response.header("content-length")
    if length:
        return await reader.readexactly(int(length))
    return await reader.read()


class Browser:
    """One person's browser: a cookie jar and kept-alive connections for pages and answers (one
    request at a time on each, as HTTP/1.1 has it; another is opened when all are busy)."""

    IDLE_SECONDS = 1.5
    """Below the server's keep-alive (gunicorn's default 2 s): an older idle connection is closed."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.cookies: dict[str, str] = {}
        self._idle: list[tuple[float, asyncio.StreamReader, asyncio.StreamWriter]] = []

    @property
    def origin(self) -> str:
        return f"http://{self.host}:{self.port}"

    def cookie_header(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        while self._idle:
            used, reader, writer = self._idle.pop()
            if time.monotonic() - used <= self.IDLE_SECONDS and not reader.at_eof():
                return reader, writer
            writer.close()
        return await asyncio.open_connection(self.host, self.port)

    async def request(
        self, method: str, path: str, *, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> Response:
        """One request on an idle kept-alive connection, or a new one."""
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}"]
        if self.cookies:
            lines.append(f"Cookie: {self.cookie_header()}")
        for name, value in (headers or {}).items():
            lines.append(f"{name}: {value}")
        if body or method == "POST":
            lines.append(f"Content-Length: {len(body)}")
        raw = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
        for attempt in range(2):
            reader, writer = await self._connection()
            try:
                writer.write(raw)
                await writer.drain()
                response = await _read_head(reader)
            except (ConnectionError, OSError):
                writer.close()
                if attempt:
                    raise
                continue  # the server closed it while idle: nothing was read, send it again
            response.body = await _read_body(reader, response)
            for name, value in response.headers:
                if name == "set-cookie":
                    cookie, _, _ = value.partition(";")
                    key, _, text = cookie.partition("=")
                    self.cookies[key.strip()] = text.strip()
            if response.header("connection").lower() == "close":
                writer.close()
            else:
                self._idle.append((time.monotonic(), reader, writer))
            return response
        raise AssertionError("unreachable")

    async def close(self) -> None:
        for _, _, writer in self._idle:
            writer.close()
        self._idle.clear()

    async def sign_in(self, username: str, password: str) -> None:
        """The site's sign-in form, as a browser fills it in."""
        await self.request("GET", "/account/sign-in/")
        form = {"username": username, "password": password, "csrfmiddlewaretoken": self.cookies["csrftoken"]}
        response = await self.post_form("/account/sign-in/", form)
        if response.status != 302 or "sessionid" not in self.cookies:
            raise RuntimeError(f"sign-in of {username} refused: HTTP {response.status}")

    async def post_form(self, path: str, form: dict[str, str]) -> Response:
        return await self.request(
            "POST",
            path,
            body=urlencode(form).encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Origin": self.origin,
                "Referer": f"{self.origin}{path}",
            },
        )

    async def table_new(self, game: str, seats: list[str], clock: str) -> int:
        """Starts a table over the site's form; its match id."""
        form = {"game": game, "clock": clock, "csrfmiddlewaretoken": self.cookies["csrftoken"]}
        form |= {f"seat_{number}": name for number, name in enumerate(seats)}
        response = await self.post_form("/tables/new/", form)
        location = response.header("location")
        if response.status != 302 or MATCH_PATH not in location:
            raise RuntimeError(f"table refused: HTTP {response.status} {response.body[:2000]!r}")
        return int(location.split(MATCH_PATH, 1)[1].strip("/").split("/")[0])

    async def answer(self, match_id: int, seat: int, decision: str, action: Any) -> Response:
        body = json.dumps({"decision": decision, "action": action}).encode()
        return await self.request(
            "POST",
            f"/live/matches/{match_id}/seats/{seat}/answer",
            body=body,
            headers={
                "Content-Type": "application/json",
                "X-CSRFToken": self.cookies["csrftoken"],
                "Origin": self.origin,
                "Referer": f"{self.origin}{MATCH_PATH}{match_id}/",
            },
        )


@dataclass
class Connection:
    """What one stream connection received: entry ids in order, a checksum of each batch, when."""

    match_id: int
    audience: str
    """`public`, or `seatN`."""
    opened_ms: float = 0.0
    attempt: str = ""
    ids: list[str] = field(default_factory=list)
    crcs: list[int] = field(default_factory=list)
    ended: bool = False
    error: str = ""


SO_TIMESTAMPNS = 35
"""Linux's socket option (asm-generic): every read comes with the kernel's receive time."""


class TimedConnection:
    """A client TCP connection read on the event loop, each read stamped with the time its bytes
    reached this machine's socket (SO_TIMESTAMPNS), not when the client's loop got to them: the
    client shares the cores with the platform, and its own lag must not count as the platform's.
    Its responses are parsed as they arrive into ("head", ms, status, headers), ("event", ms,
    id, data) for each server-sent event with an id, and ("end", ms)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.loop = asyncio.get_running_loop()
        self.items: list[tuple[Any, ...]] = []
        self.closed = False
        self._waiter: asyncio.Future[None] | None = None
        self._buffer = bytearray()
        self._state = "head"
        self._need = 0
        self._text = ""
        self.loop.add_reader(sock.fileno(), self._readable)

    @classmethod
    async def open(cls, host: str, port: int) -> TimedConnection:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)  # before any byte arrives
        sock.setblocking(False)
        try:
            await asyncio.get_running_loop().sock_connect(sock, (host, port))
        except OSError:
            sock.close()
            raise
        return cls(sock)

    async def send(self, data: bytes) -> None:
        await self.loop.sock_sendall(self.sock, data)

    async def next(self) -> tuple[Any, ...]:
        """The next parsed item; ConnectionResetError once the server closed before it."""
        while not self.items:
            if self.closed:
                raise ConnectionResetError("the server closed the connection")
            self._waiter = self.loop.create_future()
            await self._waiter
        return self.items.pop(0)

    def close(self) -> None:
        if self.sock.fileno() >= 0:
            self.loop.remove_reader(self.sock.fileno())
            self.sock.close()
        self.closed = True

    def _readable(self) -> None:
        try:
            data, ancillary, _, _ = self.sock.recvmsg(1 << 18, socket.CMSG_SPACE(16))
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data, ancillary = b"", []
        stamp = now_ms()
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                seconds, nanoseconds = struct.unpack("qq", payload[:16])
                stamp = seconds * 1000.0 + nanoseconds / 1e6
        if data:
            self._buffer += data
            self._parse(stamp)
        else:
            self.loop.remove_reader(self.sock.fileno())
            self.closed = True
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _parse(self, stamp: float) -> None:
        buffer = self._buffer
        while True:
            if self._state == "head":
                end = buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                lines = bytes(buffer[:end]).decode("latin-1").split("\r\n")
                del buffer[: end + 4]
                headers = {}
                for line in lines[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                self.items.append(("head", stamp, int(lines[0].split()[1]), headers))
                if headers.get("transfer-encoding", "").lower() == "chunked":
                    self._state = "size"
                else:
                    self._state, self._need = "body", int(headers.get("content-length") or 0)
            elif self._state == "size":
                end = buffer.find(b"\r\n")
                if end < 0:
                    return
                size = int(bytes(buffer[:end]).split(b";")[0].strip() or b"0", 16)
                del buffer[: end + 2]
                if size == 0:
                    self._state = "done"
                    self.items.append(("end", stamp))
                    return
                self._state, self._need = "chunk", size
            elif self._state == "chunk":
                if len(buffer) < self._need + 2:
                    return
                self._text += bytes(buffer[: self._need]).decode()
                del buffer[: self._need + 2]
                self._state = "size"
                self._events(stamp)
            elif self._state == "body":
                if len(buffer) < self._need:
                    return
                del buffer[: self._need]
                self._state = "done"
                self.items.append(("end", stamp))
            else:
                return

    def _events(self, stamp: float) -> None:
        while "\n\n" in self._text:
            block, self._text = self._text.split("\n\n", 1)
            event_id, data = "", []
            for line in block.split("\n"):
                if line.startswith("id:"):
                    event_id = line[3:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].removeprefix(" "))
            if event_id:
                self.items.append(("event", stamp, event_id, "\n".join(data)))


def _get(host: str, port: int, path: str, cookies: str = "") -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}:{port}", "Accept: text/event-stream"]
    if cookies:
        lines.append(f"Cookie: {cookies}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def stream(
    host: str, port: int, path: str, connection: Connection, cookies: str = ""
) -> AsyncIterator[tuple[float, str, str]]:
    """The server-sent events of one stream: (arrival wall ms, entry id, data) per event with an
    id; `connection.opened_ms` is set to when the response's head arrived."""
    timed = await TimedConnection.open(host, port)
    try:
        await timed.send(_get(host, port, path, cookies))
        _, stamp, status, _ = await timed.next()
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}")
        connection.opened_ms = stamp
        while (item := await timed.next())[0] == "event":
            yield item[1], item[2], item[3]
    finally:
        timed.close()


async def first_byte_ms(host: str, port: int, path: str) -> float:
    """Milliseconds from sending a GET on a new connection to its response's head arriving."""
    timed = await TimedConnection.open(host, port)
    try:
        sent = now_ms()
        await timed.send(_get(host, port, path))
        _, stamp, status, _ = await timed.next()
        if status != 200:
            raise RuntimeError(f"{path}: HTTP {status}")
        return float(stamp) - sent
    finally:
        timed.close()


def _entry_ms(entry_id: str) -> float:
    return float(entry_id.partition("-")[0])


class Round:
    """One table of one person's run of tables, and who watches it."""

    def __init__(self, match_id: int, spectators: int) -> None:
        self.match_id = match_id
        self.spectators = spectators
        self.connected = 0
        self.watched = asyncio.Event()
        """Set once every spectator of this table has its stream open."""
        if spectators == 0:
            self.watched.set()
        self.started = time.monotonic()
        self.seconds = 0.0

    def spectator_connected(self) -> None:
        self.connected += 1
        if self.connected >= self.spectators:
            self.watched.set()


class Slot:
    """One person's tables, one after another while the load lasts, and their spectators."""

    def __init__(self, browser: Browser, spectators: int) -> None:
        self.browser = browser
        self.spectators = spectators
        self.rounds: list[Round] = []
        self.finished = False
        self._changed = asyncio.Event()

    def add(self, match_id: int) -> Round:
        found = Round(match_id, self.spectators)
        self.rounds.append(found)
        self._notify()
        return found

    def finish(self) -> None:
        self.finished = True
        self._notify()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def round(self, index: int) -> Round | None:
        """The person's `index`th table once it is started, or None if there is none."""
        while len(self.rounds) <= index and not self.finished:
            await self._changed.wait()
        return self.rounds[index] if index < len(self.rounds) else None


class Load:
    """The client's whole run (`--client`): sign-ins, tables, streams, answers, figures."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.host, port = config["address"].rsplit(":", 1)
        self.port = int(port)
        self.seat = config["seats"].index("you")
        self.connections: list[Connection] = []
        self.latencies: list[float] = []
        self.backlog_deliveries = 0
        self.delivered = {"spectators": 0, "seats": 0}
        self.round_trip_next: list[float] = []
        self.round_trip_action: list[float] = []
        self.answer_post: list[float] = []
        self.refused: list[str] = []
        self.errors: list[str] = []
        self.lag: list[float] = []
        self.go = asyncio.Event()
        self.go_ms = 0.0
        self.deadline = 0.0
        self.to_open = 0
        self.opened = 0
        self.rss_peak = 0
        self.probes: list[float] = []
        self.tree_cpu: TreeCpu | None = None

    # Processes

    def _roots(self) -> dict[str, int]:
        try:
            state = json.loads((Path(self.config["data"]) / "supervision.json").read_text())
        except (OSError, ValueError):
            return {}
        return {name: child["pid"] for name, child in state.get("children", {}).items() if child.get("pid")}

    def site_rss(self) -> int:
        roots = self._roots()
        return tree_rss(roots[SITE_CHILD])

    async def _sample(self) -> None:
        """The site's peak resident memory and the client loop's lag, while the load runs."""
        while True:
            before = time.monotonic()
            await asyncio.sleep(0.25)
            self.lag.append((time.monotonic() - before - 0.25) * 1000)
            if len(self.lag) % 4 == 0:
                self.rss_peak = max(self.rss_peak, self.site_rss())
                if self.tree_cpu is not None:
                    self.tree_cpu.sample()

    async def _probe(self) -> None:
        """A static file through the site's page path, every PROBE_SECONDS while the load runs."""
        while True:
            with contextlib.suppress(OSError, RuntimeError):
                self.probes.append(await first_byte_ms(self.host, self.port, PROBE_PATH))
            await asyncio.sleep(PROBE_SECONDS)

    # Streams

    def _opened(self) -> None:
        self.opened += 1
        if self.opened >= self.to_open and not self.go.is_set():
            self.go_ms = now_ms()
            self.go.set()

    async def spectate(self, slot: Slot, first_round: bool) -> None:
        """Follows the slot's tables, one after another, on their public streams."""
        index = 0
        while (table := await slot.round(index)) is not None:
            connection = Connection(table.match_id, "public")
            self.connections.append(connection)
            path = f"/live/matches/{table.match_id}/events"
            try:
                async for arrived, event_id, data in stream(self.host, self.port, path, connection):
                    if not connection.ids:
                        table.spectator_connected()
                        if index == 0 and first_round:
                            self._opened()
                    self._received(connection, arrived, event_id, data, spectator=True)
                    if '"end"' in data and _ends(data):
                        connection.ended = True
                        break
            except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError) as error:
                connection.error = f"{type(error).__name__}: {error}"
                self.errors.append(f"public {table.match_id}: {connection.error}")
                if not connection.ids:
                    table.spectator_connected()
                    if index == 0 and first_round:
                        self._opened()
            index += 1

    def _received(
        self, connection: Connection, arrived: float, event_id: str, data: str, *, spectator: bool
    ) -> None:
        attempt, _, entry = event_id.partition(":")
        connection.attempt = attempt
        connection.ids.append(entry)
        connection.crcs.append(zlib.crc32(data.encode()))
        if self.go.is_set() and arrived >= self.go_ms:
            self.delivered["spectators" if spectator else "seats"] += 1
        if not spectator:
            return
        added = _entry_ms(entry)
        if added >= connection.opened_ms:
            self.latencies.append(arrived - added)
        else:
            self.backlog_deliveries += 1

    async def play(self, slot: Slot, first_match: int) -> None:
        """The person: plays tables until the load's time is up, answering every prompt at once."""
        match_id, first = first_match, True
        while True:
            table = slot.add(match_id)
            await self._play_table(slot, table, first)
            table.seconds = time.monotonic() - table.started
            if time.monotonic() >= self.deadline:
                break
            try:
                match_id = await slot.browser.table_new(
                    self.config["game"], self.config["seats"], self.config["clock"]
                )
            except (OSError, RuntimeError) as error:
                self.errors.append(f"table_new: {error}")
                break
            first = False
        slot.finish()

    async def _play_table(self, slot: Slot, table: Round, first: bool) -> None:
        connection = Connection(table.match_id, f"seat{self.seat}")
        self.connections.append(connection)
        path = f"/live/matches/{table.match_id}/events?seat={self.seat}"
        pending: dict[str, Any] = {}
        answering: set[asyncio.Task[None]] = set()
        ready = self.go if first else table.watched

        async def answer(prompt: dict[str, Any]) -> None:
            await ready.wait()
            sent = now_ms()
            pending.clear()
            pending.update(decision=prompt["decision"], sent=sent, next=False)
            try:
                response = await slot.browser.answer(
                    table.match_id, self.seat, prompt["decision"], prompt["legal"][0]
                )
            except (OSError, asyncio.IncompleteReadError) as error:
                self.refused.append(f"{type(error).__name__}: {error}")
                pending.clear()
                return
            self.answer_post.append(now_ms() - sent)
            if response.status != 200:
                self.refused.append(f"HTTP {response.status}: {response.body[:200]!r}")
                pending.clear()

        try:
            async for arrived, event_id, data in stream(
                self.host, self.port, path, connection, slot.browser.cookie_header()
            ):
                if not connection.ids and first:
                    self._opened()
                self._received(connection, arrived, event_id, data, spectator=False)
                messages = json.loads(data)
                if pending and arrived >= pending["sent"]:
                    if not pending["next"]:
                        self.round_trip_next.append(arrived - pending["sent"])
                        pending["next"] = True
                    if any(m.get("type") == "action" and m.get("seat") == self.seat for m in messages):
                        self.round_trip_action.append(arrived - pending["sent"])
                        pending.clear()
                for message in messages:
                    if message.get("type") == "prompt":
                        task = asyncio.ensure_future(answer(message))
                        answering.add(task)
                        task.add_done_callback(answering.discard)
                if _ends(data):
                    connection.ended = True
                    break
        except (OSError, RuntimeError, asyncio.IncompleteReadError, ValueError) as error:
            connection.error = f"{type(error).__name__}: {error}"
            self.errors.append(f"seat {table.match_id}: {connection.error}")
            if not connection.ids and first:
                self._opened()
        for task in list(answering):
            task.cancel()

    # The run

    async def run(self) -> dict[str, Any]:
        config = self.config
        sampler = asyncio.ensure_future(self._sample())
        slots = []
        spectators = config["spectators"]
        for index in range(len(config["users"])):
            browser = Browser(self.host, self.port)
            share = spectators // len(config["users"]) + (index < spectators % len(config["users"]))
            slots.append(Slot(browser, share))
        say("signing in")
        await asyncio.gather(
            *(slot.browser.sign_in(*user) for slot, user in zip(slots, config["users"], strict=True))
        )
        say("starting tables")
        firsts = await asyncio.gather(
            *(slot.browser.table_new(config["game"], config["seats"], config["clock"]) for slot in slots)
        )
        rss_before = self.site_rss()
        self.to_open = len(slots) + spectators
        say(f"opening {self.to_open} streams")
        opening = time.monotonic()
        self.deadline = float("inf")
        players = [
            asyncio.ensure_future(self.play(slot, first)) for slot, first in zip(slots, firsts, strict=True)
        ]
        watchers = [
            asyncio.ensure_future(self.spectate(slot, True)) for slot in slots for _ in range(slot.spectators)
        ]
        try:
            await asyncio.wait_for(self.go.wait(), OPEN_LIMIT_SECONDS)
        except TimeoutError:
            self.errors.append(f"only {self.opened} of {self.to_open} streams had a batch in time")
            self.go_ms = now_ms()
            self.go.set()
        open_seconds = time.monotonic() - opening
        self.deadline = time.monotonic() + config["seconds"]
        roots = self._roots()
        self.tree_cpu = TreeCpu(roots)
        threads_before = site_threads(roots[SITE_CHILD])
        probe = asyncio.ensure_future(self._probe())
        machine_before = machine_ticks()
        client_before = resource.getrusage(resource.RUSAGE_SELF)
        rss_with = self.site_rss()
        self.rss_peak = rss_with
        say(f"all streams open in {open_seconds:.1f} s; the people answer now")
        go_wall = time.time()
        everyone = players + watchers
        done, late = await asyncio.wait(everyone, timeout=config["seconds"] + config["timeout"])
        for task in late:
            task.cancel()
        await asyncio.gather(*late, return_exceptions=True)
        for task in done:
            if task.exception() is not None:
                self.errors.append(f"task: {task.exception()!r}")
        end_wall = time.time()
        cpu = self.tree_cpu.seconds()
        threads_after = site_threads(roots[SITE_CHILD])
        machine_after = machine_ticks()
        client_after = resource.getrusage(resource.RUSAGE_SELF)
        sampler.cancel()
        probe.cancel()
        for slot in slots:
            await slot.browser.close()
        cpu["client"] = (client_after.ru_utime + client_after.ru_stime) - (
            client_before.ru_utime + client_before.ru_stime
        )
        tables = [table for slot in slots for table in slot.rounds]
        return {
            "go_wall": go_wall,
            "deadline_wall": go_wall + config["seconds"],
            "end_wall": end_wall,
            "open_seconds": open_seconds,
            "unfinished_tasks": len(late),
            "tables": len(tables),
            "table_seconds": [round(table.seconds, 1) for table in tables],
            "latency": _percentiles(self.latencies),
            "latency_samples": len(self.latencies),
            "backlog_deliveries": self.backlog_deliveries,
            "delivered": self.delivered,
            "round_trip_next": _percentiles(self.round_trip_next),
            "round_trip_action": _percentiles(self.round_trip_action),
            "answer_post": _percentiles(self.answer_post),
            "answers": len(self.answer_post),
            "refused": self.refused[:5],
            "refused_count": len(self.refused),
            "errors": self.errors[:10],
            "error_count": len(self.errors),
            "client_lag_ms": _percentiles(self.lag),
            "rss_before": rss_before,
            "rss_with": rss_with,
            "rss_peak": self.rss_peak,
            "cpu": cpu,
            "cores_busy": cores_busy(machine_before, machine_after),
            **{
                f"site_{name}": threads_after[name] - threads_before[name]
                for name in ("loop", "others", "loop_waited", "others_waited")
            },
            "site_sockets": threads_before["sockets"],
            "probe": _percentiles(self.probes),
            "check": self.check(),
        }

    def check(self) -> dict[str, Any]:
        """Every connection against its whole stream as Redis holds it."""
        import redis

        client = redis.Redis(unix_socket_path=self.config["redis_socket"])
        prefix = self.config["prefix"]
        streams: dict[str, list[tuple[str, int]]] = {}
        found: dict[str, int] = dict.fromkeys(CHECK_COUNTS, 0)
        examples: list[str] = []
        for connection in self.connections:
            found["connections"] += 1
            if not connection.ids:  # refused, or cut before its first batch
                found["failed"] += 1
                continue
            key = f"{prefix}live:{connection.match_id}:{connection.attempt}:{connection.audience}"
            if key not in streams:
                entries: Any = client.xrange(key)
                streams[key] = [(entry_id.decode(), zlib.crc32(fields[b"m"])) for entry_id, fields in entries]
                found["stream_entries"] += len(streams[key])
            whole = streams[key]
            expected = (
                whole
                if connection.ended
                else [e for e in whole if _order(e[0]) <= _order(connection.ids[-1])]
            )
            received = list(zip(connection.ids, connection.crcs, strict=True))
            orders = [_order(entry) for entry in connection.ids]
            out_of_order = sum(1 for a, b in itertools.pairwise(orders) if b < a)
            duplicated = len(orders) - len(set(orders))
            got = dict(received)
            lost = sum(1 for entry_id, _ in expected if entry_id not in got)
            changed = sum(1 for entry_id, crc in expected if entry_id in got and got[entry_id] != crc)
            found["lost"] += lost
            found["out_of_order"] += out_of_order
            found["duplicated"] += duplicated
            found["changed"] += changed
            found["unfinished"] += not connection.ended
            if lost or out_of_order or duplicated or changed or not connection.ended:
                found["bad_connections"] += 1
                if len(examples) < 5:
                    examples.append(
                        f"{key}: received {len(received)} of {len(whole)}, lost {lost}, out of order"
                        f" {out_of_order}, duplicated {duplicated}, changed {changed},"
                        f" ended {connection.ended}" + (f", {connection.error}" if connection.error else "")
                    )
        return {**found, "examples": examples}


def _order(entry_id: str) -> tuple[int, int]:
    milliseconds, _, sequence = entry_id.partition("-")
    return int(milliseconds), int(sequence or 0)


def _ends(data: str) -> bool:
    """Whether a batch holds the match's `end` message."""
    if '"end"' not in data:
        return False
    return any(isinstance(m, dict) and m.get("type") == "end" for m in json.loads(data))


def _percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {
        "n": len(values),
        "p50": statistics.median(values),
        "p95": _percentile(values, 0.95),
        "p99": _percentile(values, 0.99),
        "max": max(values),
    }


def say(text: str) -> None:
    print(f"live_load: {text}", file=sys.stderr, flush=True)


def client_main(config_file: Path) -> None:
    """The client process: runs the load and writes its figures next to its configuration."""
    config = json.loads(config_file.read_text())
    with contextlib.suppress(ImportError):
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    result = asyncio.run(Load(config).run())
    config_file.with_suffix(".result.json").write_text(json.dumps(result))


# The report -----------------------------------------------------------------------------------


def _ms(figures: dict[str, float], *keys: str) -> str:
    if not figures:
        return "-"
    return " / ".join(f"{figures[key]:.0f}" for key in keys)


def _verdict(figures: dict[str, float], goal_p95: float) -> str:
    return "met" if figures and figures["p95"] < goal_p95 else "MISSED"


def report(
    args: argparse.Namespace,
    result: dict[str, Any],
    ladder: dict[str, float],
    busy: dict[str, float],
    loads: list[float],
) -> None:
    """The summary table, the CPU split, and what missed its goal."""
    connections = args.spectators + args.tables
    check = result["check"]
    delivered = result["delivered"]["spectators"] + result["delivered"]["seats"]
    site_cpu = result["cpu"].get(SITE_CHILD, 0.0)
    rss_delta = result["rss_with"] - result["rss_before"]
    latency, next_rt, action_rt = result["latency"], result["round_trip_next"], result["round_trip_action"]
    wrong = sum(check[name] for name in ("lost", "out_of_order", "duplicated", "changed", "failed"))
    windows = ("before", "during", "after")
    per_minute = " / ".join(f"{ladder[name]:.1f}" if name in ladder else "-" for name in windows)
    cores = " / ".join(f"{busy[name]:.2f}" if name in busy else "-" for name in windows)
    rows = [
        (
            "(a) event-to-viewer latency p50/p95/p99 ms",
            f"{_ms(latency, 'p50', 'p95', 'p99')} (n={latency.get('n', 0)}, max {latency.get('max', 0):.0f})",
            f"p95 < {GOAL_LATENCY_P95_MS:.0f}",
            _verdict(latency, GOAL_LATENCY_P95_MS),
        ),
        (
            "(b) batches lost/out of order/dup/changed",
            f"{check['lost']}/{check['out_of_order']}/{check['duplicated']}/{check['changed']} over"
            f" {check['connections']} connections ({check['bad_connections']} bad, {check['failed']} failed)",
            "0",
            "met" if wrong == 0 and check["bad_connections"] == 0 else "MISSED",
        ),
        (
            "(c) site memory per connection",
            f"{rss_delta / connections / 1024:.0f} KiB ({result['rss_before'] / MIB:.0f} ->"
            f" {result['rss_with'] / MIB:.0f} MiB, peak {result['rss_peak'] / MIB:.0f}, {connections} open)",
            "",
            "",
        ),
        (
            "(d) site CPU per delivered batch",
            f"{1e6 * site_cpu / max(delivered, 1):.0f} us ({site_cpu:.1f} s / {delivered} batches)",
            "",
            "",
        ),
        ("(e) ladder matches/min before/during/after", f"{per_minute} (cores busy {cores})", "held", ""),
        (
            "(f) round trip to `answered` p50/p95 ms",
            f"{_ms(next_rt, 'p50', 'p95')} (n={next_rt.get('n', 0)})",
            f"p95 < {GOAL_ROUND_TRIP_P95_MS:.0f}",
            _verdict(next_rt, GOAL_ROUND_TRIP_P95_MS),
        ),
        (
            "(f) round trip to own `action` p50/p95 ms",
            f"{_ms(action_rt, 'p50', 'p95')} (n={action_rt.get('n', 0)})",
            f"p95 < {GOAL_ROUND_TRIP_P95_MS:.0f}",
            _verdict(action_rt, GOAL_ROUND_TRIP_P95_MS),
        ),
        ("    answer POST p50/p95 ms (client side)", _ms(result["answer_post"], "p50", "p95"), "", ""),
    ]
    width = max(len(row[0]) for row in rows)
    print(
        f"\nlive load: {args.tables} tables of {args.game} ({', '.join(args.seats)}; clock {args.clock}), "
        f"{args.spectators} spectators, {args.seconds:.0f} s of load"
    )
    print(f"{'':{width}}  {'figure':<60} {'goal':<10} ")
    for name, figure, goal, ok in rows:
        print(f"{name:{width}}  {figure:<60} {goal:<10} {ok}")
    load_seconds = result["end_wall"] - result["go_wall"]
    seconds = result["table_seconds"]
    print(
        f"\n{result['tables']} tables played in {load_seconds:.0f} s"
        f" (each {min(seconds):.0f}-{max(seconds):.0f} s,"
        f" median {statistics.median(seconds):.0f}); {result['answers']} answers; batches delivered:"
        f" {result['delivered']['spectators']} to spectators, {result['delivered']['seats']} to seats;"
        f" {check['stream_entries']} entries in Redis; {result['backlog_deliveries']} backlog deliveries"
        f" (not in the latency); streams opened in {result['open_seconds']:.1f} s"
    )
    cpu = result["cpu"]
    parts = ", ".join(f"{name} {value:.1f}" for name, value in sorted(cpu.items(), key=lambda kv: -kv[1]))
    print(f"CPU seconds over the load: {parts}; cores busy {result['cores_busy']:.2f} of {os.cpu_count()}")
    print(
        f"site workers: event-loop threads ran {result['site_loop']:.1f} s and waited runnable for a core"
        f" {result['site_loop_waited']:.1f} s, other threads (pages) ran {result['site_others']:.1f} s and"
        f" waited {result['site_others_waited']:.1f} s; sockets per worker with the streams open"
        f" {result['site_sockets']}"
    )
    print(
        f"a static file through the site's page path during the load ({PROBE_PATH}, new connection):"
        f" first byte p50/p95/max ms {_ms(result['probe'], 'p50', 'p95', 'max')}"
    )
    print(
        f"client loop lag p50/p95/max ms: {_ms(result['client_lag_ms'], 'p50', 'p95', 'max')} (arrival"
        " times are the kernel's, so it is not in the latencies; it is in `answer POST`)"
    )
    if result["refused_count"] or result["error_count"] or result["unfinished_tasks"]:
        print(
            f"refused answers {result['refused_count']} {result['refused']}; errors {result['error_count']}"
            f" {result['errors']}; tasks cut at the time limit {result['unfinished_tasks']}"
        )
    for example in check["examples"]:
        print(f"  {example}")
    print(
        "machine: load average (1 min) "
        + ", ".join(f"{load:.2f}" for load in loads)
        + " (start, before the load, end)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tables", type=int, default=20, help="people, each at a table (default: 20)")
    parser.add_argument(
        "--spectators", type=int, default=500, help="public streams over the tables (default: 500)"
    )
    parser.add_argument(
        "--seconds", type=float, default=60.0, help="the load: new tables until then (default: 60)"
    )
    parser.add_argument("--calm-seconds", type=float, default=60.0, help="ladder window before (60)")
    parser.add_argument("--after-seconds", type=float, default=60.0, help="ladder window after; 0: none")
    parser.add_argument(
        "--warmup", type=float, default=30.0, help="play before the calm window (default: 30)"
    )
    parser.add_argument("--game", default="oh-hell")
    parser.add_argument("--seats", nargs="+", default=["you", "greedy", "random"], help="you and house bots")
    parser.add_argument("--clock", default="standard", choices=["quick", "standard", "relaxed"])
    parser.add_argument("--timeout", type=float, default=900.0, help="after --seconds, for the last tables")
    parser.add_argument("--client", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        client_main(args.client)
        return
    if args.seats.count("you") != 1:
        parser.error("--seats names `you` exactly once")
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on_signal)
    # Set explicitly: a shell starts a background job (`... &`) with SIGINT ignored, which Python keeps.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    data = Path(tempfile.mkdtemp(prefix="septet-live-load-"))
    loads = [os.getloadavg()[0]]
    platform: Platform | None = None
    client: subprocess.Popen[bytes] | None = None
    try:
        say(f"starting septet up in {data}")
        platform = Platform(data, table_workers=args.tables)
        platform.wait_flowing()
        say(f"ladder matches flow; warming up {args.warmup:.0f} s, then {args.calm_seconds:.0f} s calm")
        time.sleep(args.warmup)
        calm_start, calm_ticks = time.time(), machine_ticks()
        time.sleep(args.calm_seconds)
        calm_end = time.time()
        busy = {"before": cores_busy(calm_ticks, machine_ticks())}
        platform.alive()
        users = platform.users([f"person-{number:02d}" for number in range(args.tables)])
        loads.append(os.getloadavg()[0])
        config = {
            "address": platform.web,
            "data": str(data),
            "redis_socket": str(platform.redis_socket),
            "prefix": os.environ.get("SEPTET_LIVE_PREFIX", LIVE_PREFIX),
            "users": users,
            "spectators": args.spectators,
            "seconds": args.seconds,
            "timeout": args.timeout,
            "game": args.game,
            "seats": args.seats,
            "clock": args.clock,
        }
        config_file = data / "client.json"
        config_file.write_text(json.dumps(config))
        client = subprocess.Popen(
            [sys.executable, __file__, "--client", str(config_file)],
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=_die_with_us,
        )
        while client.poll() is None:
            platform.alive()
            time.sleep(1)
        if client.returncode != 0:
            raise SystemExit(f"the client failed (exit {client.returncode})\n{platform.tail()}")
        result = json.loads(config_file.with_suffix(".result.json").read_text())
        during_end = min(result["deadline_wall"], result["end_wall"])
        ladder = {
            "before": platform.ladder_finished(calm_start, calm_end) * 60 / (calm_end - calm_start),
            "during": platform.ladder_finished(result["go_wall"], during_end)
            * 60
            / max(during_end - result["go_wall"], 1e-9),
        }
        if args.after_seconds > 0:
            say(f"the load is over; {args.after_seconds:.0f} s calm again")
            after_start, after_ticks = time.time(), machine_ticks()
            time.sleep(args.after_seconds)
            ladder["after"] = (
                platform.ladder_finished(after_start, time.time()) * 60 / (time.time() - after_start)
            )
            busy["after"] = cores_busy(after_ticks, machine_ticks())
        busy["during"] = result["cores_busy"]
        loads.append(os.getloadavg()[0])
        report(args, result, ladder, busy, loads)
        warnings = [line for line in platform.log_lines("septet_platform.live") if " INFO " not in line]
        if warnings:
            kinds = sorted({line.split(" ", 3)[-1][:120] for line in warnings})
            print(f"the live parts of septet up logged {len(warnings)} warnings or errors: {kinds[:5]}")
        series = platform.ladder_series(calm_start, time.time(), SERIES_SECONDS)
        marks = {
            int((result["go_wall"] - calm_start) // SERIES_SECONDS): "[load ",
            int((during_end - calm_start) // SERIES_SECONDS): "] ",
        }
        print(
            f"ladder matches finished per {SERIES_SECONDS:.0f} s from the calm window on: "
            + " ".join(marks.get(index, "") + str(count) for index, count in enumerate(series))
        )
    finally:
        if client is not None and client.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(client.pid, signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                client.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(client.pid, signal.SIGKILL)
            client.wait()
        if platform is not None:
            say("stopping septet up")
            platform.stop()
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # everything it started is stopped by now
        sys.exit(130)
