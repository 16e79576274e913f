"""The viewer on a live stream (docs/live.md, docs/replays.md "Watching a replay: the viewer"):
documents filtered per audience by referee.engine.live, appended as they are played, the LIVE
mark, clocks, and a person's decisions, in Debian's chromium.

Filtered documents of every game id are compared step by step with the omniscient replay: the
public never sees a card face up that is not public at that step; a seat sees exactly what the
full replay's view of that seat shows. Screenshots at desktop and phone size go to
$SEPTET_ARTIFACTS_DIR (default: var/artifacts/viewer/ in the repository).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_live import Asked, asked, filtered_document, live_batches, public_hands
from viewer_replays import make_replay, shown_events

from referee.engine.games import GAMES
from referee.tools.viewer import STATIC_DIR

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
GAME_IDS = list(GAMES)
ME = 1
"""The seat whose stream the seat tests read."""

PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>live viewer</title>
<style>body {{ margin: 0; padding: 16px; background: #e9ece8; }}
@media (max-width: 760px) {{ body {{ padding: 6px; }} }}</style>
<style>{css}</style></head>
<body><div id="a"></div><div id="b"></div><script>{js}</script></body></html>
"""

READ = """(id) => {
  const root = document.getElementById(id);
  const count = (node, selector) => node.querySelectorAll(selector).length;
  const text = (selector) => root.querySelector(selector) ? root.querySelector(selector).textContent : null;
  const seats = {};
  root.querySelectorAll('.sv-hand[data-role="hand"]').forEach((hand) => {
    seats[hand.dataset.seat] = {
      cards: [...hand.querySelectorAll('[data-card]')].map((card) => card.dataset.card).sort(),
      hidden: count(hand, '[data-hidden]'),
    };
  });
  const elsewhere = [...root.querySelectorAll('[data-card]')]
    .filter((card) => !card.closest('.sv-hand[data-role="hand"]'))
    .filter((card) => !card.classList.contains('sv-facedown-known'))
    .map((card) => card.dataset.card).sort();
  const up = root.querySelector('[data-role="dummy-up"]');
  const pile = root.querySelector('[data-role="pile"]');
  const discard = root.querySelector('[data-role="discard"]');
  return {
    step: Number(root.dataset.step), steps: Number(root.dataset.steps), perspective: root.dataset.perspective,
    seats, elsewhere,
    dummyUp: up ? [...up.querySelectorAll('[data-card]')].map((card) => card.dataset.card) : null,
    pile: pile ? [count(pile, '[data-card]'), count(pile, '[data-hidden]')] : null,
    discard: discard ? [count(discard, '[data-card]'), count(discard, '[data-hidden]')] : null,
    trick: [...root.querySelectorAll('[data-role="trick"] .sv-play')].map((play) =>
      [Number(play.dataset.seat), [...play.querySelectorAll('[data-card]')].map((c) => c.dataset.card)]),
    error: text('[data-role="error"]'),
    counter: text('[data-role="step"]'),
  };
}"""

EVERY_STEP = (
    "([id, perspective]) => { const viewer = document.getElementById(id).septetViewer; const read = "
    + READ
    + """;
  if (perspective !== null) viewer.setPerspective(perspective);
  const tables = [];
  for (let i = 0; i < viewer.model.steps.length; i++) { viewer.goTo(i); tables.push(read(id)); }
  return tables;
}"""
)
OPTION_VALUES = "options => options.map((option) => option.value)"


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("SEPTET_ARTIFACTS_DIR") or REPO / "var" / "artifacts" / "viewer")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def compact(value: Any) -> str:
    """An action as the viewer writes it in `data-choice` (JSON.stringify)."""
    return json.dumps(value, separators=(",", ":"))


@pytest.fixture(scope="module")
def page_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A page with the viewer's JS and CSS and two empty elements, #a and #b, opened from disk."""
    path = tmp_path_factory.mktemp("live-viewer") / "live.html"
    css = (STATIC_DIR / "viewer.css").read_text(encoding="utf-8")
    js = (STATIC_DIR / "viewer.js").read_text(encoding="utf-8")
    path.write_text(PAGE.format(css=css, js=js), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def replays() -> dict[str, dict[str, Any]]:
    return {game_id: make_replay(game_id) for game_id in GAME_IDS}


class Live:
    """The test page in the browser, with every JS error it raised."""

    def __init__(self, page: Any, path: Path) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.goto(path.as_uri())
        page.wait_for_function("window.SeptetViewer !== undefined")

    def mount(self, document: dict[str, Any], element: str = "a", live: bool = False) -> bool:
        return bool(
            self.page.evaluate(
                """([id, doc, live]) => { window.chosen = []; const root = document.getElementById(id);
                  return SeptetViewer.mount(root, doc, {hash: false, live: live}) !== null; }""",
                [element, document, live],
            )
        )

    def append(self, messages: Any, element: str = "a") -> Any:
        return self.page.evaluate(
            "([id, m]) => document.getElementById(id).septetViewer.append(m)", [element, messages]
        )

    def call(self, script: str, element: str = "a") -> Any:
        """`script` is a function of the viewer."""
        return self.page.evaluate(f"(id) => ({script})(document.getElementById(id).septetViewer)", element)

    def table(self, element: str = "a") -> dict[str, Any]:
        return dict(self.page.evaluate(READ, element))

    def every_step(self, element: str, perspective: str | None = None) -> list[dict[str, Any]]:
        return list(self.page.evaluate(EVERY_STEP, [element, perspective]))


@pytest.fixture
def live(page: Any, page_path: Path) -> Iterator[Live]:
    opened = Live(page, page_path)
    yield opened
    assert opened.errors == [], opened.errors


# Filtered documents of every game id --------------------------------------------------------------


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_public_stream_plays_to_the_end_and_never_shows_a_hidden_card(
    live: Live, replays: dict[str, dict[str, Any]], game_id: str
) -> None:
    replay = replays[game_id]
    public = filtered_document(replay, None)
    assert public["view"] == "public" and not any(event["type"] == "chance" for event in public["events"])
    assert live.mount(replay, "a") and live.mount(public, "b")
    assert live.page.evaluate("document.getElementById('b').dataset.perspective") == "public"
    options = live.page.eval_on_selector_all("#b [data-role='perspective'] option", OPTION_VALUES)
    assert options == ["public"], "nothing that pretends to show hidden cards"

    full = live.every_step("a", "all")
    shown = live.every_step("b")
    expected = public_hands(replay)
    assert len(shown) == len(full) == len(expected) == len(shown_events(replay)) + 1
    players = len(replay["seats"])
    for step, (mine, omniscient, hands) in enumerate(zip(shown, full, expected, strict=True)):
        assert mine["error"] is None
        for seat in range(players):
            cards, size = hands[seat]
            hand = mine["seats"][str(seat)]
            assert Counter(hand["cards"]) == cards, (step, seat, hand)
            assert len(hand["cards"]) + hand["hidden"] == size, (step, seat)
        assert mine["elsewhere"] == omniscient["elsewhere"], step  # the trick, bets, trump, Dummy's cards
        assert mine["trick"] == omniscient["trick"] and mine["dummyUp"] == omniscient["dummyUp"]
        if omniscient["pile"] is not None:
            assert mine["pile"] == [0, sum(omniscient["pile"])], "the Dummy's pile stays face down"
        if omniscient["discard"] is not None:
            assert mine["discard"] == [0, sum(omniscient["discard"])], "the discard stays face down"
    assert shown[-1]["counter"] == full[-1]["counter"]
    result = live.page.text_content("#b [data-role='result']") or ""
    for seat, name in enumerate(seat["name"] for seat in replay["seats"]):
        assert f"{name}: {replay['result']['scores'][seat]}" in result


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_seats_stream_shows_what_that_seat_sees_in_the_full_replay(
    live: Live, replays: dict[str, dict[str, Any]], game_id: str
) -> None:
    replay = replays[game_id]
    mine = filtered_document(replay, ME)
    assert live.mount(replay, "a") and live.mount(mine, "b")
    options = live.page.eval_on_selector_all("#b [data-role='perspective'] option", OPTION_VALUES)
    assert options == [str(ME)], "'all hands' would show nothing more"
    live.page.keyboard.press("a")  # the all-hands key does nothing here
    live.page.keyboard.press("1")
    assert live.table("b")["perspective"] == str(ME)

    full = live.every_step("a", str(ME))
    shown = live.every_step("b")
    assert len(shown) == len(full)
    for step, (seat_view, omniscient) in enumerate(zip(shown, full, strict=True)):
        assert seat_view == omniscient, step
    assert live.page.locator(f"#b .sv-seat.sv-me[data-seat='{ME}'] .sv-badge-you").count() == 1


def test_an_oh7_bet_card_shows_face_up_in_a_hidden_hand(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    """R-1.1: a card bet with is public for the round, also where the hand is not sent."""
    replay = replays["oh7"]
    assert live.mount(filtered_document(replay, None))
    bets_step = next(i for i, event in enumerate(shown_events(replay), 1) if event["type"] == "bets")
    live.call(f"v => v.goTo({bets_step})")
    bet = shown_events(replay)[bets_step - 1]["cards"][2]
    assert live.table()["seats"]["2"] == {"cards": [bet], "hidden": 6}
    live.call(f"v => v.goTo({bets_step - 1})")
    assert live.table()["seats"]["2"] == {"cards": [], "hidden": 7}


def test_a_blind_one_card_round_shows_a_seat_the_others_cards_and_its_own_face_down(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    """7Up7Down R-4.4, in the seat's own stream and in the public one."""
    replay = replays["seven-up-seven-down"]
    deal_step, deal = next(
        (i, event)
        for i, event in enumerate(shown_events(replay), 1)
        if event["type"] == "deal" and event["hand_size"] == 1
    )
    assert live.mount(filtered_document(replay, ME), "a") and live.mount(filtered_document(replay, None), "b")
    for element in ("a", "b"):
        live.call(f"v => v.goTo({deal_step})", element)
    seat_view, public = live.table("a"), live.table("b")
    for seat, hand in enumerate(deal["hands"]):
        assert public["seats"][str(seat)] == {"cards": [], "hidden": 1}
        expected = {"cards": [], "hidden": 1} if seat == ME else {"cards": hand, "hidden": 0}
        assert seat_view["seats"][str(seat)] == expected


# Live: appending as the match is played -----------------------------------------------------------


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_appending_as_played_reaches_the_table_of_the_whole_document(live: Live, game_id: str) -> None:
    """Each batch the worker sends (with its `turn` messages), then each event alone: the same
    table, step count and scores as the whole document mounted at once, the model read once."""
    audience = ME if game_id in ("oh7", "black-sevens") else None
    replay, batches = live_batches(game_id, audience)
    header = batches[0][0]
    whole = filtered_document(replay, audience)
    assert live.mount(whole, "b")
    live.call("v => v.goTo(v.model.steps.length - 1)", "b")
    expected = live.table("b")
    scores = live.page.inner_text("#b [data-role='scores']")

    assert live.mount({**header, "events": []}, "a", live=True)
    live.page.evaluate(
        """() => { const root = document.getElementById('a'); window.kept = {
             first: root.septetViewer.model.steps[0], scrubber: root.querySelector('[data-role="scrubber"]'),
             table: root.querySelector('[data-role="table"]') }; }"""
    )
    followed = live.page.evaluate(
        """(batches) => { const root = document.getElementById('a'); let ok = true;
             const v = root.septetViewer;
             for (const batch of batches) { if (!v.append(batch)) return 'refused';
               ok = ok && root.dataset.step === String(Number(root.dataset.steps) - 1); }
             return ok; }""",
        batches[1:],
    )
    assert followed is True, "a viewer at the latest step follows it"
    assert live.table("a") == expected
    assert live.page.inner_text("#a [data-role='scores']") == scores
    kept = live.page.evaluate(
        """() => { const root = document.getElementById('a');
             return [root.septetViewer.model.steps[0] === kept.first,
                     root.querySelector('[data-role="scrubber"]') === kept.scrubber,
                     root.querySelector('[data-role="table"]') === kept.table]; }"""
    )
    assert kept == [True, True, True], "the model grows and the page stays: nothing is read or built again"

    assert live.mount({**header, "events": []}, "a", live=True)
    one_by_one = live.page.evaluate(
        """(events) => { const v = document.getElementById('a').septetViewer;
             return events.every((event) => v.append(event)); }""",
        whole["events"],
    )
    assert one_by_one is True
    assert live.table("a") == expected


def test_a_viewer_moved_back_stays_there_and_offers_to_jump_to_live(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    whole = filtered_document(replays["oh-hell"], None)
    events = whole["events"]
    assert live.mount({**whole, "events": events[:60]}, live=True)
    last = live.table()["steps"] - 1
    assert live.table()["step"] == last, "a late joiner sees the table as it is now"
    assert not live.page.is_visible("[data-action='live']")
    live.page.select_option("[data-role='speed']", "2")
    live.call("v => v.goTo(3)")
    assert live.page.is_visible("[data-action='live']")
    live.append(events[60:80])
    table = live.table()
    assert table["step"] == 3 and table["steps"] > last + 1
    assert live.page.input_value("[data-role='speed']") == "2", "the controls keep their state"
    live.page.click("[data-action='live']")
    assert live.table()["step"] == live.table()["steps"] - 1
    assert not live.page.is_visible("[data-action='live']")
    live.append(events[80:90])
    assert live.table()["step"] == live.table()["steps"] - 1, "back at the latest step, it follows again"


def test_the_live_mark_shows_while_live_and_goes_when_the_match_ends(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    replay = replays["oh7-duel"]
    whole = filtered_document(replay, None)
    hostile = {
        **whole,
        "seats": [{"seat": 0, "name": "<img src=x onerror=window.pwned=1>"}, whole["seats"][1]],
    }
    assert live.mount({**hostile, "events": []}, live=True)
    mark = live.page.locator("[data-role='live']")
    assert mark.is_visible() and mark.inner_text().strip() == "LIVE"
    assert "live" in (mark.get_attribute("aria-label") or "").lower()
    assert live.page.text_content("[data-role='name']") == hostile["seats"][0]["name"]
    assert live.page.evaluate("window.pwned") is None
    # The live-only messages are handled or skipped, never an error.
    live_only = [
        {"type": "match", **{k: v for k, v in whole.items() if k not in ("type", "events")}},
        {
            "type": "turn",
            "kind": "bet",
            "seats": [{"seat": 0, "decision_seconds": None, "bank_seconds": None}],
        },
        {"type": "answered", "decision": "nothing asked"},
        {"type": "prompt", "decision": "x", "kind": "bet", "legal": ["3H"], "hand": ["3H"]},
        {"type": "from-a-newer-server"},
    ]
    assert live.append([whole["events"][:5], live_only]) is True
    assert live.table()["error"] is None
    assert live.page.locator("[data-role='choices'] button").count() == 0, (
        "no onChoose given: a prompt is not offered"
    )
    live.call("v => v.setLive(false)")
    assert mark.count() == 0
    live.call("v => v.setLive(true)")
    assert mark.count() == 1
    assert live.append(whole["events"][5:]) is True
    assert live.append({"type": "end", "status": "finished", "reason": "", "replay": True}) is True
    assert mark.count() == 0 and not live.page.is_visible("[data-role='end']")
    assert live.page.locator("[data-role='result']").count() == 1
    live.page.click("[data-action='first']")
    assert live.table()["step"] == 0, "an ordinary replay viewer of what it was sent"

    assert live.mount({**whole, "events": whole["events"][:20]}, live=True)
    live.append({"type": "end", "status": "voided", "reason": "the worker stopped", "replay": False})
    assert mark.count() == 0
    assert live.page.text_content("[data-role='end']") == "The match was voided: the worker stopped."


def test_a_broken_stream_says_so_in_place_of_the_table(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    whole = filtered_document(replays["oh-hell"], None)
    assert live.mount({**whole, "events": whole["events"][:3]}, live=True)
    live.page.evaluate("window.held = document.getElementById('a').septetViewer")
    trick = next(event for event in whole["events"] if event["type"] == "trick")
    assert live.append([{**trick, "plays": [[0, "2S"]]}]) is False
    assert "differs from the cards played" in (live.page.text_content("[data-role='error']") or "")
    held = live.page.evaluate("(events) => window.held.append(events)", whole["events"][3:6])
    assert held is False, "a page may still hold the viewer: it does nothing more"
    assert live.page.locator("[data-role='table']").count() == 0


# Clocks -------------------------------------------------------------------------------------------

START_S = 1_800_000_000


def test_a_turn_runs_the_asked_seats_clocks_until_their_action(
    page: Any, page_path: Path, replays: dict[str, dict[str, Any]]
) -> None:
    page.clock.install(time=START_S)
    live = Live(page, page_path)
    page.clock.pause_at(START_S + 10)
    whole = filtered_document(replays["oh-hell"], None)
    events = whole["events"]
    first_play = next(
        i for i, event in enumerate(events) if event["type"] == "action" and event["kind"] == "play"
    )
    seat = events[first_play]["seat"]
    other = (seat + 1) % len(whole["seats"])
    assert live.mount({**whole, "events": events[:first_play]}, live=True)
    live.append({"type": "turn", "kind": "play", "seats": [
        {"seat": seat, "decision_seconds": 1.0, "bank_seconds": 8.25},
        {"seat": other, "decision_seconds": None, "bank_seconds": None},
    ]})  # fmt: skip
    clock = page.locator(f".sv-seat[data-seat='{seat}'] [data-role='clock'][data-seat='{seat}']")
    assert clock.get_attribute("data-running") == "" and clock.get_attribute("data-phase") == "decision"
    assert page.locator(f".sv-seat.sv-to-play[data-seat='{seat}']").count() == 1
    assert "1.0s + bank 8.2s" in clock.inner_text() or "1.0s + bank 8.3s" in clock.inner_text()
    page.clock.run_for(600)
    assert "0.4s" in clock.inner_text()
    page.clock.run_for(1_000)
    assert clock.get_attribute("data-phase") == "bank"
    assert re.search(r"^bank 7\.[5-7]s$", clock.inner_text()), clock.inner_text()
    untimed = page.locator(f"[data-role='clock'][data-seat='{other}']")
    assert "thinking" in untimed.inner_text() and untimed.get_attribute("data-running") == ""
    page.clock.run_for(9_000)
    assert clock.get_attribute("data-phase") == "out"

    live.append(events[first_play : first_play + 2])  # the seat's action and its play
    assert clock.get_attribute("data-running") is None and clock.get_attribute("data-stopped") == ""
    stopped = clock.inner_text()
    page.clock.run_for(2_000)
    assert clock.inner_text() == stopped, "a stopped clock does not run"
    assert page.locator(f".sv-seat.sv-to-play[data-seat='{seat}']").count() == 0
    assert untimed.get_attribute("data-running") == "", "the other seat has not acted yet"
    live.call("v => v.goTo(1)")
    assert page.locator("[data-role='clock']").count() == 0, "an earlier table is not now"
    live.call("v => v.setLive(false)")
    live.call("v => v.goTo(v.model.steps.length - 1)")
    assert page.locator("[data-role='clock']").count() == 0
    assert live.errors == []


# A person's decisions -----------------------------------------------------------------------------


def _single(action: Any) -> bool:
    return isinstance(action, list) and len(action) == 1


def _bs_set(legal: list[Any]) -> bool:
    return any(isinstance(action, list) and len(action) > 1 for action in legal)


PROMPTS: dict[str, tuple[str, str, Any]] = {
    "oh-hell bid": ("oh-hell", "bid", None),
    "seven-up-seven-down bid": ("seven-up-seven-down", "bid", None),
    "oh7 bet": ("oh7", "bet", None),
    "oh7 play": ("oh7", "play", None),
    "oh7-duel play": ("oh7-duel", "play", None),
    "oh7-advanced reveal": ("oh7-advanced", "reveal", None),
    "black-sevens play": ("black-sevens", "play", _bs_set),
}


def _asked(replays: dict[str, dict[str, Any]], case: str) -> Asked:
    game_id, kind, want = PROMPTS[case]
    return asked(replays[game_id], kind, want) if want else asked(replays[game_id], kind)


def _mount_asked(live: Live, replays: dict[str, dict[str, Any]], moment: Asked, game_id: str) -> None:
    before = {**replays[game_id], "events": moment.before}
    assert live.mount(filtered_document(before, moment.seat), live=True)
    live.page.evaluate(
        "(prompt) => document.getElementById('a').septetViewer.prompt(prompt, (a) => window.chosen.push(a))",
        moment.prompt(),
    )


@pytest.mark.parametrize("case", list(PROMPTS))
def test_a_prompt_offers_the_legal_actions_and_calls_back_once(
    live: Live, replays: dict[str, dict[str, Any]], case: str
) -> None:
    game_id, kind, _ = PROMPTS[case]
    moment = _asked(replays, case)
    _mount_asked(live, replays, moment, game_id)
    page = live.page
    choices = page.locator("[data-role='choices']")
    assert choices.is_visible()
    buttons = choices.locator("button[data-choice]")
    assert buttons.evaluate_all("b => b.map((x) => x.dataset.choice)") == [compact(a) for a in moment.legal]
    assert page.locator("[data-role='choices'] [data-role='prompt-clock'][data-running]").count() == 1
    assert page.locator(f".sv-seat[data-seat='{moment.seat}'] [data-role='clock'][data-running]").count() == 1

    hand = page.locator(f".sv-hand[data-role='hand'][data-seat='{moment.seat}']")
    legal_cards = hand.locator("[data-legal]")
    singles = {a if isinstance(a, str) else a[0] for a in moment.legal if isinstance(a, str) or _single(a)}
    if kind in ("bet", "play") and singles:
        assert set(legal_cards.evaluate_all("c => c.map((x) => x.dataset.card)")) == singles
        dimmed = hand.locator(".sv-dimmed[data-card]").evaluate_all("c => c.map((x) => x.dataset.card)")
        assert sorted(dimmed) == sorted(card for card in moment.hand if card not in singles)
        assert legal_cards.evaluate_all("c => c.every((x) => x.tagName === 'BUTTON' && x.tabIndex === 0)")
        first = legal_cards.first
        card = first.get_attribute("data-card")
        expected = next(a for a in moment.legal if a == card or a == [card])
        first.click()
    else:
        assert legal_cards.count() == len(singles)
        if kind == "reveal":
            assert buttons.evaluate_all("b => b.map((x) => x.textContent)") == ["No", "Yes, reveal \u203d"]
        expected = moment.legal[-1]
        buttons.last.click()
    assert page.evaluate("window.chosen") == [expected]
    buttons.first.click(force=True)
    assert page.evaluate("window.chosen") == [expected], "called back once"
    assert buttons.evaluate_all("b => b.every((x) => x.disabled)")
    assert "Sent" in (page.text_content("[data-role='prompt-status']") or "")

    live.append({"type": "answered", "decision": "d-1"})
    assert not choices.is_visible() and hand.locator("[data-legal]").count() == 0
    assert page.locator("[data-role='choices'] button").count() == 0


def test_a_legal_card_is_chosen_with_the_keyboard_and_a_new_prompt_opens_again(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    moment = _asked(replays, "oh7 play")
    _mount_asked(live, replays, moment, "oh7")
    page = live.page
    legal = page.locator(f".sv-hand[data-seat='{moment.seat}'] [data-legal]")
    legal.last.focus()
    page.keyboard.press("Enter")
    card = legal.last.get_attribute("data-card")
    assert page.evaluate("window.chosen") == [card]
    assert live.table()["step"] == live.table()["steps"] - 1, "Enter on a card is not a viewer key"
    page.evaluate(
        "(p) => document.getElementById('a').septetViewer.prompt(p, (a) => window.chosen.push(a))",
        moment.prompt("d-2"),
    )
    assert page.locator("[data-role='choices'] button[data-choice]:not([disabled])").count() == len(
        moment.legal
    )
    assert live.call("v => v.currentPrompt().decision") == "d-2"
    live.call("v => v.clearPrompt()")
    assert live.call("v => v.currentPrompt()") is None
    assert not page.is_visible("[data-role='choices']")


def test_a_prompt_given_to_append_is_offered_with_the_mounts_on_choose(
    live: Live, replays: dict[str, dict[str, Any]]
) -> None:
    moment = _asked(replays, "oh-hell bid")
    before = filtered_document({**replays["oh-hell"], "events": moment.before}, moment.seat)
    live.page.evaluate(
        """(doc) => { window.chosen = []; SeptetViewer.mount(document.getElementById('a'), doc,
             {hash: false, live: true, onChoose: (a) => window.chosen.push(a)}); }""",
        {**before, "events": []},
    )
    live.append([before["events"], [{"type": "turn", "kind": "bid", "seats": [
        {"seat": moment.seat, "decision_seconds": 30, "bank_seconds": 120}]}, moment.prompt()]])  # fmt: skip
    live.page.click(f"[data-role='choices'] button[data-choice='{compact(moment.legal[0])}']")
    assert live.page.evaluate("window.chosen") == [moment.legal[0]]


# Desktop and phone --------------------------------------------------------------------------------

SCREENS = {
    "oh7-spectator": ("oh7", "play", None),
    "oh-hell-bid": ("oh-hell", "bid", None),
    "oh7-play": ("oh7", "play", None),
    "black-sevens-sets": ("black-sevens", "play", _bs_set),
}


@pytest.mark.parametrize("screen", list(SCREENS))
@pytest.mark.parametrize("width", [1280, 390])
def test_a_live_table_fits_a_desktop_and_a_phone(
    browser: Any, page_path: Path, replays: dict[str, dict[str, Any]], screen: str, width: int
) -> None:
    game_id, kind, want = SCREENS[screen]
    phone = width < 500
    context = browser.new_context(
        viewport={"width": width, "height": 844 if phone else 900}, is_mobile=phone, has_touch=phone
    )
    try:
        live = Live(context.new_page(), page_path)
        moment = asked(replays[game_id], kind, want) if want else asked(replays[game_id], kind)
        if screen.endswith("spectator"):
            before = {**replays[game_id], "events": moment.before}
            assert live.mount(filtered_document(before, None), live=True)
            live.append({"type": "turn", "kind": kind, "seats": [
                {"seat": moment.seat, "decision_seconds": 1.0, "bank_seconds": 8.25}]})  # fmt: skip
        else:
            _mount_asked(live, replays, moment, game_id)
            live.append({"type": "turn", "kind": kind, "seats": [
                {"seat": moment.seat, "decision_seconds": 30, "bank_seconds": 120}]})  # fmt: skip
        page = live.page
        page.screenshot(path=str(artifacts_dir() / f"live-{screen}-{width}.png"), full_page=True)
        assert page.evaluate("document.documentElement.scrollWidth") <= width, "nothing wider than the screen"
        for selector in ("[data-role='live']", "[data-role='clock']"):
            box = page.locator(selector).first.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width, selector
        targets = page.locator("[data-role='choices'] button, [data-legal], .sv-controls button")
        sizes = targets.evaluate_all(
            "b => b.map((x) => { const r = x.getBoundingClientRect(); return [r.width, r.height]; })"
        )
        if phone:
            small = [size for size in sizes if min(size) < 40]
            assert small == [], f"tap targets under 40 px: {small}"
            choices = page.locator("[data-role='choices']")
            if choices.is_visible():
                box = choices.bounding_box()
                assert box is not None and box["y"] + box["height"] <= 844 + 1, "the choices stay in sight"
        assert live.errors == []
    finally:
        context.close()
