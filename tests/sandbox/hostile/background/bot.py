"""Hostile bot: leaves a daemon behind at its first decision (double fork, a new session, its
own process group), which would live on after the match; then plays on."""

import os
import time

from referee.botkit.sdk import Bot, serve


def daemonize() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            for _ in range(3600):
                time.sleep(1)
        os._exit(0)


class Background(Bot):
    name = "hostile-background"

    def __init__(self) -> None:
        super().__init__()
        self.started = False

    def decide(self, info, legal):
        if not self.started:
            self.started = True
            daemonize()
        return legal[0]


if __name__ == "__main__":
    serve(Background())
