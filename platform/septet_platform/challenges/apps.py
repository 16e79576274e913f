from django.apps import AppConfig


class ChallengesConfig(AppConfig):
    name = "septet_platform.challenges"
    label = "challenges"
