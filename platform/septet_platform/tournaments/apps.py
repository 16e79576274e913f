from django.apps import AppConfig


class TournamentsConfig(AppConfig):
    name = "septet_platform.tournaments"
    label = "tournaments"
