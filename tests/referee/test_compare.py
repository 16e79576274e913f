"""`septet compare`: the paired statistics on known inputs, the sequential test's stops, the CLI."""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import pytest

from referee.engine.games import get_game
from referee.engine.games.base import GameError
from referee.engine.match import MatchResult, play_match
from referee.engine.players import GreedyPlayer, Player, RandomPlayer
from referee.tools.compare import (
    A,
    B,
    Comparison,
    SetOutcome,
    TestSettings,
    Verdict,
    comparison_tables,
    field_for,
    log_likelihood_ratio,
    run_comparison,
    sequential_test,
)
from referee.tools.series import Table

SEPTET = str(Path(sys.executable).with_name("septet"))


def septet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *args], capture_output=True, text=True, timeout=300)


# The statistics on known inputs


def test_log_likelihood_ratio_is_the_normal_ratio_with_the_sample_variance() -> None:
    # mean 1, sample variance 1/6: (0.2 / (1/6)) * (4 - 4 * 0.2 / 2) = 1.2 * 3.6
    assert math.isclose(log_likelihood_ratio([0.5, 1.5, 1.0, 1.0], 0.2), 4.32)
    assert log_likelihood_ratio([1.0], 0.2) == 0.0, "one sample has no variance: no evidence yet"
    assert log_likelihood_ratio([-0.5, -1.5, -1.0, -1.0], 0.2) < 0


def test_bounds_give_each_direction_half_of_alpha() -> None:
    settings = TestSettings(alpha=0.05, beta=0.05, effect=0.2)
    assert math.isclose(settings.upper, math.log(0.95 / 0.025))
    assert math.isclose(settings.lower, math.log(0.05 / 0.975))
    assert "alpha 0.05" in settings.hypotheses() and "0.2 places" in settings.hypotheses()


@pytest.mark.parametrize(
    ("outcomes", "verdict"),
    [
        ([1.0, 0.5, 1.5, 1.0, 0.5, 1.0, 1.5, 1.0], Verdict.B_BETTER),
        ([-1.0, -0.5, -1.5, -1.0, -0.5, -1.0, -1.5, -1.0], Verdict.A_BETTER),
        ([0.0, 0.1, -0.1, 0.0, 0.1, -0.1, 0.0, 0.0], Verdict.NO_DIFFERENCE),
        ([0.0] * 8, Verdict.NO_DIFFERENCE),
        ([1.0, 0.5, 1.5, 1.0, 0.5, 1.0, 1.5], None),  # clear, but fewer sets than the minimum
        ([0.5, -0.5, 1.0, -1.0, 0.5, -0.5, 1.0, -0.5], None),  # noisy: go on
    ],
)
def test_sequential_test_stops_only_when_the_outcomes_decide(
    outcomes: list[float], verdict: Verdict | None
) -> None:
    assert sequential_test(outcomes, TestSettings()).verdict == verdict


def test_set_outcomes_pair_a_and_b_within_each_set() -> None:
    comparison = Comparison(get_game("oh-hell"), ("a", "b"), ("greedy",), 3, 0, TestSettings(), 10)
    comparison.sets = {
        0: SetOutcome(ranks=([1, 2, 3], [3, 3, 3]), scores=([30, 20, 10], [0, 0, 0])),
        1: SetOutcome(ranks=([2, 2, 2], [1, 1, 1]), scores=([10, 10, 10], [40, 40, 40])),
        2: SetOutcome(ranks=([1], []), scores=([5], [])),  # incomplete: not a sample yet
    }
    assert comparison.rank_outcomes() == [-1.0, 1.0]
    assert comparison.score_outcomes() == [-20.0, 30.0]
    ranks = comparison.rank_interval()
    # two samples -1 and 1: mean 0, s = sqrt(2), half width t(0.975, 1) * s / sqrt(2) = 12.706
    assert ranks.mean == 0 and math.isclose(ranks.half_width, 12.706)
    assert comparison.verdict is Verdict.INCONCLUSIVE
    assert "inconclusive after 2 duplicate sets" in comparison.verdict_line()


# The schedule


def test_a_set_seats_a_and_b_in_every_seat_with_both_neighbour_orders() -> None:
    num_seats, tables = comparison_tables(get_game("oh-hell"), field_size=1, players=3, sets=2, seed=7)
    assert num_seats == 3 and len(tables) == 12
    first = [table.seating for table in tables if table.unit == 0]
    assert {table.seed for table in tables if table.unit == 0} == {7}
    for bot in (A, B):
        assert sorted(seating.index(bot) for seating in first) == [0, 0, 1, 1, 2, 2]
    after_a = {seating[(seating.index(A) + 1) % 3] for seating in first}
    assert after_a == {B, 2}, "B sits after A in half the games, the field's bot in the other half"
    assert len({table.rotation for table in tables if table.unit == 0}) == 6, "match ids stay unique"


def test_two_player_sets_are_the_two_rotations() -> None:
    _, tables = comparison_tables(get_game("oh7-duel"), field_size=1, players=None, sets=3, seed=0)
    assert [table.seating for table in tables] == [(0, 1), (1, 0)] * 3


def test_field_cycles_through_the_given_bots() -> None:
    assert field_for(5, ["greedy", "random"]) == ["greedy", "random", "greedy"]
    assert field_for(2, ["greedy"]) == []


# The sequential test on real games


def _in_process(game_id: str, make: dict[int, str]) -> tuple[Comparison, list[Table]]:
    """Plays a comparison in process: `make` gives bot index -> "greedy" or a random seed tag."""
    game = get_game(game_id)
    num_seats, tables = comparison_tables(game, field_size=1, players=None, sets=200, seed=11)
    field_names = ("greedy",) * (num_seats - 2)
    comparison = Comparison(game, ("a", "b"), field_names, num_seats, 11, TestSettings(), 200)

    def player(bot: int, table: Table, seat: int) -> Player:
        kind = make.get(bot, "greedy")
        if kind == "greedy":
            return GreedyPlayer(game)
        return RandomPlayer(random.Random(f"{kind}/{table.seed}/{table.rotation}/{seat}"))

    def play(table: Table) -> MatchResult:
        players = [player(bot, table, seat) for seat, bot in enumerate(table.seating)]
        return play_match(game, players, seed=table.seed)

    played = list(run_comparison(comparison, tables, play))
    return comparison, played


def test_a_clearly_better_b_is_called_better_early() -> None:
    comparison, played = _in_process("oh-hell", {A: "random-a", B: "greedy"})
    assert comparison.verdict is Verdict.B_BETTER
    assert len(played) < 200 * 6, "stopped early"
    assert len(played) % 6 == 0, "stops only after a whole duplicate set"
    ranks = comparison.rank_interval()
    assert ranks.low > 0, "the rank interval agrees: B ranks better"
    assert comparison.score_interval().mean > 0
    assert "B (b) is better than A (a)" in comparison.verdict_line()


def test_two_equally_random_bots_are_found_equal() -> None:
    comparison, played = _in_process("oh7-duel", {A: "random-a", B: "random-b"})
    assert comparison.verdict is Verdict.NO_DIFFERENCE
    assert len(played) < 200 * 2, "stopped before the cap"
    ranks = comparison.rank_interval()
    assert ranks.low < 0 < ranks.high


# The command line


def test_compare_json_reports_intervals_test_and_verdict() -> None:
    run = septet("compare", "random", "greedy", "--game", "oh-hell", "--seed", "3", "--json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["a"] == "random" and report["b"] == "greedy" and report["field"] == ["greedy"]
    assert report["verdict"] == "B is better"
    assert report["games"] == report["sets"] * 6 and report["sets"] < report["max_sets"]
    low, high = report["rank_difference"]["ci95"]
    assert 0 < low <= report["rank_difference"]["mean"] <= high
    assert report["test"]["llr_b_better"] >= report["test"]["bounds"][1]
    assert report["test"]["alpha"] == 0.05 and "H0" in report["test"]["hypotheses"]


def test_compare_prints_the_differences_and_a_verdict_line() -> None:
    run = septet("compare", "greedy", "random", "--game", "black-sevens", "--seed", "2", "--field", "random")
    assert run.returncode == 0, run.stderr
    assert "rank A-B" in run.stdout and "95% CI" in run.stdout
    assert "field: random, random" in run.stdout
    assert "A (greedy) is better than B (random) (SPRT after" in run.stdout
    assert "alpha 0.05, beta 0.05" in run.stdout


@pytest.mark.parametrize(
    ("args", "message", "what_was_tried"),
    [
        (("random", "greedy", "--game", "bridge"), "unknown game 'bridge'", "an unknown game"),
        (("random", "alphago", "--game", "oh-hell"), "unknown bot 'alphago'", "an unknown bot"),
        (("random", "greedy", "--game", "oh-hell", "--games", "0"), "at least 1", "zero sets"),
        (("random", "greedy", "--game", "oh-hell", "--players", "2"), "3-7 players, not 2", "too small"),
        (("random", "greedy", "--game", "oh-hell", "--alpha", "1.5"), "between 0 and 1", "a bad alpha"),
        (("random", "greedy", "--game", "oh-hell", "--effect", "0"), "--effect must be", "no effect"),
        (("random", "greedy", "--game", "oh7", "--option", "target=20"), "target=20", "a bad option"),
    ],
)
def test_usage_errors_are_one_line_with_exit_code_2(
    args: tuple[str, ...], message: str, what_was_tried: str
) -> None:
    run = septet("compare", *args)
    assert run.returncode == 2, what_was_tried
    assert message in run.stderr, what_was_tried
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, what_was_tried
    assert run.stdout == "", f"{what_was_tried} plays nothing"


def test_a_folder_that_does_not_play_the_game_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "only-oh7"
    folder.mkdir()
    (folder / "septet-bot.toml").write_text(
        'name = "only-oh7"\ngames = ["oh7"]\ncommand = ["python", "bot.py", "--address", "{address}"]\n'
    )
    run = septet("compare", "greedy", str(folder), "--game", "oh-hell")
    assert run.returncode == 2 and "only-oh7 does not play oh-hell" in run.stderr


def test_unknown_settings_raise_game_errors() -> None:
    with pytest.raises(GameError, match="needs a field"):
        comparison_tables(get_game("oh-hell"), field_size=0, players=3, sets=1, seed=0)
