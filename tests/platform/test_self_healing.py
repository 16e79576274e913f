"""Self-healing of the match pipeline (issue 17), with real bot processes, real files and a real
tmpfs for the replay folder:

- a replay is stored durably with its size, SHA-256 and the match id it names, and every fetch
  (site page, replay.json, the Arena's GetReplay) checks them: a swapped, truncated or missing
  replay is a clear error (404 / DATA_LOSS / NOT_FOUND), never a 500 or the wrong match's game;
- a replay folder that turns read-only (or full) mid-match voids the attempt (nothing scored, no
  forfeit, no file left), pauses the taking of matches while /healthz answers 503 saying why, and
  taking matches resumes by itself once the folder can be written;
- a match recorded but not rated (its worker died between the two) is rated by the sweep, once;
- qualification never activates a version older than one already active.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from django.test import Client
from django.utils import timezone
from platform_support import EXAMPLES, match_with

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine import replay as replays
from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import RandomPlayer
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.ladders.models import RatingChange
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches import services, storage
from septet_platform.matches.models import Match, Seat


def _recorded(versions: list[BotVersion], seed: int) -> Match:
    match = match_with("oh-hell", versions, seed=seed)
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    match.refresh_from_db()
    return match


def _refused(call: Callable[[], Any]) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        list(call())
    return caught.value


Fetched = tuple[int, str, int, str, "grpc.StatusCode | None"]


@pytest.fixture
def fetch(arena_address: str, django_user_model: type) -> Iterator[Callable[[Match], Fetched]]:
    """fetch(match) -> (page status, page text, replay.json status, its text, the Arena's code)."""
    client = Client()
    _, token = api_token_create(user=django_user_model.objects.create_user("reader"), name="cli")
    metadata = [("authorization", f"Bearer {token}")]
    with grpc.insecure_channel(arena_address) as channel:
        arena = arena_pb2_grpc.ArenaStub(channel)

        def run(match: Match) -> Fetched:
            page = client.get(f"/matches/{match.pk}/")
            document = client.get(f"/matches/{match.pk}/replay.json")
            try:
                list(arena.GetReplay(pb.GetReplayRequest(match_id=match.pk), metadata=metadata))
                code = None
            except grpc.RpcError as error:
                code = error.code()
            body = document.content.decode()
            return page.status_code, page.content.decode(), document.status_code, body, code

        yield run


@pytest.mark.django_db(transaction=True)
def test_a_recorded_replay_carries_its_size_checksum_and_match_id_and_leaves_no_temporary_file(
    storage: tuple[Path, Path], played_versions: list[BotVersion]
) -> None:
    match = _recorded(played_versions, seed=3)
    path = storage[1] / match.replay
    data = path.read_bytes()
    assert (match.replay_size, match.replay_sha256) == (len(data), hashlib.sha256(data).hexdigest())
    assert match.replay_match_id and replays.load(path)["match_id"] == match.replay_match_id
    assert sorted(p.name for p in storage[1].iterdir()) == [match.replay], "a temporary file was left"


@pytest.mark.django_db(transaction=True)
def test_a_swapped_replay_is_refused_on_every_fetch_and_the_right_one_served(
    storage: tuple[Path, Path], played_versions: list[BotVersion], fetch: Callable[..., Any]
) -> None:
    first, second = _recorded(played_versions, seed=3), _recorded(played_versions, seed=4)
    assert fetch(second)[0] == 200 and fetch(second)[2] == 200 and fetch(second)[4] is None

    # The file of the first match put in place of the second's: the checksum tells them apart.
    shutil.copyfile(storage[1] / first.replay, storage[1] / second.replay)
    page, text, status, body, code = fetch(second)
    assert (page, status, code) == (200, 404, grpc.StatusCode.DATA_LOSS)
    assert "checksum" in body or "bytes" in body, body
    assert "unreadable" in text

    # The row itself pointed at the first match's file, size and checksum included: the replay
    # names another match, and is refused all the same.
    Match.objects.filter(pk=second.pk).update(
        replay=first.replay, replay_size=first.replay_size, replay_sha256=first.replay_sha256
    )
    second.refresh_from_db()
    page, text, status, body, code = fetch(second)
    assert (page, status, code) == (200, 404, grpc.StatusCode.DATA_LOSS)
    assert "another match" in body, body
    assert fetch(first)[2:] == (200, fetch(first)[3], None), "the first match's own replay still serves"


@pytest.mark.django_db(transaction=True)
def test_a_truncated_or_missing_replay_is_a_clear_error_never_a_500(
    storage: tuple[Path, Path], played_versions: list[BotVersion], fetch: Callable[..., Any]
) -> None:
    match = _recorded(played_versions, seed=5)
    path = storage[1] / match.replay
    path.write_bytes(path.read_bytes()[: match.replay_size // 2])
    page, text, status, body, code = fetch(match)
    assert (page, status, code) == (200, 404, grpc.StatusCode.DATA_LOSS)
    assert "damaged or truncated" in body and "the replay is unreadable" in text

    path.unlink()
    page, text, status, body, code = fetch(match)
    assert (page, status, code) == (200, 404, grpc.StatusCode.NOT_FOUND)
    assert "missing from storage" in body, body
    assert "No replay: " in text and "missing from storage" in text, text


# A replay folder on a tmpfs of the test's own -----------------------------------------------


class Mount:
    """A small tmpfs mounted on a folder of the test's own (we are root), unmounted at the end."""

    def __init__(self, folder: Path, size: str) -> None:
        self.folder = folder
        folder.mkdir(parents=True)
        command = ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)]
        done = subprocess.run(command, check=False)
        if done.returncode != 0:
            pytest.skip("cannot mount a tmpfs here (needs root)")

    def remount(self, options: str) -> None:
        subprocess.run(["mount", "-o", f"remount,{options}", str(self.folder)], check=True)

    def close(self) -> None:
        subprocess.run(["umount", str(self.folder)], check=False)


@pytest.fixture
def replay_mount(settings: Any, tmp_path: Path) -> Iterator[Mount]:
    mount = Mount(tmp_path / "replays", "8m")
    settings.SEPTET_REPLAYS_DIR = mount.folder
    try:
        yield mount
    finally:
        mount.close()


def _healthz() -> tuple[int, str]:
    response = Client().get("/healthz")
    return response.status_code, str(response.json()["checks"]["storage"])


def _nothing_scored(match: Match) -> None:
    match.refresh_from_db()
    assert match.status == Match.Status.SCHEDULED and not match.replay and not match.replay_sha256
    seats = list(Seat.objects.filter(match=match))
    assert all(s.rank is None and s.score is None and not s.forfeit_status for s in seats), "scored"
    assert not RatingChange.objects.filter(match=match).exists()


@pytest.mark.django_db(transaction=True)
def test_a_replay_folder_turned_read_only_mid_match_voids_it_pauses_play_and_play_resumes(
    replay_mount: Mount, played_versions: list[BotVersion]
) -> None:
    match = match_with("oh-hell", played_versions, seed=11)
    outcome: list[services.Played] = []

    def play() -> None:
        outcome.append(services.match_play(match_id=match.pk, worker="w"))

    player = threading.Thread(target=play)
    player.start()
    deadline = time.monotonic() + 30
    while Match.objects.get(pk=match.pk).status != Match.Status.RUNNING and time.monotonic() < deadline:
        time.sleep(0.01)
    replay_mount.remount("ro")  # the disk goes read-only while the match plays
    player.join(60)
    assert outcome and outcome[0].outcome == "storage failed"
    _nothing_scored(match)
    assert match.attempt == 1
    assert list(replay_mount.folder.iterdir()) == [], "a partial replay was left"
    status, reason = _healthz()
    assert status == 503 and "Read-only file system" in reason and "paused" in reason

    # While the folder cannot be written, a delivery takes nothing: the match is not even claimed.
    assert services.match_play(match_id=match.pk, worker="w").outcome == "storage unavailable"
    match.refresh_from_db()
    assert (match.status, match.attempt) == (Match.Status.SCHEDULED, 1)

    replay_mount.remount("rw")
    time.sleep(storage.PROBE_CACHE_SECONDS + 0.1)
    assert _healthz() == (200, "ok")
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    match.refresh_from_db()
    assert (match.status, match.attempt) == (Match.Status.FINISHED, 2)


@pytest.mark.django_db(transaction=True)
def test_a_full_replay_disk_pauses_play_with_the_reason_until_there_is_room(
    settings: Any, tmp_path: Path, played_versions: list[BotVersion]
) -> None:
    mount = Mount(tmp_path / "replays", "64k")  # smaller than the probe: "full" for a replay
    settings.SEPTET_REPLAYS_DIR = mount.folder
    try:
        match = match_with("oh-hell", played_versions, seed=12)
        status, reason = _healthz()
        assert status == 503 and "No space left on device" in reason
        assert services.match_play(match_id=match.pk, worker="w").outcome == "storage unavailable"
        match.refresh_from_db()
        assert (match.status, match.attempt) == (Match.Status.SCHEDULED, 0)
        assert list(mount.folder.iterdir()) == [], "the probe left a file behind"
        mount.remount("size=8m")
        time.sleep(storage.PROBE_CACHE_SECONDS + 0.1)
        assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
        assert _healthz() == (200, "ok")
    finally:
        mount.close()


def _probe_failures(times: int) -> list[str]:
    """What `times` fresh probes of the replay folder said when they failed, in this process."""
    return [
        health.reason
        for health in (storage.replays_writable(fresh=True) for _ in range(times))
        if not health.ok
    ]


def test_processes_sharing_a_replay_folder_never_take_each_others_probe_for_a_failure(
    settings: Any, tmp_path: Path
) -> None:
    """A prefork worker's pool processes (and workers sharing the folder) probe it at the same
    time; one removing another's probe file made that one report the folder unwritable and pause
    its worker (seen in benchmarks/match_cost.py's workers)."""
    import multiprocessing

    settings.SEPTET_REPLAYS_DIR = tmp_path
    with multiprocessing.get_context("fork").Pool(3) as pool:
        failures = pool.map(_probe_failures, [150] * 3)
    assert failures == [[], [], []]
    assert list(tmp_path.iterdir()) == [], "a probe left a file behind"


# The sweep and qualification ---------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_match_recorded_but_not_rated_is_rated_by_the_sweep_once(
    storage: tuple[Path, Path], played_versions: list[BotVersion]
) -> None:
    match = match_with("oh-hell", played_versions, seed=21)
    # What a worker does, up to the moment it dies: claim, play, record; it never rates.
    attempt = services.match_claim(match_id=match.pk, worker="w")
    assert attempt == 1
    players = [RandomPlayer(random.Random(n)) for n in range(3)]
    outcome = play_match(get_game("oh-hell"), players, seed=match.seed, match_id="m-21")
    assert services.match_record(match_id=match.pk, attempt=attempt, outcome=outcome)
    assert not RatingChange.objects.filter(match=match).exists()

    assert services.matches_rate_unrated() == [], "rated before its worker had its grace"
    later = timezone.now() + services.UNRATED_GRACE + timedelta(seconds=1)
    assert services.matches_rate_unrated(now=later) == [match.pk]
    assert services.matches_rate_unrated(now=later) == []
    assert RatingChange.objects.filter(match=match).count() == 3
    assert Match.objects.get(pk=match.pk).ratings_applied


@pytest.mark.django_db(transaction=True)
def test_qualification_never_activates_a_version_older_than_an_active_one(django_user_model: type) -> None:
    ladders_ensure()
    owner = django_user_model.objects.create_user("alice")
    older = version_from_archive(owner, "rnd", tar_folder(EXAMPLES / "random"))
    newer = BotVersion.objects.create(
        bot=older.bot,
        number=older.number + 1,
        archive=older.archive,
        archive_sha256=older.archive_sha256,
        manifest={"games": ["oh-hell"]},
        status=BotVersion.Status.ACTIVE,
    )
    BotVersion.objects.filter(pk=older.pk).update(
        status=BotVersion.Status.QUALIFYING, manifest={"games": ["oh-hell"]}
    )
    decided = bot_version_qualify(version_id=older.pk)
    assert decided.status == BotVersion.Status.RETIRED
    assert f"passed; v{newer.number} is newer and stays active" in decided.error_log
    newer.refresh_from_db()
    assert newer.status == BotVersion.Status.ACTIVE
