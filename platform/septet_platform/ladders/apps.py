from django.apps import AppConfig


class LaddersConfig(AppConfig):
    name = "septet_platform.ladders"
    label = "ladders"
