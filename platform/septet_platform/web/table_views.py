"""Tables on the site: a signed-in person starts a game against bots and takes one seat.

The form names who sits where (you, house bots, your own bots, other owners' bots that accept
challenges) and a person's clock; the table service (challenges.tables) checks all of it and
queues the game on the tables pool. The game itself is played on the match's page, which follows
the person's own seat stream and sends their answers (septet_platform.live_api).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_http_methods

from septet_platform.challenges import services as challenge_services
from septet_platform.challenges import tables
from septet_platform.ladders.models import Ladder

MAX_SEATS = 7
DEFAULT_GAME = "oh7"
DEFAULT_SEATING = (tables.YOU, "greedy", "random")
REFUSED = (
    ObjectDoesNotExist,
    challenge_services.ChallengeInvalid,
    challenge_services.ChallengeRefused,
    challenge_services.ChallengesExhausted,
)
EMPTY = ""


class TableForm(forms.Form):
    """The game, who sits in each seat (empty seats at the end are left out) and your clock."""

    game = forms.ChoiceField(initial=DEFAULT_GAME)
    clock = forms.ChoiceField(
        choices=[(clock.name, clock.label) for clock in tables.CLOCKS],
        initial=tables.DEFAULT_CLOCK,
        label="Your clock",
        help_text="when a decision's time runs out your bank is drawn on; when both are gone the "
        "greedy policy plays your seat to the end. Closing the page lets your clock run; open the "
        "match again to take your seat back.",
    )

    def __init__(
        self,
        *args: object,
        games: list[tuple[str, int, int]],
        bots: dict[str, list[str]],
        **kwargs: object,
    ) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["game"].choices = [  # type: ignore[attr-defined]
            (game, f"{game} ({low}-{high} players)" if low != high else f"{game} ({low} players)")
            for game, low, high in games
        ]
        groups: list[tuple[str, object]] = [(EMPTY, "(nobody)"), (tables.YOU, "You")]
        for title, key in (("House bots", "house"), ("Your bots", "yours"), ("Others' bots", "others")):
            if bots.get(key):
                groups.append((title, [(name, name) for name in bots[key]]))
        for number in range(MAX_SEATS):
            initial = DEFAULT_SEATING[number] if number < len(DEFAULT_SEATING) else EMPTY
            self.fields[f"seat_{number}"] = forms.ChoiceField(
                choices=groups, required=False, initial=initial, label=f"Seat {number + 1}"
            )

    def seats(self) -> list[str]:
        """The seating in seat order: every seat up to the last one filled."""
        chosen = [self.cleaned_data.get(f"seat_{number}") or EMPTY for number in range(MAX_SEATS)]
        while chosen and chosen[-1] == EMPTY:
            chosen.pop()
        return chosen

    def clean(self) -> dict[str, object]:
        cleaned = super().clean() or {}
        if self.errors:
            return cleaned
        seats = self.seats()
        if EMPTY in seats:
            raise forms.ValidationError(
                "fill the seats one after another: an empty seat cannot sit between two"
            )
        return cleaned


@login_required
@require_http_methods(["GET", "POST"])
def table_new(request: HttpRequest) -> HttpResponse:
    """The form for a new table; a table that cannot be played says why and creates nothing."""
    games = list(
        Ladder.objects.filter(pool=Ladder.Pool.SANDBOXED)
        .order_by("game")
        .values_list("game", "min_players", "max_players")
    )
    bots = tables.table_choices(user=request.user)
    form = TableForm(request.POST or None, games=games, bots=bots)
    if request.method == "POST" and form.is_valid():
        try:
            match = tables.table_start(
                requester=request.user,
                game=form.cleaned_data["game"],
                seats=form.seats(),
                clock=form.cleaned_data["clock"],
            )
        except REFUSED as refused:
            form.add_error(None, str(refused).strip("'\""))
        else:
            messages.success(request, "Your table is being set up: your seat is below.")
            return redirect("web:match", match_id=match.pk)
    return render(
        request,
        "web/table_new.html",
        {"form": form, "open_tables": tables.open_table_matches(request.user)},
    )


urlpatterns = [path("new/", table_new, name="table-new")]
