from django.contrib import admin

from septet_platform.matches.models import Match, Seat


class SeatInline(admin.TabularInline):
    model = Seat
    extra = 0


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = ("id", "ladder", "kind", "status", "seed", "attempt", "worker", "finished")
    list_filter = ("status", "kind", "ladder")
    inlines = [SeatInline]
