"""Builds take turns (septet_platform.bots.build_budget), through the real build task, the real
sandbox and the real Arena server: one build per user at a time, a build time budget per rolling
hour that SubmitBot answers with when to submit again, and build tasks delivered twice.

tests/platform/test_build_pool.py performs the whole attack on the platform's processes."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import grpc
import pytest
from bot_versions import tar_folder
from django.contrib.auth.models import User
from django.utils import timezone
from platform_support import EXAMPLES

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from septet_platform.accounts.services import api_token_create
from septet_platform.bots import tasks
from septet_platform.bots.build_budget import TURN_POLL_SECONDS, bot_version_build_in_turn, build_budget_wait
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.bots.services import bot_version_submit

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def folders(settings: Any, tmp_path: Path) -> None:
    settings.SEPTET_ARCHIVES_DIR = tmp_path / "archives"
    settings.SEPTET_REPLAYS_DIR = tmp_path / "replays"


def _archive(name: str, build: str = '["true"]') -> bytes:
    manifest = (
        f'name = "{name}"\ngames = ["oh-hell"]\n'
        'command = ["python", "bot.py", "--address", "{address}"]\n'
        f"build = {build}\n"
    )
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest})


def _submitted(owner: User, name: str, build: str = '["true"]') -> BotVersion:
    return bot_version_submit(owner=owner, archive=_archive(name, build))


def _built_earlier(owner: User, name: str, seconds: float, ago: timedelta) -> BotVersion:
    """A version of `owner` whose build ended `ago` and took `seconds` (as the build task records)."""
    version = _submitted(owner, name)
    BotVersion.objects.filter(pk=version.pk).update(
        build_status=BotVersion.Build.BUILT, build_finished=timezone.now() - ago, build_seconds=seconds
    )
    return version


def test_a_users_second_build_waits_while_their_first_runs_and_another_users_does_not() -> None:
    mallory, dave = User.objects.create_user("mallory"), User.objects.create_user("dave")
    running = _submitted(mallory, "sleeper-a")
    BotVersion.objects.filter(pk=running.pk).update(
        build_status=BotVersion.Build.BUILDING, build_started=timezone.now()
    )
    second = _submitted(mallory, "sleeper-b")
    other = _submitted(dave, "quick")

    waits = bot_version_build_in_turn(version_id=second.pk)
    built = bot_version_build_in_turn(version_id=other.pk)

    assert (waits.built_now, waits.wait_seconds) == (False, TURN_POLL_SECONDS)
    assert "1 of the owner's builds running (at most 1 at once)" in waits.why
    second.refresh_from_db()
    assert (second.build_status, second.builds) == (BotVersion.Build.PENDING, 0), "nothing ran"
    assert built.built_now and built.version.build_status == BotVersion.Build.BUILT
    assert built.version.build_seconds is not None and built.version.build_finished is not None


def test_a_claim_older_than_any_build_lasts_counts_no_more() -> None:
    """Tried: a build claimed by a worker that died (its claim left BUILDING for hours)."""
    mallory = User.objects.create_user("mallory")
    dead = _submitted(mallory, "orphan")
    BotVersion.objects.filter(pk=dead.pk).update(
        build_status=BotVersion.Build.BUILDING, build_started=timezone.now() - timedelta(hours=2)
    )

    turn = bot_version_build_in_turn(version_id=_submitted(mallory, "next").pk)

    assert turn.built_now and turn.version.build_status == BotVersion.Build.BUILT


def test_the_hourly_budget_counts_builds_that_ended_within_the_hour_and_says_when_it_frees(
    settings: Any,
) -> None:
    settings.SEPTET_BUILD_SECONDS_PER_HOUR = 1000
    mallory = User.objects.create_user("mallory")
    _built_earlier(mallory, "long-ago", 900, ago=timedelta(minutes=61))  # out of the window
    _built_earlier(mallory, "older", 600, ago=timedelta(minutes=40))
    _built_earlier(mallory, "newer", 500, ago=timedelta(minutes=10))

    used, wait = build_budget_wait(owner_id=mallory.pk)

    assert used == pytest.approx(1100)
    assert wait == pytest.approx(20 * 60, abs=5), "when the older build leaves the window, 500 s remain"
    settings.SEPTET_BUILD_SECONDS_PER_HOUR = 1101
    assert build_budget_wait(owner_id=mallory.pk)[1] == 0


def test_a_queued_build_waits_for_the_budget_and_a_new_submission_is_refused_saying_when(
    settings: Any, arena: arena_pb2_grpc.ArenaStub, queued: dict
) -> None:
    """Tried: submitting again over the Arena after the hour's build time was spent."""
    settings.SEPTET_BUILD_SECONDS_PER_HOUR = 300
    mallory = User.objects.create_user("mallory")
    _built_earlier(mallory, "spent", 400, ago=timedelta(minutes=15))
    queued_before = _submitted(mallory, "queued-before")
    _, token = api_token_create(user=mallory, name="cli")

    turn = bot_version_build_in_turn(version_id=queued_before.pk)
    with pytest.raises(grpc.RpcError) as refused:
        arena.SubmitBot(
            iter([pb.SubmitBotChunk(data=_archive("refused"))]),
            metadata=[("authorization", f"Bearer {token}")],
        )

    assert not turn.built_now and turn.wait_seconds == pytest.approx(45 * 60, abs=5)
    assert "build time this hour is spent (400 s)" in turn.why
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert re.fullmatch(
        r"build time limit reached: 300 s of builds per hour per user \(400 s used\); try again in 45 min",
        refused.value.details() or "",
    )
    assert not Bot.objects.filter(name="refused").exists() and queued["build"].calls == []


def test_a_submission_with_a_build_goes_to_the_build_queue_and_one_without_to_qualification(
    arena: arena_pb2_grpc.ArenaStub, queued: dict
) -> None:
    user = User.objects.create_user("ada")
    _, token = api_token_create(user=user, name="cli")
    metadata = [("authorization", f"Bearer {token}")]
    plain = tar_folder(EXAMPLES / "random", {"septet-bot.toml": 'name = "plain"\ngames = ["oh-hell"]\n'
                       'command = ["python", "bot.py", "--address", "{address}"]\n'})  # fmt: skip

    arena.SubmitBot(iter([pb.SubmitBotChunk(data=_archive("builds"))]), metadata=metadata)
    arena.SubmitBot(iter([pb.SubmitBotChunk(data=plain)]), metadata=metadata)

    by_name = {version.bot.name: version.pk for version in BotVersion.objects.select_related("bot")}
    assert (queued["build"].calls, queued["qualify"].calls) == ([by_name["builds"]], [by_name["plain"]])


def test_build_tasks_delivered_again_do_nothing_and_qualification_never_builds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Tried: the build task delivered twice, and the qualification task (on a match worker)
    delivered for a version whose build has not run."""
    sent: dict[str, list[int]] = {"build": [], "qualify": []}
    monkeypatch.setattr(tasks.bot_version_build_task, "delay", sent["build"].append)
    monkeypatch.setattr(tasks.bot_version_qualify_task, "delay", sent["qualify"].append)
    ada = User.objects.create_user("ada")
    good, bad = _submitted(ada, "good"), _submitted(ada, "bad", build='["false"]')

    assert tasks.bot_version_qualify_task(good.pk) == BotVersion.Status.QUALIFYING
    assert BotVersion.objects.get(pk=good.pk).builds == 0, "the qualification task ran no build"
    assert tasks.bot_version_build_task(good.pk) == BotVersion.Build.BUILT
    assert tasks.bot_version_build_task(good.pk) == BotVersion.Build.BUILT  # delivered again
    assert tasks.bot_version_build_task(bad.pk) == BotVersion.Status.FAILED
    assert tasks.bot_version_build_task(bad.pk) == BotVersion.Status.FAILED  # delivered again

    good.refresh_from_db()
    bad.refresh_from_db()
    assert (good.builds, bad.builds) == (1, 1)
    assert sent == {"build": [good.pk], "qualify": [good.pk]}, "qualification queued once, after the build"
    assert bad.status == BotVersion.Status.FAILED and "the build failed" in bad.error_log
    assert bot_version_qualify(version_id=bad.pk) == bad  # decided: nothing changes
