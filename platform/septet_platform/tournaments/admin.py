"""Organisers create and run tournaments here: pause, resume, cancel and publish are actions."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from septet_platform.tournaments import services
from septet_platform.tournaments.models import Entrant, Tournament
from septet_platform.tournaments.tasks import tournament_match_run_task


class EntrantInline(admin.TabularInline):
    model = Entrant
    extra = 0
    raw_id_fields = ("bot", "version")


class TournamentForm(forms.ModelForm):
    """The admin's form: the same checks as `tournament_create` (game, table size, counts)."""

    class Meta:
        model = Tournament
        fields = "__all__"

    def clean(self) -> dict[str, object]:
        data: dict[str, object] = super().clean()
        fields = ("game", "table_size", "format", "entry", "duplicate_sets", "tables", "rounds")
        times = ("decision_seconds", "bank_seconds")
        if all(data.get(name) is not None for name in (*fields, *times)):
            try:
                services.tournament_check(**{name: data[name] for name in (*fields, *times)})  # type: ignore[arg-type]
            except services.TournamentError as error:
                raise forms.ValidationError(str(error)) from None
        return data


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    form = TournamentForm
    list_display = ("name", "title", "game", "format", "table_size", "entry_deadline", "status", "published")
    list_filter = ("status", "game", "format", "published")
    prepopulated_fields = {"name": ("title",)}
    readonly_fields = ("status", "current_round", "problem", "started", "finished")
    filter_horizontal = ("invited",)
    inlines = [EntrantInline]
    actions = ["pause", "resume", "cancel", "publish"]

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, object]:
        import random

        return {"organiser": request.user.pk, "seed": random.getrandbits(services.SEED_BITS)}

    @admin.action(description="Pause: no new match starts")
    def pause(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._each(request, queryset, lambda t: services.tournament_pause(tournament=t))

    @admin.action(description="Resume paused tournaments")
    def resume(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._each(
            request,
            queryset,
            lambda t: services.tournament_resume(tournament=t, enqueue=tournament_match_run_task.delay),
        )

    @admin.action(description="Cancel: waiting matches are dropped")
    def cancel(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        self._each(request, queryset, lambda t: services.tournament_cancel(tournament=t))

    @admin.action(description="Publish: list on the site")
    def publish(self, request: HttpRequest, queryset: QuerySet[Tournament]) -> None:
        queryset.update(published=True)

    def _each(self, request: HttpRequest, queryset: QuerySet[Tournament], action: object) -> None:
        for tournament in queryset:
            try:
                action(tournament)  # type: ignore[operator]
            except services.TournamentError as error:
                self.message_user(request, str(error), messages.ERROR)
