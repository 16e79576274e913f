"""Hostile bot: puts a symlink where the host expects its socket, pointing at a listener outside.

targets.json names a unix socket the test listens on, on the host. The bot makes its socket path a
link to it and serves elsewhere: a host that follows the link connects to that listener (as root,
it could be the database's or the Docker daemon's socket). The test checks that nobody connected
and that the bot is refused as not serving a socket of its own.
"""

import json
import os
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent
ADDRESS = os.environ.get("SEPTET_BOT_ADDRESS", "unix:/run/septet/bot.sock").removeprefix("unix:")


class SocketSwap(Bot):
    name = "hostile-socket-swap"

    def decide(self, info, legal):
        return legal[0]


if __name__ == "__main__":
    target = json.loads((HERE / "targets.json").read_text())["listener"]
    os.symlink(target, ADDRESS)
    serve(SocketSwap(), address="unix:" + str(Path(ADDRESS).with_name("elsewhere.sock")))
