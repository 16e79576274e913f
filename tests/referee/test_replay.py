"""Replays: the document, determinism, gzip on disk, and verification of honest and tampered files."""

from __future__ import annotations

import copy
import gzip
import itertools
import json
import random
from pathlib import Path
from typing import Any

import pytest

from referee.engine import replay
from referee.engine.games import GAMES
from referee.engine.match import play_match
from referee.engine.players import GreedyPlayer, PolicyPlayer, RandomPlayer


def _replay_of(game_id: str, seed: int) -> dict[str, Any]:
    game = GAMES[game_id]
    players: list[Any] = [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(game.players.start)]
    players[0] = GreedyPlayer(game)
    ticks = itertools.count()
    return play_match(game, players, seed=seed, clock=lambda: next(ticks) / 1000).replay


@pytest.mark.parametrize("game_id", list(GAMES))
def test_same_seed_and_actions_give_byte_identical_replays(game_id: str) -> None:
    assert replay.dumps(_replay_of(game_id, 21)) == replay.dumps(_replay_of(game_id, 21))
    assert replay.dumps(_replay_of(game_id, 21)) != replay.dumps(_replay_of(game_id, 22))


@pytest.mark.parametrize("game_id", list(GAMES))
def test_every_game_replay_verifies_after_a_round_trip_through_gzip(game_id: str, tmp_path: Path) -> None:
    document = _replay_of(game_id, 5)
    path = replay.save(document, tmp_path / "game.json.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    loaded = replay.load(path)
    assert loaded["format"] == "septet-replay/1"
    verified = replay.verify(loaded)
    assert list(verified.result.scores) == document["result"]["scores"]


def test_replay_document_has_the_documented_keys() -> None:
    document = _replay_of("oh-hell", 1)
    assert {"format", "game", "options", "seed", "seats", "events", "result"} <= set(document)
    kinds = {event["type"] for event in document["events"]}
    assert {"chance", "action", "deal", "bid", "play", "trick", "round_end", "game_end"} <= kinds


def test_replays_hold_every_chance_outcome_so_verification_never_reshuffles() -> None:
    """Verification uses the recorded deals: a replay whose seed is changed still verifies."""
    document = _replay_of("seven-up-seven-down", 9)
    document["seed"] = 123456
    replay.verify(document)


def test_a_forfeit_is_recorded_and_verifies() -> None:
    def cheat(info: Any, legal: Any) -> Any:
        return "nonsense"

    document = play_match(
        "oh-hell", [PolicyPlayer(cheat, "cheat"), *(RandomPlayer(random.Random(s)) for s in range(3))], seed=3
    ).replay
    assert document["forfeits"][0]["status"] == "INVALID"
    assert replay.verify(document).result.ranks is not None


def _first(document: dict[str, Any], predicate: Any) -> dict[str, Any]:
    return next(event for event in document["events"] if predicate(event))


def _tamper_action(document: dict[str, Any]) -> None:
    event = _first(document, lambda e: e["type"] == "action" and e["kind"] == "bid" and not e.get("forced"))
    event["action"] = (event["action"] + 1) % 3


def _tamper_deal(document: dict[str, Any]) -> None:
    event = _first(document, lambda e: e["type"] == "chance")
    hands = event["outcome"]["hands"]
    hands[0][0], hands[1][0] = hands[1][0], hands[0][0]


def _tamper_score(document: dict[str, Any]) -> None:
    document["result"]["scores"][0] += 10


def _tamper_round_end(document: dict[str, Any]) -> None:
    _first(document, lambda e: e["type"] == "round_end")["points"][1] += 1


def _truncate(document: dict[str, Any]) -> None:
    del document["events"][len(document["events"]) // 2 :]


def _drop_forced_mark(document: dict[str, Any]) -> None:
    del _first(document, lambda e: e.get("forced"))["forced"]


def _unknown_game(document: dict[str, Any]) -> None:
    document["game"] = "poker"


def _wrong_format(document: dict[str, Any]) -> None:
    document["format"] = "septet-replay/99"


@pytest.mark.parametrize(
    "tamper",
    [
        _tamper_action,
        _tamper_deal,
        _tamper_score,
        _tamper_round_end,
        _truncate,
        _drop_forced_mark,
        _unknown_game,
        _wrong_format,
    ],
)
def test_a_tampered_replay_fails_verification_with_a_one_line_reason(tamper: Any) -> None:
    document = _replay_of("oh-hell", 2)
    tampered = copy.deepcopy(document)
    tamper(tampered)
    with pytest.raises(replay.ReplayError) as failure:
        replay.verify(tampered)
    message = str(failure.value)
    assert message and "\n" not in message
    replay.verify(document)  # the original is untouched and still verifies


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\x1f\x8b\x08\x00garbage", "damaged gzip"),
        (b"{not json", "not a JSON replay"),
        (json.dumps([1, 2]).encode(), "JSON object"),
        (json.dumps({"format": "septet-replay/1"}).encode(), "has no"),
        (gzip.compress(b"\xff\xfe", mtime=0), "not a JSON replay"),
    ],
)
def test_a_corrupt_file_gives_a_clear_error(tmp_path: Path, content: bytes, expected: str) -> None:
    path = tmp_path / "bad.json.gz"
    path.write_bytes(content)
    with pytest.raises(replay.ReplayError, match=expected):
        replay.load(path)


def test_a_missing_file_gives_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(replay.ReplayError, match="cannot read"):
        replay.load(tmp_path / "nowhere.json.gz")


# Black Sevens' R-3.9 reversed: the last cards stay out of the deck (docs/replays.md)

DATA = Path(__file__).parent / "data"


def test_a_black_sevens_replay_deals_no_last_card_again_and_verifies() -> None:
    document = _replay_of("black-sevens", 3)
    on_table: set[str] = set()
    deals = 0
    for event in document["events"]:
        if event["type"] == "deal":
            dealt = {card for hand in event["hands"] for card in hand}
            assert len(dealt) == 28 and not dealt & on_table
            deals += 1
        elif event["type"] == "round_end":
            on_table |= set(event["last_cards"])
    assert deals == 7 and len(on_table) == 28
    replay.verify(document)


def test_a_black_sevens_replay_dealt_under_the_old_ruling_is_refused_naming_r_3_9() -> None:
    """black-sevens-full-deck-each-round.json.gz was recorded by septet 0.1.0 before R-3.9 was
    reversed: round 2 deals 5S and 7H, last cards of round 1, again."""
    document = replay.load(DATA / "black-sevens-full-deck-each-round.json.gz")
    assert document["format"] == "septet-replay/1" and document["game"] == "black-sevens"
    with pytest.raises(replay.ReplayError) as refused:
        replay.verify(document)
    message = str(refused.value)
    assert message.startswith("event 48: the engine refused it (black-sevens deal: card 5S is a last card")
    assert "R-3.9" in message and "full deck" in message and "\n" not in message
