"""Challenges on the site: ask for unrated duplicate sets against named bots, read their results
with 95% intervals, and an owner's switch that refuses challenges against a bot.

The same services as the Arena's RequestChallenge, GetChallenge and SetChallengesAccepted
(challenges.services, challenges.selectors), so the site and `septet challenge` keep one set of
rules: random seeds only, per-user limits, refusals that change nothing, and a set's seeds and
replays shown once all of it is over (replay links only for published matches).
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import path
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from septet_platform.bots.models import Bot
from septet_platform.challenges import selectors as challenge_reads
from septet_platform.challenges import services as challenge_services
from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder
from septet_platform.matches.selectors import published_match_ids

REFUSED = (
    ObjectDoesNotExist,
    challenge_services.ChallengeInvalid,
    challenge_services.ChallengeNotYours,
    challenge_services.ChallengeRefused,
    challenge_services.ChallengesExhausted,
)


EXAMPLE_GAME = "oh-hell"
EXAMPLE_OPPONENTS = "montecarlo greedy"
"""The form's example: with the challenger, three bots, a table Oh Hell! seats (3-7 players)."""


class ChallengeForm(forms.Form):
    """Your bot, its opponents by name, the game and the number of duplicate sets."""

    bot = forms.ChoiceField(label="Your bot")
    opponents = forms.CharField(
        max_length=300,
        help_text=(
            "bot names separated by spaces; with your bot, as many bots as the game seats "
            f"(its number of players), e.g. <code>{EXAMPLE_OPPONENTS}</code> for {EXAMPLE_GAME}"
        ),
        widget=forms.TextInput(attrs={"placeholder": EXAMPLE_OPPONENTS}),
    )
    game = forms.ChoiceField(initial=EXAMPLE_GAME, help_text="with the number of players it seats")
    sets = forms.IntegerField(
        min_value=1,
        max_value=challenge_services.MAX_CHALLENGE_SETS,
        initial=10,
        help_text="duplicate sets: each a random deal played in every seat rotation",
    )

    def __init__(
        self, *args: object, owner_bots: list[str], games: list[tuple[str, int, int]], **kwargs: object
    ) -> None:
        """`games`: each ladder's (game id, fewest players, most players)."""
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["bot"].choices = [(name, name) for name in owner_bots]  # type: ignore[attr-defined]
        self.fields["game"].choices = [  # type: ignore[attr-defined]
            (game, f"{game} ({low}-{high} players)" if low != high else f"{game} ({low} players)")
            for game, low, high in games
        ]

    def seats(self) -> list[tuple[str, int]]:
        """Your bot first, then each opponent, each at its latest active version."""
        names = [self.cleaned_data["bot"], *self.cleaned_data["opponents"].split()]
        return [(name, 0) for name in names]


@login_required
@require_http_methods(["GET", "POST"])
def challenges(request: HttpRequest) -> HttpResponse:
    """The user's challenges, newest first, and a form for a new one; a refused one says why and
    creates nothing."""
    owner_bots = list(Bot.objects.filter(owner=request.user).order_by("name").values_list("name", flat=True))
    games = list(
        Ladder.objects.filter(pool=Ladder.Pool.SANDBOXED)
        .order_by("game")
        .values_list("game", "min_players", "max_players")
    )
    form = ChallengeForm(request.POST or None, owner_bots=owner_bots, games=games)
    if request.method == "POST" and form.is_valid():
        try:
            challenge = challenge_services.challenge_request(
                requester=request.user,
                game=form.cleaned_data["game"],
                seats=form.seats(),
                sets=form.cleaned_data["sets"],
            )
        except REFUSED as refused:
            form.add_error(None, str(refused).strip("'\""))
        else:
            messages.success(request, f"Challenge {challenge.pk} queued: {challenge.sets} duplicate sets.")
            return redirect("web:challenge", challenge_id=challenge.pk)
    listed = challenge_reads.challenges_of(user_id=request.user.pk)
    example = {"game": EXAMPLE_GAME, "opponents": EXAMPLE_OPPONENTS}
    return render(request, "web/challenges.html", {"form": form, "challenges": listed, "example": example})


@require_GET
def challenge(request: HttpRequest, challenge_id: int) -> HttpResponse:
    """A challenge's results with 95% intervals and its matches; replay links only for matches
    whose set is over (the publication rule)."""
    try:
        found = challenge_reads.challenge_get(challenge_id=challenge_id)
    except Challenge.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    results = challenge_reads.challenge_results(found)
    published = published_match_ids(results.matches)
    rows = [(match, match.pk in published) for match in results.matches]
    return render(
        request,
        "web/challenge.html",
        {"challenge": found, "results": results, "rows": rows, "over": results.sets_over == found.sets},
    )


@login_required
@require_POST
def challenges_accepted(request: HttpRequest, name: str) -> HttpResponse:
    """The owner's switch: accept or refuse others' challenges against their bot `name`."""
    accepts = request.POST.get("accepts") == "1"
    try:
        bot = challenge_services.challenges_accepted_set(owner=request.user, bot=name, accepts=accepts)
    except (Bot.DoesNotExist, challenge_services.ChallengeNotYours) as refused:
        messages.error(request, str(refused))
    else:
        state = "accepts" if bot.accepts_challenges else "refuses"
        messages.success(request, f"{bot.name} now {state} challenges from other users.")
    return redirect("web:my-bots")


urlpatterns = [
    path("", challenges, name="challenges"),
    path("<int:challenge_id>/", challenge, name="challenge"),
    path("bots/<path:name>/accepted/", challenges_accepted, name="challenges-accepted"),
]
