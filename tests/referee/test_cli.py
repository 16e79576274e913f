"""The `septet` command as a person runs it: tables, JSON, replays, rules, and clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from referee.engine.games import GAMES

SEPTET = str(Path(sys.executable).with_name("septet"))


def septet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SEPTET, *args], capture_output=True, text=True, timeout=300)


def test_match_prints_a_results_table_with_confidence_intervals() -> None:
    run = septet(
        "match", "--game", "oh-hell", "--players", "4", "--games", "12", "--seed", "3", "greedy", "random"
    )
    assert run.returncode == 0, run.stderr
    assert "mean rank (95% CI)" in run.stdout
    lines = {
        line.split()[0]: line
        for line in run.stdout.splitlines()
        if line.split()[:1] in (["greedy"], ["random"])
    }
    assert set(lines) == {"greedy", "random"}
    assert "[" in lines["greedy"], "a CI is shown once there are two or more samples"


@pytest.mark.parametrize("game_id", list(GAMES))
def test_match_json_and_replays_for_every_game(game_id: str, tmp_path: Path) -> None:
    game = GAMES[game_id]
    bots = ["greedy"] + ["random"] * (game.players.start - 1)
    run = septet(
        "match",
        "--game",
        game_id,
        "--games",
        "3",
        "--seed",
        "40",
        "--replays",
        str(tmp_path),
        "--json",
        *bots,
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["game"] == game_id and summary["games"] == 3
    assert {bot["name"] for bot in summary["bots"]} == {"greedy", "random"}
    files = sorted(tmp_path.glob("*.json.gz"))
    assert len(files) == 3
    verify = septet("replay", "verify", *map(str, files))
    assert verify.returncode == 0, verify.stderr
    assert verify.stdout.count("ok ") == 3


def test_duplicate_plays_every_rotation_of_each_seed(tmp_path: Path) -> None:
    run = septet(
        "match",
        "--game",
        "black-sevens",
        "--games",
        "2",
        "--seed",
        "5",
        "--duplicate",
        "--replays",
        str(tmp_path),
        "--json",
        "greedy",
        "random",
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["games"] == 8
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted(
        f"black-sevens-s{seed}-r{rotation}.json.gz" for seed in (5, 6) for rotation in range(4)
    )


def test_same_seed_gives_the_same_summary() -> None:
    args = ("match", "--game", "oh7", "--games", "4", "--seed", "77", "--json", "greedy", "random", "random")
    first, second = json.loads(septet(*args).stdout), json.loads(septet(*args).stdout)
    for summary in (first, second):
        summary.pop("seconds")
    assert first == second


def test_option_is_passed_to_the_game() -> None:
    run = septet(
        "match",
        "--game",
        "oh7",
        "--option",
        "target=21",
        "--games",
        "1",
        "--seed",
        "1",
        "--json",
        "greedy",
        "random",
        "random",
    )
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize(
    ("args", "message", "what_was_tried"),
    [
        (("match", "--game", "poker", "random"), "unknown game 'poker'", "an unknown game id"),
        (
            ("match", "--game", "black-sevens", "--players", "3", "random"),
            "black-sevens is played by 4 players",
            "a wrong player count",
        ),
        (("match", "--game", "oh-hell", "--players", "9", "random"), "3-7 players", "too many players"),
        (
            ("match", "--game", "oh7", "--option", "target=40", "random"),
            "target=40 is not one of",
            "a bad option value",
        ),
        (
            ("match", "--game", "oh7", "--option", "speed=2", "random"),
            "has no option 'speed'",
            "an unknown option",
        ),
        (
            ("match", "--game", "oh7", "--option", "target", "random"),
            "NAME=VALUE",
            "an option without a value",
        ),
        (("match", "--game", "oh-hell", "alphago"), "unknown bot 'alphago'", "an unknown bot"),
        (("match", "--game", "oh-hell", "--games", "0", "random"), "at least 1", "zero games"),
        (
            ("match", "--game", "oh7-duel", "--players", "2", "random", "random", "random"),
            "3 bots cannot sit",
            "more bots than seats",
        ),
        (("rules", "bridge"), "unknown game 'bridge'", "rules of an unknown game"),
    ],
)
def test_usage_errors_are_one_line_with_exit_code_2(
    args: tuple[str, ...], message: str, what_was_tried: str, tmp_path: Path
) -> None:
    run = septet(*args, "--replays", str(tmp_path / "r")) if args[0] == "match" else septet(*args)
    assert run.returncode == 2, what_was_tried
    assert message in run.stderr, what_was_tried
    assert "Traceback" not in run.stderr and len(run.stderr.strip().splitlines()) == 1, what_was_tried
    assert not (tmp_path / "r").exists(), f"{what_was_tried} must change nothing"


def test_argparse_errors_exit_2_without_traceback() -> None:
    run = septet("match", "--game", "oh-hell", "--games", "many", "random")
    assert run.returncode == 2 and "invalid int value" in run.stderr and "Traceback" not in run.stderr


def test_verify_fails_with_exit_1_and_says_where(tmp_path: Path) -> None:
    run = septet(
        "match",
        "--game",
        "oh-hell",
        "--games",
        "1",
        "--seed",
        "2",
        "--replays",
        str(tmp_path),
        "greedy",
        "random",
        "random",
    )
    assert run.returncode == 0, run.stderr
    good = next(tmp_path.glob("*.json.gz"))
    import gzip

    document = json.loads(gzip.decompress(good.read_bytes()))
    document["result"]["scores"][1] += 1
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(document))
    garbage = tmp_path / "garbage.json.gz"
    garbage.write_bytes(b"\x1f\x8b not really")
    run = septet("replay", "verify", str(good), str(bad), str(garbage))
    assert run.returncode == 1
    assert "ok " in run.stdout and "1 verified, 2 failed" in run.stdout
    assert f"FAIL {bad}: result: recorded" in run.stderr
    assert f"FAIL {garbage}: " in run.stderr and "Traceback" not in run.stderr


def test_rules_lists_games_and_prints_a_game_summary() -> None:
    listing = septet("rules")
    assert listing.returncode == 0
    for game_id in GAMES:
        assert game_id in listing.stdout
    oh7 = septet("rules", "oh7")
    assert oh7.returncode == 0 and "target" in oh7.stdout


def test_help_shows_examples() -> None:
    run = septet("match", "--help")
    assert run.returncode == 0 and "examples:" in run.stdout and "--duplicate" in run.stdout


def test_replay_view_without_a_browser_says_so_and_where_the_page_is(tmp_path: Path) -> None:
    """Tried: a machine with no display and no browser on PATH (a server, a container): the
    command printed only the page's name and exited 0, as if the page had opened."""
    made = septet(
        "match", "--game", "oh7-duel", "--games", "1", "--seed", "2", "--replays", str(tmp_path), "greedy"
    )
    assert made.returncode == 0, made.stderr
    (source,) = tmp_path.glob("*.json.gz")
    hidden = ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")
    env = {name: value for name, value in os.environ.items() if name not in hidden}
    env["PATH"] = str(Path(sys.executable).parent)  # python and septet only: no browser to find

    run = subprocess.run([SEPTET, "replay", "view", str(source)], capture_output=True, text=True, env=env)

    page = source.with_name(source.name.removesuffix(".json.gz") + ".html").resolve()
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(page) and page.is_file(), "stdout holds the page's path alone"
    assert "no browser could be opened" in run.stderr
    assert str(page) in run.stderr and page.as_uri() in run.stderr
