"""API tokens, stored hashed: the token itself is shown once, at creation, and never again."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A user's token for the Arena API. `prefix` finds the row; `digest` (SHA-256) proves it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80)
    prefix = models.CharField(max_length=16, unique=True)
    digest = models.CharField(max_length=64)
    created = models.DateTimeField(auto_now_add=True)
    last_used = models.DateTimeField(null=True, blank=True)
    revoked = models.DateTimeField(null=True, blank=True)
    bot = models.ForeignKey(
        "bots.Bot",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="connect_tokens",
        help_text="a token scoped to this one self-hosted bot: it may only Connect, as that bot",
    )

    def __str__(self) -> str:
        return f"{self.user} / {self.name} ({self.prefix}…)"


class CountedAction(models.Model):
    """One action that a limit counts (a sign-up from an address, a failed sign-in, a challenge),
    kept in the database so every site and Arena process counts against the same total."""

    scope = models.CharField(max_length=32)
    key = models.CharField(max_length=200)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["scope", "key", "at"])]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} at {self.at:%Y-%m-%d %H:%M:%S}"
