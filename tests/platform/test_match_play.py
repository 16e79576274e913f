"""Playing scheduled matches with real bot processes: claimed once, recorded once, voided on our
failures, forfeited on the bots' (septet_platform.matches.services)."""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

import pytest
from bot_versions import tar_folder, version_from_archive
from django.conf import settings
from django.utils import timezone
from platform_support import EXAMPLES, FAULTY, match_with

from referee import replay
from referee.match import play_match
from referee.players import RandomPlayer
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
