"""A challenge: the duplicate sets one user asked for, against bots they named, unrated."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Challenge(models.Model):
    """`sets` duplicate sets of one seating on `ladder`: each set one random seed played in every
    seat rotation, so every bot sits in every seat of the same deal. The matches are ordinary
    unrated CHALLENGE matches (their `duplicate_set` names the set), published like any other:
    a set's seed and replays once every rotation of it is over."""

    requester = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="challenges"
    )
    ladder = models.ForeignKey("ladders.Ladder", on_delete=models.PROTECT, related_name="challenges")
    challenger = models.ForeignKey(
        "bots.BotVersion",
        on_delete=models.PROTECT,
        related_name="challenges_made",
        help_text="the requester's bot whose results the challenge reports against the others",
    )
    sets = models.PositiveSmallIntegerField()
    matches = models.ManyToManyField(
        "matches.Match", related_name="challenges", db_table="arena_api_challenge_matches"
    )
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "arena_api_challenge"  # made by the Arena's app (arena_api 0001), kept as it is
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"challenge {self.pk} ({self.ladder.game}, {self.sets} sets)"
