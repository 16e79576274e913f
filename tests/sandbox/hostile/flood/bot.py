"""Hostile bot: floods stdout and stderr at its first decision, BREACH_AT bytes or until refused.

Writing BREACH_AT bytes means no file-size limit held on its log: it raises BREACH. Refused
(the log reached its limit: EFBIG), the error escapes decide and the bot forfeits (ERROR).
"""

import sys

from referee.botkit.sdk import Bot, serve

LINE = "flood " * 170 + "\n"
BREACH_AT = 1 << 30


class Flood(Bot):
    name = "hostile-flood"

    def decide(self, info, legal):
        written = 0
        while written < BREACH_AT:
            sys.stdout.write(LINE)
            sys.stderr.write(LINE)
            sys.stdout.flush()
            written += 2 * len(LINE)
        raise RuntimeError(f"BREACH: wrote {written} bytes of log")


if __name__ == "__main__":
    serve(Flood())
