"""Real bot processes that fail: each is treated as the forfeit policy says (docs/rules.md#forfeits)
and the other seats' game completes with a correct, verifiable result."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.engine import replay
from referee.engine.games import get_game
from referee.engine.match import MatchResult, TimeControl, play_match
from referee.engine.players import RandomPlayer
from referee.tools.botfolder import BotFolderError, start_bot
from referee.tools.lineup import Lineup, parse_bot

FAST = TimeControl(per_decision=0.2, bank=1.0)


def _play_against_randoms(
    folder: Path, game_id: str = "oh-hell", seed: int = 3
) -> tuple[Lineup, MatchResult]:
    game = get_game(game_id)
    lineup = Lineup([parse_bot(str(folder))], game).start()
    players = [
        *lineup.players((0,), seed),
        *(RandomPlayer(random.Random(s)) for s in range(game.players.start - 1)),
    ]
    return lineup, play_match(game, players, seed=seed, time_control=FAST, match_id="failure-test")


@pytest.mark.parametrize(
    ("behaviour", "status", "reason"),
    [
        ("crash", "ERROR", "unreachable"),
        ("hang", "TIMEOUT", "no answer within"),
        ("raise", "ERROR", "my policy network diverged"),
        ("garbage-bytes", "ERROR", ""),
        ("oversized", "ERROR", "too large"),
        ("out-of-range", "INVALID", "index"),
        ("illegal-value", "INVALID", "ZZ"),
        ("empty", "INVALID", ""),
    ],
)
def test_a_failing_bot_forfeits_and_the_others_finish_the_game(
    faulty_bot: Callable[..., Path], behaviour: str, status: str, reason: str
) -> None:
    started = time.monotonic()
    lineup, outcome = _play_against_randoms(faulty_bot(behaviour))
    try:
        assert [(f.seat, str(f.status)) for f in outcome.forfeits] == [(0, status)], behaviour
        assert reason in outcome.forfeits[0].reason
        result = outcome.result
        assert result.ranks is not None and result.ranks[0] == 3, "the forfeiting seat ranks last"
        assert sorted(result.ranks[1:]) in ([1, 1], [1, 2])
        replay.verify(outcome.replay)
        assert time.monotonic() - started < 30, "no failure may hang the match"
    finally:
        lineup.close()


def test_a_slow_bot_within_its_bank_does_not_forfeit(faulty_bot: Callable[..., Path]) -> None:
    """Three decisions of 0.35 s against 0.2 s + a 1 s bank: 0.45 s of bank used, no forfeit."""
    lineup, outcome = _play_against_randoms(faulty_bot("slow", after=2, sleep="0.35"))
    try:
        assert outcome.forfeits == []
        slow = [e["us"] for e in outcome.replay["events"] if e.get("seat") == 0 and e.get("us", 0) > 300_000]
        assert len(slow) == 3
    finally:
        lineup.close()


def test_a_crashed_bot_is_restarted_for_the_next_game(faulty_bot: Callable[..., Path]) -> None:
    folder = faulty_bot("crash", after=4)
    game = get_game("oh-hell")
    with Lineup([parse_bot(str(folder))], game) as lineup:
        for seed in (1, 2):
            players = [
                *lineup.players((0,), seed),
                RandomPlayer(random.Random(1)),
                RandomPlayer(random.Random(2)),
            ]
            outcome = play_match(game, players, seed=seed, time_control=FAST)
            assert [(str(f.status), "unreachable" in f.reason) for f in outcome.forfeits] == [
                ("ERROR", True)
            ], outcome.forfeits
        assert lineup.restarts == 1


def test_a_bot_that_never_becomes_healthy_fails_to_start_with_its_stderr(
    faulty_bot: Callable[..., Path],
) -> None:
    started = time.monotonic()
    with pytest.raises(BotFolderError, match=r"not healthy .* within 1 s") as failure:
        start_bot(faulty_bot("never-healthy"), startup_timeout=1.0)
    assert "misbehave never-healthy serving" in str(failure.value), "the stderr tail is shown"
    assert time.monotonic() - started < 10


def test_a_bot_that_exits_at_start_reports_its_exit_code_and_stderr(faulty_bot: Callable[..., Path]) -> None:
    with pytest.raises(BotFolderError, match="exited with code 7") as failure:
        start_bot(faulty_bot("exit-at-start"))
    assert "cannot find my model weights" in str(failure.value)


def test_an_address_nothing_listens_on_is_a_clear_error(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(BotFolderError, match="not healthy"):
        Lineup([parse_bot(f"unix:{tmp_path / 'nobody.sock'}")], get_game("oh-hell")).start()
    assert time.monotonic() - started < 15
