"""`SeptetEnv`: one Septet game as a PettingZoo AEC environment.

The environment is a thin driver over the engine's pure verbs (`referee.engine.games.base`): it
keeps one `State`, samples every chance step (the deals) from its own `random.Random` seeded by
`reset(seed=...)`, asks the seat the engine names in `to_move`, and shows each agent only its
information state through the game's `Encoding`. Oh 7?'s simultaneous bets are asked one seat
after the other; each seat's information state hides the bets not yet revealed, so the order
tells nothing. The Dummy of `oh7-duel` plays inside the engine and is no agent.

Rewards (`reward="points"`, the default): at the end of each round every agent gets the points
it scored that round (Black Sevens, where lower is better: minus its points), so the rewards of
a game add up to its final score. `reward="rank"`: nothing until the game ends, then +1 for rank 1
down to -1 for the last rank, evenly spaced (tied seats share the better rank). A game the engine
aborts on a safety cap (R-0.1) ends in truncation, not termination.
"""

from __future__ import annotations

import random
from dataclasses import fields, is_dataclass
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray
from pettingzoo import AECEnv

from referee.engine.games import get_game
from referee.engine.games.base import CHANCE, Action, Game
from referee.engine.players import Player, builtin_player
from referee.pettingzoo.encoding import Encoding, encoding_for

REWARD_MODES = ("points", "rank")
RENDER_MODES = ("human", "ansi")
DEFAULT_PLAYERS = 4


def default_players(game: Game) -> int:
    """4 where the game allows it (every game but the duel), else its smallest table."""
    return DEFAULT_PLAYERS if DEFAULT_PLAYERS in game.players else game.players.start


def agent_name(seat: int) -> str:
    return f"player_{seat}"


class SeptetEnv(AECEnv):  # type: ignore[misc]  # pettingzoo ships no type information
    """A Septet game id as an AEC environment with action masks (see the module docstring)."""

    metadata: dict[str, Any]
    """PettingZoo's facts of an environment: its render modes and a name per game id."""

    def __init__(
        self,
        game_id: str,
        num_players: int | None = None,
        options: dict[str, Any] | None = None,
        reward: str = "points",
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        game = get_game(game_id)
        players = default_players(game) if num_players is None else num_players
        if reward not in REWARD_MODES:
            raise ValueError(f"reward must be one of {', '.join(REWARD_MODES)}, not {reward!r}")
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be None or one of {', '.join(RENDER_MODES)}, not {render_mode!r}"
            )
        self.game = game
        self.num_players = players
        self.options = game.check_options(options)
        self.game.start(players, self.options)  # checks the seat count and options before anything is kept
        self.reward_mode = reward
        self.render_mode = render_mode
        self.encoding: Encoding = encoding_for(game, players)
        self.metadata = {
            "render_modes": list(RENDER_MODES),
            "name": f"septet_{game.id.replace('-', '_')}_v0",
            "is_parallelizable": False,
        }

        self.possible_agents = [agent_name(seat) for seat in range(players)]
        self.seats = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        low, high = self.encoding.layout.bounds()
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(low=low, high=high, dtype=np.float32),
                    "action_mask": spaces.Box(
                        low=0, high=1, shape=(self.encoding.num_actions,), dtype=np.int8
                    ),
                }
            )
            for agent in self.possible_agents
        }
        self.action_spaces = {
            agent: spaces.Discrete(self.encoding.num_actions) for agent in self.possible_agents
        }
        self._rng: random.Random | None = None
        self._state: Any = None
        self._legal: dict[int, Action] = {}
        """The current agent's legal actions by action id."""
        self._seen: tuple[int, Any] | None = None
        """The seat to move and its information state, built once per step."""

    # The PettingZoo API

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """A new game: deals come from `random.Random(seed)`; without a seed the generator of the
        previous game goes on (a fresh, unseeded one the first time), as Gymnasium's envs do."""
        if seed is not None or self._rng is None:
            self._rng = random.Random(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._state = self.game.start(self.num_players, self.options)
        self._scores = tuple(self.game.information_state(self._state, 0).scores)
        self._advance()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict[str, NDArray[Any]]:
        """The agent's encoded information state and its action mask (zeros when not its turn)."""
        mask = np.zeros(self.encoding.num_actions, dtype=np.int8)
        if agent == self.agent_selection and not (self.terminations[agent] or self.truncations[agent]):
            mask[list(self._legal)] = 1
        return {"observation": self.encoding.observation(self.information_state(agent)), "action_mask": mask}

    def step(self, action: Any) -> None:
        """Plays the current agent's action id; an id outside its mask raises ValueError and
        changes nothing."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        engine_action = self.engine_action(agent, action)
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        self._state = self.game.apply(self._state, self.seats[agent], engine_action)
        self._advance()
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self) -> str | None:
        """The table as text: printed for "human", returned for "ansi"."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() was called without a render_mode (use 'human' or 'ansi')")
            return None
        text = self.text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        """Nothing to release: no window, process or file is opened."""

    # The engine's view, for policies that think in engine terms (the built-in bots)

    def information_state(self, agent: str) -> Any:
        """The engine's information state of the agent's seat (RULES.md §5)."""
        seat = self.seats[agent]
        if self._seen is not None and self._seen[0] == seat:
            return self._seen[1]
        return self.game.information_state(self._state, seat)

    def legal_actions(self, agent: str) -> tuple[Action, ...]:
        """The engine's legal actions of the agent (empty when it is not its turn)."""
        return (
            self.game.legal_actions(self._state, self.seats[agent]) if agent == self.agent_selection else ()
        )

    def action_id(self, agent: str, action: Action) -> int:
        """The id of one of the agent's legal engine actions."""
        if agent == self.agent_selection:
            for action_id, legal in self._legal.items():
                if legal == action and isinstance(legal, bool) == isinstance(action, bool):
                    return action_id
        raise ValueError(f"{action!r} is not a legal action of {agent} now")

    def engine_action(self, agent: str, action_id: Any) -> Action:
        """The engine action of a legal action id of the agent to move."""
        if agent != self.agent_selection:
            raise ValueError(f"it is {self.agent_selection}'s turn, not {agent}'s")
        try:
            key = int(action_id)
        except (TypeError, ValueError):
            raise ValueError(
                f"an action is an int id in 0..{self.encoding.num_actions - 1}, not {action_id!r}"
            ) from None
        if key != action_id or key not in self._legal:
            raise ValueError(
                f"action {action_id!r} is not legal for {agent} now (legal ids: {sorted(self._legal)}); "
                "sample from the observation's action_mask"
            )
        return self._legal[key]

    # Driving the engine

    def _advance(self) -> None:
        """Samples chance steps until a seat must decide or the game ends, then hands out the
        round's rewards and selects the next agent."""
        game, state = self.game, self._state
        assert self._rng is not None
        dealt = False
        while (decision := game.to_move(state)) is not None and decision.is_chance:
            state = game.apply(state, CHANCE, game.sample_chance(state, self._rng))
            dealt = True
        self._state = state
        if decision is None:
            self._seen = None
            self._reward_rounds(game.information_state(state, 0).scores)
            self._end()
            return
        seat = decision.seats[0]
        self.agent_selection = agent_name(seat)
        info = game.information_state(state, seat)
        self._seen = (seat, info)
        if dealt:  # a round is scored as it ends, and the next step is a deal (or the end)
            self._reward_rounds(info.scores)
        encoding = self.encoding
        self._legal = {encoding.action_id(info, action): action for action in game.legal_actions(state, seat)}

    def _reward_rounds(self, scores: tuple[int, ...]) -> None:
        """Rewards the score changes since the last call (the rounds just scored)."""
        if scores != self._scores and self.reward_mode == "points":
            sign = 1.0 if self.game.higher_is_better else -1.0
            for agent, seat in self.seats.items():
                self.rewards[agent] += sign * (scores[seat] - self._scores[seat])
        self._scores = tuple(scores)

    def _end(self) -> None:
        result = self.game.result(self._state)
        assert result is not None
        self._legal = {}
        done = self.truncations if result.aborted else self.terminations
        for agent, seat in self.seats.items():
            rank = None if result.ranks is None else result.ranks[seat]
            self.infos[agent] = {"score": result.scores[seat], "rank": rank}
            done[agent] = True
            if self.reward_mode == "rank" and rank is not None:
                self.rewards[agent] += 1.0 - 2.0 * (rank - 1) / (self.num_players - 1)

    def text(self) -> str:
        """The table in a few lines: the game, whose turn, the public facts and every hand."""
        to_move = self.game.to_move(self._state)
        turn = f"{self.agent_selection} ({to_move.kind.value})" if to_move else "game over"
        lines = [f"{self.game.title} ({self.game.id}), {self.num_players} players: {turn}"]
        public = self.information_state(self.possible_agents[0])
        if is_dataclass(public):
            for field in fields(public):
                if field.name in _SHOWN:
                    lines.append(f"  {field.name}: {_plain(getattr(public, field.name))}")
        for agent in self.possible_agents:
            lines.append(f"  {agent} hand: {_plain(self.information_state(agent).hand) or '-'}")
        if to_move is None:
            result = self.game.result(self._state)
            assert result is not None
            lines.append(f"  result: scores {_plain(result.scores)}, ranks {_plain(result.ranks)}")
        return "\n".join(lines)


_SHOWN = frozenset(
    ("round", "round_index", "hand_size", "dealer", "trump_card", "trump", "bids", "bet_cards", "bets",
     "revealer", "first_leader", "dummy_up", "trick", "standing", "plays", "tricks_won", "hands_won",
     "table", "scores")
)  # fmt: skip
"""Information-state fields the text view shows (public ones; the hands come per seat)."""


def _plain(value: Any) -> str:
    """Tuples and None as short text: `(1, ('TH',))` -> `1 TH`, `None` -> `-`."""
    if value is None:
        return "-"
    if isinstance(value, tuple | list):
        return " ".join(
            _plain(item) if not isinstance(item, tuple | list) else f"[{_plain(item)}]" for item in value
        )
    return str(value)


class EngineBot:
    """An engine `Player` (the built-in random or greedy bot, or any other) seated in a SeptetEnv:
    calling it returns its action id for the agent to move, from that seat's information state."""

    def __init__(self, env: Any, player: Player) -> None:
        self.env: SeptetEnv = env.unwrapped
        self.player = player

    @classmethod
    def builtin(cls, env: Any, name: str, agent: str, seed: int = 0) -> EngineBot:
        """The built-in bot `name` ("random" or "greedy") for `agent`; random draws from its own
        generator, derived from `seed` and the seat as in a match."""
        raw: SeptetEnv = env.unwrapped
        return cls(env, builtin_player(name, raw.game, seed, raw.seats[agent]))

    def __call__(self, agent: str) -> int:
        env = self.env
        choice = self.player.decide(env.information_state(agent), env.legal_actions(agent))
        return env.action_id(agent, choice)
