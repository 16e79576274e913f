"""Live writes: a person's answer to the decision their seat is asked."""

from __future__ import annotations

from typing import Any

import redis
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

from septet_platform.live.relay import AnswerOutcome, seat_answer
from septet_platform.matches.live_selectors import NotYourSeat
from septet_platform.matches.models import Match, Seat

MAX_DECISION_ID = 64


class AnswerRefused(Exception):
    """An answer that was not passed on; `code` says why (an AnswerOutcome, or `bad-request`,
    `not-playing`, `unavailable`), the message says it to a person."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


REFUSALS = {
    AnswerOutcome.NOT_ASKED: "your seat is not being asked anything now",
    AnswerOutcome.STALE: "that decision is over: the game has moved on (your clock ran out)",
    AnswerOutcome.ANSWERED: "that decision has been answered already",
    AnswerOutcome.ILLEGAL: "that is not one of the legal actions of this decision",
}


def answer_submit(
    *, user: AbstractBaseUser | AnonymousUser, match_id: int, seat: int, decision: Any, action: Any
) -> None:
    """Passes `user`'s answer to their seat's pending decision on to the worker: NotYourSeat when
    they do not sit there, Match.DoesNotExist for an unknown match, AnswerRefused for anything
    else (see REFUSALS). A refused answer changes nothing."""
    if (
        not isinstance(decision, str)
        or not 0 < len(decision) <= MAX_DECISION_ID
        or not decision.isprintable()
    ):
        raise AnswerRefused("bad-request", "`decision` must be the id of the prompt you answer")
    if isinstance(action, list):
        if not all(isinstance(card, str) and 0 < len(card) <= 3 for card in action) or len(action) > 13:
            raise AnswerRefused(
                "bad-request", "`action` must be a card, a bid, true/false or a list of cards"
            )
    elif not isinstance(action, bool | int | str) or (isinstance(action, str) and len(action) > 3):
        raise AnswerRefused("bad-request", "`action` must be a card, a bid, true/false or a list of cards")
    status = Match.objects.filter(pk=match_id).values_list("status", flat=True).first()
    if status is None:
        raise Match.DoesNotExist(f"no match {match_id}")
    if (
        not user.is_authenticated
        or not Seat.objects.filter(match_id=match_id, seat=seat, player_id=user.pk).exists()
    ):
        raise NotYourSeat(f"seat {seat} of match {match_id} is not yours")
    if status != Match.Status.RUNNING:
        raise AnswerRefused("not-playing", f"this match is {status}, not being played")
    try:
        outcome = seat_answer(match_id=match_id, seat=seat, decision=decision, action=action)
    except redis.RedisError:
        raise AnswerRefused("unavailable", "the table cannot be reached this moment: try again") from None
    if outcome is not AnswerOutcome.TAKEN:
        raise AnswerRefused(str(outcome), REFUSALS[outcome])
