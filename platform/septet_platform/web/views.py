"""Public pages: home, ladders, bots, matches (with the replay viewer and its document), rules.

Each view parses its input, calls one selector, and renders; an unknown game, bot or match is a
404 (the site's 404 page), never a 500.
"""

from __future__ import annotations

import gzip

import redis
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.cache import get_conditional_response
from django.views.decorators.http import require_GET

from referee.engine.games import all_games
from referee.engine.replay import ReplayError
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.selectors import bot_get
from septet_platform.ladders import ratings
from septet_platform.ladders.models import Ladder
from septet_platform.live.bot_relay import BotConnection, bot_connection
from septet_platform.matches.live_selectors import live_now
from septet_platform.matches.models import Match
from septet_platform.matches.selectors import ReplayUnpublished
from septet_platform.web import bot_page, selectors, tables
from septet_platform.web.guides import render_guide
from septet_platform.web.page_cache import anonymous_page_cache
from septet_platform.web.source import available_guides, guide_named, source_links

LIVE_STATUSES = (Match.Status.SCHEDULED, Match.Status.RUNNING)


@require_GET
@anonymous_page_cache
def home(request: HttpRequest) -> HttpResponse:
    """The games with their ladders' leaders, the newest matches, and how to start writing a bot."""
    return render(
        request,
        "web/home.html",
        {
            "games": selectors.ladders_with_leaders(),
            "live_now": live_now(),
            "recent": selectors.recent_matches(limit=10),
            "arena": selectors.arena_address(request_host=request.get_host()),
            "source": source_links(),
        },
    )


@require_GET
@anonymous_page_cache
def ladders(request: HttpRequest) -> HttpResponse:
    """Every game's ladder with its leaders: where the site's "Ladders" link goes."""
    return render(request, "web/ladders.html", {"games": selectors.ladders_with_leaders()})


@require_GET
@anonymous_page_cache
def ladder(request: HttpRequest, game: str) -> HttpResponse:
    """A game's standings, a page at a time, sorted as the query string asks."""
    return _ladder_page(request, game, Ladder.Pool.SANDBOXED)


@require_GET
@anonymous_page_cache
def open_ladder(request: HttpRequest, game: str) -> HttpResponse:
    """A game's open ladder (self-hosted bots, house bots and the sandboxed bots entered)."""
    return _ladder_page(request, game, Ladder.Pool.OPEN)


def _ladder_page(request: HttpRequest, game: str, pool: str) -> HttpResponse:
    try:
        found = selectors.ladder_named(game, pool=pool)
    except Ladder.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    page, sort = selectors.ladder_page(
        ladder=found, sort=request.GET.get("sort", "rank"), page=request.GET.get("page", 1)
    )
    return render(
        request,
        "web/ladder.html",
        {
            "ladder": found,
            "live_now": live_now(game=found.game, ladder_id=found.pk),
            "game": all_games().get(found.game),
            "page": page,
            "rows": tables.standings_rows(page.object_list),
            "sort": sort,
        },
    )


@require_GET
@anonymous_page_cache
def bot(request: HttpRequest, name: str) -> HttpResponse:
    """A bot's versions, ratings with history and its results first (?status=finished|waiting,
    ?page=N); logs for its owner only."""
    try:
        found = bot_page.bot_named(name)
    except Bot.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    profile = bot_page.bot_profile(
        bot=found, viewer=request.user, status=request.GET.get("status", ""), page=request.GET.get("page", 1)
    )
    following = bot_page.version_following(profile.versions)
    response = render(
        request,
        "web/bot.html",
        {
            "profile": profile,
            "live_now": live_now(bot_id=found.pk, limit=3),
            "connection": _connection_shown(found.pk) if found.self_hosted else None,
            "following": following,
            "description": profile.versions[0].description if profile.versions else "",
            "results_rows": tables.results_rows(profile.results, finished=profile.status == "finished"),
            "summary_rows": tables.duplicate_summary_rows(profile.duplicate_summary),
            "set_rows": tables.duplicate_set_rows(profile.duplicate_sets),
            "version_rows": tables.version_rows(profile.versions),
        },
    )
    if following:  # its script reloads it once qualification is over: that reload must get the new page
        response["Cache-Control"] = "no-store"
    return response


def _connection_shown(bot_id: int) -> BotConnection | None:
    """A self-hosted bot's connection for its page; shown as not connected while Redis is away
    (the page still answers)."""
    try:
        return bot_connection(bot_id)
    except redis.RedisError:
        return None


@require_GET
def version_status(request: HttpRequest, name: str, number: int) -> JsonResponse:
    """A bot version's status as JSON, polled by the bot page until it is active or failed; the
    reason it failed goes to the bot's owner only."""
    try:
        found = bot_get(name=name)
    except Bot.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    version = BotVersion.objects.filter(bot=found, number=number).select_related("bot").first()
    if version is None:
        raise Http404(f"{name} has no version {number}")
    owner_sees = bool(request.user.is_authenticated and request.user.pk == found.owner_id)
    response = JsonResponse(selectors.version_state(version=version, owner_sees=owner_sees))
    response["Cache-Control"] = "no-store"
    return response


@require_GET
@anonymous_page_cache
def matches(request: HttpRequest) -> HttpResponse:
    """Every match, finished ones first (?status=finished, the default) or the queued and running
    ones (?status=waiting), a page at a time."""
    status = selectors.match_filter(request.GET.get("status", ""))
    page = selectors.match_list(status=status, page=request.GET.get("page", 1))
    return render(request, "web/matches.html", {"page": page, "status": status})


@require_GET
@anonymous_page_cache
def match(request: HttpRequest, match_id: int) -> HttpResponse:
    """A match's seating, results and rounds, and the replay viewer once it is played."""
    try:
        detail = selectors.match_detail(match_id=match_id, viewer=request.user)
    except Match.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    match = detail.match
    live = match.status in LIVE_STATUSES
    context = {
        "detail": detail,
        "match": match,
        "live": live,
        "live_table": selectors.live_table(detail, viewer=request.user),
        "table_result": selectors.table_result(detail, viewer=request.user),
        "seat_rows": tables.match_seat_rows(detail.seats, owned=detail.owned_seats),
        "rounds_head": tables.rounds_head(detail.seats),
        "started": tables.time_element(match.started) if match.started else "",
        "finished": tables.time_element(match.finished) if match.finished else "",
    }
    response = render(request, "web/match.html", context)
    if live:  # its script reloads it once the match is over: that reload must get the new page
        response["Cache-Control"] = "no-store"
    return response


@require_GET
def match_status(request: HttpRequest, match_id: int) -> JsonResponse:
    """A match's status as JSON, polled by a live match page until the match is done."""
    try:
        found = selectors.match_row(match_id=match_id)
    except Match.DoesNotExist as missing:
        raise Http404(str(missing)) from None
    response = JsonResponse(selectors.live_state(match=found))
    response["Cache-Control"] = "no-store"
    return response


@require_GET
def match_replay(request: HttpRequest, match_id: int) -> HttpResponse:
    """The match's replay document (septet-replay/1 JSON) once its duplicate set is over (a 404
    saying so before), with the forfeit reasons of other owners' seats blanked: gzip bytes with
    Content-Encoding gzip to clients that accept it, decompressed for the others."""
    try:
        download = selectors.replay_download(match_id=match_id, viewer=request.user)
    except (Match.DoesNotExist, FileNotFoundError, ReplayUnpublished, ReplayError) as missing:
        raise Http404(str(missing)) from None
    if "gzip" in request.headers.get("Accept-Encoding", ""):
        response = HttpResponse(download.data, content_type="application/json")
        response["Content-Encoding"] = "gzip"
        etag = f'"{download.sha256}"'
    else:
        response = HttpResponse(gzip.decompress(download.data), content_type="application/json")
        etag = f'"{download.sha256}-json"'
    response["ETag"] = etag
    response["Vary"] = "Accept-Encoding, Cookie"
    # What a replay shows depends on who asks (their own forfeit reasons): no shared caches.
    response["Cache-Control"] = "private, max-age=3600"
    return get_conditional_response(request, etag=etag, response=response)


@require_GET
def how_ratings_work(request: HttpRequest) -> HttpResponse:
    """The rating model and its Elo-like display, with the constants the ladders use."""
    return render(
        request,
        "web/ratings.html",
        {
            "base": ratings.ELO_BASE,
            "per_mu": round(ratings.ELO_PER_MU, 1),
            "default_mu": ratings.DEFAULT_MU,
            "default_sigma": round(ratings.DEFAULT_SIGMA, 2),
            "beta": round(ratings.BETA, 2),
            "sigmas": ratings.INTERVAL_SIGMAS,
            "provisional_games": ratings.PROVISIONAL_GAMES,
            "new_bot": ratings.display(ratings.DEFAULT_MU, ratings.DEFAULT_SIGMA),
        },
    )


@require_GET
def guides_index(request: HttpRequest) -> HttpResponse:
    """Every guide this site has, first to last."""
    return render(request, "web/guides.html", {"guides": available_guides()})


@require_GET
def guide(request: HttpRequest, slug: str) -> HttpResponse:
    """One guide (docs/bots.md and the rest), rendered from the clone the site runs from."""
    found = guide_named(slug)
    if found is None:
        raise Http404(f"no guide {slug!r}")
    return render(request, "web/guide.html", {"guide": found, "body": render_guide(found)})


@require_GET
def rules_index(request: HttpRequest) -> HttpResponse:
    """Every game the engine implements, linking to its rules."""
    return render(request, "web/rules_index.html", {"games": list(all_games().values())})


@require_GET
def rules(request: HttpRequest, game: str) -> HttpResponse:
    """A game's rules as the engine implements them: its rules text, table sizes and options."""
    found = all_games().get(game)
    if found is None:
        raise Http404(f"no game {game!r}")
    return render(request, "web/rules.html", {"game": found, "options": sorted(found.options.items())})
