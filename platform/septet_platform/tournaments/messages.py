"""Tournaments as Arena API messages (septet.v1.Tournament*), for the Arena servicer."""

from __future__ import annotations

from referee.botkit.protocol import arena_pb2 as pb
from septet_platform.tournaments import selectors
from septet_platform.tournaments.models import Tournament


def summary(tournament: Tournament) -> pb.TournamentSummary:
    return pb.TournamentSummary(
        name=tournament.name,
        title=tournament.title,
        game=tournament.game,
        format=tournament.format,
        table_size=tournament.table_size,
        duplicate_sets=tournament.duplicate_sets,
        rounds=tournament.total_rounds,
        decision_seconds=tournament.decision_seconds,
        bank_seconds=tournament.bank_seconds,
        entry_deadline=tournament.entry_deadline.isoformat(),
        entry=tournament.entry,
        status=tournament.status,
        entrants=tournament.entrants.count(),
    )


def detail(tournament: Tournament) -> pb.GetTournamentResponse:
    progress = selectors.progress(tournament)
    entrants = tournament.entrants.select_related("bot__owner", "version").order_by("bot__name")
    return pb.GetTournamentResponse(
        tournament=summary(tournament),
        entrants=[
            pb.TournamentEntrant(
                bot=entrant.bot.name,
                owner=entrant.bot.owner.get_username(),
                version=entrant.version.number if entrant.version else 0,
            )
            for entrant in entrants
        ],
        progress=pb.TournamentProgress(
            done=progress.done,
            scheduled=progress.scheduled,
            total=progress.total,
            current_round=tournament.current_round,
            seconds_left=progress.seconds_left or 0.0,
        ),
        standings=[
            pb.TournamentStanding(
                place=row.place,
                bot=row.bot,
                version=row.version,
                mean_rank=row.interval.mean,
                low=row.interval.low,
                high=row.interval.high,
                sets=row.interval.n,
                games=row.games,
                tied_with=row.tied_with,
            )
            for row in selectors.standings(tournament)
        ],
        problem=tournament.problem,
    )
