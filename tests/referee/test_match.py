"""play_match: the game loop, forced decisions, the forfeit policy and the time bank (DESIGN.md)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from typing import Any

import pytest

from referee.engine.games import GAMES, get_game
from referee.engine.games.base import Action, Result
from referee.engine.match import PlayerError, PlayerTimeout, TimeControl, Turn, play_match, rank_with_forfeits
from referee.engine.players import GreedyPlayer, PolicyPlayer, RandomPlayer
from referee.engine.replay import verify as replay_verify


def _randoms(count: int, seed: int = 0) -> list[Any]:
    return [RandomPlayer(random.Random(f"{seed}/{seat}")) for seat in range(count)]


def _steady_clock(step: float = 0.001) -> Any:
    """A deterministic clock: every reading is `step` seconds after the previous one."""
    ticks = itertools.count()
    return lambda: next(ticks) * step


@pytest.mark.parametrize("game_id", list(GAMES))
def test_every_game_plays_to_a_result_with_random_players(game_id: str) -> None:
    game = get_game(game_id)
    players = _randoms(game.players.start)
    outcome = play_match(game, players, seed=11)
    assert len(outcome.result.scores) == game.players.start
    assert outcome.forfeits == []
    assert outcome.decisions > 0
    assert outcome.replay["events"][-1]["type"] == "game_end"


@pytest.mark.parametrize("game_id", list(GAMES))
def test_forced_decisions_are_applied_without_asking_an_in_process_player(game_id: str) -> None:
    """R-0.2: a decision with exactly one legal action is not put to an in-process player."""
    game = get_game(game_id)
    asked_with: list[int] = []

    def policy(info: Any, legal: tuple[Action, ...]) -> Action:
        asked_with.append(len(legal))
        return legal[0]

    players = [PolicyPlayer(policy, "first") for _ in range(game.players.start)]
    outcome = play_match(game, players, seed=3)
    assert asked_with and min(asked_with) >= 2
    forced = [e for e in outcome.replay["events"] if e["type"] == "action" and e.get("forced")]
    assert len(forced) == outcome.forced > 0


class _Crashes:
    name = "crashes"

    def __init__(self, after: int) -> None:
        self.after = after

    def decide(self, info: Any, legal: tuple[Action, ...]) -> Action:
        self.after -= 1
        if self.after < 0:
            raise RuntimeError("segfault in my head")
        return legal[0]


def test_a_player_that_raises_forfeits_and_the_game_completes_for_the_others() -> None:
    game = get_game("oh-hell")
    players = [_Crashes(after=5), *_randoms(3)]
    outcome = play_match(game, players, seed=4)
    assert [(f.seat, f.status) for f in outcome.forfeits] == [(0, "ERROR")]
    assert "RuntimeError: segfault in my head" in outcome.forfeits[0].reason
    assert outcome.result.ranks is not None
    assert outcome.result.ranks[0] == 4, "a forfeited seat ranks below every other seat"
    fallback = [e for e in outcome.replay["events"] if e.get("fallback")]
    assert fallback and all(e["seat"] == 0 for e in fallback)


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        (lambda legal: "not a card", "a string that is no action"),
        (lambda legal: None, "nothing"),
        (lambda legal: 99, "a bid out of range"),
        (lambda legal: [legal[0]], "a list around a legal action"),
        (lambda legal: True if 1 in legal else "x", "True where the bid 1 is legal"),
    ],
)
def test_an_illegal_answer_forfeits_as_invalid(answer: Any, why: str) -> None:
    game = get_game("oh-hell")
    cheat = PolicyPlayer(lambda info, legal: answer(legal), "cheat")
    outcome = play_match(game, [*_randoms(2), cheat], seed=8)
    assert [(f.seat, f.status) for f in outcome.forfeits] == [(2, "INVALID")], why
    assert outcome.result.ranks is not None and outcome.result.ranks[2] == 3
    assert sorted(outcome.result.ranks[:2]) in ([1, 1], [1, 2])


def test_an_adapter_timeout_is_a_timeout_forfeit() -> None:
    def sleepy(info: Any, legal: tuple[Action, ...]) -> Action:
        raise PlayerTimeout("no answer within 1.0 s")

    outcome = play_match("oh-hell", [PolicyPlayer(sleepy, "sleepy"), *_randoms(2)], seed=1)
    assert [(f.seat, f.status, f.reason) for f in outcome.forfeits] == [
        (0, "TIMEOUT", "no answer within 1.0 s")
    ]


def test_an_adapter_error_is_an_error_forfeit() -> None:
    def broken(info: Any, legal: tuple[Action, ...]) -> Action:
        raise PlayerError("connection reset")

    outcome = play_match("oh-hell", [*_randoms(2), PolicyPlayer(broken, "broken")], seed=1)
    assert [(f.seat, f.status) for f in outcome.forfeits] == [(2, "ERROR")]


def test_time_bank_absorbs_slow_decisions_then_runs_out() -> None:
    """Each decision takes 0.25 s against 0.1 s + a 1 s bank: about 7 decisions fit."""
    game = get_game("oh-hell")
    clock = _steady_clock(step=0.25)
    outcome = play_match(
        game,
        _randoms(3),
        seed=2,
        time_control=TimeControl(per_decision=0.1, bank=1.0),
        clock=clock,
    )
    statuses = {f.seat: f.status for f in outcome.forfeits}
    assert statuses == {0: "TIMEOUT", 1: "TIMEOUT", 2: "TIMEOUT"}
    asked = [e for e in outcome.replay["events"] if e["type"] == "action" and "us" in e]
    assert len(asked) == 3 * 6, "six decisions of 0.15 s over fit in a 1 s bank, the seventh does not"


def test_decisions_within_time_never_forfeit() -> None:
    outcome = play_match(
        "oh-hell",
        _randoms(4),
        seed=2,
        time_control=TimeControl(per_decision=0.5, bank=0.0, match_seconds=1000.0),
        clock=_steady_clock(step=0.4),
    )
    assert outcome.forfeits == []


def test_a_seat_answering_every_decision_just_in_time_forfeits_past_its_match_budget() -> None:
    """Each decision 0.45 s of 0.5 s, never using the bank: the default budget (bank + 60
    decision times = 31 s) runs out after 68 decisions, long before the game ends."""
    control = TimeControl(per_decision=0.5, bank=1.0)
    outcome = play_match("oh-hell", _randoms(4), seed=2, time_control=control, clock=_steady_clock(step=0.45))
    assert control.seat_budget == 31.0
    assert {f.seat for f in outcome.forfeits} == {0, 1, 2, 3}
    assert all(f.status == "TIMEOUT" and "match budget" in f.reason for f in outcome.forfeits)
    per_seat = Counter(e["seat"] for e in outcome.replay["events"] if e["type"] == "action" and "us" in e)
    assert set(per_seat.values()) == {68}, "31 s of 0.45 s decisions: 68 fit, the 69th forfeits"
    assert outcome.result.ranks is not None, "the game is played out by the fallback and ranked"
    assert replay_verify(outcome.replay) is not None


def test_the_match_budget_caps_each_decision_deadline() -> None:
    """Near the end of its budget a seat is offered only what is left, bank included."""
    turns: list[Turn] = []

    class Spy:
        name = "spy"
        concurrent = False

        def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
            turns.append(turn)
            return legal[0]

    control = TimeControl(per_decision=0.5, bank=2.0, match_seconds=1.0)
    play_match("oh-hell", [Spy(), *_randoms(2)], seed=1, time_control=control, clock=_steady_clock(step=0.3))
    offered = [(turn.decision_time or 0.0) + (turn.bank_time or 0.0) for turn in turns]
    assert offered[:4] == pytest.approx([1.0, 0.7, 0.4, 0.1])


def test_forfeited_seats_rank_below_all_others_and_keep_their_order() -> None:
    result = Result(scores=(50, 10, 30, 40), ranks=(1, 4, 3, 2))
    assert rank_with_forfeits(result, [0, 3]).ranks == (3, 2, 1, 4)
    assert rank_with_forfeits(result, []).ranks == (1, 4, 3, 2)
    aborted = Result(scores=(0, 0, 0, 0), ranks=None, aborted=True)
    assert rank_with_forfeits(aborted, [1]).ranks is None


def test_players_see_only_an_information_state_not_the_game_state() -> None:
    seen: list[str] = []

    def spy(info: Any, legal: tuple[Action, ...]) -> Action:
        seen.append(type(info).__name__)
        return legal[0]

    play_match("black-sevens", [PolicyPlayer(spy, "spy"), *_randoms(3)], seed=5)
    assert seen and all(name != "State" for name in seen)


def test_greedy_player_beats_random_player_in_every_game() -> None:
    """A smoke check across games; each game's own tests measure this over more games."""
    for game in GAMES.values():
        n = game.players.start
        greedy_ranks = []
        for seed in range(30):
            players = [GreedyPlayer(game), *_randoms(n - 1, seed)]
            seat = seed % n
            players[0], players[seat] = players[seat], players[0]
            ranks = play_match(game, players, seed=seed).result.ranks
            if ranks is not None:
                greedy_ranks.append(ranks[seat])
        random_mean = (1 + n) / 2
        assert sum(greedy_ranks) / len(greedy_ranks) < random_mean, game.id


class _TurnAware:
    """A bot elsewhere as the loop sees it (decide_turn): records how many legal actions it got."""

    concurrent = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.legal_counts: list[int] = []

    def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
        self.legal_counts.append(len(legal))
        return legal[-1]


@pytest.mark.parametrize("game_id", list(GAMES))
def test_forced_decisions_are_asked_of_bots_elsewhere_and_the_replay_still_verifies(game_id: str) -> None:
    """No timing channel: a turn-aware (remote) seat is asked even its forced decisions, so the
    gap between another seat's requests does not say whether this seat had a choice."""
    game = get_game(game_id)
    bots = [_TurnAware(f"bot{seat}") for seat in range(game.players.start)]
    outcome = play_match(game, bots, seed=3, time_control=TimeControl(1.0, 10.0))
    forced = [e for e in outcome.replay["events"] if e["type"] == "action" and e.get("forced")]
    asked_forced = sum(counts.count(1) for counts in (bot.legal_counts for bot in bots))
    assert len(forced) == outcome.forced == asked_forced > 0
    assert all("us" in event for event in forced), "each forced answer has its thinking time"
    assert outcome.decisions == sum(len(bot.legal_counts) for bot in bots)
    assert replay_verify(outcome.replay) is not None


def test_a_wrong_answer_to_a_forced_decision_forfeits_and_the_replay_still_verifies() -> None:
    """A forced decision answered with anything but its one legal action is the usual INVALID."""

    class WrongWhenForced(_TurnAware):
        def decide_turn(self, turn: Turn, info: Any, legal: tuple[Action, ...]) -> Action:
            return "not a card" if len(legal) == 1 else legal[0]

    players = [WrongWhenForced("wrong"), *_randoms(2)]
    outcome = play_match("oh-hell", players, seed=4, time_control=TimeControl(1.0, 10.0))
    assert [(f.seat, f.status) for f in outcome.forfeits] == [(0, "INVALID")]
    forfeited_at = outcome.forfeits[0].event_index
    assert outcome.replay["events"][forfeited_at + 1].get("forced") is True
    assert outcome.replay["events"][forfeited_at + 1].get("fallback") is True
    assert replay_verify(outcome.replay) is not None


def test_ask_forced_false_skips_forced_decisions_as_the_referee_once_did() -> None:
    """The benchmark's "before" mode (benchmarks/forced_timing.py): bots are asked choices only."""
    bots = [_TurnAware(f"bot{seat}") for seat in range(3)]
    outcome = play_match("oh-hell", bots, seed=3, time_control=TimeControl(1.0, 10.0), ask_forced=False)
    assert outcome.forced > 0 and all(1 not in bot.legal_counts for bot in bots)
    assert replay_verify(outcome.replay) is not None
