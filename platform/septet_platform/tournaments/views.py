"""Tournament pages: thin views over the selectors and services."""

from __future__ import annotations

import io
import json
import zipfile

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from referee.engine.replay import ReplayError
from septet_platform.bots.models import Bot
from septet_platform.matches.selectors import ReplayUnpublished, published_match_ids, replay_for_viewer
from septet_platform.tournaments import selectors, services
from septet_platform.tournaments.models import Tournament


def _visible(request: HttpRequest, name: str) -> Tournament:
    try:
        tournament = selectors.tournament_get(name=name)
    except Tournament.DoesNotExist:
        raise Http404(f"no tournament named {name}") from None
    if not tournament.published and not request.user.is_staff:
        raise Http404(f"no tournament named {name}")
    return tournament


def tournament_list(request: HttpRequest) -> HttpResponse:
    tournaments = selectors.tournaments_list(viewer=request.user if request.user.is_authenticated else None)
    return render(request, "tournaments/list.html", {"tournaments": tournaments})


def tournament_detail(request: HttpRequest, name: str) -> HttpResponse:
    tournament = _visible(request, name)
    progress = selectors.progress(tournament)
    my_bots = (
        Bot.objects.filter(owner=request.user).order_by("name")
        if request.user.is_authenticated and tournament.status == Tournament.Status.OPEN
        else []
    )
    return render(
        request,
        "tournaments/detail.html",
        {
            "tournament": tournament,
            "entrants": tournament.entrants.select_related("bot__owner", "version"),
            "progress": progress,
            "time_left": selectors.time_left(progress.seconds_left),
            "standings": selectors.standings(tournament),
            "crosstable": selectors.crosstable(tournament),
            "matches": selectors.tournament_matches(tournament),
            "my_bots": my_bots,
        },
    )


@login_required
@require_POST
def tournament_enter(request: HttpRequest, name: str) -> HttpResponse:
    tournament = _visible(request, name)
    bot = Bot.objects.filter(name=request.POST.get("bot", "")).first()
    if bot is None:
        messages.error(request, f"no bot named {request.POST.get('bot', '')!r}")
        return redirect("tournaments:detail", name=name)
    try:
        services.entrant_add(tournament=tournament, user=request.user, bot=bot)
    except services.TournamentError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, f"{bot.name} is entered in {tournament.title}")
    return redirect("tournaments:detail", name=name)


def tournament_replays(request: HttpRequest, name: str) -> HttpResponse:
    """Every played match's replay in one zip, with matches.json saying who sat where."""
    tournament = _visible(request, name)
    buffer = io.BytesIO()
    index = []
    played = selectors.replay_files(tournament)
    # Only matches whose duplicate set is over, each as this viewer may see it (other owners'
    # forfeit reasons blanked): the rule of septet_platform.matches.selectors.
    published = published_match_ids(match for match, _ in played)
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        for match, _ in played:
            if match.pk not in published:
                continue
            try:
                data = replay_for_viewer(match=match, viewer=request.user)
            except (FileNotFoundError, ReplayError, ReplayUnpublished):
                continue
            archive.writestr(f"match-{match.pk}.json.gz", data)
            index.append(
                {
                    "match": match.pk,
                    "round": match.tournament_round,
                    "seed": match.seed,
                    "duplicate_set": match.duplicate_set,
                    "rotation": match.rotation,
                    "seats": [
                        {
                            "seat": s.seat,
                            "bot": s.bot_version.bot.name,
                            "version": s.bot_version.number,
                            "rank": s.rank,
                        }
                        for s in match.seats.all()
                    ],
                    "replay": f"match-{match.pk}.json.gz",
                }
            )
        archive.writestr(
            "matches.json",
            json.dumps({"tournament": tournament.name, "game": tournament.game, "matches": index}, indent=2),
        )
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{tournament.name}-replays.zip"'
    return response
