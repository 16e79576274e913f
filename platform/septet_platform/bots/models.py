"""A bot belongs to one owner; each submission is a new BotVersion that must qualify."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Bot(models.Model):
    """A named bot. House bots (the examples) may share a rated table with their owner's others."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="bots")
    name = models.SlugField(max_length=40, unique=True)
    is_house = models.BooleanField(default=False)
    accepts_challenges = models.BooleanField(
        default=True, help_text="other users may seat it in their challenges (its owner's switch)"
    )
    self_hosted = models.BooleanField(
        default=False,
        help_text="plays from its owner's machine over the Arena's Connect stream, unsandboxed: "
        "never on the sandboxed ladders (docs/self-hosted.md)",
    )
    open_ladders = models.BooleanField(
        default=False,
        help_text="a sandboxed bot its owner entered on the open ladders too, where self-hosted bots "
        "play (its owner's switch; house bots are always there)",
    )
    created = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name


class BotVersion(models.Model):
    """One submitted archive of a bot folder; only ACTIVE versions play rated matches.

    A version is built once, at intake and offline (`services.bot_version_build`); its matches
    play the built archive, unpacked read-only, never the build again."""

    class Status(models.TextChoices):
        QUALIFYING = "qualifying"
        ACTIVE = "active"
        FAILED = "failed"
        RETIRED = "retired"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    archive = models.CharField(max_length=255, help_text="path under SEPTET_ARCHIVES_DIR")
    archive_sha256 = models.CharField(max_length=64)
    manifest = models.JSONField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUALIFYING)
    error_log = models.TextField(blank=True, help_text="shown to the owner only; a few KB at most")

    class Build(models.TextChoices):
        PENDING = "pending"
        BUILDING = "building"
        BUILT = "built"
        FAILED = "failed"

    build_status = models.CharField(max_length=10, choices=Build.choices, default=Build.PENDING)
    built_archive = models.CharField(
        max_length=255, blank=True, help_text="the built folder, path under SEPTET_ARCHIVES_DIR"
    )
    built_sha256 = models.CharField(max_length=64, blank=True)
    build_log = models.TextField(blank=True, help_text="the build's output, bounded; owner only")
    builds = models.PositiveIntegerField(
        default=0, help_text="times its build ran: once (again only after a worker died mid-build)"
    )
    build_started = models.DateTimeField(null=True, blank=True, help_text="when its build was claimed")
    build_finished = models.DateTimeField(null=True, blank=True, help_text="when its build ended")
    build_seconds = models.FloatField(
        null=True,
        blank=True,
        help_text="wall seconds its build took; its owner's hourly build budget counts them",
    )
    qualification = models.JSONField(
        default=dict, blank=True, help_text="per game: the qualifying match's id and seed, to replay it"
    )
    archive_bytes = models.PositiveBigIntegerField(default=0, help_text="size of the stored upload")
    built_bytes = models.PositiveBigIntegerField(
        default=0, help_text="size of the stored built archive (0 when it plays its upload)"
    )
    archive_pruned = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when its archives were deleted to keep its owner within SEPTET_STORAGE_PER_USER "
        "(bots.storage): it never plays again; its results and replays are kept",
    )
    created = models.DateTimeField(auto_now_add=True)
    qualified = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["bot", "number"], name="unique_version_number")]
        ordering = ["bot", "-number"]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"


class ConnectionEvent(models.Model):
    """One change of a self-hosted bot's connection to the Arena (docs/self-hosted.md), kept for
    its owner's log on the bot page: when it came, went or was replaced, and from where. The
    Arena writes them; the bot's own messages never reach this table."""

    class Kind(models.TextChoices):
        CONNECTED = "connected"
        DISCONNECTED = "disconnected"
        REPLACED = "replaced"

    bot = models.ForeignKey(Bot, on_delete=models.CASCADE, related_name="connection_events")
    kind = models.CharField(max_length=14, choices=Kind.choices)
    detail = models.CharField(max_length=200, blank=True, help_text="the peer, or why it ended")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["bot", "-at"], name="connection_event_bot_at")]
        ordering = ["-at"]

    def __str__(self) -> str:
        return f"{self.bot} {self.kind} at {self.at:%Y-%m-%d %H:%M:%S}"
