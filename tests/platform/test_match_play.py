"""Playing scheduled matches with real bot processes: claimed once, recorded once, voided on our
failures, forfeited on the bots' (septet_platform.matches.services)."""

from __future__ import annotations

import random
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from bot_versions import tar_folder, version_from_archive
from django.conf import settings
from django.db import connection
from django.utils import timezone
from platform_support import EXAMPLES, FAULTY, match_with

import referee.engine.match
from referee.engine import replay
from referee.engine.match import play_match
from referee.engine.players import RandomPlayer
from septet_platform.bots.models import BotVersion
from septet_platform.ladders.models import Ladder
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat


@pytest.mark.django_db(transaction=True)
def test_a_match_is_played_and_recorded_once(played_versions: list[BotVersion]) -> None:
    match = match_with("oh-hell", played_versions)
    first = services.match_play(match_id=match.pk, worker="w1")
    second = services.match_play(match_id=match.pk, worker="w2")
    assert (first.outcome, second.outcome) == ("recorded", "not claimed")
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.attempt == 1 and match.worker == "w1"
    seats = list(match.seats.order_by("seat"))
    assert sorted(seat.rank for seat in seats if seat.rank) and all(not seat.forfeit_status for seat in seats)
    document = replay.load(Path(settings.SEPTET_REPLAYS_DIR) / match.replay)
    verified = replay.verify(document)
    assert list(verified.result.scores) == [seat.score for seat in seats]
    assert [seat["name"] for seat in document["seats"]] == ["random-a v1", "greedy-a v1", "random-b v1"]


@pytest.mark.django_db(transaction=True)
def test_a_bot_that_does_not_start_forfeits_and_the_game_completes(
    played_versions: list[BotVersion], django_user_model: type
) -> None:
    manifest = (
        'name = "broken"\ngames = ["oh-hell"]\n'
        'command = ["python", "misbehave.py", "--address", "{address}", "--behaviour", "exit-at-start"]\n'
    )
    broken_folder_tar = tar_folder(
        EXAMPLES / "random", {"septet-bot.toml": manifest, "misbehave.py": FAULTY.read_text()}
    )
    broken = version_from_archive(
        django_user_model.objects.create_user("mallory"), "broken", broken_folder_tar
    )
    match = match_with("oh-hell", [played_versions[0], broken, played_versions[1]])
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    seats = {seat.seat: seat for seat in Seat.objects.filter(match=match)}
    assert seats[1].forfeit_status == "ERROR" and "did not start" in seats[1].forfeit_reason
    assert seats[1].rank == 3 and {seats[0].rank, seats[2].rank} <= {1, 2}


@pytest.mark.django_db(transaction=True)
def test_an_infrastructure_failure_voids_the_attempt_and_scores_nothing(
    played_versions: list[BotVersion],
) -> None:
    match = match_with("oh-hell", played_versions)
    Ladder.objects.filter(pk=match.ladder_id).update(game="no-such-game")  # our data, broken
    played = services.match_play(match_id=match.pk, worker="w")
    assert played.outcome == "voided"
    match.refresh_from_db()
    assert match.status == Match.Status.SCHEDULED and match.attempt == 1 and not match.replay
    assert all(seat.rank is None and seat.score is None for seat in match.seats.all())


@pytest.mark.django_db(transaction=True)
def test_a_dead_workers_match_is_reaped_and_its_late_result_is_refused(
    played_versions: list[BotVersion],
) -> None:
    match = match_with("oh-hell", played_versions)
    stale_attempt = services.match_claim(
        match_id=match.pk, worker="dead", now=timezone.now() - timedelta(hours=1)
    )
    assert stale_attempt == 1
    assert services.matches_reap() == [match.pk]
    assert services.match_play(match_id=match.pk, worker="alive").outcome == "recorded"
    match.refresh_from_db()
    assert match.attempt == 2 and match.worker == "alive"
    recorded = (match.replay, match.result, match.finished)
    # The dead worker wakes up and records its old attempt: refused, nothing changes.
    late = play_match("oh-hell", [RandomPlayer(random.Random(seat)) for seat in range(3)], seed=match.seed)
    assert services.match_record(match_id=match.pk, attempt=stale_attempt, outcome=late) is False
    match.refresh_from_db()
    assert (match.replay, match.result, match.finished) == recorded
    assert not (Path(settings.SEPTET_REPLAYS_DIR) / f"{match.pk}-a1.json.gz").exists()
    assert services.matches_reap() == []


@pytest.mark.django_db(transaction=True)
def test_workers_racing_to_unpack_a_new_version_get_one_whole_folder(
    played_versions: list[BotVersion],
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    version = BotVersion.objects.select_related("bot").get(pk=played_versions[0].pk)

    def unpack(_: int) -> Path:
        try:
            return services.version_folder(version)
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=4) as pool:
        folders = set(pool.map(unpack, range(8)))
    assert len(folders) == 1
    folder = folders.pop()
    assert (folder / "septet-bot.toml").is_file() and (folder / "bot.py").is_file()
    assert [path.name for path in folder.parent.iterdir() if path.name.startswith(".")] == [], (
        "no scratch left"
    )


TATTLETALE = '''
from referee.botkit.sdk import Bot, serve


class Tattletale(Bot):
    """Plays the first legal action, unless this process was told of two seats of one match:
    then it answers nonsense, so its seats forfeit and the test sees a shared process."""

    name = "tattletale"

    def __init__(self):
        super().__init__()
        self.seats_by_match = {}

    def start_match(self, start):
        self.seats_by_match.setdefault(start.match_id, set()).add(start.seat)

    def decide(self, info, legal):
        if any(len(seats) > 1 for seats in self.seats_by_match.values()):
            return "I serve two seats and see both hands"
        return legal[0]


serve(Tattletale())
'''


def _tattletale_archive() -> bytes:
    manifest = (
        'name = "tattletale"\ngames = ["oh-hell"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": TATTLETALE})


def _tattletale(owner: object) -> BotVersion:
    return version_from_archive(owner, "tattletale", _tattletale_archive())


@pytest.mark.django_db(transaction=True)
def test_a_version_seated_twice_plays_from_two_processes_that_see_one_seat_each(
    played_versions: list[BotVersion], django_user_model: type
) -> None:
    """Each seat is its own process (sandbox): the bot itself would forfeit if one process were
    told of two seats of the match, as the old one-process-per-version did."""
    twice = _tattletale(django_user_model.objects.create_user("eve"))
    match = match_with("oh-hell", [twice, played_versions[1], twice])
    Match.objects.filter(pk=match.pk).update(kind=Match.Kind.CHALLENGE, rated=False)  # as a challenge
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    seats = {seat.seat: seat for seat in Seat.objects.filter(match=match)}
    assert [seats[number].forfeit_status for number in range(3)] == ["", "", ""], [
        seats[number].forfeit_reason for number in range(3)
    ]


@pytest.mark.django_db(transaction=True)
def test_bots_see_a_random_match_id_unrelated_to_the_match_row_or_seed(
    played_versions: list[BotVersion],
) -> None:
    matches = [match_with("oh-hell", played_versions, seed=11) for _ in range(2)]
    ids = []
    for match in matches:
        assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
        match.refresh_from_db()
        ids.append(replay.load(Path(settings.SEPTET_REPLAYS_DIR) / match.replay)["match_id"])
    assert ids[0] != ids[1], "the same seed gets a new id every match"
    assert all(len(match_id) == 16 and int(match_id, 16) >= 0 for match_id in ids)
    assert not {str(match.pk) for match in matches} & set(ids)


SLOW = """
import sys, time
from referee.botkit.sdk import Bot, serve


class JustInTime(Bot):
    \"\"\"Answers every decision, forced ones too, a little before its deadline.\"\"\"

    name = "just-in-time"

    def decide(self, info, legal):
        time.sleep(float(sys.argv[1]))
        return legal[0]


serve(JustInTime())
"""


def _slow_version(owner: object, seconds: float) -> BotVersion:
    """A bot that answers every decision `seconds` late (just under its deadline)."""
    manifest = (
        'name = "slow"\ngames = ["oh-hell"]\n'
        f'command = ["python", "bot.py", "{seconds}", "--address", "{{address}}"]\n'
    )
    archive = tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "bot.py": SLOW})
    return version_from_archive(owner, "slow", archive)


@pytest.mark.django_db(transaction=True)
def test_a_bot_answering_just_in_time_forfeits_past_its_match_budget_and_cannot_void_the_match(
    played_versions: list[BotVersion], django_user_model: type, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attack: answer every decision just under the deadline so the match outlives its lease,
    is reaped and its result thrown away. With a 1.5 s lease and the reaper running all along, the
    slow seat forfeits (TIMEOUT) once its budget (1 s + 40 x 0.15 s) is spent, the lease is renewed while
    the match plays, and the match is recorded on its first attempt."""
    monkeypatch.setattr(services, "LEASE", timedelta(seconds=1.5))
    monkeypatch.setattr(referee.engine.match, "MATCH_DECISIONS", 40)  # a 7 s budget: a shorter test
    slow = _slow_version(django_user_model.objects.create_user("mallory"), 0.12)
    match = match_with("oh-hell", [played_versions[0], slow, played_versions[1]])
    Ladder.objects.filter(pk=match.ladder_id).update(decision_seconds=0.15, bank_seconds=1.0)
    reaped: list[int] = []
    stop = threading.Event()

    def reaper() -> None:
        try:
            while not stop.wait(0.3):
                reaped.extend(services.matches_reap())
        finally:
            connection.close()

    watcher = threading.Thread(target=reaper)
    watcher.start()
    started = time.monotonic()
    try:
        played = services.match_play(match_id=match.pk, worker="w")
    finally:
        stop.set()
        watcher.join()
    took = time.monotonic() - started
    assert reaped == [] and played.outcome == "recorded" and played.attempt == 1
    assert took > 3 * services.LEASE.total_seconds(), "the match outlived its lease several times"
    seats = {seat.seat: seat for seat in Seat.objects.filter(match=match)}
    assert seats[1].forfeit_status == "TIMEOUT" and "match budget" in seats[1].forfeit_reason
    assert seats[1].rank == 3 and not seats[0].forfeit_status and not seats[2].forfeit_status
    match.refresh_from_db()
    assert match.status == Match.Status.FINISHED and match.lease_until is None


@pytest.mark.django_db(transaction=True)
def test_a_house_version_seated_twice_takes_two_warm_processes_never_one(
    django_user_model: type, settings: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Warm house bots too are per seat: after a match seating one house version twice, two of its
    processes are warm; the next match (a new seed) takes both, one per seat, and none twice."""
    from septet_platform.matches.warm import WarmHouseBots

    settings.SEPTET_WARM_HOUSE_BOTS = True  # type: ignore[attr-defined]
    pool = WarmHouseBots(idle_seconds=60)
    monkeypatch.setattr(services, "WARM_HOUSE_BOTS", pool)
    owner = django_user_model.objects.create_user("house")
    house = version_from_archive(owner, "tattletale", _tattletale_archive(), is_house=True)
    other = version_from_archive(owner, "greedy-h", tar_folder(EXAMPLES / "greedy"), is_house=True)
    try:
        for seed in (1, 2):
            match = match_with("oh-hell", [house, other, house], seed=seed)
            Match.objects.filter(pk=match.pk).update(kind=Match.Kind.CHALLENGE, rated=False)
            assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
            assert [seat.forfeit_status for seat in Seat.objects.filter(match=match)] == ["", "", ""]
            assert len({warm.bot.process.pid for warm in pool.idle(house.pk)}) == 2
    finally:
        pool.stop_all()
