"""House bots' processes kept warm between a worker's matches: reused for a new seed, never for a
seed they played, never for a submitted bot, dropped after a forfeit, idle ones stopped."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from bot_versions import tar_folder, version_from_archive
from platform_support import EXAMPLES, match_with

from septet_platform.bots.models import BotVersion
from septet_platform.matches import services
from septet_platform.matches.models import Match, Seat
from septet_platform.matches.warm import WarmHouseBots

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def warm_pool(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[WarmHouseBots]:
    """Warm house bots on, with a pool of this test's own, emptied (its processes stopped) after."""
    settings.SEPTET_WARM_HOUSE_BOTS = True
    pool = WarmHouseBots(idle_seconds=60)
    monkeypatch.setattr(services, "WARM_HOUSE_BOTS", pool)
    yield pool
    pool.stop_all()


def _versions(owner: Any, *, house: bool) -> list[BotVersion]:
    return [
        version_from_archive(
            owner, f"{name}-{'h' if house else 's'}", tar_folder(EXAMPLES / name), is_house=house
        )
        for name in ("random", "greedy", "half-greedy")
    ]


def _pids(pool: WarmHouseBots, versions: list[BotVersion]) -> dict[int, list[int]]:
    return {version.pk: [warm.bot.process.pid for warm in pool.idle(version.pk)] for version in versions}


def test_house_bots_are_reused_for_a_new_seed_but_never_for_a_seed_they_played(
    warm_pool: WarmHouseBots, django_user_model: Any
) -> None:
    house = _versions(django_user_model.objects.create_user("house"), house=True)

    assert (
        services.match_play(match_id=match_with("oh-hell", house, seed=1).pk, worker="w").outcome
        == "recorded"
    )
    first = _pids(warm_pool, house)
    services.match_play(match_id=match_with("oh-hell", house, seed=2).pk, worker="w")
    second = _pids(warm_pool, house)
    services.match_play(match_id=match_with("oh-hell", house, seed=1).pk, worker="w")  # a rotation again
    third = _pids(warm_pool, house)

    assert all(len(pids) == 1 for pids in first.values()), "one warm process per version after a match"
    assert second == first, "a new seed reuses the same processes"
    for version in house:
        assert first[version.pk][0] in third[version.pk] and len(third[version.pk]) == 2, (
            "seed 1 again needs a fresh process; the old one stays warm for other seeds"
        )
    assert all(match.status == Match.Status.FINISHED for match in Match.objects.all())
    assert all(seat.forfeit_status == "" for match in Match.objects.all() for seat in match.seats.all())


def test_submitted_bots_never_stay_warm_and_a_forfeiting_house_bot_is_dropped(
    warm_pool: WarmHouseBots, django_user_model: Any
) -> None:
    owner = django_user_model.objects.create_user("ada")
    submitted = _versions(owner, house=False)
    services.match_play(match_id=match_with("oh-hell", submitted, seed=3).pk, worker="w")
    assert all(warm_pool.idle(version.pk) == [] for version in submitted)

    house = _versions(django_user_model.objects.create_user("house"), house=True)
    services.match_play(match_id=match_with("oh-hell", house, seed=4).pk, worker="w")
    (crashing,) = warm_pool.idle(house[0].pk)
    crashing.bot.process.kill()  # dies while idle: the next match must not be handed a dead process
    crashing.bot.process.wait()
    played = services.match_play(match_id=match_with("oh-hell", house, seed=5).pk, worker="w")

    assert played.outcome == "recorded"
    match = Match.objects.get(pk=played.match_id)
    assert all(seat.forfeit_status == "" for seat in match.seats.all()), "a fresh process took its seat"
    assert [warm.bot.alive() for warm in warm_pool.idle(house[0].pk)] == [True]


def test_idle_processes_are_stopped_after_the_idle_time(django_user_model: Any, settings: Any) -> None:
    from referee.tools.botfolder import start_bot
    from septet_platform.matches.warm import WarmBot

    pool = WarmHouseBots(idle_seconds=0.0)
    bot = start_bot(EXAMPLES / "random")
    pool.give_back(1, WarmBot(bot, {7}))
    assert pool.take(1, 8) is None, "idle longer than idle_seconds: stopped, not handed out"
    assert not bot.alive()


def test_a_warm_process_keeps_the_referees_channel_for_its_life(
    warm_pool: WarmHouseBots, django_user_model: Any
) -> None:
    from referee.botkit.protocol import bot_pb2
    from referee.tools.grpc_player import GrpcPlayer

    house = _versions(django_user_model.objects.create_user("house"), house=True)
    services.match_play(match_id=match_with("oh-hell", house, seed=21).pk, worker="w")
    clients = {version.pk: [warm.player for warm in warm_pool.idle(version.pk)] for version in house}
    services.match_play(match_id=match_with("oh-hell", house, seed=22).pk, worker="w")
    again = {version.pk: [warm.player for warm in warm_pool.idle(version.pk)] for version in house}

    assert all(len(held) == 1 and isinstance(held[0], GrpcPlayer) for held in clients.values())
    assert all(again[pk][0] is clients[pk][0] for pk in clients), "the next match reuses the same channel"
    assert all(match.status == Match.Status.FINISHED for match in Match.objects.all())
    client = clients[house[0].pk][0]
    assert client is not None
    ended = bot_pb2.EndMatchRequest(match_id="none-under-way")
    client._stub.EndMatch(ended, timeout=5)  # the channel works between matches
    warm_pool.stop_all()
    with pytest.raises(ValueError, match="closed channel"):  # closed with its process
        client._stub.EndMatch(ended, timeout=5)


def test_warm_processes_taken_by_a_voided_match_are_stopped_with_their_channels(
    warm_pool: WarmHouseBots, django_user_model: Any
) -> None:
    """The match fails (ours: a version whose archive is gone) after its house seats took their warm
    processes and before any player was made: those processes stop and their channels close."""
    from bot_versions import version_row

    from referee.botkit.protocol import bot_pb2

    house = _versions(django_user_model.objects.create_user("house"), house=True)
    services.match_play(match_id=match_with("oh-hell", house, seed=31).pk, worker="w")
    taken = [warm_pool.idle(version.pk)[0] for version in house[:2]]
    missing = version_row("house", "archive-gone", is_house=True)  # its archive is not on disk

    played = services.match_play(
        match_id=match_with("oh-hell", [*house[:2], missing], seed=32).pk, worker="w"
    )

    assert played.outcome == "voided"
    assert all(not warm.bot.alive() for warm in taken)
    assert all(warm_pool.idle(version.pk) == [] for version in house[:2])
    for warm in taken:
        assert warm.player is not None
        with pytest.raises(ValueError, match="closed channel"):  # the player's own stub: grpcio crashes
            warm.player._stub.EndMatch(bot_pb2.EndMatchRequest(), timeout=5)  # making a new one on it


def test_at_a_table_with_a_person_each_warm_process_keeps_its_own_channel(
    warm_pool: WarmHouseBots, django_user_model: Any, live_redis: Any
) -> None:
    """A person in seat 0 (who forfeits on time here) and two house bots: every warm process goes
    back to the pool with the channel to itself, never another seat's (a process answering for two
    seats would see both hands)."""
    house = _versions(django_user_model.objects.create_user("house"), house=True)[:2]
    person = django_user_model.objects.create_user("alice")
    match = match_with("oh-hell", [house[0], house[0], house[1]], seed=31)
    Match.objects.filter(pk=match.pk).update(kind=Match.Kind.TABLE, rated=False)
    Seat.objects.filter(match=match, seat=0).update(
        bot_version=None, player=person, decision_seconds=0.05, bank_seconds=0.0
    )
    assert services.match_play(match_id=match.pk, worker="w").outcome == "recorded"
    kept = [warm for version in house for warm in warm_pool.idle(version.pk)]
    assert len(kept) == 2
    for warm in kept:
        assert warm.player is not None and warm.player.address == warm.bot.address, "its own channel"
