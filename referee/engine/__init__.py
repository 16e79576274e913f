"""The engine: the rules and the match loop.

Cards and tricks, the games (`referee.engine.games`), the match runner (`match`), replays
(`replay`), plain playouts (`playout`) and the in-process player API with the built-in policies
(`players`). It imports nothing of `referee.botkit`, `referee.tools`, gRPC, protobuf, Django or
Celery (tests/referee/test_purity.py walks its imports), so it runs anywhere Python does.
"""
