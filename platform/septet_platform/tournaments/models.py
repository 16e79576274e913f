"""A tournament: an organised event on one game, with entrants whose versions freeze at the deadline."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Tournament(models.Model):
    """OPEN (taking entries) -> RUNNING (versions frozen, matches scheduled) -> FINISHED; an
    organiser may pause a running event (no new match starts), resume it, or cancel it."""

    class Status(models.TextChoices):
        OPEN = "open"
        RUNNING = "running"
        PAUSED = "paused"
        FINISHED = "finished"
        CANCELLED = "cancelled"

    class Format(models.TextChoices):
        ROUND_ROBIN = "round-robin"
        SWISS = "swiss"

    class Entry(models.TextChoices):
        OPEN = "open"
        INVITED = "invited"

    name = models.SlugField(max_length=60, unique=True, help_text="its id in URLs and the CLI")
    title = models.CharField(max_length=120)
    game = models.CharField(max_length=40)
    format = models.CharField(max_length=16, choices=Format.choices, default=Format.ROUND_ROBIN)
    table_size = models.PositiveSmallIntegerField()
    duplicate_sets = models.PositiveSmallIntegerField(
        default=1, help_text="duplicate sets (one deal, every seat rotation) per table"
    )
    tables = models.PositiveIntegerField(
        default=0, help_text="round robin: tables to play (0: every combination, or a balanced design)"
    )
    rounds = models.PositiveSmallIntegerField(default=3, help_text="Swiss: how many rounds")
    decision_seconds = models.FloatField(default=1.0)
    bank_seconds = models.FloatField(default=10.0)
    entry_deadline = models.DateTimeField()
    entry = models.CharField(max_length=8, choices=Entry.choices, default=Entry.OPEN)
    invited = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="invitations")
    organiser = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="organised_tournaments"
    )
    published = models.BooleanField(default=False, help_text="listed on the site for everyone")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    current_round = models.PositiveSmallIntegerField(default=0)
    seed = models.BigIntegerField(help_text="every deal and design of the event derives from it")
    problem = models.TextField(blank=True, help_text="why the event could not start, if it could not")
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-entry_deadline"]

    def __str__(self) -> str:
        return self.title

    @property
    def total_rounds(self) -> int:
        return self.rounds if self.format == self.Format.SWISS else 1


class Entrant(models.Model):
    """A bot entered into a tournament; `version` is set once, when entries close."""

    tournament = models.ForeignKey(Tournament, on_delete=models.CASCADE, related_name="entrants")
    bot = models.ForeignKey("bots.Bot", on_delete=models.PROTECT, related_name="entries")
    version = models.ForeignKey(
        "bots.BotVersion", on_delete=models.PROTECT, null=True, blank=True, related_name="entries"
    )
    entered = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tournament", "bot"], name="one_entry_per_bot")]
        ordering = ["tournament", "bot__name"]

    def __str__(self) -> str:
        return f"{self.bot} in {self.tournament}"
