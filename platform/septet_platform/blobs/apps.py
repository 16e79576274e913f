from django.apps import AppConfig


class BlobsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "septet_platform.blobs"
