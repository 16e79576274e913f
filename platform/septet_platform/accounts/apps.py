from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "septet_platform.accounts"
    label = "accounts"
