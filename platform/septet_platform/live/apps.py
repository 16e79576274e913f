from django.apps import AppConfig


class LiveConfig(AppConfig):
    name = "septet_platform.live"
    label = "live"
    verbose_name = "Live matches"
