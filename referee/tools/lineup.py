"""The bots of a local series, from the words a person types: built-in names, folders, addresses.

`septet match greedy bots/examples/random unix:/tmp/my.sock 127.0.0.1:50052` names four bots:
a built-in player, a bot folder, and two bots already serving somewhere. A bot folder gets one
process per seat it fills, and a process never plays a seed it has played before: a process
serving two seats would see both hands, and one kept across the rotations of a duplicate set
would know the deal. Processes are kept between games of different seeds (a series of many seeds
starts each seat's process once) and stopped after the series; one that died is replaced, so one
crash costs that bot one game, not the series. An address is the user's own choice: the bot
behind it serves every seat it is given, and plays under the name it reports (`reported_name`),
else its address. Given a `Sandbox`, bot folders run inside it as on the platform, a folder with
a build step as its sandbox-built copy (`referee.tools.local_runs`, which also decides whether the
commands sandbox: by default they do); without one they run as plain processes of the caller's,
with only the environment a runtime needs. Either way `env` is added to every folder's bot.

`human` is the person at the terminal (`referee.tools.human_seat`): only a caller that can seat
one (`septet match`) gives the Lineup its player; `septet check` and `compare` refuse it.
"""

from __future__ import annotations

import importlib
import re
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType, TracebackType

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from referee.botkit.sdk import NAME_METADATA, REPORTABLE_NAME
from referee.engine.games.base import Game, GameError
from referee.engine.players import BUILTIN_PLAYERS, Player, builtin_player
from referee.tools.botfolder import (
    BotFolderError,
    Manifest,
    RunningBot,
    is_bot_folder,
    launch_bot,
    load_manifest,
    wait_until_serving,
)
from referee.tools.grpc_player import GrpcPlayer
from referee.tools.human_seat import NAME as HUMAN
from referee.tools.human_seat import HumanSeat
from referee.tools.local_runs import prepared_for_sandbox
from referee.tools.sandbox import Sandbox, SandboxError

OPENSPIEL_PREFIX = "openspiel-"
"""Bot words naming OpenSpiel's bots: `openspiel-ismcts[:BUDGET]` (`referee.openspiel.bots`)."""
ADDRESS_TIMEOUT = 5.0
"""Seconds a bot given by address has to answer its health check before a series starts."""
HEALTH_TIMEOUT = 1.0
"""Seconds a started bot has to answer its health check before each game."""
MAX_IDLE_PER_FOLDER = 12
"""Processes of one folder kept between games at most (a process is one bot's memory)."""
ADDRESS = re.compile(r"^(unix:.+|unix-abstract:.+|\[[0-9a-fA-F:]+\]:\d{1,5}|[A-Za-z0-9.\-]+:\d{1,5})$")


@dataclass(frozen=True)
class BotSpec:
    """One BOT word: what it is and the name it plays under."""

    text: str
    kind: str  # "builtin", "openspiel", "human", "folder" or "address"
    name: str


def parse_bot(text: str) -> BotSpec:
    """Classifies a BOT word; a word that is none of the three raises GameError saying so."""
    if text in BUILTIN_PLAYERS:
        return BotSpec(text, "builtin", text)
    if text.startswith(OPENSPIEL_PREFIX):
        openspiel_bots().parse_bot_word(text)  # a malformed budget is refused before any game
        return BotSpec(text, "openspiel", text)
    if text == HUMAN:
        return BotSpec(text, "human", text)
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
        f"unknown bot {text!r}: give a built-in bot ({', '.join(BUILTIN_PLAYERS)}, or OpenSpiel's "
        f"{OPENSPIEL_PREFIX}ismcts, -mcts, -random), "
        f"a bot folder, an address (host:port, unix:/path), or {HUMAN} (you, in septet match)"
    )


def openspiel_bots() -> ModuleType:
    """`referee.openspiel.bots`, imported when a lineup names an OpenSpiel bot: it needs the
    optional extra `openspiel`, which the rest of the tools do without."""
    try:
        return importlib.import_module("referee.openspiel.bots")
    except ImportError as missing:
        raise GameError(f"OpenSpiel bots need the optional extra 'openspiel': {missing}") from None


def reported_name(address: str, timeout: float = ADDRESS_TIMEOUT) -> str | None:
    """The name a bot at `address` reports (`referee.botkit.sdk.NAME_METADATA` on its health check's
    answer), or None when it reports none or one that is not a plain short name."""
    with grpc.insecure_channel(address) as channel:
        check = health_pb2_grpc.HealthStub(channel).Check
        try:
            _, call = check.with_call(health_pb2.HealthCheckRequest(service=""), timeout=timeout)
        except grpc.RpcError:
            return None
        for key, value in call.initial_metadata() or ():
            if key == NAME_METADATA and isinstance(value, str) and REPORTABLE_NAME.match(value):
                return value
    return None


def _healthy(bot: RunningBot) -> bool:
    """Alive and answering its health check (a process may close its socket before it exits)."""
    if not bot.alive():
        return False
    try:
        wait_until_serving(bot.address, HEALTH_TIMEOUT, process=bot.process)
    except BotFolderError:
        return False
    return True


@dataclass
class _Process:
    """One started process of a bot folder, its gRPC player, and every seed it has played."""

    bot: RunningBot
    player: GrpcPlayer
    seeds: set[int] = field(default_factory=set)

    def stop(self) -> None:
        self.player.close()
        self.bot.stop()


class Lineup:
    """Makes the players of each game; owns the bot processes it started (a context manager)."""

    def __init__(
        self,
        specs: list[BotSpec],
        game: Game,
        *,
        sandbox: Sandbox | None = None,
        env: Mapping[str, str] | None = None,
        human: HumanSeat | None = None,
    ) -> None:
        self.specs = list(specs)
        """The bots; an address's name is the one it reports once `start` asked it."""
        self.game = game
        self.sandbox = sandbox
        self.env = dict(env or {})
        """Variables every folder's bot gets on purpose (`--env`), sandboxed or not."""
        self.human = human
        """The person at the terminal, for a `human` seat (only `septet match` seats one)."""
        if human is None and any(spec.kind == "human" for spec in specs):
            raise GameError(f"{HUMAN} plays only in septet match (a person at the terminal)")
        self._manifests: dict[str, Manifest] = {}
        """What each folder's processes start from: in a sandbox, a folder with a build step is
        its sandbox-built copy (`start` prepares it once)."""
        self._idle: dict[str, list[_Process]] = {}
        """Processes of each folder between games, by the folder's text."""
        self._playing: list[tuple[str, _Process]] = []
        """Processes seated in the current game; back to `_idle` when the next game is made."""
        self._addresses: dict[str, GrpcPlayer] = {}
        self.restarts = 0
        """Processes found dead between games (a crash) and replaced."""
        self.started = 0
        """Processes started in all, for tools and tests."""
        for spec in specs:
            if spec.kind == "folder":
                manifest = load_manifest(spec.text)
                if game.id not in manifest.games:
                    raise GameError(
                        f"{manifest.name} does not play {game.id} (its games: {', '.join(manifest.games)})"
                    )

    def start(self) -> Lineup:
        """Starts one process of every distinct bot folder and checks every address, so a bot
        that does not come up fails the series before its first game (BotFolderError)."""
        try:
            folders = list(dict.fromkeys(spec.text for spec in self.specs if spec.kind == "folder"))
            for text in folders:
                manifest = load_manifest(text)
                self._manifests[text] = (
                    manifest if self.sandbox is None else prepared_for_sandbox(manifest, self.sandbox)
                )
            for text, process in zip(folders, self._launch(folders), strict=True):
                self._idle.setdefault(text, []).append(process)
            for index, spec in enumerate(self.specs):
                if spec.kind == "address":
                    wait_until_serving(spec.text, ADDRESS_TIMEOUT)
                    self.specs[index] = replace(spec, name=reported_name(spec.text) or spec.text)
        except (BotFolderError, SandboxError) as error:
            self.close()
            raise BotFolderError(str(error)) from None
        return self

    def players(self, seating: tuple[int, ...], seed: int) -> list[Player]:
        """The players of one game: `seating[seat]` indexes `specs`. Each folder seat gets a process
        of its own that has never played `seed`; the last game's processes are free again."""
        self._release()
        wanted = [
            (seat, self.specs[index].text)
            for seat, index in enumerate(seating)
            if self.specs[index].kind == "folder"
        ]
        chosen = {seat: self._take_idle(text, seed) for seat, text in wanted}
        missing = [seat for seat, _ in wanted if chosen[seat] is None]
        started = self._launch([self.specs[seating[seat]].text for seat in missing])
        chosen.update(zip(missing, started, strict=True))
        players: list[Player] = []
        for seat, index in enumerate(seating):
            spec = self.specs[index]
            process = chosen.get(seat)
            if process is not None:
                process.seeds.add(seed)
                process.player.name = spec.name
                self._playing.append((spec.text, process))
                players.append(process.player)
            elif spec.kind == "builtin":
                players.append(builtin_player(spec.text, self.game, seed, seat))
            elif spec.kind == "openspiel":
                players.append(openspiel_bots().openspiel_player(spec.text, self.game, seed, seat))
            elif spec.kind == "human" and self.human is not None:
                players.append(self.human)
            else:
                players.append(self._address_player(spec))
        self._trim_idle(seed, seating)
        return players

    def _take_idle(self, text: str, seed: int) -> _Process | None:
        """An idle live process of the folder that has not played `seed` (dead ones are dropped)."""
        idle = self._idle.get(text, [])
        for process in list(idle):
            if not _healthy(process.bot):  # crashed in an earlier game: replaced by a fresh one
                idle.remove(process)
                process.stop()
                self.restarts += 1
            elif seed not in process.seeds:
                idle.remove(process)
                return process
        return None

    def _launch(self, texts: list[str]) -> list[_Process]:
        """Starts one process per folder text: launched one after another on this thread (a
        sandboxed bot dies with the thread that launched it), then waited for together."""
        bots: list[RunningBot] = []
        try:
            for text in texts:
                manifest = self._manifests.get(text) or load_manifest(text)
                bots.append(launch_bot(manifest, sandbox=self.sandbox, env=self.env))
            with ThreadPoolExecutor(max_workers=max(len(bots), 1)) as pool:
                for wait in [pool.submit(bot.wait_until_healthy) for bot in bots]:
                    wait.result()
        except BaseException:
            for bot in bots:
                bot.stop(grace=0.5)
            raise
        self.started += len(bots)
        return [_Process(bot, GrpcPlayer(bot.address, bot.name, exited=bot.crash_report)) for bot in bots]

    def _release(self) -> None:
        for text, process in self._playing:
            self._idle.setdefault(text, []).append(process)
        self._playing.clear()

    def _trim_idle(self, seed: int, seating: tuple[int, ...]) -> None:
        """Keeps enough idle processes of each folder for a whole duplicate set (its seats times
        the rotations, at most MAX_IDLE_PER_FOLDER), so the next seed starts none; stops first
        those that played `seed` (they may not play the rest of its duplicate set)."""
        seats = Counter(self.specs[index].text for index in seating)
        for text, idle in self._idle.items():
            keep = min(max(seats[text], 1) * len(seating), MAX_IDLE_PER_FOLDER)
            idle.sort(key=lambda process: seed in process.seeds)
            while len(idle) > keep:
                idle.pop().stop()

    def _address_player(self, spec: BotSpec) -> GrpcPlayer:
        """The user's own bot at an address: one channel, serving every seat it is given."""
        if spec.text not in self._addresses:
            self._addresses[spec.text] = GrpcPlayer(spec.text, spec.name)
        return self._addresses[spec.text]

    def close(self) -> None:
        self._release()
        for idle in self._idle.values():
            for process in idle:
                process.stop()
        for player in self._addresses.values():
            player.close()
        self._idle.clear()
        self._addresses.clear()

    def __enter__(self) -> Lineup:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()
