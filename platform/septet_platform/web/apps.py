from django.apps import AppConfig


class WebConfig(AppConfig):
    name = "septet_platform.web"
    label = "web"
