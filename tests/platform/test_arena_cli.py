"""`septet submit`, `ladder`, `matches` and `replay fetch` against an Arena server running in this
process on a free port: what each prints, and for every bad call a one-line error, exit code 1
(refused by the server) or 2 (a bad call), and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from fixtures_intake import random_copy

from referee.engine import replay
from referee.engine.games import get_game
from referee.engine.match import play_match
from referee.engine.players import builtin_player
from referee.tools.cli import main
from septet_platform.accounts.services import api_token_create, api_token_revoke
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.ladders.models import Ladder, Rating
from septet_platform.matches.models import Match

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
        "no token at all": (septet("submit", str(folder)), 1, "needs an API token"),
        "a token that does not exist": (
            septet("submit", str(folder), token="sep_" + "x" * 40),
            1,
            "SEPTET_TOKEN",
        ),
        "a revoked token": (septet("submit", str(folder), token=revoked), 1, "revoked"),
        "a folder without a manifest": (septet("submit", str(not_a_bot), token=token), 2, "septet-bot.toml"),
    }
    assert septet("submit", str(folder), token=token)[0] == 0  # ada's bot exists now
    someone_elses = septet("submit", str(folder), token=bob_token)

    for what, ((code, _, err), expected_code, words) in tried.items():
        assert code == expected_code, what
        assert err.startswith("septet: error: ") and words in err and err.count("\n") == 1, (what, err)
    assert someone_elses[0] == 1 and "PERMISSION_DENIED" in someone_elses[2]
    assert BotVersion.objects.count() == 1 and Bot.objects.get().owner == ada
    assert len(queued["qualify"].calls) == 1


def test_ladder_lists_ladders_and_shows_standings_as_a_table_and_as_json(
    septet: Callable, ladder_oh_hell: Ladder, ladder_bot_factory: Callable
) -> None:
    strong = ladder_bot_factory("ada", "strong")
    weak = ladder_bot_factory("bob", "weak")
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=strong, mu=30.0, sigma=2.0, games=12)
    Rating.objects.create(ladder=ladder_oh_hell, bot_version=weak, mu=20.0, sigma=3.0, games=9)

    code, listing, _ = septet("ladder")
    _, table, _ = septet("ladder", "oh-hell")
    _, as_json, _ = septet("ladder", "oh-hell", "--json")

    assert code == 0 and "oh-hell" in listing and "3-7" in listing
    assert table.index("strong") < table.index("weak")
    standings = json.loads(as_json)["standings"]
    assert [(row["bot"], row["games"]) for row in standings] == [("strong", 12), ("weak", 9)]
    assert standings[0]["rating"] > standings[1]["rating"]


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
    assert without_token[0] == 1 and "listing matches needs an API token" in without_token[2]


def test_matches_and_ladder_of_unknown_names_are_not_found(septet: Callable) -> None:
    _, token = _token("ada")
    for words in (("matches", "nobody"), ("ladder", "poker"), ("replay", "fetch", "999999")):
        code, _, err = septet(*words, token=token)
        assert code == 1 and "NOT_FOUND" in err, words
    code, _, err = septet("matches", "nobody", "--limit", "0", token=token)
    assert code == 1 and "--limit must be 1-100" in err


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

    assert without_replay[0] == 1 and "NOT_FOUND" in without_replay[2]
    assert without_token[0] == 1 and "fetching a replay needs an API token" in without_token[2]
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

    assert code == 1 and "DATA_LOSS" in err and "damaged" in err
    assert not out_file.exists()


def test_an_unreachable_server_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["ladder", "--server", "127.0.0.1:1"])
    assert code == 1 and "cannot reach the Arena at 127.0.0.1:1" in capsys.readouterr().err
