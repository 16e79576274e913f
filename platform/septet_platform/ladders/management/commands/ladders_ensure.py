"""`manage.py ladders_ensure`: one ladder per game id, run after `migrate` on every deploy."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from septet_platform.ladders.services import ladders_ensure


class Command(BaseCommand):
    help = "Creates a ladder for every game id the engine knows; existing ladders are left as they are."

    def handle(self, *args: Any, **options: Any) -> None:
        for ladder in ladders_ensure():
            self.stdout.write(f"{ladder.game}: {ladder.min_players}-{ladder.max_players} players")
