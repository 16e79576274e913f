from django.apps import AppConfig


class OpsConfig(AppConfig):
    name = "septet_platform.ops"
    label = "ops"
    verbose_name = "Operations"
