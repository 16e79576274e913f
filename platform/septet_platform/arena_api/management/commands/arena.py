"""`python manage.py arena --address 127.0.0.1:50051`: runs the Arena gRPC service."""

from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand

from septet_platform.arena_api.server import serve

DEFAULT_ADDRESS = "127.0.0.1:50051"


class Command(BaseCommand):
    help = "Runs the Arena gRPC service (health; reflection per SEPTET_ARENA_REFLECTION) until stopped."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--address", default=DEFAULT_ADDRESS, help=f"host:port to listen on (default {DEFAULT_ADDRESS})"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        serve(options["address"])
