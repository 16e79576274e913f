"""Two ladders per game id (sandboxed and open); a Rating per bot version per ladder, and every
change to it."""

from __future__ import annotations

from django.db import models

from referee.engine.match import TimeControl


class Ladder(models.Model):
    """The rated competition of one game id in one pool, with its table sizes and time control.

    The sandboxed pool rates only bots that play inside the platform's sandbox, so its results
    are the bots' own. The open pool is where self-hosted bots play (docs/self-hosted.md): they
    may use any hardware or help, so they meet only house bots, sandboxed bots whose owners
    entered them, and each other, rated apart."""

    class Pool(models.TextChoices):
        SANDBOXED = "sandboxed"
        OPEN = "open"

    game = models.CharField(max_length=40)
    pool = models.CharField(max_length=10, choices=Pool.choices, default=Pool.SANDBOXED)
    min_players = models.PositiveSmallIntegerField()
    max_players = models.PositiveSmallIntegerField()
    decision_seconds = models.FloatField(default=1.0)
    bank_seconds = models.FloatField(default=10.0)
    active = models.BooleanField(default=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "pool"], name="one_ladder_per_game_and_pool")]

    def __str__(self) -> str:
        return self.label

    @property
    def is_open(self) -> bool:
        """The open pool: self-hosted bots meet house bots and the sandboxed bots entered."""
        return self.pool == self.Pool.OPEN

    @property
    def label(self) -> str:
        """How pages and commands name it: the game id, with "(open)" for the open pool."""
        return f"{self.game} (open)" if self.is_open else self.game

    @property
    def time_control(self) -> TimeControl:
        """The time control of this ladder's matches, with each seat's budget for the whole match."""
        return TimeControl(self.decision_seconds, self.bank_seconds)

    @property
    def seat_budget_seconds(self) -> float:
        """Seconds one seat may think over a whole match; past it, it forfeits (docs/rules.md)."""
        return self.time_control.seat_budget

    @property
    def max_match_seconds(self) -> float:
        """The bots' thinking time a match can take at most: every seat of the largest table
        using its whole budget (the bound a slow bot cannot push a match past)."""
        return self.max_players * self.seat_budget_seconds


class Rating(models.Model):
    """A Plackett-Luce (openskill) belief about one bot version on one ladder."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="ratings")
    bot_version = models.ForeignKey("bots.BotVersion", on_delete=models.CASCADE, related_name="ratings")
    mu = models.FloatField()
    sigma = models.FloatField()
    games = models.PositiveIntegerField(default=0)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ladder", "bot_version"], name="one_rating_per_ladder")
        ]

    def __str__(self) -> str:
        return f"{self.bot_version} on {self.ladder}: {self.mu:.1f} ± {self.sigma:.1f}"


class RatingChange(models.Model):
    """One rating update: the history a bot page charts. It hangs on the match it came from, or on
    the last rotation of a duplicate set rated as one result."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="changes")
    match = models.ForeignKey("matches.Match", on_delete=models.CASCADE, related_name="rating_changes")
    rank = models.PositiveSmallIntegerField(
        default=0, help_text="the rank the update used: the seat's, or its duplicate set's (1 = best)"
    )
    mu_before = models.FloatField()
    sigma_before = models.FloatField()
    mu_after = models.FloatField()
    sigma_after = models.FloatField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["rating", "match"], name="one_change_per_match")]
