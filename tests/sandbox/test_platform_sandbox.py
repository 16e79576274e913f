"""The platform and its sandbox: hostile bots in a rated match change nothing else in the
database; a bot killed from outside forfeits and the game completes; without a sandbox the
platform refuses to run submitted bots (the match is voided, never scored) unless the explicit
setting allows it; production settings refuse unsafe configurations; submissions are rate
limited per user; API tokens are stored hashed."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder, version_from_archive
from django.apps import apps
from django.conf import settings
from django.forms.models import model_to_dict
from production_settings import production_setting
from sandbox_helpers import EXAMPLES, HOSTILE, ROOT

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc
from referee.engine.games import get_game
from referee.engine.games.base import Action
from referee.engine.match import TimeControl, Turn, play_match
from referee.engine.players import Player, RandomPlayer
from referee.tools import sandbox as sandbox_module
from referee.tools.botfolder import start_bot
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.sandbox import Sandbox
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import api_token_authenticate, api_token_create
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat, SeatLog
from septet_platform.submissions.services import SubmissionsExhausted, submission_rate_check


def _match(versions: list[BotVersion], seed: int = 5) -> Match:
    ladder, _ = Ladder.objects.get_or_create(
        game="oh-hell",
        pool=Ladder.Pool.SANDBOXED,
        defaults={"min_players": 3, "max_players": 7, "bank_seconds": 3.0},
    )
    match = Match.objects.create(ladder=ladder, seed=seed)
    for seat, version in enumerate(versions):
        Seat.objects.create(match=match, seat=seat, bot_version=version)
    return match


def _snapshot(exclude_match: int, exclude_versions: set[int]) -> dict[str, list[dict[str, Any]]]:
    """Every row of every model of the platform, but this match's own rows (its seats and their
    logs) and the ratings of the versions it seats (which a recorded match rightly changes)."""
    rows: dict[str, list[dict[str, Any]]] = {}
    for model in apps.get_models():
        objects = model.objects.all()
        if model is Match:
            objects = objects.exclude(pk=exclude_match)
        elif model is Seat:
            objects = objects.exclude(match_id=exclude_match)
        elif model is SeatLog:  # each seat's output, kept for its owner with the match
            objects = objects.exclude(seat__match_id=exclude_match)
        elif model is Rating:
            objects = objects.exclude(bot_version_id__in=exclude_versions)
        elif model is RatingChange:
            objects = objects.exclude(match_id=exclude_match)
        rows[model._meta.label] = sorted((model_to_dict(row) for row in objects), key=repr)
    return rows


@pytest.fixture
def house(django_user_model: type) -> Any:
    return django_user_model.objects.create_user("house")


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_hostile_bots_in_a_rated_match_change_nothing_else_in_the_database(
    house: Any, django_user_model: type
) -> None:
    data, archives = Path(settings.DATA_DIR), Path(settings.SEPTET_ARCHIVES_DIR)
    targets = {
        "read": [str(data / "septet.sqlite3"), str(archives / "random" / "v1.tar.gz")],
        "write": [str(data), str(settings.SEPTET_ARCHIVES_DIR)],
        "secrets": ["SECRET_KEY", "DATABASE_URL"],
        "ports": [5432, 6379],
    }
    mallory = django_user_model.objects.create_user("mallory")
    random_version = version_from_archive(house, "random", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
    hostile = [
        version_from_archive(
            mallory,
            f"hostile-{name}",
            tar_folder(HOSTILE / name, {"targets.json": json.dumps(targets)}),
            games=["oh-hell"],
        )
        for name in ("read-outside", "write-outside", "network")
    ]
    other = _match([random_version, *hostile], seed=9)  # another match, left alone
    match = _match([random_version, *hostile])
    before = _snapshot(match.pk, {version.pk for version in [random_version, *hostile]})
    archives_before = sorted(p.name for p in Path(settings.SEPTET_ARCHIVES_DIR).rglob("*"))

    played = services.match_play(match_id=match.pk, worker="w")

    assert played.outcome == "recorded"
    seats = list(Seat.objects.filter(match=match).order_by("seat"))
    assert [seat.forfeit_reason for seat in seats] == ["", "", "", ""], "an attack worked or a bot failed"
    assert all(seat.rank is not None for seat in seats)
    assert _snapshot(match.pk, {version.pk for version in [random_version, *hostile]}) == before
    assert sorted(p.name for p in Path(settings.SEPTET_ARCHIVES_DIR).rglob("*")) == archives_before
    other.refresh_from_db()
    assert (other.status, other.attempt) == (Match.Status.SCHEDULED, 0)


class _KilledFromOutside(GrpcPlayer):
    """A gRPC player whose bot process group is SIGKILLed by someone else before its 5th decision."""

    def __init__(self, address: str, pid: int) -> None:
        super().__init__(address, "victim")
        self.pid = pid
        self.decisions = 0

    def decide_turn(self, turn: Turn, info_state: Any, legal_actions: tuple[Action, ...]) -> Action:
        self.decisions += 1
        if self.decisions == 5:
            os.killpg(self.pid, signal.SIGKILL)
        return super().decide_turn(turn, info_state, legal_actions)


def test_a_bot_killed_from_outside_mid_game_forfeits_and_the_game_completes() -> None:
    bot = start_bot(EXAMPLES / "random", sandbox=Sandbox())
    player = _KilledFromOutside(bot.address, bot.process.pid)
    try:
        players: list[Player] = [RandomPlayer(random.Random(1)), player, RandomPlayer(random.Random(2))]
        outcome = play_match(get_game("oh-hell"), players, seed=4, time_control=TimeControl(1.0, 3.0))
    finally:
        player.close()
        bot.stop()
    assert [(forfeit.seat, str(forfeit.status)) for forfeit in outcome.forfeits] == [(1, "ERROR")], (
        outcome.forfeits
    )
    assert outcome.result.ranks is not None and outcome.result.ranks[1] == 3


@pytest.fixture
def no_bubblewrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This machine as if bubblewrap were not installed (the command looked up does not exist)."""
    monkeypatch.setattr(sandbox_module, "BWRAP", "bwrap-not-installed-here")
    sandbox_module.check_available.cache_clear()
    yield
    sandbox_module.check_available.cache_clear()


@pytest.mark.django_db(transaction=True)
def test_without_a_sandbox_the_platform_refuses_to_run_bots_and_voids_the_match(
    house: Any, no_bubblewrap: None
) -> None:
    versions = [
        version_from_archive(house, f"random-{n}", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
        for n in range(3)
    ]
    match = _match(versions)
    played = services.match_play(match_id=match.pk, worker="w")
    assert played.outcome == "voided"
    match.refresh_from_db()
    assert (match.status, match.result) == (Match.Status.SCHEDULED, None)
    assert not Seat.objects.filter(match=match).exclude(forfeit_reason="").exists(), "scored against a bot"
    assert not Rating.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_the_explicit_setting_lets_development_run_bots_without_a_sandbox(
    house: Any, no_bubblewrap: None, settings: Any
) -> None:
    settings.SEPTET_ALLOW_UNSANDBOXED = True
    versions = [
        version_from_archive(house, f"random-{n}", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
        for n in range(3)
    ]
    assert services.match_play(match_id=_match(versions).pk, worker="w").outcome == "recorded"


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_requires_seccomp_voids_the_match_when_the_filter_cannot_load(
    house: Any, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tried: a match on a worker whose seccomp filter is unavailable (switched off, as a machine
    without libseccomp would be) under SEPTET_REQUIRE_SECCOMP, as production sets it: the match is
    voided (put back, scored against no one), never played with less; without the requirement
    (development) it is played."""
    monkeypatch.setenv("SEPTET_SANDBOX_SECCOMP", "off")
    versions = [
        version_from_archive(house, f"random-{n}", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
        for n in range(3)
    ]
    settings.SEPTET_REQUIRE_SECCOMP = True
    match = _match(versions)
    assert services.match_play(match_id=match.pk, worker="w").outcome == "voided"
    match.refresh_from_db()
    assert (match.status, match.result) == (Match.Status.SCHEDULED, None)
    assert not Rating.objects.exists()
    settings.SEPTET_REQUIRE_SECCOMP = False
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"


def test_production_requires_the_seccomp_filter_by_default() -> None:
    """Production settings turn SEPTET_REQUIRE_SECCOMP on unless it is switched off explicitly."""
    assert production_setting("SEPTET_REQUIRE_SECCOMP") == "True"
    assert production_setting("SEPTET_REQUIRE_SECCOMP", {"SEPTET_REQUIRE_SECCOMP": "0"}) == "False"


def _import_prod(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {key: value for key, value in os.environ.items() if key not in ("DEBUG", "SECRET_KEY")}
    return subprocess.run(
        [sys.executable, "-c", "import septet_platform.settings.prod"],
        env={**clean, "PYTHONPATH": str(ROOT / "platform"), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("env", "refusal"),
    [
        ({"SECRET_KEY": "k" * 50, "DEBUG": "1"}, "DEBUG on"),
        ({}, "SECRET_KEY"),
        ({"SECRET_KEY": "septet-insecure-development-key"}, "SECRET_KEY"),
        ({"SECRET_KEY": "short"}, "SECRET_KEY"),
        ({"SECRET_KEY": "k" * 50, "SEPTET_ALLOW_UNSANDBOXED": "1"}, "SEPTET_ALLOW_UNSANDBOXED"),
    ],
)
def test_production_settings_refuse_to_start_unsafe(env: dict[str, str], refusal: str) -> None:
    done = _import_prod(**env)
    assert done.returncode != 0 and "ImproperlyConfigured" in done.stderr and refusal in done.stderr


def test_production_settings_start_with_a_long_secret_and_debug_off() -> None:
    done = _import_prod(SECRET_KEY="k" * 50)
    assert done.returncode == 0, done.stderr


@pytest.mark.django_db
def test_submissions_past_the_hourly_limit_are_refused_with_when_to_retry(house: Any, settings: Any) -> None:
    settings.SEPTET_SUBMISSIONS_PER_HOUR = 3
    for n in range(3):
        submission_rate_check(owner=house)  # under the limit: allowed
        version_from_archive(house, f"bot-{n}", b"archive", games=["oh-hell"])
    with pytest.raises(SubmissionsExhausted, match=r"3 versions per hour per user; try again in \d+ min"):
        submission_rate_check(owner=house)


@pytest.mark.django_db
def test_api_tokens_are_stored_hashed_and_the_plaintext_authenticates(house: Any) -> None:
    token, plaintext = api_token_create(user=house, name="laptop")
    stored = ApiToken.objects.get(pk=token.pk)
    assert plaintext not in json.dumps(model_to_dict(stored), default=str)
    assert stored.digest == hashlib.sha256(plaintext.encode()).hexdigest()
    assert api_token_authenticate(token=plaintext) == house


@pytest.mark.django_db(transaction=True)
def test_arena_refuses_a_submission_past_the_limit_with_resource_exhausted_and_stores_nothing(
    house: Any, settings: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from septet_platform.arena_api.server import create_server
    from septet_platform.submissions import services as submission_services

    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_SUBMISSIONS_PER_HOUR = 2
    queued: list[int] = []
    monkeypatch.setattr(submission_services.bot_version_qualify_task, "delay", queued.append)
    _, plaintext = api_token_create(user=house, name="cli")
    metadata = [("authorization", f"Bearer {plaintext}")]
    server, port = create_server("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            arena = arena_pb2_grpc.ArenaStub(channel)
            for name in ("first", "second"):
                data = tar_folder(EXAMPLES / "random", {"septet-bot.toml": _manifest(name)})
                arena.SubmitBot(iter([arena_pb2.SubmitBotChunk(data=data)]), metadata=metadata)
            data = tar_folder(EXAMPLES / "random", {"septet-bot.toml": _manifest("third")})
            with pytest.raises(grpc.RpcError) as caught:
                arena.SubmitBot(iter([arena_pb2.SubmitBotChunk(data=data)]), metadata=metadata)
    finally:
        server.stop(grace=None).wait()
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "2 versions per hour per user; try again in" in (caught.value.details() or "")
    assert sorted(Bot.objects.values_list("name", flat=True)) == ["first", "second"]
    assert len(queued) == 2


def _manifest(name: str) -> str:
    text = (EXAMPLES / "random" / "septet-bot.toml").read_text()
    return text.replace('name = "random"', f'name = "{name}"')


@pytest.mark.django_db(transaction=True)
def test_without_a_sandbox_qualification_waits_and_never_fails_the_bot(
    house: Any, no_bubblewrap: None
) -> None:
    from septet_platform.bots.qualification import bot_version_qualify

    Ladder.objects.get_or_create(
        game="oh-hell", pool=Ladder.Pool.SANDBOXED, defaults={"min_players": 3, "max_players": 7}
    )
    version = version_from_archive(house, "newcomer", tar_folder(EXAMPLES / "random"), games=["oh-hell"])
    BotVersion.objects.filter(pk=version.pk).update(status=BotVersion.Status.QUALIFYING)
    with pytest.raises(sandbox_module.SandboxError, match="bubblewrap is not installed"):
        bot_version_qualify(version_id=version.pk)
    version.refresh_from_db()
    assert (version.status, version.error_log) == (BotVersion.Status.QUALIFYING, "")


@pytest.mark.django_db
def test_matches_waiting_scheduled_with_no_task_are_requeued_and_no_others(
    house: Any, settings: Any, tmp_path: Path
) -> None:
    from pipeline import PrivateRedis

    redis = PrivateRedis(tmp_path / "redis").start()  # an empty broker of the test's own: no task anywhere
    settings.CELERY_BROKER_URL = redis.url
    try:
        versions = [version_from_archive(house, f"random-{n}", b"-", games=["oh-hell"]) for n in range(3)]
        stale, fresh, running = _match(versions), _match(versions), _match(versions)
        Match.objects.filter(pk=running.pk).update(status=Match.Status.RUNNING)
        later = stale.created + services.lost.LOST_GRACE + timedelta(seconds=1)
        Match.objects.filter(pk=fresh.pk).update(created=later)
        assert services.matches_requeue_stale(now=later) == [stale.pk]
    finally:
        redis.stop()
