"""`septet submit`, `ladder`, `matches` and `replay fetch` against an Arena server running in this
process on a free port: what each prints, and for every bad call a one-line error in words (never a
bare gRPC status), exit code 2 for a mistake or a refusal, 3 for an Arena that cannot be reached or
fails inside, 1 for a "no" (qualification failed, a replay does not verify), and nothing stored."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone
from fixtures_intake import random_copy

from referee.engine import replay
from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import builtin_player
from referee.tools.cli import main
from septet_platform.accounts.services import api_token_create, api_token_revoke
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.qualification import bot_version_qualify
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.ladders.selectors import ladder_standings
from septet_platform.ladders.services import ladders_ensure
from septet_platform.matches.models import Match
from septet_platform.submissions import services

pytestmark = pytest.mark.django_db(transaction=True)


def _token(username: str) -> tuple[User, str]:
    user, _ = User.objects.get_or_create(username=username)
    _, plaintext = api_token_create(user=user, name="cli")
    return user, plaintext


def test_submit_uploads_a_folder_as_a_qualifying_version_and_queues_it(
    septet: Callable, queued: dict, tmp_path: Path
) -> None:
    _, token = _token("ada")
    folder = random_copy(tmp_path, "ada-random")

    code, out, err = septet("submit", str(folder), token=token)

    assert code == 0, err
    assert "submitted ada-random version 1" in out and "qualifying" in out
    version = BotVersion.objects.get(bot__name="ada-random")
    assert version.bot.owner.username == "ada" and version.status == BotVersion.Status.QUALIFYING
    assert queued["qualify"].calls == [version.pk]
    assert septet("submit", str(folder), token=token)[1].startswith("submitted ada-random version 2")


def test_submit_refusals_are_one_line_and_store_nothing(
    septet: Callable, queued: dict, tmp_path: Path, storage: tuple[Path, Path]
) -> None:
    ada, token = _token("ada")
    _, bob_token = _token("bob")
    folder = random_copy(tmp_path, "ada-random")
    revoked_user, revoked = _token("cy")
    api_token_revoke(user=revoked_user, prefix=revoked_user.api_tokens.get().prefix)
    not_a_bot = tmp_path / "empty"
    not_a_bot.mkdir()

    tried = {
        "no token at all": (septet("submit", str(folder)), "needs an API token"),
        "a token that does not exist": (
            septet("submit", str(folder), token="sep_" + "x" * 40),
            "SEPTET_TOKEN",
        ),
        "a revoked token": (septet("submit", str(folder), token=revoked), "revoked"),
        "a folder without a manifest": (septet("submit", str(not_a_bot), token=token), "septet-bot.toml"),
    }
    assert septet("submit", str(folder), token=token)[0] == 0  # ada's bot exists now
    tried["another user's bot name"] = (
        septet("submit", str(folder), token=bob_token),
        "belongs to another user",
    )

    for what, ((code, _, err), words) in tried.items():
        assert code == 2, what
        assert err.startswith("septet: error: ") and words in err and err.count("\n") == 1, (what, err)
        assert "StatusCode" not in err and "PERMISSION_DENIED" not in err and "UNAUTHENTICATED" not in err
    assert BotVersion.objects.count() == 1 and Bot.objects.get().owner == ada
    assert len(queued["qualify"].calls) == 1


class _QualifyInAThread:
    """Stands in for the Celery task: runs the real qualification in a thread, as a worker would,
    while `septet submit --wait` polls the Arena."""

    def __init__(self) -> None:
        self.threads: list[threading.Thread] = []

    def delay(self, version_id: int) -> None:
        thread = threading.Thread(target=self._qualify, args=(version_id,))
        thread.start()
        self.threads.append(thread)

    @staticmethod
    def _qualify(version_id: int) -> None:
        try:
            bot_version_qualify(version_id=version_id)
        finally:
            connection.close()


@pytest.fixture
def qualifying(
    monkeypatch: pytest.MonkeyPatch, settings: Any, septet: Callable
) -> Iterator[_QualifyInAThread]:
    """Submissions are qualified for real (in the sandbox where bubblewrap works) on every ladder."""
    settings.SEPTET_ALLOW_UNSANDBOXED = True
    ladders_ensure()
    worker = _QualifyInAThread()
    monkeypatch.setattr(services, "bot_version_qualify_task", worker)
    yield worker
    for thread in worker.threads:
        thread.join(timeout=120)


def test_submit_wait_of_a_bot_that_cannot_start_prints_its_traceback_once(
    septet: Callable, qualifying: _QualifyInAThread, tmp_path: Path
) -> None:
    """Tried: a copy of the random example with a syntax error, declaring every game id (it
    printed the same traceback six times, once per game)."""
    _, token = _token("ada")
    folder = random_copy(tmp_path, "broken")
    (folder / "bot.py").write_text((folder / "bot.py").read_text() + "\ndef broken(:\n")

    code, out, err = septet("submit", str(folder), "--wait", token=token)

    assert code == 1, err
    assert "broken version 1 failed qualification" in out
    assert out.count("SyntaxError") == 1 and "the bot did not start" in out, out
    assert "not played: oh7-advanced, oh7-duel" in out
    assert BotVersion.objects.get(bot__name="broken").status == BotVersion.Status.FAILED


def test_submit_wait_shows_progress_lines_and_warns_of_a_name_unlike_the_manifests(
    septet: Callable, qualifying: _QualifyInAThread, tmp_path: Path
) -> None:
    """Tried: the random example renamed in its manifest only (its code still says 'random'), on
    two games; output to a pipe gets a plain line per step, not a spinner."""
    _, token = _token("ada")
    folder = random_copy(tmp_path, "mine")
    manifest = folder / "septet-bot.toml"
    manifest.write_text(re.sub(r"games = \[.*\]", 'games = ["oh-hell", "oh7"]', manifest.read_text()))

    code, out, err = septet("submit", str(folder), "--wait", token=token)

    assert code == 0, err
    assert "mine version 1 qualified and is active on: oh-hell, oh7" in out
    progress = [line for line in out.splitlines() if line.startswith("qualifying mine version 1: ")]
    assert progress and len(progress) == len(set(progress)), out
    assert "warning: the bot calls itself 'random'" in out and "manifest names it 'mine'" in out


def test_ladder_lists_ladders_and_shows_standings_as_a_table_and_as_json(
    septet: Callable, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    strong = ladder_bot_factory("ada", "strong")
    weak = ladder_bot_factory("bob", "weak")
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=strong, mu=30.0, sigma=2.0, games=12)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=weak, mu=20.0, sigma=3.0, games=9)

    Ladder.objects.create(game="black-sevens", min_players=4, max_players=4)

    code, listing, _ = septet("ladder")
    _, table, _ = septet("ladder", "oh-hell")
    _, as_json, _ = septet("ladder", "oh-hell", "--json")
    _, overview_json, _ = septet("ladder", "--json")

    assert code == 0 and "oh-hell" in listing and "3-7" in listing
    assert listing.index("strong") < listing.index("weak"), "every ladder's leaders, not its settings"
    assert "black-sevens" in listing and "no rated bots yet" in listing
    assert "septet ladder GAME" in listing
    assert table.index("strong") < table.index("weak")
    standings = json.loads(as_json)["standings"]
    assert [(row["bot"], row["games"]) for row in standings] == [("strong", 12), ("weak", 9)]
    assert standings[0]["rating"] > standings[1]["rating"]
    overview = {ladder["game"]: ladder for ladder in json.loads(overview_json)}
    assert [row["bot"] for row in overview["oh-hell"]["leaders"]] == ["strong", "weak"]
    assert overview["black-sevens"]["leaders"] == [] and overview["black-sevens"]["min_players"] == 4


def test_a_bot_with_no_rated_game_is_listed_after_every_bot_that_has_one(
    septet: Callable, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    """A new version starts at the default mu (1500) with a wide interval: ranked by mu alone it
    sat above bots rated lower over many games (#3 of 6 in the report)."""
    for index, name in enumerate(("a", "b", "c", "d", "e")):
        Rating.objects.create(
            ladder=ladder_oh_hell,
            bot_version=ladder_bot_factory("ada", name),
            mu=27.0 - index,
            sigma=2.0,
            games=30,
        )
    fresh = ladder_bot_factory("bob", "fresh")
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=fresh, mu=25.0, sigma=25 / 3, games=0)

    standings = json.loads(septet("ladder", "oh-hell", "--json")[1])["standings"]
    _, table, _ = septet("ladder", "oh-hell")

    assert [(row["rank"], row["bot"]) for row in standings] == [
        (1, "a"),
        (2, "b"),
        (3, "c"),
        (4, "d"),
        (5, "e"),
        (6, "fresh"),
    ]
    assert table.index(" e ") < table.index("fresh") and "unplayed bots are listed last" in table
    assert [row.bot for row in ladder_standings(ladder=ladder_oh_hell)][-1] == "fresh"


def test_matches_lists_a_bots_matches_with_scores_and_ranks(
    septet: Callable,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
) -> None:
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    older = ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])
    newer = ladder_match_factory(ladder_oh_hell, versions[::-1], [2, 1, 3])
    ladder_match_factory(ladder_oh_hell, [ladder_bot_factory("bob", "other")] * 3, [1, 1, 1])
    _, token = _token("bob")

    code, out, _ = septet("matches", "alpha", token=token)
    listed = json.loads(septet("matches", "alpha", "--json", token=token)[1])
    without_token = septet("matches", "alpha")

    assert code == 0 and "alpha v1" in out and "#1" in out
    assert [match["id"] for match in listed] == [str(newer.pk), str(older.pk)]  # int64 as JSON text
    assert {seat["bot"] for seat in listed[0]["seats"]} == {"alpha", "beta", "gamma"}
    assert without_token[0] == 2 and "listing matches needs an API token" in without_token[2]


def test_matches_are_listed_by_when_they_finished_with_the_rating_column_explained(
    septet: Callable,
    ladder_oh_hell: Ladder,
    ladder_bot_factory: Callable,
    ladder_match_factory: Callable,
) -> None:
    """A challenge queued first (a lower id) but finished last is listed first; a rated match
    that changed no rating says 'set', an unrated one '-', and a legend says what both mean."""
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    rated = ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])
    challenge = ladder_match_factory(ladder_oh_hell, versions, [3, 2, 1], rated=False)
    played_before = ladder_match_factory(ladder_oh_hell, versions, [2, 1, 3], rated=False)
    now = timezone.now()
    Match.objects.filter(pk=played_before.pk).update(
        kind=Match.Kind.CHALLENGE, finished=now - timedelta(hours=2)
    )
    Match.objects.filter(pk=rated.pk).update(finished=now - timedelta(hours=1))
    Match.objects.filter(pk=challenge.pk).update(kind=Match.Kind.CHALLENGE, finished=now)
    _, token = _token("bob")

    listed = json.loads(septet("matches", "alpha", "--json", token=token)[1])
    _, out, _ = septet("matches", "alpha", token=token)
    pages = [septet("matches", "alpha", "--json", "--limit", "1", token=token)]

    assert [int(match["id"]) for match in listed] == [challenge.pk, rated.pk, played_before.pk]
    rows = [line.split() for line in out.splitlines() if line[:1].isdigit()]
    assert [(int(row[0]), row[6]) for row in rows] == [
        (challenge.pk, "-"),
        (rated.pk, "set"),
        (played_before.pk, "-"),
    ]
    assert "-: unrated" in out and "set: rated with its duplicate set" in out
    assert int(json.loads(pages[0][1])[0]["id"]) == challenge.pk


def test_the_documented_challenge_is_valid_and_one_seat_short_says_how_to_fill_it(
    septet: Callable, queued: dict, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    """Tried: docs/bots.md's challenge as it was (two bots for Oh Hell!, which seats 3-7), then as
    it is now (a house bot fills the third seat)."""
    _, token = _token("ada")
    ladder_bot_factory("ada", "mine")
    for house in ("montecarlo", "greedy"):
        ladder_bot_factory("house", house, is_house=True)

    short = septet("challenge", "mine", "montecarlo", "--game", "oh-hell", "--sets", "10", token=token)
    assert short[0] == 2 and queued["match"].calls == [] and not Match.objects.exists()
    assert (
        short[2].startswith("septet: error: oh-hell is played by 3-7 seats, not 2")
        and short[2].count("\n") == 1
    )
    assert "name 1 more (a house bot such as greedy or random, say)" in short[2]

    code, out, err = septet(
        "challenge", "mine", "montecarlo", "greedy", "--game", "oh-hell", "--sets", "10", token=token
    )
    assert code == 0, err
    assert "10 duplicate sets x 3 rotations = 30 unrated oh-hell matches queued" in out
    assert len(queued["match"].calls) == 30


def test_unknown_names_are_one_line_in_words_with_exit_code_2_and_the_close_match(
    septet: Callable, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    """Tried: a misspelt game id, an unknown bot, a misspelt bot, an unknown match, a bad --limit."""
    _, token = _token("ada")
    ladder_bot_factory("ada", "greedy")
    tried = {
        ("ladder", "oh-hel"): "no ladder for game 'oh-hel'; did you mean oh-hell? (the ladders: oh-hell)",
        ("ladder", "poker"): "no ladder for game 'poker' (the ladders: oh-hell)",
        ("matches", "nobody"): "no bot named 'nobody'",
        ("matches", "gredy"): "no bot named 'gredy'; did you mean greedy?",
        ("matches", "greedy", "--game", "oh-hel"): "did you mean oh-hell?",
        ("replay", "fetch", "999999"): "no match 999999",
        ("matches", "nobody", "--limit", "0"): "--limit must be 1-100",
    }
    for words, expected in tried.items():
        code, out, err = septet(*words, token=token)
        assert code == 2 and out == "", words
        assert err == f"septet: error: {err.removeprefix('septet: error: ')}" and err.count("\n") == 1, err
        assert expected in err and "NOT_FOUND" not in err and "StatusCode" not in err, (words, err)


@pytest.fixture
def match(ladder_oh_hell: Ladder, ladder_bot_factory: Callable, ladder_match_factory: Callable) -> Match:
    """A finished three-seat oh-hell match (without a replay yet)."""
    versions = [ladder_bot_factory("ada", name) for name in ("alpha", "beta", "gamma")]
    return ladder_match_factory(ladder_oh_hell, versions, [1, 2, 3])


def test_replay_fetch_writes_the_stored_replay_and_verifies_it(
    septet: Callable, storage: tuple[Path, Path], match: Match, tmp_path: Path
) -> None:
    game = get_game("oh-hell")
    players = [
        builtin_player(name, game, 5, seat) for seat, name in enumerate(("greedy", "random", "random"))
    ]
    played = play_match(game, players, seed=5, match_id=str(match.pk))
    storage[1].mkdir(parents=True)
    replay.save(played.replay, storage[1] / f"{match.pk}-a1.json.gz")
    out_file = tmp_path / "fetched.json.gz"
    _, token = _token("bob")
    without_replay = septet("replay", "fetch", str(match.pk), "--out", str(out_file), token=token)
    Match.objects.filter(pk=match.pk).update(replay=f"{match.pk}-a1.json.gz")

    code, out, err = septet("replay", "fetch", str(match.pk), "--out", str(out_file), token=token)
    without_token = septet("replay", "fetch", str(match.pk), "--out", str(tmp_path / "not-written"))

    assert without_replay[0] == 2 and "has no replay yet" in without_replay[2]
    assert without_token[0] == 2 and "fetching a replay needs an API token" in without_token[2]
    assert not (tmp_path / "not-written").exists()
    assert code == 0, err
    assert "verified: oh-hell" in out
    assert out_file.read_bytes() == (storage[1] / f"{match.pk}-a1.json.gz").read_bytes()


def test_a_tampered_replay_is_written_but_reported_as_not_verifying(
    septet: Callable, storage: tuple[Path, Path], match: Match, tmp_path: Path
) -> None:
    game = get_game("oh-hell")
    players = [builtin_player("random", game, 6, seat) for seat in range(3)]
    document = play_match(game, players, seed=6, match_id=str(match.pk)).replay
    document["result"]["scores"][0] += 100  # a result the recorded game did not produce
    storage[1].mkdir(parents=True)
    replay.save(document, storage[1] / "tampered.json.gz")
    Match.objects.filter(pk=match.pk).update(replay="tampered.json.gz")
    out_file = tmp_path / "fetched.json.gz"
    _, token = _token("bob")

    code, _, err = septet("replay", "fetch", str(match.pk), "--out", str(out_file), token=token)

    assert code == 1 and "does not verify" in err
    assert out_file.read_bytes() == (storage[1] / "tampered.json.gz").read_bytes()


def test_a_damaged_stored_replay_is_refused_by_the_server_and_nothing_is_written(
    septet: Callable, storage: tuple[Path, Path], match: Match, tmp_path: Path
) -> None:
    storage[1].mkdir(parents=True)
    (storage[1] / "damaged.json.gz").write_bytes(b"this is not a replay")
    Match.objects.filter(pk=match.pk).update(replay="damaged.json.gz")
    out_file = tmp_path / "fetched.json.gz"
    _, token = _token("bob")

    code, _, err = septet("replay", "fetch", str(match.pk), "--out", str(out_file), token=token)

    assert code == 3 and "failed: match" in err and "damaged" in err and "DATA_LOSS" not in err
    assert not out_file.exists()


def test_an_unreachable_server_says_so_with_its_own_exit_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ladder", "--server", "127.0.0.1:1"])
    err = capsys.readouterr().err
    assert code == 3 and err.startswith("septet: error: cannot reach the Arena at 127.0.0.1:1"), err
    assert err.count("\n") == 1
