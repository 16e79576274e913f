"""Live tables on the platform the README starts: a person plays a whole game of every game id
from Debian's chromium against house bots while a second browser spectates it, and a table whose
worker is killed ends with a message, never a hung page.

What the spectator's page was sent is recorded in the page itself (an init script wraps the
browser's EventSource; the record survives the page's reload into sessionStorage) and checked
against the game's full replay, fetched afterwards: no card appears in a message before the event
that makes it public. The check knows the rules of publicity itself (played, bet, turned up, the
trump card); it does not ask the filter it is checking.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from public_cards import kept_public, made_public, strings_in
from start_support import PageWatch, Platform, artifacts, sign_in

from referee.engine.cards import DECK_52
from referee.engine.games import oh7

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.xdist_group("start-command")]

SEATINGS = {
    "oh7": ["you", "greedy", "random", "half-greedy"],
    "oh7-advanced": ["greedy", "you", "random"],
    "oh7-duel": ["you", "greedy"],
    "oh-hell": ["random", "greedy", "you"],
    "black-sevens": ["you", "greedy", "random", "greedy"],
    "seven-up-seven-down": ["greedy", "you", "random"],
}
"""Who sits where (`you`: the person): house bots that answer at once, and the table sizes of
every game."""
GAME_SECONDS = 420
CARD_CODES = frozenset(DECK_52) | frozenset(oh7.VALUE)

RECORDER = """
(() => {
  const key = "septet-received";
  const Original = window.EventSource;
  if (!Original) { return; }
  window.EventSource = function (url, options) {
    const source = new Original(url, options);
    source.addEventListener("message", (event) => {
      const kept = JSON.parse(sessionStorage.getItem(key) || "[]");
      kept.push(event.data);
      sessionStorage.setItem(key, JSON.stringify(kept));
    });
    return source;
  };
  window.EventSource.prototype = Original.prototype;
})();
"""


@pytest.fixture
def pages(platform: Platform, browser: Any) -> Iterator[tuple[Any, Any, PageWatch, PageWatch]]:
    """The person's page at desktop width, signed in as demo, and a spectator's at phone width."""
    person = browser.new_context(viewport={"width": 1280, "height": 900})
    spectator = browser.new_context(viewport={"width": 390, "height": 844})
    spectator.add_init_script(RECORDER)
    try:
        mine, theirs = person.new_page(), spectator.new_page()
        watched = PageWatch(mine), PageWatch(theirs)
        sign_in(mine, platform.started.web, platform.password)
        yield mine, theirs, *watched
    finally:
        person.close()
        spectator.close()


def start_table(page: Any, web: str, game: str) -> str:
    """Starts a table through the site's form; the match page's address."""
    page.goto(f"http://{web}/tables/new/")
    page.select_option("select[name=game]", game)
    for number in range(7):
        seated = SEATINGS[game][number] if number < len(SEATINGS[game]) else ""
        page.select_option(f"select[name=seat_{number}]", seated)
    page.select_option("select[name=clock]", "quick")
    page.locator("form.stacked button[type=submit]").click()
    page.wait_for_url(re.compile(r".*/matches/\d+/$"), timeout=20_000)
    return str(page.url)


def play_to_the_end(page: Any, watch: PageWatch, *, reload_after: int) -> int:
    """Clicks the first legal choice whenever asked until the result line shows; reloads the page
    once after `reload_after` choices (the seat must be taken back: the reload itself cuts the
    page's open stream, which is not counted as a failed request). The number of choices made."""
    chosen, reloaded = 0, False
    deadline = time.monotonic() + GAME_SECONDS
    while time.monotonic() < deadline:
        if page.locator("#table-result").count():
            return chosen
        choice = page.locator("[data-role=choices] button[data-choice]:not([disabled])").first
        if choice.count():
            # Each answer's response is waited for to its last byte: a page reloaded, or moved on
            # from at the end, with an answer's body still in flight would cut it (a failed
            # request the watch counts; the headers alone were not enough, CI caught that once).
            with page.expect_response(
                lambda response: "/answer" in response.url, timeout=10_000
            ) as answer:
                choice.click(timeout=5_000)
            answer.value.finished()
            chosen += 1
            if chosen == reload_after and not reloaded:
                before = len(watch.problems)
                page.reload()
                page.wait_for_load_state("load")
                watch.problems[before:] = [
                    found for found in watch.problems[before:] if "/events" not in found
                ]
                reloaded = True
        else:
            page.wait_for_timeout(40)
    raise AssertionError(f"the game was not over within {GAME_SECONDS} s ({chosen} choices made)")


def received(page: Any) -> list[list[dict[str, Any]]]:
    """Every batch the page was sent, in order (recorded by RECORDER, across reloads)."""
    kept = json.loads(page.evaluate("sessionStorage.getItem('septet-received') || '[]'"))
    return [json.loads(data) for data in kept]


def check_nothing_shown_early(batches: list[list[dict[str, Any]]], replay: dict[str, Any]) -> int:
    """Walks the spectator's batches beside the full replay's events: every card a batch names must
    be public by the end of that batch (the messages of a batch become known at once), by the
    rules' account of publicity (tests/public_cards.py: played, bet with, turned up, the trump card,
    the last cards on a Black Sevens table), and no deal shows a hand. The events checked."""
    events = [event for event in replay["events"] if event["type"] != "chance"]
    public: set[str] = set()
    lasting: set[str] = set()
    position = checked = 0
    for batch in batches:
        for round_part in _split_at_deals(batch):
            for message in round_part:
                if message["type"] in ("match", "turn", "end", "prompt", "answered"):
                    continue
                while position < len(events) and not _same(message, events[position]):
                    position += 1  # a declined reveal (never sent to a spectator) is skipped
                assert position < len(events), (
                    f"the spectator was sent {message} that the game never had"
                )
                event = events[position]
                position += 1
                if message["type"] == "deal":
                    assert all(hand is None for hand in message["hands"]), (
                        f"a spectator was dealt a hand: {message}"
                    )
                    public = set(lasting)  # a new round: only what is shown from now on is public
                public |= made_public(event)
                if _names_a_card(event):
                    public.add(event["action"])
                lasting |= kept_public(event)
                checked += 1
            shown_early = (strings_in(round_part) & CARD_CODES) - public
            assert not shown_early, (
                f"{sorted(shown_early)} shown before they were public, in {round_part}"
            )
    return checked


def _split_at_deals(batch: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """A batch cut before each deal: the end of one round and the start of the next can arrive
    together, and a card public at the end of a round is not public in the next (each part is
    checked against what was public in its own round)."""
    parts: list[list[dict[str, Any]]] = [[]]
    for message in batch:
        if message["type"] == "deal" and parts[-1]:
            parts.append([])
        parts[-1].append(message)
    return parts


def _names_a_card(event: dict[str, Any]) -> bool:
    """A decision that puts one card on the table (a play or an Oh 7? bet): public as it is made."""
    return (
        event["type"] == "action"
        and isinstance(event["action"], str)
        and event.get("kind") in ("play", "bet")
    )


def _same(message: dict[str, Any], event: dict[str, Any]) -> bool:
    """Whether a spectator's message is the filtered form of this event of the full replay."""
    if message["type"] != event["type"]:
        return False
    if message["type"] == "action":
        return all(message.get(key) == event.get(key) for key in ("seat", "kind", "action"))
    return True


@pytest.mark.parametrize("game", sorted(SEATINGS))
def test_a_person_plays_a_whole_game_while_a_spectator_watches_it_move(
    platform: Platform, pages: tuple[Any, Any, PageWatch, PageWatch], game: str
) -> None:
    person, spectator, person_watch, spectator_watch = pages
    web = platform.started.web
    match_url = start_table(person, web, game)
    spectator.goto(match_url)
    spectator.wait_for_selector("[data-role=live]", timeout=30_000)
    steps_before = spectator.locator(".septet-viewer").get_attribute("data-steps")
    chosen = play_to_the_end(person, person_watch, reload_after=3)
    result = person.locator("#table-result").inner_text()
    assert re.search(r"You finished \d+\w\w( \(shared\))? of \d+ with -?\d+ points", result), result
    person.screenshot(path=str(artifacts() / f"table-{game}-1280.png"), full_page=True)
    # The spectator saw it move, then the page became the replay.
    spectator.wait_for_selector("#replay .septet-viewer.sv-ready", timeout=30_000)
    spectator.screenshot(path=str(artifacts() / f"table-{game}-spectator-390.png"), full_page=True)
    batches = received(spectator)
    kinds = [message["type"] for batch in batches for message in batch]
    assert kinds[0] == "match" and kinds.count("match") == 1 and kinds[-1] == "end"
    assert sum(1 for kind in kinds if kind in ("play", "bid", "bets")) > 5, (
        "the table moved on the spectator's page"
    )
    assert steps_before is not None
    assert len(batches) > 10, "the spectator's table moved batch by batch as the game was played"
    match_id = int(re.search(r"/matches/(\d+)/", match_url)[1])  # type: ignore[index]
    replay = _replay(web, match_id)
    assert check_nothing_shown_early(batches, replay) > 10
    assert chosen >= 3
    assert person_watch.problems == [] and spectator_watch.problems == []


def _replay(web: str, match_id: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://{web}/matches/{match_id}/replay.json", timeout=20) as response:
        document: dict[str, Any] = json.loads(response.read())
    return document


def test_a_table_whose_worker_is_killed_ends_with_a_message(
    platform: Platform, pages: tuple[Any, Any, PageWatch, PageWatch]
) -> None:
    """The tables worker is killed (SIGKILL, as the machine's kernel would) mid-game: its lease runs
    out, the reaper cancels the table saying why (it is not dealt again to someone who has seen the
    cards), and the person's page says so; the supervisor has meanwhile started a new worker."""
    person, _, person_watch, _ = pages
    web = platform.started.web
    match_url = start_table(person, web, "oh-hell")
    person.wait_for_selector("[data-role=choices] button[data-choice]", timeout=60_000)
    person.locator("[data-role=choices] button[data-choice]").first.click()
    os.kill(platform.started.children["tables"], signal.SIGKILL)
    person.wait_for_selector("#end-reason, [data-role=live-status]:has-text('stopped')", timeout=120_000)
    person.reload()
    assert "failure of the platform" in person.locator("#end-reason").inner_text()
    assert person.locator("#match-status").get_attribute("data-status") == "cancelled"
    person.screenshot(path=str(artifacts() / "table-voided-1280.png"), full_page=True)
    assert person_watch.problems == [] or all("/live/" in problem for problem in person_watch.problems), (
        person_watch.problems
    )
    assert match_url
