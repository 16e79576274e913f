from django.apps import AppConfig


class ArenaApiConfig(AppConfig):
    name = "septet_platform.arena_api"
    label = "arena_api"
