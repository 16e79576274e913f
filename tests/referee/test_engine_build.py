"""The engine's two builds (referee/engine/build.py): compiled with mypyc, and the pure-Python sources.

scripts/test runs the suite with SEPTET_EXPECT_COMPILED=1 where the engine could be compiled (this
module then checks the compiled modules are the ones in use), and the engine's tests and its local
users' with SEPTET_PURE_PYTHON=1 (it checks none is). Whichever runs here, the other build plays
the same matches into byte-identical replays, and a compiled build older than its sources is never
used.
"""

from __future__ import annotations

import ast
import copy
import importlib
import itertools
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import referee
from referee.engine import build
from referee.engine.games import GAMES, bidding, get_game, oh7_dummy
from referee.engine.games.base import CHANCE, Decision, DecisionKind, Result
from referee.engine.match import TimeControl, play_match
from referee.engine.players import RandomPlayer
from referee.engine.replay import dumps

PACKAGE_PARENT = Path(referee.__file__).resolve().parents[1]


def _module_files() -> dict[str, str]:
    return {name: str(importlib.import_module(name).__file__) for name in build.COMPILED_MODULES}


def test_the_build_in_use_is_the_one_this_run_expects() -> None:
    files = _module_files()
    compiled = [name for name, path in files.items() if not path.endswith(".py")]
    if os.environ.get(build.PURE_ENV) == "1":
        assert compiled == [], f"{build.PURE_ENV}=1 but compiled modules were loaded: {compiled}"
        assert not build.is_compiled() and build.describe() == f"engine pure Python: {build.PURE_ENV}=1"
    elif os.environ.get("SEPTET_EXPECT_COMPILED") == "1":
        assert build.is_compiled(), build.describe()
        assert compiled == list(build.COMPILED_MODULES), f"loaded from source: {set(files) - set(compiled)}"
        assert build.describe() == "engine compiled (mypyc)"
        # A sandboxed bot runs as another uid: a manifest only its owner can read sends it to the
        # pure-Python sources, twice as slow.
        assert build.MANIFEST.stat().st_mode & 0o004, f"{build.MANIFEST.name} is not readable by other users"
    else:
        pytest.skip("scripts/test says which build to expect (SEPTET_EXPECT_COMPILED or SEPTET_PURE_PYTHON)")


REPLAYS_SCRIPT = """
import hashlib, itertools, json, random, sys
from referee.engine import build
from referee.engine.games import GAMES
from referee.engine.match import TimeControl, play_match
from referee.engine.players import GreedyPlayer, RandomPlayer
from referee.engine.replay import dumps

def digests():
    found = {}
    for game_id, game in GAMES.items():
        for players in (game.players.start, game.players.stop - 1):
            for seed in range(2):
                seats = [RandomPlayer(random.Random(f"{seed}/{s}")) if (s + seed) % 2 else GreedyPlayer(game)
                         for s in range(players)]
                ticks = itertools.count()
                outcome = play_match(game, seats, seed=seed, clock=lambda: next(ticks) * 0.0001,
                                     time_control=TimeControl(1.0, 10.0) if seed else None)
                found[f"{game_id}/{players}/{seed}"] = hashlib.sha256(dumps(outcome.replay)).hexdigest()
    return found

if __name__ == "__main__":
    print(json.dumps({"compiled": build.is_compiled(), "replays": digests()}))
"""
"""Plays matches of every game id (random and greedy seats, timed and untimed, a deterministic
clock) and gives the SHA-256 of each replay; run here and in a process of the other build."""


def _replays_here() -> dict[str, str]:
    namespace: dict[str, object] = {"__name__": "replays_here"}
    exec(REPLAYS_SCRIPT, namespace)
    digests = namespace["digests"]
    assert callable(digests)
    return dict(digests())


def _replays_in_subprocess(pure: bool) -> dict[str, object]:
    env = {key: value for key, value in os.environ.items() if key != build.PURE_ENV}
    if pure:
        env[build.PURE_ENV] = "1"
    done = subprocess.run(
        [sys.executable, "-c", REPLAYS_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    return dict(json.loads(done.stdout))


def test_the_pure_build_plays_byte_identical_replays_to_the_build_in_use() -> None:
    pure = _replays_in_subprocess(pure=True)
    assert pure["compiled"] is False
    here = _replays_here()
    assert {key.split("/")[0] for key in here} == set(GAMES)
    assert pure["replays"] == here


def test_a_compiled_build_older_than_its_sources_is_not_used(tmp_path: Path) -> None:
    """A copy of the package whose manifest does not match its sources (as after an edit since
    the last compile) runs its sources, even with its compiled modules beside them."""
    copy_root = tmp_path / "tree"
    shutil.copytree(
        PACKAGE_PARENT / "referee", copy_root / "referee", ignore=shutil.ignore_patterns("__pycache__")
    )
    manifest = {"python": sys.implementation.cache_tag, "group": build.GROUP,
                "sources": {name: "0" * 64 for name in build.COMPILED_MODULES}}  # fmt: skip
    (copy_root / "referee" / "engine" / "compiled.json").write_text(json.dumps(manifest))
    probe = "import referee.engine.match as m, referee.engine.build as b; print(m.__file__, b.describe())"
    env = {key: value for key, value in os.environ.items() if key != build.PURE_ENV}
    env["PYTHONPATH"] = str(copy_root)
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, cwd=tmp_path, check=True
    )
    path, described = done.stdout.strip().split(" ", 1)
    assert path == str(copy_root / "referee" / "engine" / "match.py")
    assert described.startswith("engine pure Python: compiled build out of date")


def test_the_rules_text_is_each_game_module_docstring_in_either_build() -> None:
    """Compiled modules keep no docstring: it is read from the source (`septet rules` prints it)."""
    for game in GAMES.values():
        module = sys.modules[game.new_game.__module__]
        source = build.source_path(module.__name__).read_text()
        docstring = ast.get_docstring(ast.parse(source), clean=False)
        assert docstring and game.rules.startswith(docstring)
        assert module.__doc__ == docstring
    dummy = ast.get_docstring(ast.parse(build.source_path(oh7_dummy.__name__).read_text()), clean=False)
    assert get_game("oh7-duel").rules == get_game("oh7").rules + str(dummy)


def test_frozen_engine_values_copy_and_pickle_in_either_build() -> None:
    decision = Decision(DecisionKind.BID, (2,))
    result = Result((10, -20), (1, 2))
    rules = bidding.Rules("x", range(3, 8), lambda n: (1,), 0, lambda bid, won: 0)
    for value in (decision, result, TimeControl(0.5, 3.0)):
        assert copy.copy(value) == value and copy.deepcopy(value) == value
        assert pickle.loads(pickle.dumps(value)) == value
    assert copy.deepcopy(rules).game_id == "x"
    state = get_game("oh-hell").start(4)
    for copied in (copy.copy(state), copy.deepcopy(state), pickle.loads(pickle.dumps(state))):
        assert copied == state and copied is not state
    game = get_game("oh-hell")
    state = game.apply(state, CHANCE, game.sample_chance(state, random.Random(1)))
    seat = game.to_move(state).seats[0]
    state = game.apply(state, seat, 0)  # a step whose events are made when read
    info = game.information_state(state, seat)
    assert copy.deepcopy(state).events == state.events == ({"type": "bid", "seat": seat, "bid": 0},)
    assert pickle.loads(pickle.dumps(info)) == info
    outcome = play_match("oh-hell", [RandomPlayer(random.Random(seat)) for seat in range(4)], seed=5)
    again = pickle.loads(pickle.dumps(outcome))
    assert again.result == outcome.result and dumps(again.replay) == dumps(outcome.replay)


def test_a_bad_deal_outcome_is_a_game_error_not_a_type_error_in_either_build() -> None:
    """Compiled code checks argument types: a function taking an outcome must accept any value."""
    from referee.engine.games.base import GameError

    for game in GAMES.values():
        state = game.start(game.players.start)
        for outcome in ("8D QH AS", None, 7, ["hands"]):
            with pytest.raises(GameError):
                game.apply(state, CHANCE, outcome)


def test_the_compiled_deal_draws_what_random_shuffle_draws() -> None:
    """Deals shuffle through `cards.shuffled_order` (the Fisher-Yates draws compiled): the same
    permutation `rng.shuffle` makes from the same seed, so seeds deal what they always dealt."""
    from referee.engine.cards import shuffled_order

    class Subclass(random.Random):
        pass

    for size, seed in itertools.product((1, 2, 7, 28, 52, 100), range(5)):
        expected = list(range(size))
        random.Random(seed).shuffle(expected)
        assert shuffled_order(size, random.Random(seed)) == expected
        assert shuffled_order(size, Subclass(seed)) == expected
    rng, twin = random.Random(9), random.Random(9)
    shuffled_order(52, rng)
    twin.shuffle(list(range(52)))
    assert rng.random() == twin.random(), "the RNG is left where rng.shuffle leaves it"
