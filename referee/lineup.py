"""The bots of a local series, from the words a person types: built-in names, folders, addresses.

`septet match greedy bots/examples/random unix:/tmp/my.sock 127.0.0.1:50052` names four bots:
a built-in player, a bot folder (started for the series and stopped after, one process however
many seats it fills), and two bots already serving somewhere. A folder whose process died between
games is started again, so one crash costs that bot one game, not the series. Given a
`Sandbox`, bot folders run inside it as on the platform (`septet match --sandbox`); by default
your own folders run as plain processes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from referee.botfolder import (
    BotFolderError,
    RunningBot,
    is_bot_folder,
    load_manifest,
    start_bot,
    wait_until_serving,
)
from referee.games.base import Game, GameError
from referee.players import BUILTIN_PLAYERS, Player, builtin_player
from referee.players.grpc_player import GrpcPlayer
from referee.sandbox import Sandbox, SandboxError

ADDRESS_TIMEOUT = 5.0
"""Seconds a bot given by address has to answer its health check before a series starts."""
HEALTH_TIMEOUT = 1.0
"""Seconds a started bot has to answer its health check before each game."""
ADDRESS = re.compile(r"^(unix:.+|unix-abstract:.+|\[[0-9a-fA-F:]+\]:\d{1,5}|[A-Za-z0-9.\-]+:\d{1,5})$")


@dataclass(frozen=True)
class BotSpec:
    """One BOT word: what it is and the name it plays under."""

    text: str
    kind: str  # "builtin", "folder" or "address"
    name: str


def parse_bot(text: str) -> BotSpec:
    """Classifies a BOT word; a word that is none of the three raises GameError saying so."""
    if text in BUILTIN_PLAYERS:
        return BotSpec(text, "builtin", text)
    if is_bot_folder(text):
        try:
            return BotSpec(text, "folder", load_manifest(text).name)
        except BotFolderError as error:
            raise GameError(str(error)) from None
    if Path(text).is_dir():
        raise GameError(f"{text} is a folder without a septet-bot.toml manifest")
    if ADDRESS.match(text):
        return BotSpec(text, "address", text)
    raise GameError(
        f"unknown bot {text!r}: give a built-in bot ({', '.join(BUILTIN_PLAYERS)}), "
        "a bot folder, or an address (host:port, unix:/path)"
    )


def _healthy(bot: RunningBot) -> bool:
    """Alive and answering its health check (a process may close its socket before it exits)."""
    if not bot.alive():
        return False
    try:
        wait_until_serving(bot.address, HEALTH_TIMEOUT, process=bot.process)
    except BotFolderError:
        return False
    return True


class Lineup:
    """Makes the players of each game; owns the bot processes it started (a context manager)."""

    def __init__(self, specs: list[BotSpec], game: Game, *, sandbox: Sandbox | None = None) -> None:
        self.specs = specs
        self.game = game
        self.sandbox = sandbox
        self._running: dict[str, RunningBot] = {}
        self._channels: dict[str, GrpcPlayer] = {}
        self.restarts = 0
        for spec in specs:
            if spec.kind == "folder":
                manifest = load_manifest(spec.text)
                if game.id not in manifest.games:
                    raise GameError(
                        f"{manifest.name} does not play {game.id} (its games: {', '.join(manifest.games)})"
                    )

    def start(self) -> Lineup:
        """Starts every distinct bot folder once; raises BotFolderError if one does not come up."""
        try:
            for spec in self.specs:
                if spec.kind == "folder" and spec.text not in self._running:
                    self._running[spec.text] = start_bot(spec.text, sandbox=self.sandbox)
                elif spec.kind == "address":
                    wait_until_serving(spec.text, ADDRESS_TIMEOUT)
        except (BotFolderError, SandboxError) as error:
            self.close()
            raise BotFolderError(f"{spec.text}: {error}") from None
        return self

    def players(self, seating: tuple[int, ...], seed: int) -> list[Player]:
        """The players of one game: `seating[seat]` indexes `specs`."""
        players: list[Player] = []
        for seat, index in enumerate(seating):
            spec = self.specs[index]
            if spec.kind == "builtin":
                players.append(builtin_player(spec.text, self.game, seed, seat))
            else:
                players.append(self._remote(spec))
        return players

    def _remote(self, spec: BotSpec) -> GrpcPlayer:
        if spec.kind == "folder":
            bot = self._running.get(spec.text)
            if bot is not None and not _healthy(bot):  # crashed last game: a fresh process
                bot.stop(grace=0.5)
                channel = self._channels.pop(spec.text, None)
                if channel is not None:
                    channel.close()
                self._running[spec.text] = start_bot(spec.text, sandbox=self.sandbox)
                self.restarts += 1
            address = self._running[spec.text].address
        else:
            address = spec.text
        if spec.text not in self._channels:
            self._channels[spec.text] = GrpcPlayer(address, spec.name)
        return self._channels[spec.text]

    def close(self) -> None:
        for player in self._channels.values():
            player.close()
        for bot in self._running.values():
            bot.stop()
        self._channels.clear()
        self._running.clear()

    def __enter__(self) -> Lineup:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
