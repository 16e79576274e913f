"""OpenSpiel's bots seated as Septet players: `openspiel-ismcts`, `openspiel-mcts`, `openspiel-random`.

A Septet player answers from its seat's information state; an OpenSpiel bot steps from a
`pyspiel.State`. `OpenSpielPlayer` bridges them: at each decision it builds the OpenSpiel state of
one world the seat cannot tell from the real one (the bot kit's world sampler) and asks the bot.

- `openspiel-ismcts`: OpenSpiel's information-set MCTS (`ISMCTSBot`), which resamples the world
  for every simulation (`resample_from_infostate`) and keys its tree by information state
  strings, so it searches the information state, not the world it is given; random rollouts to
  the end of the game (`RandomRolloutEvaluator`), UCT constant 2, the most visited action.
- `openspiel-mcts`: OpenSpiel's `MCTSBot` on the one sampled world (a single determinization:
  cheap, and fooled by that world's luck).
- `openspiel-random`: OpenSpiel's uniform random bot.

A search's budget follows a colon: `openspiel-ismcts:200` (simulations per decision),
`openspiel-ismcts:0.05s` (seconds per decision, at least `MIN_SIMULATIONS`); the default is
`DEFAULT_SIMULATIONS`. The time limit runs ISMCTS's own simulation loop against a clock
(`TimedISMCTSBot`); MCTS takes simulations only.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts, mcts

from referee.botkit.worlds import worlds
from referee.engine.games.base import Action, Game, GameError
from referee.openspiel.game import short_name
from referee.openspiel.position import Position
from referee.openspiel.state import SeptetState

KINDS = ("ismcts", "mcts", "random")
PREFIX = "openspiel-"
BOT_NAMES = tuple(PREFIX + kind for kind in KINDS)
DEFAULT_SIMULATIONS = 100
MIN_SIMULATIONS = 2
"""ISMCTS's first simulation only expands the root; a decision needs a second to have a choice."""
UCT_C = 2.0
"""UCT's exploration constant, for returns in [-1, 1] (OpenSpiel's own examples use 2)."""
_WORD = re.compile(r"^openspiel-(ismcts|mcts|random)(?::(\d+)|:(\d*\.?\d+)s)?$")


@dataclass(frozen=True)
class SearchBudget:
    """Simulations per decision, or seconds per decision (then simulations is only a cap)."""

    simulations: int = DEFAULT_SIMULATIONS
    seconds: float | None = None


def is_openspiel_bot(text: str) -> bool:
    """Whether a bot word names an OpenSpiel bot (with or without a budget)."""
    return text.startswith(PREFIX)


def parse_bot_word(text: str) -> tuple[str, SearchBudget]:
    """`openspiel-ismcts:0.05s` -> ("ismcts", 0.05 seconds); a malformed word raises GameError."""
    match = _WORD.match(text)
    if match is None:
        raise GameError(
            f"unknown OpenSpiel bot {text!r}: give {', '.join(BOT_NAMES)}, optionally with a budget "
            "per decision: openspiel-ismcts:200 (simulations) or openspiel-ismcts:0.05s (seconds)"
        )
    kind, simulations, seconds = match.groups()
    if seconds is not None:
        if float(seconds) <= 0:
            raise GameError(f"{text}: the seconds per decision must be above 0")
        return kind, SearchBudget(simulations=10**9, seconds=float(seconds))
    if simulations is not None and int(simulations) < MIN_SIMULATIONS:
        raise GameError(f"{text}: at least {MIN_SIMULATIONS} simulations per decision")
    return kind, SearchBudget(int(simulations) if simulations else DEFAULT_SIMULATIONS)


class TimedISMCTSBot(ismcts.ISMCTSBot):  # type: ignore[misc]  # open_spiel ships no type information
    """OpenSpiel's ISMCTS whose simulations also stop at a time limit per decision.

    `run_search` is ISMCTSBot's own (OpenSpiel 2.0.2), its simulation loop bounded by a clock too."""

    def __init__(self, *args: Any, seconds: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seconds = seconds
        self.simulations_done = 0

    def run_search(self, state: Any) -> Any:
        if self.seconds is None:
            return super().run_search(state)
        self.reset()
        legal_actions = state.legal_actions()
        if len(legal_actions) == 1:
            return [(legal_actions[0], 1.0)]
        self._root_node = self.create_new_node(state)
        deadline = time.perf_counter() + self.seconds
        done = 0
        while done < self._max_simulations and (done < MIN_SIMULATIONS or time.perf_counter() < deadline):
            self.run_simulation(self.sample_root_state(state))
            done += 1
        self.simulations_done = done
        return self.get_final_policy(state, self._root_node)


def make_bot(kind: str, game: Any, budget: SearchBudget, seed: int, seat: int) -> Any:
    """An OpenSpiel bot of `kind` for a loaded game, playing `seat`."""
    random_state = np.random.RandomState(seed % 2**32)
    if kind == "random":
        return pyspiel.make_uniform_random_bot(seat, seed % 2**31)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state)
    if kind == "mcts":
        return mcts.MCTSBot(game, UCT_C, budget.simulations, evaluator, random_state=random_state)
    bot = TimedISMCTSBot(
        game, evaluator, UCT_C, max_simulations=budget.simulations, random_state=random_state,
        seconds=budget.seconds,
    )  # fmt: skip
    # Worlds from the bot's own seeded generator: OpenSpiel's default sampler is not seeded, and a
    # simulation budget should give the same game again from the same seed.
    bot.set_resampler(lambda state, player: state.resample_from_infostate(player, random_state.uniform))
    return bot


class OpenSpielPlayer:
    """A Septet player (`decide(info, legal)`) that asks an OpenSpiel bot; the game is loaded at the
    first decision, from the information state's players and options."""

    def __init__(self, word: str, game: Game, seed: int | str) -> None:
        self.name = word
        self.kind, self.budget = parse_bot_word(word)
        self.game = game
        self.rng = random.Random(seed)
        self._spiel: Any = None
        self._bot: Any = None

    def decide(self, info: Any, legal_actions: tuple[Action, ...]) -> Action:
        if len(legal_actions) == 1:
            return legal_actions[0]
        state = self.state_of(info)
        return state.at.legal()[int(self._bot.step(state))]

    def state_of(self, info: Any) -> SeptetState:
        """The OpenSpiel state of one world of the seat's information state."""
        if self._spiel is None:
            options = {name: value for name, value in info.options if name in self.game.options}
            parameters = {"players": info.num_players, **options}
            self._spiel = pyspiel.load_game(short_name(self.game.id), parameters)
            self._bot = make_bot(self.kind, self._spiel, self.budget, self.rng.randrange(2**62), info.seat)
        world = worlds(info).sample(self.rng)
        return SeptetState(self._spiel, Position(self._spiel.table, world, mover=info.seat))


def openspiel_player(word: str, game: Game, seed: int, seat: int) -> OpenSpielPlayer:
    """The OpenSpiel bot a bot word names, seeded from the game's seed and its seat (as the
    built-in random player is)."""
    return OpenSpielPlayer(word, game, f"{seed}/{seat}")
