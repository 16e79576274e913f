"""`python -m referee.pettingzoo [GAME_ID [PLAYERS]]`: prints the observation layout and action ids.

The tables of docs/pettingzoo.md are this command's output (a test keeps them equal), so the
documented layout is the one the encoders write.
"""

from __future__ import annotations

import sys

from referee.engine.games import all_games, get_game
from referee.engine.games.base import GameError
from referee.pettingzoo.encoding import encoding_for
from referee.pettingzoo.env import default_players


def describe(game_id: str, num_players: int | None = None) -> str:
    """The Markdown section of one game id: its observation layout and its action ids."""
    game = get_game(game_id)
    players = default_players(game) if num_players is None else num_players
    encoding = encoding_for(game, players)
    return (
        f"### `{game.id}` ({players} players)\n\n"
        f"Observation: {encoding.layout.size} float32 values. "
        f"Actions: `Discrete({encoding.num_actions})`: {encoding.action_meaning}.\n\n"
        f"{encoding.layout.markdown()}\n"
    )


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print("usage: python -m referee.pettingzoo [GAME_ID [PLAYERS]]", file=sys.stderr)
        return 2
    if len(argv) == 2 and not argv[1].isdigit():
        print(f"error: PLAYERS must be a number, not {argv[1]!r}", file=sys.stderr)
        return 2
    try:
        players = int(argv[1]) if len(argv) == 2 else None
        game_ids = argv[:1] or list(all_games())
        print("\n".join(describe(game_id, players) for game_id in game_ids), end="")
    except GameError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
