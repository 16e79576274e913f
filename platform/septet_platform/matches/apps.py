from django.apps import AppConfig


class MatchesConfig(AppConfig):
    name = "septet_platform.matches"
    label = "matches"
