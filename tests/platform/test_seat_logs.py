"""A bot's own output in a platform match (issue 18, item 3): the worker keeps each seat's stdout
and stderr (the last 64 KiB of whole lines, read without following a link) with the forfeit's
replay event; the owner reads it through the Arena (GetMatchLogs, `septet logs`) once the match's
duplicate set is over; a stranger and an anonymous caller never do, and each refusal changes
nothing. The logs go with their match."""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from django.conf import settings
from django.contrib.auth.models import User
from platform_support import EXAMPLES, match_with

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine import replay
from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import RandomPlayer
from referee.tools.bot_logs import LOG_TAIL_BYTES, CapturedLog, read_log_tail
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat, SeatLog

pytestmark = pytest.mark.django_db(transaction=True)

CHATTY = """
import sys
from referee.botkit.sdk import Bot, serve

for number in range(1500):  # about 120 KB before the first decision: more than is kept
    print(f"filler {number:04d} " + "x" * 68, file=sys.stderr)
sys.stderr.flush()


class Chatty(Bot):
    \"\"\"Says what it holds at every decision, then gives up at its third.\"\"\"

    name = "chatty"
    decisions = 0

    def decide(self, info, legal):
        self.decisions += 1
        print(f"decision {self.decisions}: {len(legal)} legal actions", file=sys.stderr, flush=True)
        if self.decisions == 3:
            raise RuntimeError("chatty gives up")
        return legal[0]


serve(Chatty())
"""


def _chatty(owner: User) -> BotVersion:
    manifest = (
        'name = "chatty"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    return version_from_archive(
        owner, "chatty", tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": CHATTY})
    )


def test_the_worker_keeps_a_seats_last_64_kib_of_whole_lines_and_its_forfeits_event(
    played_versions: list[BotVersion], django_user_model: type
) -> None:
    """A real bot process writes ~120 KB, then a line per decision, and raises at its third: its
    seat keeps the last 64 KiB cut at a line start, the decisions and the error, and the replay
    event its forfeit was declared at; the other seats keep their own (short) output."""
    chatty = _chatty(django_user_model.objects.create_user("chatterer"))
    match = match_with("oh-hell", [played_versions[0], chatty, played_versions[1]])
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    match.refresh_from_db()
    seat = Seat.objects.get(match=match, seat=1)
    log = SeatLog.objects.get(seat=seat)
    assert seat.forfeit_status == "ERROR", seat.forfeit_reason
    assert log.truncated and len(log.text.encode()) <= LOG_TAIL_BYTES
    first = log.text.splitlines()[0]
    assert re.fullmatch(r"filler \d{4} x{68}", first), f"kept half a line: {first!r}"
    assert "decision 1: " in log.text and "decision 3: " in log.text and "filler 1499 " in log.text
    document = replay.load(Path(settings.SEPTET_REPLAYS_DIR) / match.replay)
    forfeit_events = [event["event"] for event in document["forfeits"] if event["seat"] == 1]
    assert forfeit_events == [log.forfeit_event] and log.forfeit_event is not None
    others = SeatLog.objects.filter(seat__match=match).exclude(seat=seat)
    assert sorted(other.seat.seat for other in others) == [0, 2]
    assert all(not other.truncated and "filler" not in other.text for other in others)


NO_START = """
import sys
print("loading weights.bin", file=sys.stderr)
print("FileNotFoundError: weights.bin is not in the folder", file=sys.stderr)
sys.exit(3)
"""


def test_a_bot_that_does_not_start_keeps_what_it_wrote_for_its_owner(
    played_versions: list[BotVersion], django_user_model: type
) -> None:
    """Its forfeit reason is one line; its seat log has the whole error with the output quoted."""
    manifest = (
        'name = "nostart"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": NO_START})
    broken = version_from_archive(django_user_model.objects.create_user("nostarter"), "nostart", archive)
    match = match_with("oh-hell", [played_versions[0], broken, played_versions[1]])
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    seat = Seat.objects.get(match=match, seat=1)
    log = SeatLog.objects.get(seat=seat)
    assert seat.forfeit_status and "\n" not in seat.forfeit_reason
    assert "FileNotFoundError: weights.bin is not in the folder" in log.text, log.text
    assert "loading weights.bin" in log.text and log.forfeit_event is not None


COUNTER = """
import os, sys
from referee.botkit.sdk import Bot, serve

print(f"started as process {os.getpid()}", file=sys.stderr, flush=True)


class Counter(Bot):
    \"\"\"Numbers its decisions over its whole life: a warm process goes on counting.\"\"\"

    name = "counter"
    decisions = 0

    def decide(self, info, legal):
        self.decisions += 1
        print(f"decision {self.decisions}", file=sys.stderr, flush=True)
        return legal[0]


serve(Counter())
"""


def test_a_warm_house_bots_log_of_a_match_holds_only_that_matchs_output(
    django_user_model: type, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A house bot's process kept warm plays a second match: that match's log starts where the
    first one's ended (no start line, no decision of the first match: an earlier deal's hand)."""
    from septet_platform.matches.warm import WarmHouseBots

    settings.SEPTET_WARM_HOUSE_BOTS = True
    pool = WarmHouseBots(idle_seconds=60)
    monkeypatch.setattr(services, "WARM_HOUSE_BOTS", pool)
    owner = django_user_model.objects.create_user("house")
    manifest = (
        'name = "counter"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": COUNTER})
    house = version_from_archive(owner, "counter", archive, is_house=True)
    others = [
        version_from_archive(owner, f"{n}-h", tar_folder(EXAMPLES / n), is_house=True)
        for n in ("random", "greedy")
    ]
    try:
        logs = []
        for seed in (1, 2):
            match = match_with("oh-hell", [house, *others], seed=seed)
            assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
            logs.append(SeatLog.objects.get(seat__match=match, seat__seat=0).text)
        if not pool.idle(house.pk):
            pytest.skip("no sandbox here: house bots are kept warm inside the sandbox only")
    finally:
        pool.stop_all()
    first_count = logs[0].count("decision ")
    assert logs[0].startswith("started as process") and "decision 1\n" in logs[0]
    assert "started as process" not in logs[1] and "decision 1\n" not in logs[1], logs[1][:200]
    assert logs[1].startswith(f"decision {first_count + 1}\n")


def test_a_log_that_is_a_link_a_fifo_or_a_huge_file_is_read_safely(tmp_path: Path) -> None:
    """The log file's name swapped for a link to a secret, or for a FIFO that would block the
    worker: nothing is read; a 10 MB log gives 64 KiB at most; a warm process's earlier output
    (before `offset`) is not this match's."""
    secret = tmp_path / "secret"
    secret.write_text("SECRET_KEY=hunter2\n")
    link = tmp_path / "linked.log"
    link.symlink_to(secret)
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    started = time.monotonic()
    assert read_log_tail(link) == CapturedLog("", False)
    assert read_log_tail(fifo) == CapturedLog("", False)
    assert time.monotonic() - started < 1.0
    assert read_log_tail(tmp_path / "missing.log") == CapturedLog("", False)
    huge = tmp_path / "huge.log"
    huge.write_bytes(b"line of output\n" * 700_000)
    tail = read_log_tail(huge)
    assert tail.truncated and len(tail.text.encode()) <= LOG_TAIL_BYTES
    assert set(tail.text.splitlines()) == {"line of output"}
    warm = tmp_path / "warm.log"
    warm.write_bytes(b"earlier match: my hand was AS KD\nthis match\n")
    assert read_log_tail(warm, offset=len(b"earlier match: my hand was AS KD\n")) == CapturedLog(
        "this match\n", False
    )


# Who reads a log: through a real Arena server ------------------------------------------------------

Metadata = list[tuple[str, str]]
OWN_LINE = "my hand: AS KD 7H"


@pytest.fixture
def arena(arena_address: str) -> Iterator[arena_pb2_grpc.ArenaStub]:
    with grpc.insecure_channel(arena_address) as channel:
        yield arena_pb2_grpc.ArenaStub(channel)


def _token(username: str) -> tuple[User, str]:
    user, _ = User.objects.get_or_create(username=username)
    return user, api_token_create(user=user, name="logs")[1]


def _bearer(token: str) -> Metadata:
    return [("authorization", f"Bearer {token}")]


def played_with_logs(
    ladder: Ladder, versions: list[BotVersion], *, duplicate_set: str = "", seed: int = 5
) -> Match:
    """A match played by the referee and recorded by the platform's own `match_record`, each seat
    with a line of output naming its hand, as the worker captures it."""
    match = Match.objects.create(ladder=ladder, seed=seed, duplicate_set=duplicate_set)
    Seat.objects.bulk_create(Seat(match=match, seat=i, bot_version=v) for i, v in enumerate(versions))
    attempt = services.match_claim(match_id=match.pk, worker="logs-tests")
    assert attempt is not None
    players: list[Any] = [
        RandomPlayer(random.Random(seat), name=v.bot.name) for seat, v in enumerate(versions)
    ]
    outcome = play_match(get_game(ladder.game), players, seed=seed, match_id=str(match.pk))
    logs = {seat: CapturedLog(f"{OWN_LINE} (seat {seat})\n", False) for seat in range(len(versions))}
    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome, logs=logs)
    return match


def _rows() -> list[tuple[Any, ...]]:
    return list(
        SeatLog.objects.order_by("pk").values_list("pk", "seat_id", "text", "truncated", "forfeit_event")
    )


def _refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


@pytest.fixture
def two_owners(ladder_oh_hell: Ladder, ladder_bot_factory: Callable) -> tuple[Match, list[BotVersion]]:
    """A finished match seating ada's bot at seat 0 and bob's bots at seats 1 and 2."""
    versions = [
        ladder_bot_factory("ada", "ada-bot"),
        ladder_bot_factory("bob", "bob-1"),
        ladder_bot_factory("bob", "bob-2"),
    ]
    return played_with_logs(ladder_oh_hell, versions), versions


def test_the_owner_reads_only_their_own_seats_logs_and_others_are_refused(
    arena: arena_pb2_grpc.ArenaStub, two_owners: tuple[Match, list[BotVersion]]
) -> None:
    """ada gets seat 0's output only; carol (no bot there) is PERMISSION_DENIED, an anonymous
    call UNAUTHENTICATED, an unknown match NOT_FOUND; none of them changes a stored log."""
    match, _ = two_owners
    _, ada = _token("ada")
    _, carol = _token("carol")
    before = _rows()
    mine = arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=match.pk), metadata=_bearer(ada))
    assert [(log.seat, log.bot, log.output) for log in mine.seats] == [
        (0, "ada-bot", f"{OWN_LINE} (seat 0)\n")
    ]
    stranger = _refused(
        lambda: arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=match.pk), metadata=_bearer(carol))
    )
    anonymous = _refused(lambda: arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=match.pk)))
    unknown = _refused(
        lambda: arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=match.pk + 999), metadata=_bearer(ada))
    )
    assert stranger.code() == grpc.StatusCode.PERMISSION_DENIED and OWN_LINE not in (stranger.details() or "")
    assert anonymous.code() == grpc.StatusCode.UNAUTHENTICATED
    assert unknown.code() == grpc.StatusCode.NOT_FOUND
    assert _rows() == before


def test_no_log_is_shown_before_its_duplicate_set_is_over_not_even_to_its_owner(
    arena: arena_pb2_grpc.ArenaStub, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    """A bot may print its own hand, which is another seat's hand in the set's next rotation: while
    a rotation of the set waits, its owner is FAILED_PRECONDITION; once it is over, the log shows."""
    versions = [
        ladder_bot_factory("ada", "ada-bot"),
        ladder_bot_factory("bob", "bob-1"),
        ladder_bot_factory("bob", "bob-2"),
    ]
    first = played_with_logs(ladder_oh_hell, versions, duplicate_set="set-1")
    waiting = Match.objects.create(ladder=ladder_oh_hell, seed=first.seed, duplicate_set="set-1", rotation=1)
    _, ada = _token("ada")
    before = _rows()
    early = _refused(
        lambda: arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=first.pk), metadata=_bearer(ada))
    )
    assert early.code() == grpc.StatusCode.FAILED_PRECONDITION and OWN_LINE not in (early.details() or "")
    assert _rows() == before
    Match.objects.filter(pk=waiting.pk).update(status=Match.Status.FINISHED)
    shown = arena.GetMatchLogs(pb.GetMatchLogsRequest(match_id=first.pk), metadata=_bearer(ada))
    assert [log.seat for log in shown.seats] == [0] and OWN_LINE in shown.seats[0].output


def test_septet_logs_prints_the_callers_output_and_refuses_a_stranger(
    septet: Callable, two_owners: tuple[Match, list[BotVersion]]
) -> None:
    match, _ = two_owners
    _, bob = _token("bob")
    _, carol = _token("carol")
    code, out, _ = septet("logs", str(match.pk), token=bob)
    assert code == 0 and "seat 1: bob-1 v1" in out and "seat 2: bob-2 v1" in out
    assert f"{OWN_LINE} (seat 1)" in out and f"{OWN_LINE} (seat 0)" not in out
    code, out, err = septet("logs", str(match.pk), token=carol)
    assert code == 2 and "none of your bots played" in err and OWN_LINE not in out + err
    code, _, err = septet("logs", str(match.pk))
    assert code == 2 and "needs an API token" in err


def test_a_matchs_logs_are_deleted_with_it(two_owners: tuple[Match, list[BotVersion]]) -> None:
    """There is no replay retention yet: whatever deletes a match (the admin) takes its logs too."""
    match, _ = two_owners
    assert SeatLog.objects.filter(seat__match=match).count() == 3
    match.rating_changes.all().delete()
    match.delete()
    assert not SeatLog.objects.exists()
