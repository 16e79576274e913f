"""Qualification: a submitted version plays a smoke game of each game it declares through the bot
runtime; it becomes ACTIVE, or FAILED with the reason in its owner's error log."""

from __future__ import annotations

import pytest
from bot_versions import tar_folder, version_from_archive
from platform_support import EXAMPLES, FAULTY

from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.ladders.services import ladders_ensure


def _qualifying(owner: object, name: str, data: bytes, games: list[str]) -> BotVersion:
    version = version_from_archive(owner, name, data)
    BotVersion.objects.filter(pk=version.pk).update(
        status=BotVersion.Status.QUALIFYING, manifest={"games": games}
    )
    return BotVersion.objects.get(pk=version.pk)


def _faulty(behaviour: str) -> bytes:
    manifest = (
        f'name = "{behaviour}"\ngames = ["oh-hell", "oh7"]\n'
        f'command = ["python", "misbehave.py", "--address", "{{address}}", "--behaviour", "{behaviour}"]\n'
    )
    return tar_folder(EXAMPLES / "random", {"septet-bot.toml": manifest, "misbehave.py": FAULTY.read_text()})


@pytest.mark.django_db(transaction=True)
def test_the_random_example_qualifies_and_retires_the_previous_version(django_user_model: type) -> None:
    ladders_ensure()
    owner = django_user_model.objects.create_user("alice")
    first = _qualifying(owner, "rnd", tar_folder(EXAMPLES / "random"), ["oh-hell", "black-sevens"])
    assert bot_version_qualify(version_id=first.pk).status == BotVersion.Status.ACTIVE
    second = BotVersion.objects.create(
        bot=first.bot,
        number=2,
        archive=first.archive,
        archive_sha256=first.archive_sha256,
        manifest=first.manifest,
    )
    qualified = bot_version_qualify(version_id=second.pk)
    assert qualified.status == BotVersion.Status.ACTIVE and qualified.qualified is not None
    first.refresh_from_db()
    assert first.status == BotVersion.Status.RETIRED
    assert bot_version_qualify(version_id=second.pk).error_log == qualified.error_log, "idempotent"


@pytest.mark.parametrize(
    ("behaviour", "expected"),
    [("illegal-value", "INVALID"), ("exit-at-start", "did not start"), ("raise", "ERROR")],
)
@pytest.mark.django_db(transaction=True)
def test_a_misbehaving_version_fails_with_the_reason_in_its_error_log(
    django_user_model: type, behaviour: str, expected: str
) -> None:
    ladders_ensure()
    version = _qualifying(
        django_user_model.objects.create_user("mallory"), behaviour, _faulty(behaviour), ["oh-hell"]
    )
    failed = bot_version_qualify(version_id=version.pk)
    assert failed.status == BotVersion.Status.FAILED
    assert expected in failed.error_log


@pytest.mark.django_db(transaction=True)
def test_a_version_declaring_no_laddered_game_fails(django_user_model: type) -> None:
    version = _qualifying(
        django_user_model.objects.create_user("bob"), "lonely", tar_folder(EXAMPLES / "random"), ["oh7"]
    )
    failed = bot_version_qualify(version_id=version.pk)
    assert failed.status == BotVersion.Status.FAILED and "no game that has a ladder" in failed.error_log
