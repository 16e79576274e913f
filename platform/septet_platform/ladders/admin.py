from django.contrib import admin

from septet_platform.ladders.models import Ladder, Rating


@admin.register(Ladder)
class LadderAdmin(admin.ModelAdmin):
    list_display = ("game", "min_players", "max_players", "decision_seconds", "bank_seconds", "active")


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("bot_version", "ladder", "mu", "sigma", "games", "updated")
    list_filter = ("ladder",)
