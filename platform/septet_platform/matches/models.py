"""A match is one seeded game with a fixed seating; a worker claims it, plays it, records it once."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Match(models.Model):
    """SCHEDULED -> RUNNING (claimed, with a lease) -> FINISHED; a dead worker's match goes back to
    SCHEDULED (VOID attempts are never scored); ABORTED games (a safety cap) are kept unrated."""

    class Status(models.TextChoices):
        SCHEDULED = "scheduled"
        RUNNING = "running"
        FINISHED = "finished"
        ABORTED = "aborted"
        CANCELLED = "cancelled"

    class Kind(models.TextChoices):
        LADDER = "ladder"
        CHALLENGE = "challenge"
        QUALIFICATION = "qualification"
        TOURNAMENT = "tournament"
        TABLE = "table"  # a person sits at one seat (septet_platform.challenges' human tables)

    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.PROTECT, related_name="matches")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.LADDER)
    rated = models.BooleanField(default=True)
    tournament = models.ForeignKey(
        "tournaments.Tournament", on_delete=models.PROTECT, null=True, blank=True, related_name="matches"
    )
    tournament_round = models.PositiveSmallIntegerField(default=0, help_text="1, 2, ... in a tournament")
    seed = models.BigIntegerField()
    duplicate_set = models.CharField(max_length=40, blank=True, help_text="matches sharing a seed")
    rotation = models.PositiveSmallIntegerField(default=0)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.SCHEDULED)
    attempt = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=120, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    created = models.DateTimeField(auto_now_add=True)
    started = models.DateTimeField(null=True, blank=True)
    finished = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    replay = models.CharField(max_length=255, blank=True, help_text="path under SEPTET_REPLAYS_DIR")
    replay_size = models.PositiveBigIntegerField(null=True, blank=True, help_text="bytes of the stored file")
    replay_sha256 = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the stored file")
    replay_match_id = models.CharField(
        max_length=64, blank=True, help_text="the random id the bots and the replay know the match by"
    )
    ratings_applied = models.BooleanField(default=False)
    end_reason = models.CharField(
        max_length=300, blank=True, help_text="why a match ended without being played out (a voided table)"
    )

    class Meta:
        indexes = [
            models.Index(fields=["status", "lease_until"]),
            models.Index(fields=["ladder", "-finished"]),
            # The rating writer's batch and the sweep of unrated matches: the few recorded and not
            # yet rated, in the order recorded, without walking a ladder's whole history.
            models.Index(
                fields=["ladder", "finished"],
                condition=models.Q(status="finished", rated=True, ratings_applied=False),
                name="match_waiting_for_rating",
            ),
            # The rotations of a duplicate set (rated together at two seats).
            models.Index(
                fields=["ladder", "duplicate_set"],
                condition=~models.Q(duplicate_set=""),
                name="match_duplicate_set",
            ),
            # A duplicate set's matches by name (is the set over, so are its replays published):
            # the match and bot pages ask on every view. Not partial: SQLite uses a partial index
            # only when the query repeats its condition.
            models.Index(fields=["duplicate_set", "ladder", "tournament"], name="match_set_members"),
        ]
        verbose_name_plural = "matches"

    def __str__(self) -> str:
        return f"match {self.pk} ({self.ladder.game}, seed {self.seed}, {self.status})"


class Seat(models.Model):
    """Who sat where in a match (a bot version, or a person: `player`), and how it went for them.

    A person's seat has a time control of its own (a person thinks longer than a bot); a bot's
    seat plays under its match's ladder or tournament time control."""

    match = models.ForeignKey(Match, on_delete=models.CASCADE, related_name="seats")
    seat = models.PositiveSmallIntegerField()
    bot_version = models.ForeignKey(
        "bots.BotVersion", on_delete=models.PROTECT, related_name="seats", null=True, blank=True
    )
    player = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="seats",
        null=True,
        blank=True,
        help_text="the person in this seat, deciding from the browser (a human table)",
    )
    decision_seconds = models.FloatField(null=True, blank=True, help_text="a person's time per decision")
    bank_seconds = models.FloatField(null=True, blank=True, help_text="a person's extra time over the game")
    score = models.IntegerField(null=True, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    forfeit_status = models.CharField(max_length=10, blank=True)
    forfeit_reason = models.TextField(blank=True)

    @property
    def is_person(self) -> bool:
        return self.player_id is not None

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["match", "seat"], name="one_bot_per_seat"),
            models.CheckConstraint(
                condition=models.Q(bot_version__isnull=False, player__isnull=True)
                | models.Q(bot_version__isnull=True, player__isnull=False),
                name="seat_bot_or_person",
            ),
        ]
        # A bot's matches newest first (its page's results, waiting matches and duplicate sets).
        indexes = [models.Index(fields=["bot_version", "match"], name="seat_version_match")]
        ordering = ["match", "seat"]


class SeatLog(models.Model):
    """What a seat's bot wrote (stdout and stderr) during one match, kept for its owner only: the
    last `referee.tools.bot_logs.LOG_TAIL_BYTES` of whole lines, and the event number of the decision
    its forfeit was declared at (the replay event; None without a forfeit). The forfeit's full
    reason is the seat's own `forfeit_reason`. Deleted with its seat, so with its match."""

    seat = models.OneToOneField(Seat, on_delete=models.CASCADE, related_name="log")
    text = models.TextField(blank=True)
    truncated = models.BooleanField(default=False, help_text="earlier output was dropped")
    forfeit_event = models.IntegerField(null=True, blank=True, help_text="replay event of the forfeit")
