"""The replay document (`septet-replay/1`): writing, reading and verifying it.

A replay is one JSON object (gzip on disk, `.json.gz`):

    {"format": "septet-replay/1", "engine": "septet 0.1.0", "match_id": null,
     "game": "oh-hell", "options": {}, "seed": 7,
     "seats": [{"seat": 0, "name": "greedy"}, ...],
     "time_control": {"per_decision": 1.0, "bank": 10.0} or null,
     "events": [...], "forfeits": [...],
     "result": {"scores": [...], "ranks": [...] or null, "aborted": false, "reason": ""}}

`events` is the whole game in order. Two kinds are inputs, everything else is what the game
made of them:
- `{"type": "chance", "outcome": {...}}`: a chance outcome (a deal, a trump card, a first
  dealer), recorded in full so verification never depends on re-shuffling;
- `{"type": "action", "seat": s, "kind": "bid", "action": 3, "us": 812}`: a seat's decision
  with its thinking time in microseconds, or `"forced": true` when it was the only legal action
  (R-0.2), or `"fallback": true` when the seat had forfeited and the fallback policy played;
- `{"type": "forfeit", "seat": s, "status": "TIMEOUT", "reason": "...", "event": i}`.
The game's own events (`deal`, `bid`, `bets`, `play`, `trick`, `round_end`, `game_end`, ...)
follow the input that caused them. `verify` re-applies the inputs through the engine and checks
that it produces exactly the recorded events and result.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, GameError, Result, rebuilt_by_init
from referee.engine.match import REPLAY_FORMAT, rank_with_forfeits, result_to_json

_REFUSALS = (GameError, KeyError, TypeError, ValueError, IndexError, AttributeError)
"""What the engine raises on an input it refuses (verify reports them as a ReplayError)."""
REQUIRED_KEYS = ("format", "game", "options", "seed", "seats", "events", "result")
GZIP_MAGIC = b"\x1f\x8b"


class ReplayError(ValueError):
    """A replay that cannot be read or does not verify; the message says where, in one line."""


def dumps(replay: dict[str, Any]) -> bytes:
    """The replay as compact UTF-8 JSON (stable: same replay, same bytes)."""
    return json.dumps(replay, separators=(",", ":"), ensure_ascii=False).encode()


def save(replay: dict[str, Any], path: str | Path) -> Path:
    """Writes the replay, gzip-compressed when the name ends in `.gz` (with no timestamp)."""
    path = Path(path)
    data = dumps(replay)
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)
    return path


def encode(replay: dict[str, Any], name: str) -> bytes:
    """The bytes a replay is stored as under `name`: gzip-compressed (no timestamp, so one replay
    is always the same bytes) when the name ends in `.gz`, plain JSON otherwise."""
    data = dumps(replay)
    return gzip.compress(data, mtime=0) if name.endswith(".gz") else data


@dataclass(frozen=True)
class Stored:
    """What was written: the file, its size in bytes and the SHA-256 of those bytes (hex)."""

    path: Path
    size: int
    sha256: str

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


def save_durably(replay: dict[str, Any], path: str | Path) -> Stored:
    """Writes the replay so that the name `path` never shows a partial file, even after a crash
    or a full disk: a temporary file beside it, fsync, rename over `path`, fsync of the folder.
    Any OSError (a full disk, a read-only folder) leaves no file behind and propagates: a caller
    must not record a match whose replay is not safely on disk."""
    path = Path(path)
    data = encode(replay, path.name)
    write_durably(path, data)
    return Stored(path, len(data), hashlib.sha256(data).hexdigest())


def write_durably(path: Path, data: bytes) -> None:
    """Writes `data` so that `path` never shows a partial file, even after a crash or a full disk
    (temporary file beside it, fsync, rename, fsync of the folder); an OSError leaves no file."""
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _fsync_folder(path.parent)


def _fsync_folder(folder: Path) -> None:
    """Makes a rename in `folder` durable (the folder's entry is what a crash could lose)."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def load_checked(path: str | Path, *, size: int, sha256: str, match_id: str) -> tuple[bytes, dict[str, Any]]:
    """The stored bytes and document of a replay, refused (ReplayError) unless they are exactly
    what was recorded: `size` bytes with SHA-256 `sha256`, naming `match_id`. A swapped file (the
    replay of another match), a truncated or damaged one all fail here; a missing file raises
    FileNotFoundError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as error:
        raise ReplayError(f"cannot read {path.name}: {error.strerror or error}") from None
    return data, parse_checked(data, path.name, size=size, sha256=sha256, match_id=match_id)


def parse_checked(data: bytes, name: str, *, size: int, sha256: str, match_id: str) -> dict[str, Any]:
    """The document of a replay's stored bytes (read from wherever it is kept), refused
    (ReplayError) unless they are `size` bytes with SHA-256 `sha256`, naming `match_id`."""
    if len(data) != size:
        raise ReplayError(f"{name} has {len(data)} bytes, {size} were stored (damaged or truncated)")
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ReplayError(f"{name} does not match its stored checksum (damaged or replaced)")
    replay = _parse(data, Path(name))
    if replay.get("match_id") != match_id:
        raise ReplayError(f"{name} is the replay of another match ({replay.get('match_id')!r})")
    return replay


def parse(data: bytes, name: str) -> dict[str, Any]:
    """A replay document from stored bytes (gzip or plain JSON); ReplayError when damaged."""
    return _parse(data, Path(name))


def load(path: str | Path) -> dict[str, Any]:
    """Reads a replay file (gzip or plain JSON); a damaged file raises ReplayError."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ReplayError(f"cannot read {path}: {error.strerror or error}") from None
    return _parse(data, path)


def _parse(data: bytes, path: Path) -> dict[str, Any]:
    """A replay document from a file's bytes (gzip or plain JSON); ReplayError when damaged."""
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise ReplayError(f"{path} is a damaged gzip file ({error})") from None
    try:
        replay = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ReplayError(f"{path} is not a JSON replay ({error})") from None
    check_document(replay)
    return dict(replay)


def check_document(replay: Any) -> None:
    """The top-level shape of a replay; raises ReplayError naming the first problem."""
    if not isinstance(replay, dict):
        raise ReplayError("a replay is a JSON object")
    if replay.get("format") != REPLAY_FORMAT:
        raise ReplayError(
            f"unsupported replay format {replay.get('format')!r} (this septet reads {REPLAY_FORMAT})"
        )
    missing = [key for key in REQUIRED_KEYS if key not in replay]
    if missing:
        raise ReplayError(f"the replay has no {missing[0]!r}")
    if not isinstance(replay["events"], list) or not isinstance(replay["seats"], list):
        raise ReplayError("the replay's events and seats must be lists")
    if not isinstance(replay["options"], dict):
        raise ReplayError("the replay's options must be an object")


@dataclass(frozen=True)
class Verified:
    """What a verified replay holds: enough for a one-line summary."""

    game: str
    names: list[str]
    events: int
    result: Result

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


def _canonical(value: Any) -> str:
    """JSON text of a value, so engine tuples and recorded lists compare equal."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def _as_action(value: Any) -> Any:
    """A recorded action back in engine form: JSON lists are the engine's card tuples."""
    return tuple(value) if isinstance(value, list) else value


def verify(replay: dict[str, Any]) -> Verified:
    """Re-applies the recorded inputs through the engine; raises ReplayError where they differ."""
    check_document(replay)
    try:
        game = get_game(replay["game"])
        state = game.start(len(replay["seats"]), replay["options"])
    except GameError as error:
        raise ReplayError(str(error)) from None
    recorded: Iterator[tuple[int, Any]] = enumerate(replay["events"])
    forfeited: list[int] = []

    def expect(produced: tuple[dict[str, Any], ...]) -> None:
        for event in produced:
            index, found = next(recorded, (len(replay["events"]), None))
            if found is None or _canonical(found) != _canonical(event):
                raise ReplayError(
                    f"event {index}: recorded {_short(found)} but the engine produced {_short(event)}"
                )

    for index, event in recorded:
        if not isinstance(event, dict):
            raise ReplayError(f"event {index}: not an object")
        kind = event.get("type")
        decision = game.to_move(state)
        if kind == "forfeit":
            forfeited.append(_seat_of(event, index, len(replay["seats"])))
            continue
        if kind not in ("chance", "action"):
            raise ReplayError(f"event {index}: a {kind!r} event where an input was expected")
        if decision is None:
            raise ReplayError(f"event {index}: the game was already over")
        try:
            if kind == "chance":
                if not decision.is_chance:
                    raise ReplayError(f"event {index}: a chance outcome where seat {decision.seats} decides")
                state = game.apply(state, CHANCE, event.get("outcome"))
            else:
                state = _apply_action(game, state, decision, event, index, forfeited, len(replay["seats"]))
        except ReplayError:
            raise
        except Exception as error:  # not `except (A, B) as error`: compiled, that types it as A
            if not isinstance(error, _REFUSALS):
                raise
            raise ReplayError(f"event {index}: the engine refused it ({error})") from None
        expect(state.events)

    if game.to_move(state) is not None:
        raise ReplayError("the replay ends before the game does")
    game_result = game.result(state)
    assert game_result is not None
    result = rank_with_forfeits(game_result, sorted(set(forfeited)))
    if _canonical(result_to_json(result)) != _canonical(replay["result"]):
        raise ReplayError(
            f"result: recorded {_short(replay['result'])} but the engine produced "
            f"{_short(result_to_json(result))}"
        )
    names = [str(seat.get("name", "?")) if isinstance(seat, dict) else "?" for seat in replay["seats"]]
    return Verified(replay["game"], names, len(replay["events"]), result)


def _apply_action(
    game: Any,
    state: Any,
    decision: Any,
    event: dict[str, Any],
    index: int,
    forfeited: list[int],
    num_seats: int,
) -> Any:
    """Applies one recorded seat action after checking it against the engine's decision."""
    seat = _seat_of(event, index, num_seats)
    if seat not in decision.seats:
        raise ReplayError(f"event {index}: seat {seat} acted but {list(decision.seats)} decides")
    if event.get("kind") != str(decision.kind):
        raise ReplayError(
            f"event {index}: recorded a {event.get('kind')!r} decision, the game asks for {decision.kind}"
        )
    legal = game.legal_actions(state, seat)
    action = _as_action(event.get("action"))
    matches = [option for option in legal if option == action and type(option) is type(action)]
    if not matches:
        raise ReplayError(f"event {index}: seat {seat}'s action {action!r} is not legal there")
    if bool(event.get("forced")) != (len(legal) == 1):
        raise ReplayError(f"event {index}: the forced mark does not match ({len(legal)} legal actions)")
    if event.get("fallback") and seat not in forfeited:
        raise ReplayError(f"event {index}: a fallback play for seat {seat}, which had not forfeited")
    return game.apply(state, seat, matches[0])


def _seat_of(event: dict[str, Any], index: int, seats: int) -> int:
    seat = event.get("seat")
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < seats:
        raise ReplayError(f"event {index}: bad seat {seat!r}")
    return seat


def _short(value: Any, limit: int = 120) -> str:
    text = "nothing" if value is None else _canonical(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
