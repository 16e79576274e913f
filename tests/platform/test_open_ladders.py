"""The open ladders: where self-hosted bots are rated, apart from the sandboxed ladders.

Each game has two ladders. The sandboxed one never seats a self-hosted bot; the open one seats house
bots, sandboxed bots their owners entered, and self-hosted bots that are connected now and under
their daily limit, with one self-hosted bot at every table. Matches are scheduled by the real
matchmaking, played by the worker's own code with the self-hosted seat answered over a real Connect
stream (the Arena on a real socket, the relay on real Redis), and every check reads the rows.
"""

from __future__ import annotations

import itertools
import random
import threading
from collections.abc import Callable, Iterator

import grpc
import pytest
import redis
from bot_versions import tar_folder, version_from_archive
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from platform_support import EXAMPLES
from self_hosted_support import BotClient, play_seats

from referee.botkit.protocol import arena_pb2, arena_pb2_grpc
from referee.engine.games import all_games
from septet_platform.bots.models import Bot, BotVersion, ConnectionEvent
from septet_platform.bots.self_hosted import SelfHostedRefused, open_ladders_enter, self_hosted_bot_register
from septet_platform.challenges.services import ChallengesExhausted, challenge_request
from septet_platform.ladders.matchmaking import SELF_HOSTED_PENDING, matches_schedule
from septet_platform.ladders.models import Ladder, Rating, RatingChange
from septet_platform.ladders.services import ladders_ensure, ratings_apply_waiting
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat

GAMES = ["oh-hell", "oh7"]


@pytest.fixture
def owner(django_user_model: type) -> AbstractBaseUser:
    return django_user_model.objects.create_user("carol", password="pw-carol-123")


@pytest.fixture
def house(django_user_model: type) -> dict[str, BotVersion]:
    keeper = django_user_model.objects.create_user("house")
    return {
        name: version_from_archive(keeper, name, tar_folder(EXAMPLES / name), games=GAMES, is_house=True)
        for name in ("greedy", "random")
    }


@pytest.fixture
def sandboxed(django_user_model: type) -> dict[str, BotVersion]:
    """Two sandboxed bots of other owners: `entered` is on the open ladders, `stay-home` is not."""
    found = {}
    for name in ("entered", "stay-home"):
        user = django_user_model.objects.create_user(f"owner-of-{name}")
        found[name] = version_from_archive(user, name, tar_folder(EXAMPLES / "greedy"), games=GAMES)
    Bot.objects.filter(name="entered").update(open_ladders=True)
    return found


@pytest.fixture
def registered(owner: AbstractBaseUser, live_redis: redis.Redis) -> tuple[Bot, str]:
    return self_hosted_bot_register(owner=owner, name="carols-gpu-bot", games=GAMES)


@pytest.fixture
def ladders(db: None) -> dict[str, Ladder]:
    made = ladders_ensure()
    return {ladder.label: ladder for ladder in made}


@pytest.fixture
def bot_channel(arena_address: str) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(arena_address) as opened:
        yield opened


def _seated(matches: list[Match]) -> list[set[str]]:
    """The bots at each duplicate set's table, read back from the rows."""
    tables: dict[str, set[str]] = {}
    for seat in Seat.objects.filter(match__in=matches).select_related("bot_version__bot", "match"):
        tables.setdefault(seat.match.duplicate_set, set()).add(seat.bot_version.bot.name)
    return list(tables.values())


@pytest.mark.django_db
def test_every_game_gets_a_sandboxed_and_an_open_ladder_once() -> None:
    first = ladders_ensure()
    again = ladders_ensure()
    assert [ladder.pk for ladder in first] == [ladder.pk for ladder in again], "made once, then found"
    pairs = {(ladder.game, ladder.pool) for ladder in Ladder.objects.all()}
    assert pairs == {(game, pool) for game in all_games() for pool in ("sandboxed", "open")}
    assert Ladder.objects.get(game="oh-hell", pool="open").label == "oh-hell (open)"


@pytest.mark.django_db(transaction=True)
def test_the_open_ladder_seats_a_connected_self_hosted_bot_at_every_table_and_only_entered_bots(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    house: dict[str, BotVersion],
    sandboxed: dict[str, BotVersion],
    ladders: dict[str, Ladder],
) -> None:
    bot, token = registered
    open_ladder = ladders["oh-hell (open)"]
    assert matches_schedule(ladder=open_ladder, rng=random.Random(1), sets=3) == [], (
        "no self-hosted bot connected: the open ladder schedules nothing (house games are the "
        "sandboxed ladder's)"
    )
    client = BotClient(bot_channel, token)
    client.next()  # attached
    try:
        matches = matches_schedule(ladder=open_ladder, rng=random.Random(2), sets=10)
    finally:
        client.close()
    tables = _seated(matches)
    assert tables, "a connected self-hosted bot gets tables"
    assert all(bot.name in table for table in tables), tables
    seated = set().union(*tables)
    assert "stay-home" not in seated, "a sandboxed bot not entered never plays on the open ladder"
    assert seated <= {bot.name, "greedy", "random", "entered"}
    mine = Seat.objects.filter(match__in=matches, bot_version__bot=bot).count()
    assert mine <= SELF_HOSTED_PENDING + open_ladder.max_players - 1, (
        f"a self-hosted bot waits in {mine} matches at most a few tables past SELF_HOSTED_PENDING"
    )
    sandboxed_matches = matches_schedule(ladder=ladders["oh-hell"], rng=random.Random(3), sets=10)
    assert sandboxed_matches and bot.name not in set().union(*_seated(sandboxed_matches))


@pytest.mark.django_db(transaction=True)
def test_a_self_hosted_bot_past_its_daily_matches_is_not_seated_and_its_challenges_are_refused(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    owner: AbstractBaseUser,
    house: dict[str, BotVersion],
    ladders: dict[str, Ladder],
    settings: object,
) -> None:
    bot, token = registered
    settings.SEPTET_SELF_HOSTED_MATCHES_PER_DAY = 3  # type: ignore[attr-defined]
    client = BotClient(bot_channel, token)
    client.next()
    try:
        seats = [(bot.name, 0), ("greedy", 0), ("random", 0)]
        challenge_request(requester=owner, game="oh-hell", seats=seats)  # 3 matches: the day's all
        before = (Match.objects.count(), Seat.objects.count())
        with pytest.raises(ChallengesExhausted, match="self-hosted bot and has played its 3 matches"):
            challenge_request(requester=owner, game="oh-hell", seats=seats)
        assert matches_schedule(ladder=ladders["oh-hell (open)"], rng=random.Random(4), sets=2) == []
        assert (Match.objects.count(), Seat.objects.count()) == before, "refusals created nothing"
    finally:
        client.close()


@pytest.mark.django_db(transaction=True)
def test_an_open_ladder_set_is_played_rotation_after_rotation_and_rated_apart(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    house: dict[str, BotVersion],
    ladders: dict[str, Ladder],
    client: Client,
) -> None:
    """The self-hosted bot plays a whole duplicate set on the open ladder from its connection; the
    rotations never overlap (it could otherwise see the deal from two seats at once), and its
    rating and the house bots' change on the open ladder only."""
    bot, token = registered
    open_ladder = ladders["oh-hell (open)"]
    connected = BotClient(bot_channel, token)
    connected.next()
    stop, answered = threading.Event(), []
    player = threading.Thread(target=play_seats, args=(connected, stop, answered), daemon=True)
    player.start()
    try:
        matches = matches_schedule(ladder=open_ladder, rng=random.Random(5), sets=1)
        assert matches
        played = services.match_play_set(match_id=matches[0].pk, worker="t")
    finally:
        stop.set()
        connected.close()
    assert [each.outcome for each in played] == ["recorded"] * len(matches)
    rows = list(Match.objects.filter(pk__in=[m.pk for m in matches]).order_by("rotation"))
    assert all(row.status == Match.Status.FINISHED for row in rows)
    for earlier, later in itertools.pairwise(rows):
        assert earlier.finished is not None and later.started is not None
        assert later.started >= earlier.finished, "one rotation after another, never two at once"
    forfeits = Seat.objects.filter(match__in=rows).exclude(forfeit_status="")
    assert not forfeits.exists(), list(forfeits.values_list("forfeit_reason", flat=True))
    ratings_apply_waiting(ladder=open_ladder)
    changed = set(
        RatingChange.objects.filter(match__in=rows).values_list(
            "rating__ladder__pool", "rating__bot_version__bot__name"
        )
    )
    assert ("open", bot.name) in changed and all(pool == "open" for pool, _ in changed), changed
    assert not Rating.objects.filter(ladder=ladders["oh-hell"]).exists(), "the sandboxed ladder is untouched"
    results = client.get(f"/bots/{bot.name}/").content.decode()
    assert "<td>oh-hell (open)</td>" in results, "its page names the ladder its results came from"


@pytest.mark.django_db(transaction=True)
def test_the_owner_reads_the_connection_log_and_nobody_else_does(
    bot_channel: grpc.Channel,
    registered: tuple[Bot, str],
    owner: AbstractBaseUser,
    client: Client,
) -> None:
    bot, token = registered
    first = BotClient(bot_channel, token)
    first.next()
    second = BotClient(bot_channel, token)  # replaces the first
    second.next()
    assert first.status() == grpc.StatusCode.ABORTED
    second.close()
    assert second.status() == grpc.StatusCode.OK
    _wait(lambda: ConnectionEvent.objects.filter(bot=bot).count() >= 4)
    kinds = list(ConnectionEvent.objects.filter(bot=bot).order_by("at", "pk").values_list("kind", flat=True))
    assert sorted(kinds) == sorted(["connected", "connected", "replaced", "disconnected"]), kinds
    closed = ConnectionEvent.objects.filter(bot=bot, kind="disconnected").get()
    assert "closed its connection" in closed.detail
    page = client.get(f"/bots/{bot.name}/")
    assert "Connection log" not in page.content.decode(), "a visitor sees no connection log"
    client.force_login(owner)
    page = client.get(f"/bots/{bot.name}/")
    text = page.content.decode()
    assert "Connection log" in text and "replaced this one" in text and "Qualification logs" not in text


def _wait(condition: Callable[[], bool], seconds: float = 10.0) -> None:
    import time

    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.mark.django_db
def test_an_owner_enters_a_sandboxed_bot_on_the_open_ladders_and_nobody_else_can(
    sandboxed: dict[str, BotVersion],
    house: dict[str, BotVersion],
    django_user_model: type,
    client: Client,
) -> None:
    bot_owner = sandboxed["stay-home"].bot.owner
    stranger = django_user_model.objects.create_user("mallory")
    with pytest.raises(SelfHostedRefused, match="you have no bot called 'stay-home'"):
        open_ladders_enter(owner=stranger, bot_name="stay-home", entered=True)
    with pytest.raises(SelfHostedRefused, match="always plays on the open ladders"):
        open_ladders_enter(owner=house["greedy"].bot.owner, bot_name="greedy", entered=False)
    assert not Bot.objects.get(name="stay-home").open_ladders, "refusals changed nothing"
    client.force_login(stranger)
    client.post("/account/bots/stay-home/open-ladders/", {"entered": "1"})
    assert not Bot.objects.get(name="stay-home").open_ladders, "another user's post changed nothing"
    client.force_login(bot_owner)
    page = client.get("/account/bots/")
    assert "Enter the open ladders" in page.content.decode()
    response = client.post("/account/bots/stay-home/open-ladders/", {"entered": "1"}, follow=True)
    assert Bot.objects.get(name="stay-home").open_ladders
    assert "stay-home plays on the open ladders too" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_open_ladder_is_a_page_a_card_line_and_a_cli_flag(
    ladders: dict[str, Ladder],
    house: dict[str, BotVersion],
    client: Client,
    arena_address: str,
    septet: Callable[..., tuple[int, str, str]],
) -> None:
    page = client.get("/ladders/oh-hell/open/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "open ladder" in text and "/ladders/oh-hell/" in text
    assert client.get("/ladders/no-such-game/open/").status_code == 404
    assert "/ladders/oh-hell/open/" in client.get("/ladders/").content.decode()
    code, out, _ = septet("ladder", "oh-hell", "--open")
    assert code == 0 and "oh-hell (open)" in out
    code, out, _ = septet("ladder")
    assert code == 0 and "oh-hell (open)" in out and "oh7 (open)" in out
    with grpc.insecure_channel(arena_address) as channel:
        stub = arena_pb2_grpc.ArenaStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetLadder(arena_pb2.GetLadderRequest(game="oh-hell", pool="closed"))
    assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    assert "no ladder pool 'closed'" in (refused.value.details() or "")
