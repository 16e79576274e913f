"""The Arena servicer: each method parses the request, calls one service or selector and
answers, mapping the platform's errors to gRPC status codes (see protos/septet/v1/arena.proto).
The caller's user, if any, comes from the auth interceptor (`auth.current_user`)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing
from datetime import UTC, datetime
from typing import NoReturn

import grpc
import redis
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ObjectDoesNotExist
from django.db import close_old_connections

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.engine.replay import ReplayError
from referee.tools.botfolder import BotFolderError
from referee.tools.stats import MeanInterval
from septet_platform.arena_api import selectors
from septet_platform.arena_api.auth import current_token, current_user
from septet_platform.arena_api.connect import ConnectSession
from septet_platform.bots.archives import CHUNK, DEFAULT_LIMITS, ArchiveLimits, ArchiveRejected
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.qualification import qualification_progress, reported_names
from septet_platform.bots.quota import StorageQuotaExceeded
from septet_platform.bots.selectors import bot_get, bot_versions_for, bots_list, unknown_bot_message
from septet_platform.bots.services import BotNameTaken
from septet_platform.challenges import selectors as challenge_reads
from septet_platform.challenges import services as challenge_services
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.selectors import ladder_get, ladder_standings, ladders_list, rating_changes
from septet_platform.live.bot_relay import BotConnection, bot_connection
from septet_platform.live.streams import batch_ends, read_batches, stream_key
from septet_platform.matches import live_selectors
from septet_platform.matches import selectors as match_selectors
from septet_platform.matches.models import Match
from septet_platform.submissions import services as submission_services
from septet_platform.tournaments import messages as tournament_messages
from septet_platform.tournaments import selectors as tournament_selectors
from septet_platform.tournaments import services as tournament_services
from septet_platform.tournaments.models import Tournament

FOLLOW_POLL_SECONDS = 0.5
LIVE_WAIT_MILLISECONDS = 1_000
"""How long FollowMatch waits on a playing match's live stream before it looks at its status again."""
FOLLOW_DRAIN_SECONDS = 3.0
"""How long a match that is over is given to finish writing its live stream before the result."""
OVER = match_selectors.OVER


def _time(value: datetime | None) -> str:
    return value.isoformat() if value is not None else ""


def _ladder(ladder: Ladder) -> pb.Ladder:
    return pb.Ladder(
        game=ladder.game,
        min_players=ladder.min_players,
        max_players=ladder.max_players,
        decision_seconds=ladder.decision_seconds,
        bank_seconds=ladder.bank_seconds,
        active=ladder.active,
        seat_budget_seconds=ladder.seat_budget_seconds,
        max_match_seconds=ladder.max_match_seconds,
        pool=ladder.pool,
    )


def _bot(bot: Bot) -> pb.BotSummary:
    versions = sorted(bot.versions.all(), key=lambda version: version.number)
    latest = versions[-1] if versions else None
    connection = _connection(bot.pk) if bot.self_hosted else None
    return pb.BotSummary(
        name=bot.name,
        owner=bot.owner.get_username(),
        is_house=bot.is_house,
        latest_version=latest.number if latest else 0,
        latest_status=latest.status if latest else "",
        created=_time(bot.created),
        self_hosted=bot.self_hosted,
        connected=connection is not None,
        connected_since=(
            datetime.fromtimestamp(connection.since, tz=UTC).isoformat(timespec="seconds")
            if connection
            else ""
        ),
        answer_ms=(connection.answer_ms or 0.0) if connection else 0.0,
    )


def _connection(bot_id: int) -> BotConnection | None:
    """A self-hosted bot's connection now (None too while the relay's Redis is away)."""
    try:
        return bot_connection(bot_id)
    except redis.RedisError:
        return None


def _version(version: BotVersion, *, owner_sees: bool) -> pb.BotVersionInfo:
    progress = qualification_progress(version)
    names = reported_names(version)
    return pb.BotVersionInfo(
        number=version.number,
        status=version.status,
        archive_sha256=version.archive_sha256,
        games=list(version.manifest.get("games", [])),
        created=_time(version.created),
        qualified=_time(version.qualified),
        error_log=version.error_log if owner_sees else "",
        progress=None
        if progress is None
        else pb.QualificationProgress(
            step=progress.step,
            games=list(progress.games),
            games_over=progress.games_over,
            game=progress.game,
            games_failed=progress.games_failed,
        ),
        reported_name=names[0] if names else "",
        archive_pruned=version.archive_pruned is not None,
    )


def _match(
    match: Match,
    *,
    viewer: AbstractBaseUser | None,
    published: bool,
    changes: dict[tuple[int, int], int] | None = None,
) -> pb.MatchInfo:
    """The match as `viewer` may see it: the seed only once `published` (its duplicate set is
    over), forfeit reasons only of the viewer's own seats; each seat's rating change from
    `changes` (ladders.selectors.rating_changes)."""
    changes = changes or {}
    seats = sorted(match.seats.all(), key=lambda seat: seat.seat)
    owned = match_selectors.owned_seats(match, viewer)
    return pb.MatchInfo(
        id=match.pk,
        game=match.ladder.game,
        kind=match.kind,
        rated=match.rated,
        status=match.status,
        seed=match.seed if published else 0,
        duplicate_set=match.duplicate_set,
        rotation=match.rotation,
        created=_time(match.created),
        started=_time(match.started),
        finished=_time(match.finished),
        has_replay=bool(match.replay) and published,
        seats=[
            pb.SeatInfo(
                seat=seat.seat,
                bot=seat.bot_version.bot.name if seat.bot_version else seat.player.get_username(),
                version=seat.bot_version.number if seat.bot_version else 0,
                person=seat.bot_version is None,
                score=seat.score,
                rank=seat.rank,
                forfeit_status=seat.forfeit_status,
                forfeit_reason=seat.forfeit_reason if seat.seat in owned else "",
                rating_change=changes.get((match.pk, seat.bot_version_id)) if seat.bot_version_id else None,
            )
            for seat in seats
        ],
    )


def _one_match(match: Match) -> pb.MatchInfo:
    """One match as the current caller may see it."""
    return _match(
        match,
        viewer=current_user.get(),
        published=match_selectors.match_is_published(match),
        changes=rating_changes([match]),
    )


def _interval(interval: MeanInterval | None) -> pb.MeanInterval:
    if interval is None or interval.n == 0:
        return pb.MeanInterval()
    return pb.MeanInterval(mean=interval.mean, low=interval.low, high=interval.high, n=interval.n)


def _challenge(
    results: challenge_reads.ChallengeResults, *, viewer: AbstractBaseUser | None
) -> pb.ChallengeInfo:
    """A challenge with its results and its matches as `viewer` may see them (seeds and replays
    of published sets only, forfeit reasons of the viewer's seats only)."""
    challenge = results.challenge
    published = match_selectors.published_match_ids(results.matches)
    return pb.ChallengeInfo(
        id=challenge.pk,
        game=challenge.ladder.game,
        requester=challenge.requester.get_username(),
        challenger=challenge.challenger.bot.name,
        sets=challenge.sets,
        sets_over=results.sets_over,
        created=_time(challenge.created),
        results=[
            pb.ChallengeBotResult(
                bot=result.bot,
                version=result.version,
                rank=_interval(result.rank),
                score=_interval(result.score),
                rank_difference=_interval(result.rank_difference),
                forfeits=result.forfeits,
            )
            for result in results.results
        ],
        matches=[
            _match(match, viewer=viewer, published=match.pk in published)  # unrated: no changes
            for match in results.matches
        ],
    )


def _not_found(context: grpc.ServicerContext, error: Exception) -> NoReturn:
    context.abort(grpc.StatusCode.NOT_FOUND, str(error))
    raise AssertionError("unreachable")  # context.abort raises


class ArenaServicer(arena_pb2_grpc.ArenaServicer):
    """The Arena service over the platform's services and selectors."""

    def __init__(self, *, limits: ArchiveLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits

    def SubmitBot(
        self, request_iterator: Iterator[pb.SubmitBotChunk], context: grpc.ServicerContext
    ) -> pb.SubmitBotResponse:
        user = current_user.get()
        assert user is not None  # the interceptor refuses anonymous submissions
        try:
            submission_services.submission_rate_check(owner=user)  # before reading the upload: cheap refusal
        except submission_services.SubmissionsExhausted as error:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
        archive = bytearray()
        for chunk in request_iterator:
            archive += chunk.data
            if len(archive) > self.limits.max_archive_bytes:
                context.abort(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the archive passed the limit of {self.limits.max_archive_bytes} bytes",
                )
        if not archive:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no archive bytes were sent")
        try:
            version = submission_services.bot_submit(owner=user, archive=bytes(archive), limits=self.limits)
        except StorageQuotaExceeded as error:  # before ArchiveRejected, its base: a quota, not bad input
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
        except (ArchiveRejected, BotFolderError) as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except BotNameTaken as error:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, str(error))
        except submission_services.SubmissionsExhausted as error:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
        return pb.SubmitBotResponse(
            bot=version.bot.name,
            version=version.number,
            status=version.status,
            archive_sha256=version.archive_sha256,
        )

    def ListLadders(
        self, request: pb.ListLaddersRequest, context: grpc.ServicerContext
    ) -> pb.ListLaddersResponse:
        return pb.ListLaddersResponse(ladders=[_ladder(ladder) for ladder in ladders_list()])

    def GetLadder(self, request: pb.GetLadderRequest, context: grpc.ServicerContext) -> pb.GetLadderResponse:
        try:
            ladder = ladder_get(game=request.game, pool=request.pool or Ladder.Pool.SANDBOXED)
        except Ladder.DoesNotExist as error:
            _not_found(context, error)
        standings = [
            pb.Standing(
                rank=row.rank,
                bot=row.bot,
                owner=row.owner,
                version=row.version,
                rating=row.rating,
                low=row.low,
                high=row.high,
                games=row.games,
                last_match=_time(row.last_match),
                mu=row.mu,
                sigma=row.sigma,
            )
            for row in ladder_standings(ladder=ladder)
        ]
        return pb.GetLadderResponse(ladder=_ladder(ladder), standings=standings)

    def ListBots(self, request: pb.ListBotsRequest, context: grpc.ServicerContext) -> pb.ListBotsResponse:
        return pb.ListBotsResponse(bots=[_bot(bot) for bot in bots_list(owner=request.owner)])

    def GetBot(self, request: pb.GetBotRequest, context: grpc.ServicerContext) -> pb.GetBotResponse:
        try:
            bot = bot_get(name=request.name)
        except Bot.DoesNotExist:
            _not_found(context, LookupError(unknown_bot_message(request.name)))
        user: AbstractBaseUser | None = current_user.get()
        owner_sees = user is not None and user.pk == bot.owner_id
        versions = [_version(version, owner_sees=owner_sees) for version in bot_versions_for(bot=bot)]
        return pb.GetBotResponse(bot=_bot(bot), versions=versions)

    def ListMatches(
        self, request: pb.ListMatchesRequest, context: grpc.ServicerContext
    ) -> pb.ListMatchesResponse:
        try:
            page, next_token = selectors.matches_page(
                bot=request.bot,
                game=request.game,
                page_size=request.page_size,
                page_token=request.page_token,
                status=request.status,
            )
        except selectors.BadPageRequest as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except ObjectDoesNotExist as error:
            _not_found(context, error)
        viewer = current_user.get()
        published = match_selectors.published_match_ids(page)
        changes = rating_changes(page)
        return pb.ListMatchesResponse(
            matches=[
                _match(match, viewer=viewer, published=match.pk in published, changes=changes)
                for match in page
            ],
            next_page_token=next_token,
        )

    def GetMatch(self, request: pb.GetMatchRequest, context: grpc.ServicerContext) -> pb.MatchInfo:
        try:
            return _one_match(match_selectors.match_get(match_id=request.match_id))
        except Match.DoesNotExist as error:
            _not_found(context, error)

    def GetReplay(
        self, request: pb.GetReplayRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.ReplayChunk]:
        try:
            match = match_selectors.match_get(match_id=request.match_id)
            data = match_selectors.replay_for_viewer(match=match, viewer=current_user.get())
        except (Match.DoesNotExist, FileNotFoundError) as error:
            _not_found(context, error)
        except match_selectors.ReplayUnpublished as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        except ReplayError as error:
            context.abort(grpc.StatusCode.DATA_LOSS, f"match {request.match_id}'s replay is damaged: {error}")
        close_old_connections()  # the rest is sending: no connection held while streaming
        for start in range(0, len(data), CHUNK):
            yield pb.ReplayChunk(data=data[start : start + CHUNK])

    def RequestChallenge(
        self, request: pb.RequestChallengeRequest, context: grpc.ServicerContext
    ) -> pb.RequestChallengeResponse:
        user = current_user.get()
        assert user is not None  # the interceptor refuses anonymous challenges
        seats = [(seat.bot, seat.version) for seat in request.seats]
        try:
            challenge = challenge_services.challenge_request(
                requester=user,
                game=request.game,
                seats=seats,
                seed=request.seed,
                sets=request.sets or 1,
            )
        except ObjectDoesNotExist as error:
            _not_found(context, error)
        except challenge_services.ChallengeInvalid as error:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except challenge_services.ChallengeRefused as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        except challenge_services.ChallengeNotYours as error:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, str(error))
        except challenge_services.ChallengesExhausted as error:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(error))
        match_ids = list(challenge.matches.order_by("id").values_list("id", flat=True))
        return pb.RequestChallengeResponse(
            match=_one_match(match_selectors.match_get(match_id=match_ids[0])),
            challenge_id=challenge.pk,
            match_ids=match_ids,
        )

    def GetChallenge(
        self, request: pb.GetChallengeRequest, context: grpc.ServicerContext
    ) -> pb.ChallengeInfo:
        try:
            challenge = challenge_reads.challenge_get(challenge_id=request.challenge_id)
        except ObjectDoesNotExist as error:
            _not_found(context, error)
        return _challenge(challenge_reads.challenge_results(challenge), viewer=current_user.get())

    def SetChallengesAccepted(
        self, request: pb.SetChallengesAcceptedRequest, context: grpc.ServicerContext
    ) -> pb.SetChallengesAcceptedResponse:
        user = current_user.get()
        assert user is not None  # the interceptor refuses anonymous calls
        try:
            bot = challenge_services.challenges_accepted_set(
                owner=user, bot=request.bot, accepts=request.accepts
            )
        except ObjectDoesNotExist as error:
            _not_found(context, error)
        except challenge_services.ChallengeNotYours as error:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, str(error))
        return pb.SetChallengesAcceptedResponse(bot=bot.name, accepts=bot.accepts_challenges)

    async def Connect(  # type: ignore[override]
        self, request_iterator: AsyncIterator[pb.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ConnectResponse]:
        """A self-hosted bot's connection (arena_api.connect); the token is scoped to the bot. A
        coroutine on the event loop, unlike every other method: a connected bot holds no thread."""
        token = current_token.get()
        assert token is not None and token.bot is not None  # the interceptor refused any other
        async with aclosing(ConnectSession(token.bot, context).run(request_iterator)) as responses:
            async for response in responses:
                yield response

    def FollowMatch(
        self, request: pb.FollowMatchRequest, context: grpc.ServicerContext
    ) -> Iterator[pb.MatchEvent]:
        """Status events while the match changes, and its public live stream's batches while it is
        played (none while a person still has to play its deal in another rotation); ended with
        DEADLINE_EXCEEDED once nothing has happened for settings.SEPTET_FOLLOW_IDLE_SECONDS, so a
        forgotten stream frees its slot."""
        last: tuple[str, int] | None = None
        changed_at = time.monotonic()
        after: dict[int, str] = {}
        while context.is_active():
            close_old_connections()
            try:
                match = match_selectors.match_get(match_id=request.match_id)
            except Match.DoesNotExist as error:
                _not_found(context, error)
            if (match.status, match.attempt) != last:
                last = (match.status, match.attempt)
                changed_at = time.monotonic()
                if match.status in OVER:  # the end of the live stream first, then the result
                    yield from self._live_batches(match, after, until_end=True)
                yield pb.MatchEvent(status=match.status, attempt=match.attempt, match=_one_match(match))
            if match.status in OVER:
                return
            batches = list(self._live_batches(match, after, until_end=False))
            if batches:
                changed_at = time.monotonic()
                yield from batches
            idle = settings.SEPTET_FOLLOW_IDLE_SECONDS
            if time.monotonic() - changed_at >= idle:
                context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"match {request.match_id} has not changed for {idle:.0f} s; follow it again to go on",
                )
            if not batches and match.status != Match.Status.RUNNING:
                time.sleep(min(FOLLOW_POLL_SECONDS, idle))

    @staticmethod
    def _live_batches(match: Match, after: dict[int, str], *, until_end: bool) -> Iterator[pb.MatchEvent]:
        """The public live batches of the match's current attempt not sent yet (`after`: the last
        entry sent per attempt), waiting a moment for more; `until_end` drains the stream up to its
        `end` message (a few seconds at most). Nothing while the stream is held."""
        if match.status == Match.Status.SCHEDULED or live_selectors.held_reason(match):
            return
        key = stream_key(match.pk, match.attempt, None)
        deadline = time.monotonic() + (FOLLOW_DRAIN_SECONDS if until_end else 0)
        while True:
            try:
                entries = read_batches(key, after.get(match.attempt, "0-0"), block_ms=LIVE_WAIT_MILLISECONDS)
            except redis.RedisError:
                return
            for entry_id, batch in entries:
                after[match.attempt] = entry_id
                yield pb.MatchEvent(status=match.status, attempt=match.attempt, live_batch=batch)
                if until_end and batch_ends(batch):
                    return
            if not until_end or time.monotonic() >= deadline:
                return

    def ListTournaments(
        self, request: pb.ListTournamentsRequest, context: grpc.ServicerContext
    ) -> pb.ListTournamentsResponse:
        return pb.ListTournamentsResponse(
            tournaments=[
                tournament_messages.summary(tournament)
                for tournament in tournament_selectors.tournaments_list()
            ]
        )

    def GetTournament(
        self, request: pb.GetTournamentRequest, context: grpc.ServicerContext
    ) -> pb.GetTournamentResponse:
        try:
            tournament = tournament_selectors.tournaments_list().get(name=request.name)
        except Tournament.DoesNotExist:
            _not_found(context, LookupError(f"no tournament named {request.name!r}"))
        return tournament_messages.detail(tournament)

    def EnterTournament(
        self, request: pb.EnterTournamentRequest, context: grpc.ServicerContext
    ) -> pb.EnterTournamentResponse:
        user = current_user.get()
        assert user is not None  # the interceptor refuses anonymous entries
        try:
            tournament = tournament_selectors.tournaments_list().get(name=request.name)
            bot = bot_get(name=request.bot)
        except Tournament.DoesNotExist:
            _not_found(context, LookupError(f"no tournament named {request.name!r}"))
        except Bot.DoesNotExist:
            _not_found(context, LookupError(unknown_bot_message(request.bot)))
        if bot.owner_id != user.pk:
            context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"{bot.name} is not your bot: enter only bots you own"
            )
        try:
            tournament_services.entrant_add(tournament=tournament, user=user, bot=bot)
        except tournament_services.TournamentError as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        return pb.EnterTournamentResponse(tournament=tournament_messages.summary(tournament), bot=bot.name)

    def GetMatchLogs(
        self, request: pb.GetMatchLogsRequest, context: grpc.ServicerContext
    ) -> pb.GetMatchLogsResponse:
        try:
            match = match_selectors.match_get(match_id=request.match_id)
            logs = match_selectors.seat_logs_for_viewer(match=match, viewer=current_user.get())
        except Match.DoesNotExist as error:
            _not_found(context, error)
        except match_selectors.LogsNotYours as error:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, str(error))
        except match_selectors.ReplayUnpublished as error:
            context.abort(grpc.StatusCode.FAILED_PRECONDITION, str(error))
        return pb.GetMatchLogsResponse(
            match_id=match.pk,
            seats=[
                pb.SeatLog(
                    seat=log.seat,
                    bot=log.bot,
                    version=log.version,
                    forfeit_status=log.forfeit_status,
                    forfeit_reason=log.forfeit_reason,
                    forfeit_event=log.forfeit_event,
                    output=log.output,
                    truncated=log.truncated,
                )
                for log in logs
            ],
        )
