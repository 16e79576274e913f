from django.apps import AppConfig


class BotsConfig(AppConfig):
    name = "septet_platform.bots"
    label = "bots"
