from django.apps import AppConfig


class LiveApiConfig(AppConfig):
    name = "septet_platform.live_api"
    label = "live_api"
    verbose_name = "Live stream adapter"
