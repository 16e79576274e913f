"""Septet's referee: the games, the match runner, players, replays and the `septet` CLI.

Pure Python with no Django or Celery, so bot authors can install and run it alone.
"""

__version__ = "0.1.0"
