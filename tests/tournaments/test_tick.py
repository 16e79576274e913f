"""The beat's tournaments tick: it starts events whose deadline passed, finishes those whose last
round is over, and queues again the matches of running events left waiting (a lost task), but
never those of a paused event; the ladder's reaper leaves tournament matches to it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from tournament_data import Recorder, make_version, play_on_paper

from septet_platform.matches import services as match_services
from septet_platform.matches.models import Match
from septet_platform.tournaments import services, tasks
from septet_platform.tournaments.models import Tournament

pytestmark = pytest.mark.django_db


class Task:
    """Stands in for the Celery task: records what `.delay` was called with."""

    def __init__(self) -> None:
        self.recorder = Recorder()

    def delay(self, match_id: int) -> None:
        self.recorder(match_id)


def test_the_tick_starts_requeues_only_running_events_and_finishes(
    open_cup: Tournament, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: object
) -> None:
    task = Task()
    monkeypatch.setattr(tasks, "tournament_match_run_task", task)
    for name in ("a", "b", "c"):
        version = make_version(name, f"{name}-bot")
        services.entrant_add(tournament=open_cup, user=version.bot.owner, bot=version.bot)
    Tournament.objects.filter(pk=open_cup.pk).update(entry_deadline=timezone.now())

    with django_capture_on_commit_callbacks(execute=True):  # type: ignore[operator]
        assert tasks.tournaments_tick_task() == 0
    matches = Match.objects.filter(tournament=open_cup)
    assert Tournament.objects.get(pk=open_cup.pk).status == Tournament.Status.RUNNING
    assert sorted(task.recorder.queued) == sorted(matches.values_list("pk", flat=True))

    matches.update(created=timezone.now() - timedelta(hours=1))  # their tasks were lost
    assert match_services.matches_requeue_stale() == []  # the ladder's reaper leaves them alone
    services.tournament_pause(tournament=open_cup)
    assert tasks.tournaments_tick_task() == 0  # paused: held
    Tournament.objects.filter(pk=open_cup.pk).update(status=Tournament.Status.RUNNING)
    assert tasks.tournaments_tick_task() == 3

    play_on_paper(open_cup, lambda name: float(ord(name[0])))
    tasks.tournaments_tick_task()
    assert Tournament.objects.get(pk=open_cup.pk).status == Tournament.Status.FINISHED
