"""Hostile bot: opens network connections at its first decision.

To a listener the test opens on the machine's loopback (targets.json gives its port), to the
PostgreSQL and Redis ports there, to a public address, and a DNS lookup. Any connection made is
a breach: it raises BREACH. Contained (no network namespace access), it plays on.
"""

import contextlib
import json
import socket
from pathlib import Path

from referee.botkit.sdk import Bot, serve

HERE = Path(__file__).resolve().parent


def attack() -> list[str]:
    targets = json.loads((HERE / "targets.json").read_text()) if (HERE / "targets.json").exists() else {}
    ports = [*targets.get("ports", []), 5432, 6379, 8000, 50051]
    addresses = [("127.0.0.1", port) for port in ports] + [("1.1.1.1", 53), ("8.8.8.8", 443)]
    breaches = []
    for address in addresses:
        try:
            with socket.create_connection(address, timeout=1):
                breaches.append(f"connected to {address}")
        except OSError:
            pass
    with contextlib.suppress(OSError):
        breaches.append(f"resolved example.com to {socket.gethostbyname('example.com')}")
    return breaches


class Network(Bot):
    name = "hostile-network"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            breaches = attack()
            if breaches:
                raise RuntimeError("BREACH: " + "; ".join(breaches))
        return legal[0]


if __name__ == "__main__":
    serve(Network())
