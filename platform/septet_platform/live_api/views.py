"""A match's live stream as server-sent events, and a person's answers from their seat.

`events` is an async view: under the site's ASGI server each viewer is one waiting coroutine, not a
thread, and one Redis read per stream serves every viewer in the process (live.hub). The browser's
EventSource reconnects by itself and sends the last event id it had (`<attempt>:<entry>`), so a
reconnect resumes exactly where it broke off, and a late joiner gets the match so far first.

`answer` is an ordinary POST: the session says who asks, Django's CSRF check refuses another site's
form or script (a forged origin among them), and the live services check the seat and the decision.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.db import connection as db_connection
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET, require_POST

from septet_platform.live.connection import live_redis_async
from septet_platform.live.hub import START, hub
from septet_platform.live.streams import batch_ends, live_end
from septet_platform.matches import live_selectors as selectors
from septet_platform.matches import live_services as services
from septet_platform.matches.models import Match

KEEPALIVE_SECONDS = 15.0
"""A comment line after this long without a batch: proxies keep the connection, and a browser
that went away is noticed."""
RECONNECT_MILLISECONDS = 3_000
HELD_RECONNECT_MILLISECONDS = 10_000
MAX_ANSWER_BYTES = 1_024


def _event(data: str, *, event_id: str = "", event: str = "") -> str:
    lines = [f"id: {event_id}"] if event_id else []
    if event:
        lines.append(f"event: {event}")
    lines.append(f"data: {data}")
    return "\n".join(lines) + "\n\n"


@require_GET
async def match_events(request: HttpRequest, match_id: int) -> HttpResponse:
    """The match's live stream (`?seat=N` for the viewer's own seat's stream)."""
    seat_text = request.GET.get("seat", "")
    if seat_text and not seat_text.isdigit():
        return JsonResponse({"error": "seat must be a seat number"}, status=400)
    user = await request.auser()
    try:
        plan = await sync_to_async(_plan)(
            match_id=match_id, viewer=user, seat=int(seat_text) if seat_text else None
        )
    except Match.DoesNotExist as missing:
        return JsonResponse({"error": str(missing)}, status=404)
    except selectors.NotYourSeat as refused:
        return JsonResponse({"error": str(refused)}, status=403)
    after = _resume_point(request, plan.attempt)
    response = StreamingHttpResponse(_stream(plan, after), content_type="text/event-stream")
    response["Cache-Control"] = "no-store"
    response["X-Accel-Buffering"] = "no"  # a buffering proxy in front would hold events back
    return response


def _plan(*, match_id: int, viewer: Any, seat: int | None) -> selectors.StreamPlan:
    """The stream to follow, read on a thread whose database connection is then closed: a stream
    lasts as long as its match, and must not hold a connection of the database meanwhile (five
    hundred viewers would be five hundred connections)."""
    try:
        return selectors.stream_plan(match_id=match_id, viewer=viewer, seat=seat)
    finally:
        db_connection.close()


def _resume_point(request: HttpRequest, attempt: int) -> str:
    """The entry after which to resume: the browser's last event id when it is of this attempt."""
    last = request.headers.get("Last-Event-ID", "") or request.GET.get("after", "")
    seen_attempt, _, entry = last.partition(":")
    if seen_attempt == str(attempt) and entry and len(entry) <= 40:
        return entry
    return START


async def _stream(plan: selectors.StreamPlan, after: str) -> AsyncIterator[str]:
    yield f"retry: {RECONNECT_MILLISECONDS}\n\n"
    if plan.held:
        yield f"retry: {HELD_RECONNECT_MILLISECONDS}\n\n"
        yield _event(json.dumps({"held": plan.held}), event="held")
        return
    if plan.over and not await live_redis_async().exists(plan.key):
        # The stream has expired (or was never written): the page shows the result and replay.
        status = "voided" if plan.status == Match.Status.CANCELLED else str(plan.status)
        end = live_end(status=status, reason=plan.end_reason, replay=plan.published)
        yield _event(json.dumps([end]), event_id="")
        return
    async with hub().subscribe(plan.key, after) as feed:
        while True:
            entry = await feed.next(KEEPALIVE_SECONDS)
            if entry is None:
                yield ": keepalive\n\n"
                continue
            entry_id, batch = entry
            yield _event(batch, event_id=f"{plan.attempt}:{entry_id}")
            if batch_ends(batch):
                return


@require_POST
def seat_answer(request: HttpRequest, match_id: int, seat: int) -> JsonResponse:
    """A person's answer to their seat's pending decision: `{"decision": id, "action": ...}`."""
    if len(request.body) > MAX_ANSWER_BYTES:
        return JsonResponse({"error": "an answer is a few bytes of JSON"}, status=400)
    try:
        body = json.loads(request.body or b"null")
    except (ValueError, UnicodeDecodeError):
        return JsonResponse(
            {"error": 'send the answer as JSON: {"decision": ..., "action": ...}'}, status=400
        )
    if not isinstance(body, dict) or "decision" not in body or "action" not in body:
        return JsonResponse(
            {"error": 'send the answer as JSON: {"decision": ..., "action": ...}'}, status=400
        )
    try:
        services.answer_submit(
            user=request.user, match_id=match_id, seat=seat, decision=body["decision"], action=body["action"]
        )
    except Match.DoesNotExist as missing:
        return JsonResponse({"error": str(missing)}, status=404)
    except selectors.NotYourSeat as refused:
        return JsonResponse({"error": str(refused)}, status=403)
    except services.AnswerRefused as refused:
        status = {"bad-request": 400, "illegal": 400, "unavailable": 503}.get(refused.code, 409)
        return JsonResponse({"error": str(refused), "code": refused.code}, status=status)
    return JsonResponse({"ok": True})
