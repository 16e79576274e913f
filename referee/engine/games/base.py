"""The shape every game shares: decisions, actions, results, errors, and the `Game` descriptor.

A game is a set of pure functions over a plain-data `State` (RULES.md, DESIGN.md):

- `new_game(num_players, options, *, scores=None, round_index=0) -> State`: a game whose next
  step is a chance outcome (the deal). `scores` and `round_index` let tests start mid-game.
- `to_move(state) -> Decision | None`: who decides next, and what kind of decision; `None` once
  the game is over. A chance decision has `seats == ()` and `kind == DEAL`.
- `legal_actions(state, seat) -> tuple[Action, ...]`: every legal action of that seat, enumerated.
- `sample_chance(state, rng) -> ChanceOutcome`: draws the pending chance outcome with the RNG
  the caller owns (a shuffle, a first dealer, a trump card). The outcome is plain JSON data so a
  replay can record it, and tests can apply an explicit deal instead of sampling one.
- `apply(state, seat, action) -> State`: a new state; never mutates its argument. `seat` is
  `CHANCE` for chance outcomes. Moves made by the game itself (the Dummy) happen inside `apply`.
  The new state's `events` holds the public events this step produced, for the replay.
- `information_state(state, seat) -> InfoState`: what that seat may know (RULES.md §5), nothing more.
- `result(state) -> Result | None`: scores and ranks once the game is over.

Several seats may be asked at once (Oh 7?'s simultaneous bets): `Decision.seats` then lists them
all, each one's information state hides the others' pending choice, and they may answer in any
order. A decision with one legal action is forced (R-0.2): the match runner applies it for
in-process players and asks bots elsewhere anyway (no timing channel).
"""

from __future__ import annotations

import ast
import random
import sys
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any, Final

Card = str
"""A card as its RULES.md §0 code: `TH`, `7S` (52-card games); `7S`, `0F`, `1*`, `N`, `?` (Oh 7?)."""

Action = int | str | bool | tuple[str, ...]
"""A bid (int), a card (str), a yes/no (bool), or a set of cards (Black Sevens, sorted tuple)."""

ChanceOutcome = dict[str, Any]
"""A chance step's outcome as JSON data, e.g. `{"hands": [[...], ...], "trump": "TH"}`."""

Event = dict[str, Any]
"""A public event for the replay, e.g. `{"type": "trick", "winner": 2, "cards": [...]}`."""

Options = Mapping[str, Any]

CHANCE: Final = -1
"""The seat number used for chance outcomes in `apply` and in replays."""


class DecisionKind(StrEnum):
    """What kind of decision is asked; the protocol and replays use these names."""

    DEAL = "deal"  # chance: shuffle and deal, draw a dealer or a trump card
    BET = "bet"  # Oh 7?: pick a card from the hand to bet with (simultaneous)
    BID = "bid"  # Oh Hell!, 7Up7Down: bid a number of tricks
    REVEAL = "reveal"  # Oh 7?: reveal the Interrobang to win a tie, yes or no
    PLAY = "play"  # play a card (or, in Black Sevens, a set of cards)


@dataclass(frozen=True, slots=True)
class Decision:
    """Who must decide next (`seats`, several at once for simultaneous bets) and what."""

    kind: DecisionKind
    seats: tuple[int, ...]

    @property
    def is_chance(self) -> bool:
        return not self.seats

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


@dataclass(frozen=True, slots=True)
class Result:
    """A finished game: every seat's score and rank (1 = best, ties share the better rank).

    `ranks` is None when the game was aborted by a safety cap (R-0.1): not rated.
    """

    scores: tuple[int, ...]
    ranks: tuple[int, ...] | None
    aborted: bool = False
    reason: str = ""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


class GameError(ValueError):
    """Bad input to the engine: unknown game id, wrong player count, bad option, illegal action.

    The message is one line meant for a person; the CLI prints it without a traceback.
    """


class IllegalAction(GameError):
    """An action that is not among the legal actions of the seat asked."""


def rebuilt_by_init(value: Any) -> tuple[Any, tuple[Any, ...]]:
    """`__reduce__` of the frozen dataclasses: copy, deepcopy and pickle rebuild them through
    `__init__`. (Compiled by mypyc, the default way sets each field, which a frozen one refuses.)"""
    return type(value), tuple([getattr(value, each.name) for each in fields(value)])


def competition_ranks(keys: Sequence[Any]) -> tuple[int, ...]:
    """Ranks 1.. from sort keys where a larger key is better; equal keys share the better rank.

    `competition_ranks([5, 9, 5, 1]) == (2, 1, 2, 4)` (the "1, 1, 3" convention of RULES.md §0).
    """
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)


def module_docstring(module: ModuleType) -> str:
    """A module's docstring, also when the module is compiled (mypyc keeps none): then it is read
    from the module's `.py` source beside it, and set as the module's `__doc__` for `help()`.

    The game modules' docstrings are their rules summaries (`septet rules` prints them)."""
    if module.__doc__ is not None:
        return module.__doc__
    # A compiled module runs its body before its `__file__` is set: its package says where it is.
    package, _, name = module.__name__.rpartition(".")
    folders = getattr(sys.modules.get(package), "__path__", None) or [""]
    source = Path(folders[0], f"{name}.py")
    docstring = ""
    try:
        with tokenize.open(source) as file:
            for token in tokenize.generate_tokens(file.readline):  # up to the first code token only
                if token.type not in _NOT_CODE:
                    if token.type == tokenize.STRING:
                        docstring = str(ast.literal_eval(token.string))
                    break
    except (OSError, SyntaxError, ValueError, tokenize.TokenError):
        return ""
    module.__doc__ = docstring
    return docstring


_NOT_CODE = (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.ENCODING)


@dataclass(frozen=True)
class OptionSpec:
    """One game option: its default and the values it may take."""

    default: Any
    allowed: tuple[Any, ...]
    help: str = ""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)


@dataclass(frozen=True)
class Game:
    """A game id and the functions that play it (see the module docstring for each verb)."""

    id: str
    title: str
    players: range
    new_game: Callable[..., Any]
    to_move: Callable[[Any], Decision | None]
    legal_actions: Callable[[Any, int], tuple[Action, ...]]
    sample_chance: Callable[[Any, random.Random], ChanceOutcome]
    apply: Callable[[Any, int, Any], Any]
    information_state: Callable[[Any, int], Any]
    result: Callable[[Any], Result | None]
    greedy: Callable[[Any, tuple[Action, ...]], Action]
    """A sensible deterministic policy: (information state, legal actions) -> action."""
    rules: str
    """The rules summary the engine implements (the game module's docstring)."""
    options: Mapping[str, OptionSpec] = field(default_factory=dict)
    higher_is_better: bool = True
    dummy_seats: tuple[int, ...] = ()
    """Seats played by the game itself (the Oh 7? duel's Dummy), never by a player."""
    fixed_options: Mapping[str, Any] = field(default_factory=dict)
    """Options this game id always passes to `new_game` (a variant of a shared module)."""

    @classmethod
    def of_module(cls, module: ModuleType, **facts: Any) -> Game:
        """The Game of a game module that defines the verbs; `facts`: id, title, players, ...

        The rules text defaults to the module's docstring (`module_docstring`).
        """
        verbs = [
            "new_game",
            "to_move",
            "legal_actions",
            "sample_chance",
            "apply",
            "information_state",
            "result",
            "greedy",
        ]
        facts.setdefault("rules", module_docstring(module))
        return cls(**{verb: getattr(module, verb) for verb in verbs}, **facts)

    def seat_count(self, num_players: int) -> int:
        """Seats in a game of `num_players` players, counting seats the game plays itself."""
        return num_players + len(self.dummy_seats)

    def check_players(self, num_players: int) -> None:
        if num_players not in self.players:
            raise GameError(
                f"{self.id} is played by {self.players.start}-{self.players.stop - 1} players, "
                f"not {num_players}"
                if len(self.players) > 1
                else f"{self.id} is played by {self.players.start} players, not {num_players}"
            )

    def check_options(self, options: Options | None) -> dict[str, Any]:
        """Options with defaults filled in; an unknown name or a bad value raises GameError."""
        given = dict(options or {})
        unknown = sorted(set(given) - set(self.options))
        if unknown:
            known = ", ".join(sorted(self.options)) or "none"
            raise GameError(f"{self.id} has no option {unknown[0]!r} (options: {known})")
        checked: dict[str, Any] = {}
        for name, spec in self.options.items():
            value = given.get(name, spec.default)
            if value not in spec.allowed or isinstance(value, bool) != isinstance(spec.default, bool):
                allowed = ", ".join(str(v) for v in spec.allowed)
                raise GameError(f"{self.id} option {name}={value!r} is not one of: {allowed}")
            checked[name] = value
        return checked

    def start(self, num_players: int, options: Options | None = None, **position: Any) -> Any:
        """A new game after checking the player count and options (`position`: see `new_game`)."""
        self.check_players(num_players)
        return self.new_game(num_players, {**self.check_options(options), **self.fixed_options}, **position)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return rebuilt_by_init(self)
