"""Hostile bot: spins the CPU inside decide and never answers (and spins on after the call)."""

from referee.botkit.sdk import Bot, serve


class CpuSpin(Bot):
    name = "hostile-cpu-spin"

    def decide(self, info, legal):
        count = 0
        while True:
            count += 1


if __name__ == "__main__":
    serve(CpuSpin())
