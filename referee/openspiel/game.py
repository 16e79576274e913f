"""Every Septet game id as an OpenSpiel Python game: `pyspiel.load_game("septet_oh_hell", {...})`.

One registered game per game id, named `septet_` + the id with `-` as `_` (`septet_oh7_duel`).
Parameters: `players` (default 4 where the game allows it, else its smallest table, as the
PettingZoo environments), `returns` ("ranks" or "scores", `referee.openspiel.position.RETURNS`)
and each engine option under its own name (`target` for Oh 7?). An unknown parameter is refused
by OpenSpiel itself; a bad player count or option value raises `pyspiel.SpielError` with the
engine's message.

The game is sequential with explicit chance (`referee.openspiel.chance`), imperfect information,
general-sum (ranks tie), rewarded at the end. Player actions use the PettingZoo encoding's fixed
numbering per game id (`Encoding.action_meaning`); Oh 7?'s simultaneous bets are asked one seat
after the other, each seat's information state hiding the bets not yet revealed.
"""

from __future__ import annotations

from typing import Any

import pyspiel

from referee.engine.games import all_games
from referee.engine.games.base import Game, GameError
from referee.openspiel.observer import SeptetObserver
from referee.openspiel.position import RETURNS, Table, table_of
from referee.openspiel.state import SeptetState
from referee.pettingzoo.encoding import OH7_CARDS
from referee.pettingzoo.env import default_players

PREFIX = "septet_"
MAX_BID_ROUNDS_EXTRA = 10
"""Oh Hell!'s extra hands (R-2.3), counted into every exact-bid game's length bound."""


def short_name(game_id: str) -> str:
    """The OpenSpiel name of a game id: `oh7-duel` -> `septet_oh7_duel`."""
    return PREFIX + game_id.replace("-", "_")


def game_type(game: Game) -> Any:
    """The `pyspiel.GameType` of a game id: its name, table sizes, parameters and defaults."""
    parameters: dict[str, Any] = {"players": default_players(game), "returns": RETURNS[0]}
    parameters |= {name: spec.default for name, spec in game.options.items()}
    return pyspiel.GameType(
        short_name=short_name(game.id),
        long_name=f"Septet {game.title}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=game.players.stop - 1,
        min_num_players=game.players.start,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=parameters,
    )


def max_length(table: Table) -> int:
    """A bound on the player decisions of one game (OpenSpiel's `max_game_length`): generous,
    never reached, but finite, as the engine's safety caps (R-0.1) make every game."""
    game, n = table.game, table.num_players
    seats = game.seat_count(n)
    if game.id.startswith("oh7"):
        deals, attempts, rounds = 11, 3, 200  # redeals, bets per deal, R-1.8 rounds
        return rounds * (deals * attempts * n + n + 7 * seats)
    if game.id == "black-sevens":
        return 7 * 7 * seats
    rounds = int(game.information_state(game.start(n, table.options), 0).rounds) + MAX_BID_ROUNDS_EXTRA
    return rounds * seats * (1 + 10)


class SeptetGame(pyspiel.Game):  # type: ignore[misc]  # pyspiel ships no type information
    """One loaded Septet game: its `Table` (game id, players, options, returns) and OpenSpiel facts.

    Each game id registers a subclass naming its engine game (`game_class`): OpenSpiel calls the
    registered class with the parameters."""

    septet_game: Game

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        game = self.septet_game
        given = dict(params or {})
        players = int(given.pop("players", default_players(game)))
        returns = str(given.pop("returns", RETURNS[0]))
        try:
            game.check_players(players)
            options = game.check_options(given)
        except GameError as error:
            raise pyspiel.SpielError(f"{short_name(game.id)}: {error}") from None
        if returns not in RETURNS:
            raise pyspiel.SpielError(
                f"{short_name(game.id)}: returns must be one of {', '.join(RETURNS)}, not {returns!r}"
            )
        self.table = table_of(game.id, players, tuple(sorted(options.items())), returns)
        low, high = self.table.utility_bounds()
        info = pyspiel.GameInfo(
            num_distinct_actions=self.table.encoding.num_actions,
            max_chance_outcomes=len(OH7_CARDS) if game.id.startswith("oh7") else 52,
            num_players=players,
            min_utility=low,
            max_utility=high,
            utility_sum=None,
            max_game_length=max_length(self.table),
        )
        super().__init__(game_type(game), info, {"players": players, "returns": returns, **options})

    def new_initial_state(self) -> SeptetState:
        """A game waiting for its first deal (a chance node)."""
        return SeptetState(self, self.table.initial)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> SeptetObserver:
        """The observer of information states and observations alike (they are one, see
        `referee.openspiel.observer`)."""
        name = self.get_type().short_name
        if params:
            raise ValueError(f"{name} takes no observer parameters, got {params}")
        if iig_obs_type is not None and (
            iig_obs_type.private_info != pyspiel.PrivateInfoType.SINGLE_PLAYER or not iig_obs_type.public_info
        ):
            raise ValueError(f"{name} observes a player's own view only: its private and the public facts")
        return SeptetObserver(self.table.encoding)


def register_all() -> tuple[str, ...]:
    """Registers every game id with OpenSpiel (once; again is a no-op); returns their names."""
    registered = set(pyspiel.registered_names())
    names = []
    for game in all_games().values():
        name = short_name(game.id)
        if name not in registered:
            pyspiel.register_game(game_type(game), game_class(game))
        names.append(name)
    return tuple(names)


def game_class(game: Game) -> type[SeptetGame]:
    """The `SeptetGame` subclass of one game id, which OpenSpiel calls to load it. (A class, not a
    function: OpenSpiel keeps what it is given until the interpreter exits, and a Python function
    kept there crashes the exit, releasing it without the interpreter's lock.)"""
    name = "Septet" + "".join(part.capitalize() for part in game.id.split("-")) + "Game"
    return type(name, (SeptetGame,), {"septet_game": game, "__doc__": f"Septet's {game.title}."})
