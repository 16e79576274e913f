"""manage.py tournament_demo NAME: a published event of 8 example-derived bots whose entries close
now (the beat starts it within seconds on a running platform, e.g. `septet up`)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from septet_platform.tournaments.demo import demo_tournament
from septet_platform.tournaments.services import TournamentError


class Command(BaseCommand):
    help = "Create a published tournament of example-derived bots; entries close at once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the tournament's id, e.g. demo-cup")
        parser.add_argument("--game", default="oh-hell")
        parser.add_argument("--table-size", type=int, default=4)
        parser.add_argument("--entrants", type=int, default=8)
        parser.add_argument("--duplicate-sets", type=int, default=1)
        parser.add_argument("--organiser", default="demo", help="the user who organises and owns the bots")

    def handle(self, *args: Any, **options: Any) -> None:
        user, _ = get_user_model().objects.get_or_create(username=options["organiser"])
        try:
            tournament = demo_tournament(
                organiser=user,
                name=options["name"],
                game=options["game"],
                table_size=options["table_size"],
                entrants=options["entrants"],
                duplicate_sets=options["duplicate_sets"],
            )
        except TournamentError as error:
            raise CommandError(str(error)) from None
        count = tournament.entrants.count()
        self.stdout.write(
            f"{tournament.name}: {count} entrants, entries closed; the beat schedules it on its next "
            f"tick. Follow it at /tournaments/{tournament.name}/ or with: "
            f"septet tournament standings {tournament.name}"
        )
