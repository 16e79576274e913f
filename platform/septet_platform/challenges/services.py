"""Challenge writes: a challenge's matches queued to run, within the requester's and the seated
bots' per-hour limits, and a bot's owner turning challenges against it on or off."""

from __future__ import annotations

import functools
import secrets
from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from septet_platform.accounts.limits import Limit
from septet_platform.accounts.models import CountedAction
from septet_platform.bots.models import Bot, BotVersion
from septet_platform.bots.selectors import unknown_bot_message
from septet_platform.bots.self_hosted import daily_limit, daily_room
from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder
from septet_platform.ladders.selectors import game_ladder, unknown_game_message
from septet_platform.live.bot_relay import bot_connection
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.tasks import match_run_task

SEED_BITS = 62
CHALLENGE_WINDOW = timedelta(hours=1)
CHALLENGE_QUEUE = "challenges"
"""Challenges run on a queue of their own (see settings.SEPTET_QUEUES and matches.queues)."""
MAX_CHALLENGE_SETS = 20
"""Duplicate sets one challenge may ask for: 20 sets give a mean rank to about +-0.3."""


class ChallengeInvalid(ValueError):
    """A challenge that cannot be played as asked; the message says why."""


class ChallengeNotYours(PermissionError):
    """A challenge seating none of the requester's own bots, or a switch of another user's bot."""


class ChallengeRefused(PermissionError):
    """A seated bot's owner turned challenges against it off."""


class ChallengesExhausted(Exception):
    """The requester, or a bot they seat, has used up its challenges for now; the message says
    which and when to try again."""


def challenge_request(
    *,
    requester: AbstractBaseUser,
    game: str,
    seats: Sequence[tuple[str, int]],
    seed: int = 0,
    sets: int = 1,
) -> Challenge:
    """An unrated challenge on `game`'s ladder: `sets` duplicate sets of the seating `seats`,
    each (bot name, version number; 0 for its latest ACTIVE version); the first of the
    requester's own bots seated is the challenger, whose results the challenge reports against
    the others. Each set has its own random seed and one CHALLENGE match per seat rotation; all
    are queued on the `challenges` queue once created, which workers serve with a larger share
    than the ladder's and a smaller one than qualification's and tournaments' (matches.queues).

    Ladder.DoesNotExist or Bot.DoesNotExist for an unknown game or bot; ChallengeInvalid for
    anything else wrong (a chosen seed among them: the challenger never picks the deal);
    ChallengeNotYours when none of the seated bots is the requester's; ChallengeRefused when a
    seated bot's owner turned challenges off; ChallengesExhausted past the requester's or a
    seated bot's hourly limits (requests, and matches: a request of N sets counts all its
    matches). A refused challenge creates, queues and counts nothing."""
    ladder = game_ladder(game)
    if ladder is None:
        raise Ladder.DoesNotExist(unknown_game_message(game))
    if not ladder.min_players <= len(seats) <= ladder.max_players:
        raise ChallengeInvalid(_seat_count_problem(ladder, len(seats)))
    if seed != 0:
        raise ChallengeInvalid(
            f"a challenge's seed is always random (a chosen deal is a known deal): send 0, not {seed}"
        )
    if not 1 <= sets <= MAX_CHALLENGE_SETS:
        raise ChallengeInvalid(f"a challenge plays 1-{MAX_CHALLENGE_SETS} duplicate sets, not {sets}")
    versions = [_active_version(name=name, number=number, game=game) for name, number in seats]
    targets = _challenge_targets(requester, versions)
    challenges_accepted_check(targets)
    match_count = sets * len(versions)
    with transaction.atomic():
        lock_counters(requester, targets)
        _challenge_limits_check(requester, targets, match_count)
        self_hosted_daily_check([version.bot for version in versions], match_count)
        challenger = next(version for version in versions if version.bot.owner_id == requester.pk)
        challenge = Challenge.objects.create(
            requester=requester, ladder=ladder, challenger=challenger, sets=sets
        )
        matches = [
            match
            for number in range(sets)
            for match in _challenge_set(challenge, versions, f"challenge-{challenge.pk}-{number + 1}")
        ]
        challenge.matches.add(*matches)
        _challenge_count(requester, targets, match_count)
        for match in matches:
            transaction.on_commit(functools.partial(challenge_match_enqueue, match.pk))
    return challenge


def _seat_count_problem(ladder: Ladder, seats: int) -> str:
    """Why `seats` bots cannot make a table of `ladder`, and how to: every bot named takes one
    seat (others' bots one at most), so a table of 3 needs a third bot named, a house bot say."""
    players = (
        str(ladder.min_players)
        if ladder.min_players == ladder.max_players
        else f"{ladder.min_players}-{ladder.max_players}"
    )
    problem = f"{ladder.game} is played by {players} seats, not {seats}: each bot named takes one seat"
    if seats < ladder.min_players:
        missing = ladder.min_players - seats
        return f"{problem}; name {missing} more (a house bot such as greedy or random, say)"
    return f"{problem}; name at most {ladder.max_players}"


def challenge_match_enqueue(match_id: int) -> None:
    """Sends one challenge match to the workers on the challenges queue (kept there by the router,
    matches.queues.route_task, when it is queued again)."""
    match_run_task.apply_async((match_id,), queue=CHALLENGE_QUEUE)


def _challenge_set(challenge: Challenge, versions: Sequence[BotVersion], name: str) -> list[Match]:
    """One duplicate set: a random seed, one match per rotation; in rotation r seat s holds
    versions[(s + r) % n], so every bot plays every seat of the same deal."""
    seed = secrets.randbits(SEED_BITS) or 1
    matches = []
    for rotation in range(len(versions)):
        match = Match.objects.create(
            ladder=challenge.ladder,
            kind=Match.Kind.CHALLENGE,
            rated=False,
            seed=seed,
            duplicate_set=name,
            rotation=rotation,
        )
        Seat.objects.bulk_create(
            Seat(match=match, seat=seat, bot_version=versions[(seat + rotation) % len(versions)])
            for seat in range(len(versions))
        )
        matches.append(match)
    return matches


def challenges_accepted_set(*, owner: AbstractBaseUser, bot: str, accepts: bool) -> Bot:
    """Turns challenges against `owner`'s bot named `bot` on or off (others' challenges seating
    it are refused while off; its owner's own still play). Bot.DoesNotExist for an unknown name,
    ChallengeNotYours for another user's bot (nothing changes)."""
    found = Bot.objects.filter(name=bot).first()
    if found is None:
        raise Bot.DoesNotExist(unknown_bot_message(bot))
    if found.owner_id != owner.pk:
        raise ChallengeNotYours(f"{bot} is not your bot: only its owner turns its challenges on or off")
    if found.accepts_challenges != accepts:
        found.accepts_challenges = accepts
        found.save(update_fields=["accepts_challenges"])
    return found


def challenges_accepted_check(targets: Sequence[Bot]) -> None:
    for bot in targets:
        if not bot.accepts_challenges:
            raise ChallengeRefused(f"{bot.name}'s owner does not accept challenges against it")


def challenges_by_user() -> Limit:
    """Challenges one user may request per hour (settings.SEPTET_CHALLENGES_PER_HOUR)."""
    return Limit("challenge:user", settings.SEPTET_CHALLENGES_PER_HOUR, CHALLENGE_WINDOW)


def challenge_matches_by_user() -> Limit:
    """Challenge matches one user may queue per hour (settings.SEPTET_CHALLENGE_MATCHES_PER_HOUR):
    a request of N sets at a table of k seats counts N x k, so --sets cannot multiply a request's
    cost past what the user may spend."""
    return Limit("challenge-matches:user", settings.SEPTET_CHALLENGE_MATCHES_PER_HOUR, CHALLENGE_WINDOW)


def challenges_of_bot() -> Limit:
    """Challenges that may seat one bot of someone else's per hour, whoever asks
    (settings.SEPTET_CHALLENGES_PER_BOT_PER_HOUR): many users cannot flood one bot either."""
    return Limit("challenge:bot", settings.SEPTET_CHALLENGES_PER_BOT_PER_HOUR, CHALLENGE_WINDOW)


def challenge_matches_of_bot() -> Limit:
    """Challenge matches that may seat one bot of someone else's per hour, whoever asks
    (settings.SEPTET_CHALLENGE_MATCHES_PER_BOT_PER_HOUR): many users' sets cannot flood it."""
    return Limit(
        "challenge-matches:bot", settings.SEPTET_CHALLENGE_MATCHES_PER_BOT_PER_HOUR, CHALLENGE_WINDOW
    )


def _challenge_targets(requester: AbstractBaseUser, versions: Sequence[BotVersion]) -> list[Bot]:
    """The seated bots of other owners (house bots included), each once; refuses a challenge
    seating none of the requester's bots, or another owner's bot in more than one seat."""
    bots = [version.bot for version in versions]
    if not any(bot.owner_id == requester.pk for bot in bots):
        raise ChallengeNotYours("a challenge must seat at least one of your own bots")
    return other_owners_bots(requester, bots, house_bots_count=True)


def other_owners_bots(
    requester: AbstractBaseUser, bots: Sequence[Bot], *, house_bots_count: bool
) -> list[Bot]:
    """The seated bots of other owners, each once, in id order (the order their rows are locked
    in); ChallengeInvalid for one seated twice. House bots count as others' unless
    `house_bots_count` is False (a person's table may seat them in any number of seats)."""
    others: dict[int, Bot] = {}
    for bot in bots:
        if bot.owner_id == requester.pk or (bot.is_house and not house_bots_count):
            continue
        if bot.pk in others:
            raise ChallengeInvalid(f"{bot.name} is not your bot: seat it once at most")
        others[bot.pk] = bot
    return sorted(others.values(), key=lambda bot: bot.pk)


def lock_counters(requester: AbstractBaseUser, targets: Sequence[Bot]) -> None:
    """Row locks on the requester and the target bots, in a fixed order, so concurrent
    challenges count one after another (check then record) and none slips past a limit."""
    get_user_model()._default_manager.select_for_update().filter(pk=requester.pk).exists()
    list(Bot.objects.select_for_update().filter(pk__in=[bot.pk for bot in targets]).order_by("pk"))


def _challenge_limits_check(requester: AbstractBaseUser, targets: Sequence[Bot], match_count: int) -> None:
    by_user = challenges_by_user()
    if by_user.exhausted(str(requester.pk)):
        raise ChallengesExhausted(
            f"challenge limit reached: {by_user.count} per hour per user; "
            f"try again in {by_user.wait_minutes(str(requester.pk))} min"
        )
    _matches_room_check(
        challenge_matches_by_user(), str(requester.pk), match_count, "per user", "(fewer --sets?)"
    )
    for bot in targets:
        bot_challenges_check(bot)
        _matches_room_check(challenge_matches_of_bot(), str(bot.pk), match_count, f"seating {bot.name}", "")


def bot_challenges_check(bot: Bot) -> None:
    """ChallengesExhausted when another owner's `bot` has been challenged (or seated at people's
    tables) its hourly count already, saying when it may be again."""
    of_bot = challenges_of_bot()
    if of_bot.exhausted(str(bot.pk)):
        raise ChallengesExhausted(
            f"{bot.name} has been challenged {of_bot.count} times in the last hour; "
            f"try again in {of_bot.wait_minutes(str(bot.pk))} min"
        )


def self_hosted_daily_check(bots: Sequence[Bot], match_count: int) -> None:
    """ChallengesExhausted when a self-hosted bot among `bots` has no room for `match_count` more
    matches in its rolling day (SEPTET_SELF_HOSTED_MATCHES_PER_DAY, as lichess caps a bot's
    games): the centre relays its every decision."""
    for bot in bots:
        room = daily_room(bot)
        if room < match_count:
            raise ChallengesExhausted(
                f"{bot.name} is a self-hosted bot and has played its {daily_limit()} matches of the "
                f"last 24 hours (room for {room} more, this needs {match_count}); try again later"
            )


def _matches_room_check(limit: Limit, key: str, match_count: int, whose: str, hint: str) -> None:
    """ChallengesExhausted unless `match_count` more matches fit in `limit` for `key`."""
    used = limit.used(key)
    if used + match_count <= limit.count:
        return
    needs = f"this challenge needs {match_count} {hint}".rstrip()
    wait = f"; try again in {limit.wait_minutes(key)} min" if used else ""
    raise ChallengesExhausted(
        f"challenge match limit: {limit.count} matches per hour {whose}, {used} used, {needs}{wait}"
    )


def _challenge_count(requester: AbstractBaseUser, targets: Sequence[Bot], match_count: int) -> None:
    """Records one request and its matches for the requester and for each target bot."""
    challenges_by_user().record(str(requester.pk))
    _record_matches(challenge_matches_by_user(), str(requester.pk), match_count)
    for bot in targets:
        challenges_of_bot().record(str(bot.pk))
        _record_matches(challenge_matches_of_bot(), str(bot.pk), match_count)


def _record_matches(limit: Limit, key: str, count: int) -> None:
    """`count` actions of `limit` for `key` now, in one insert (a request may queue 140 matches)."""
    now = timezone.now()
    CountedAction.objects.bulk_create(CountedAction(scope=limit.scope, key=key, at=now) for _ in range(count))


def _active_version(*, name: str, number: int, game: str) -> BotVersion:
    bot = Bot.objects.filter(name=name).first()
    if bot is None:
        raise Bot.DoesNotExist(unknown_bot_message(name))
    versions = BotVersion.objects.filter(bot=bot)
    if number < 0:
        raise ChallengeInvalid(f"version numbers start at 1 (0 for the latest active), not {number}")
    if number:
        version = versions.filter(number=number).first()
        if version is None:
            raise BotVersion.DoesNotExist(f"bot {name!r} has no version {number}")
        if version.status != BotVersion.Status.ACTIVE:
            raise ChallengeInvalid(f"{name} v{number} is {version.status}, not active")
    else:
        version = versions.filter(status=BotVersion.Status.ACTIVE).order_by("-number").first()
        if version is None:
            raise ChallengeInvalid(f"bot {name!r} has no active version")
    if game not in version.manifest.get("games", []):
        raise ChallengeInvalid(f"{name} v{version.number} does not play {game}")
    self_hosted_connected_check(bot)
    return version


def self_hosted_connected_check(bot: Bot) -> None:
    """ChallengeInvalid for a self-hosted bot that is not connected now (a match would only
    forfeit its seat on time): it is seated only while it is there to play."""
    if bot.self_hosted and bot_connection(bot.pk) is None:
        raise ChallengeInvalid(
            f"{bot.name} is a self-hosted bot and is not connected now: start it with "
            f"`septet bot connect` on its machine, then try again"
        )
