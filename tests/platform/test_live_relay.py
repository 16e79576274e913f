"""The live domain against a real Redis: a person's answers relayed to the worker (only a legal
answer to the pending decision, once), the worker's publisher, and the site's stream hub."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from typing import Any

import pytest
import redis

from referee.engine.games import get_game
from referee.engine.games.base import DecisionKind
from referee.engine.match import PlayerTimeout, Turn, play_match
from referee.engine.players import GreedyPlayer
from septet_platform.live.hub import StreamHub
from septet_platform.live.relay import AnswerOutcome, RemoteSeatPlayer, SeatKeys, seat_answer
from septet_platform.live.streams import MESSAGE_FIELD, LivePublisher, live_end, stream_key


def entries(client: redis.Redis, key: str) -> list[list[dict[str, Any]]]:
    return [json.loads(fields[MESSAGE_FIELD.encode()]) for _, fields in client.xrange(key)]


class Prompts:
    """Stands in for the publisher's seat stream: keeps each prompt the worker sends."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.arrived = threading.Event()

    def __call__(self, seat: int, message: dict[str, Any]) -> None:
        self.sent.append(message)
        self.arrived.set()


def asked(
    player: RemoteSeatPlayer, legal: tuple[Any, ...], *, seconds: float = 10.0
) -> tuple[threading.Thread, list[Any]]:
    """Asks `player` a decision on a thread; the list gets its answer (or the exception)."""
    out: list[Any] = []
    turn = Turn("m", "oh-hell", 1, DecisionKind.BID, seconds, 0.0)

    def ask() -> None:
        try:
            out.append(player.decide_turn(turn, None, legal))
        except Exception as error:
            out.append(error)

    thread = threading.Thread(target=ask)
    thread.start()
    return thread, out


def remote(prompts: Prompts, match_id: int = 7, seat: int = 1) -> RemoteSeatPlayer:
    return RemoteSeatPlayer(
        "alice", match_id=match_id, seat=seat, stream_key=stream_key(match_id, 1, seat), prompt=prompts
    )


def test_a_legal_answer_to_the_pending_decision_reaches_the_worker_once(live_redis: redis.Redis) -> None:
    prompts = Prompts()
    thread, out = asked(remote(prompts), (0, 1, 2, 3))
    assert prompts.arrived.wait(5)
    prompt = prompts.sent[0]
    assert prompt["kind"] == "bid" and prompt["legal"] == [0, 1, 2, 3]
    assert seat_answer(match_id=7, seat=1, decision=prompt["decision"], action=2) is AnswerOutcome.TAKEN
    thread.join(5)
    assert out == [2]
    # The same answer again (a double click, a replayed request): refused, nothing queued.
    assert seat_answer(match_id=7, seat=1, decision=prompt["decision"], action=2) is AnswerOutcome.ANSWERED
    assert live_redis.llen(SeatKeys(7, 1).answers) == 0
    assert [batch[0]["type"] for batch in entries(live_redis, stream_key(7, 1, 1))] == ["answered"]


@pytest.mark.parametrize(
    ("tried", "outcome"),
    [
        ("a bid it may not make (7 of 0-3)", AnswerOutcome.ILLEGAL),
        ("a bid as text", AnswerOutcome.ILLEGAL),
        ("true for a bid", AnswerOutcome.ILLEGAL),
        ("another decision's id", AnswerOutcome.STALE),
    ],
)
def test_a_bad_answer_is_refused_and_changes_nothing(
    live_redis: redis.Redis, tried: str, outcome: AnswerOutcome
) -> None:
    prompts = Prompts()
    thread, out = asked(remote(prompts), (0, 1, 2, 3), seconds=3.0)
    assert prompts.arrived.wait(5)
    decision = prompts.sent[0]["decision"]
    action: Any = {"a bid it may not make (7 of 0-3)": 7, "a bid as text": "2", "true for a bid": True}.get(
        tried, 1
    )
    quoted = "not-the-pending-one" if "another" in tried else decision
    assert seat_answer(match_id=7, seat=1, decision=quoted, action=action) is outcome
    assert live_redis.llen(SeatKeys(7, 1).answers) == 0
    assert not live_redis.exists(stream_key(7, 1, 1))  # no `answered` was written
    # The decision is still open: a legal answer is taken afterwards.
    assert seat_answer(match_id=7, seat=1, decision=decision, action=1) is AnswerOutcome.TAKEN
    thread.join(5)
    assert out == [1]


def test_no_decision_pending_and_a_late_answer_is_never_taken(live_redis: redis.Redis) -> None:
    assert seat_answer(match_id=7, seat=1, decision="x" * 16, action=1) is AnswerOutcome.NOT_ASKED
    prompts = Prompts()
    thread, out = asked(remote(prompts), (0, 1), seconds=0.5)
    thread.join(5)
    assert isinstance(out[0], PlayerTimeout)
    late = prompts.sent[0]["decision"]
    assert seat_answer(match_id=7, seat=1, decision=late, action=1) is AnswerOutcome.NOT_ASKED
    # An answer slipped in just before the timeout is dropped by the next decision, unread.
    live_redis.rpush(SeatKeys(7, 1).answers, json.dumps({"decision": late, "action": 0}))
    prompts.arrived.clear()
    thread, out = asked(remote(prompts), (0, 1), seconds=5.0)
    assert prompts.arrived.wait(5)
    current = prompts.sent[-1]["decision"]
    time.sleep(0.3)
    assert out == []  # the stale answer did not answer this decision
    assert seat_answer(match_id=7, seat=1, decision=current, action=1) is AnswerOutcome.TAKEN
    thread.join(5)
    assert out == [1]


def test_a_set_of_cards_answers_as_a_list(live_redis: redis.Redis) -> None:
    prompts = Prompts()
    thread, out = asked(remote(prompts), (("7D", "7H"), ("9C", "9S")))
    assert prompts.arrived.wait(5)
    decision = prompts.sent[0]["decision"]
    assert prompts.sent[0]["legal"] == [["7D", "7H"], ["9C", "9S"]]
    assert seat_answer(match_id=7, seat=1, decision=decision, action=["7H", "7D"]) is AnswerOutcome.ILLEGAL
    assert seat_answer(match_id=7, seat=1, decision=decision, action=["7D", "7H"]) is AnswerOutcome.TAKEN
    thread.join(5)
    assert out == [("7D", "7H")]


def published_match(live_redis: redis.Redis, client: Any = None) -> tuple[LivePublisher, Any]:
    game = get_game("oh-hell")
    header = {"format": "septet-replay/1", "game": "oh-hell", "options": {}, "seed": 99,
              "seats": [{"seat": s, "name": f"p{s}"} for s in range(3)], "time_control": None}  # fmt: skip
    kwargs = {} if client is None else {"client": client}
    publisher = LivePublisher(
        match_id=5, attempt=2, game=game, num_players=3, header=header, seats=[1], **kwargs
    )
    publisher.begin()
    players = [GreedyPlayer(game, name=f"p{s}") for s in range(3)]
    outcome = play_match(game, players, seed=99, observer=publisher)
    return publisher, outcome


def test_the_publisher_writes_each_audience_its_filtered_stream_in_order(live_redis: redis.Redis) -> None:
    publisher, outcome = published_match(live_redis)
    assert publisher.end(live_end(status="finished", replay=True))
    public = [message for batch in entries(live_redis, stream_key(5, 2, None)) for message in batch]
    seat = [message for batch in entries(live_redis, stream_key(5, 2, 1)) for message in batch]
    assert public[0]["type"] == "match" and public[0]["view"] == "public" and "seed" not in public[0]
    assert seat[0]["view"] == 1
    assert public[-1] == {"type": "end", "status": "finished", "reason": "", "replay": True}
    shown = [message for message in public if message["type"] not in ("match", "turn", "end")]
    played = [event for event in outcome.replay["events"] if event["type"] != "chance"]
    assert [message["type"] for message in shown] == [event["type"] for event in played]
    deals = [message for message in public if message["type"] == "deal"]
    assert deals and all(hand is None for deal in deals for hand in deal["hands"])
    own = [message for message in seat if message["type"] == "deal"]
    assert all(deal["hands"][1] is not None and deal["hands"][0] is None for deal in own)
    assert 0 < live_redis.ttl(stream_key(5, 2, None)) <= 3600


def test_a_publisher_without_redis_never_holds_the_match_up(live_redis: redis.Redis) -> None:
    away = redis.Redis(host="127.0.0.1", port=1, socket_timeout=0.2, socket_connect_timeout=0.2)
    started = time.monotonic()
    publisher, outcome = published_match(live_redis, client=lambda: away)
    played = time.monotonic() - started
    assert outcome.result.ranks is not None
    assert played < 3.0, f"a match took {played:.1f} s to play with its live Redis away"
    ended = time.monotonic()
    assert not publisher.end(live_end(status="finished"))
    assert time.monotonic() - ended < 8.0


def test_followers_get_every_batch_once_in_order_late_or_early(live_redis: redis.Redis) -> None:
    key = "septet:live:test:1:public"
    for number in range(3):
        live_redis.xadd(key, {MESSAGE_FIELD: json.dumps([{"n": number}])})

    async def follow(hub: StreamHub, after: str, count: int) -> list[tuple[str, int]]:
        seen = []
        async with hub.subscribe(key, after) as feed:
            while len(seen) < count:
                entry = await feed.next(10)
                assert entry is not None, f"nothing after {seen}"
                seen.append((entry[0], json.loads(entry[1])[0]["n"]))
        return seen

    async def scenario() -> tuple[list[Any], list[Any], list[Any]]:
        hub = StreamHub()
        early = asyncio.ensure_future(follow(hub, "0-0", 8))
        await asyncio.sleep(0.2)
        for number in range(3, 6):
            await asyncio.to_thread(live_redis.xadd, key, {MESSAGE_FIELD: json.dumps([{"n": number}])})
        late = asyncio.ensure_future(follow(hub, "0-0", 8))
        await asyncio.sleep(0.2)
        first = await asyncio.to_thread(lambda: live_redis.xrange(key, count=2)[1][0].decode())
        resumed = asyncio.ensure_future(follow(hub, first, 6))
        await asyncio.sleep(0.2)
        for number in range(6, 8):
            await asyncio.to_thread(live_redis.xadd, key, {MESSAGE_FIELD: json.dumps([{"n": number}])})
        done = await asyncio.wait_for(asyncio.gather(early, late, resumed), 10)
        assert len(hub.readers) <= 1  # one read of the stream for every follower
        await hub.close()
        return done[0], done[1], done[2]

    early, late, resumed = asyncio.run(scenario())
    assert [n for _, n in early] == list(range(8))
    assert [n for _, n in late] == list(range(8))
    assert [n for _, n in resumed] == list(range(2, 8))


def test_a_burst_of_viewers_joining_a_stream_looks_it_up_once(live_redis: redis.Redis) -> None:
    """Fifty viewers open the same stream at once (a popular match's page): one lookup of where the
    stream ends and one reader for all of them, and every one gets the stream so far and then
    what is added next."""
    from septet_platform.live.connection import live_redis_async

    key = "septet:live:test:2:public"
    live_redis.xadd(key, {MESSAGE_FIELD: json.dumps([{"n": 0}])})
    lookups: list[str] = []

    class Counting:
        def __init__(self) -> None:
            self.client = live_redis_async()

        def __getattr__(self, name: str) -> Any:
            if name == "xrevrange":
                lookups.append(name)
            return getattr(self.client, name)

    async def scenario() -> list[list[int]]:
        counting = Counting()
        hub = StreamHub(client=lambda: counting)  # type: ignore[arg-type,return-value]

        async def view() -> list[int]:
            seen = []
            async with hub.subscribe(key) as feed:
                while len(seen) < 2:
                    entry = await feed.next(10)
                    assert entry is not None
                    seen.append(int(json.loads(entry[1])[0]["n"]))
            return seen

        viewers = [asyncio.ensure_future(view()) for _ in range(50)]
        await asyncio.sleep(0.3)
        assert len(hub.readers) == 1
        await asyncio.to_thread(live_redis.xadd, key, {MESSAGE_FIELD: json.dumps([{"n": 1}])})
        got = await asyncio.wait_for(asyncio.gather(*viewers), 10)
        await hub.close()
        return got

    assert asyncio.run(scenario()) == [[0, 1]] * 50  # the stream so far, then what came next
    assert lookups == ["xrevrange"]
