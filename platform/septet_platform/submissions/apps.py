from django.apps import AppConfig


class SubmissionsConfig(AppConfig):
    name = "septet_platform.submissions"
    label = "submissions"
