"""Hostile bot: answers its first decision, then sleeps an hour in every later one."""

import time

from referee.botkit.sdk import Bot, serve


class Sleeper(Bot):
    name = "hostile-sleeper"

    def __init__(self) -> None:
        super().__init__()
        self.answered = 0

    def decide(self, info, legal):
        self.answered += 1
        if self.answered > 1:
            time.sleep(3600)
        return legal[0]


if __name__ == "__main__":
    serve(Sleeper())
