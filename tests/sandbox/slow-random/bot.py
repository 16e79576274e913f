"""A random bot that thinks 50 ms per decision, so a fault test can interrupt its match."""

import random
import time

from referee.botkit.sdk import Bot, serve

THINK_SECONDS = 0.05


class SlowRandom(Bot):
    name = "slow-random"

    def __init__(self) -> None:
        super().__init__()
        self.rng = random.Random(7)

    def decide(self, info, legal):
        time.sleep(THINK_SECONDS)
        return legal[self.rng.randrange(len(legal))]


if __name__ == "__main__":
    serve(SlowRandom())
