from django.apps import AppConfig


class BlobsConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "septet_platform.blobs"

    def ready(self) -> None:
        from django.core import checks

        from septet_platform.blobs.checks import storage_reachable

        checks.register(storage_reachable)
