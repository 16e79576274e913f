"""Qualification: a submitted version plays a smoke game of each game it declares through the bot
runtime; it becomes ACTIVE, or FAILED with the reason in its owner's error log."""

from __future__ import annotations

import pytest
from bot_versions import ALL_GAMES, tar_folder, version_from_archive
from platform_support import EXAMPLES, FAULTY

from septet_platform.bots.models import BotVersion
from septet_platform.bots.qualification import (
    GameProblem,
    QualificationProgress,
    bot_version_qualify,
    failure_report,
    qualification_progress,
    reported_names,
)
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


@pytest.mark.django_db(transaction=True)
def test_a_bot_that_cannot_start_is_reported_once_and_not_started_for_its_other_games(
    django_user_model: type,
) -> None:
    """Tried: the random example with a syntax error, declaring every game id: its traceback was
    logged once per game (six times), after six starts of the same command."""
    ladders_ensure()
    source = (EXAMPLES / "random" / "bot.py").read_text() + "\ndef broken(:\n"
    archive = tar_folder(EXAMPLES / "random", {"bot.py": source})
    version = _qualifying(django_user_model.objects.create_user("eve"), "broken", archive, list(ALL_GAMES))

    failed = bot_version_qualify(version_id=version.pk)

    assert failed.status == BotVersion.Status.FAILED
    assert failed.error_log.count("SyntaxError") == 1, failed.error_log
    assert f"{ALL_GAMES[0]}: the bot did not start" in failed.error_log
    assert f"not played: {', '.join(ALL_GAMES[1:])}" in failed.error_log
    assert list(failed.qualification) == [ALL_GAMES[0]]


def test_a_problem_met_in_several_games_is_said_once_with_where() -> None:
    """The failure log's composition: same problem and output in every game -> once, 'in all N
    games'; problems that differ stay apart, an output they share is said once."""
    crash = "ERROR: the bot raised NameError"
    alike = [
        GameProblem(game, crash, "\n  NameError: name 'x' is not defined") for game in ("oh7", "oh-hell")
    ]
    assert failure_report(alike, ["oh7", "oh-hell"]) == [
        f"in all 2 games: {crash}",
        "the bot's last output (in all 2 games):\n  NameError: name 'x' is not defined",
    ]
    slow = [
        GameProblem("oh7", "TIMEOUT: took 2.013 s", ""),
        GameProblem("oh-hell", "TIMEOUT: took 2.020 s", ""),
    ]
    assert failure_report(slow, ["oh7", "oh-hell", "black-sevens"]) == [
        "oh7: TIMEOUT: took 2.013 s",
        "oh-hell: TIMEOUT: took 2.020 s",
    ]
    some = [*alike, GameProblem("black-sevens", "INVALID: answered 9", "")]
    assert failure_report(some, ["oh7", "oh-hell", "black-sevens", "oh7-duel"])[0] == (
        f"in 2 games (oh7, oh-hell): {crash}"
    )
    assert failure_report([], ["oh7"]) == []


@pytest.mark.django_db(transaction=True)
def test_qualification_keeps_its_progress_and_the_name_the_bot_reported(django_user_model: type) -> None:
    """The random example submitted as 'rnd' reports the name its code gives it, 'random'."""
    ladders_ensure()
    version = _qualifying(
        django_user_model.objects.create_user("fay"),
        "rnd",
        tar_folder(EXAMPLES / "random"),
        ["oh-hell", "oh7"],
    )
    assert qualification_progress(version) == QualificationProgress(step="queued")

    done = bot_version_qualify(version_id=version.pk)

    assert done.status == BotVersion.Status.ACTIVE and qualification_progress(done) is None
    assert reported_names(done) == ["random"]
    assert all(done.qualification[game]["over"] for game in ("oh-hell", "oh7"))
    midway = {"oh-hell": {**done.qualification["oh-hell"], "problem": True}, "oh7": {"over": False}}
    BotVersion.objects.filter(pk=done.pk).update(status=BotVersion.Status.QUALIFYING, qualification=midway)
    assert qualification_progress(BotVersion.objects.get(pk=done.pk)) == QualificationProgress(
        step="playing", games=("oh-hell", "oh7"), games_over=1, games_failed=1, game="oh7"
    )
