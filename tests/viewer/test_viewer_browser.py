"""The replay viewer in Debian's chromium: every game id, the cards at a step against the engine,
a seat's view, permalinks, controls, hostile names, tampered documents and the server contract.

Standalone pages are opened from disk (file://), as `septet replay view` writes them; the
`data-replay-url` contract is tested against a real HTTP server on a free port. Screenshots of
every game go to $SEPTET_ARTIFACTS_DIR (default: var/artifacts/viewer/ in the repository).
"""

from __future__ import annotations

import copy
import functools
import http.server
import json
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from viewer_replays import Moment, engine_moments, make_replay, shown_events

from referee.engine.games import GAMES
from referee.tools.viewer import STATIC_DIR, build_page

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
GAME_IDS = list(GAMES)
HOSTILE_NAMES = ["<script>alert(1)</script>", '<img src=x onerror="window.pwned=1">', "&amp; \u2028 ok"]

READ_TABLE = """() => {
  const root = document.querySelector('.septet-viewer');
  const seats = {};
  root.querySelectorAll('.sv-hand[data-role="hand"]').forEach((hand) => {
    seats[hand.dataset.seat] = {
      cards: [...hand.querySelectorAll('[data-card]')].map((card) => card.dataset.card),
      hidden: hand.querySelectorAll('[data-hidden]').length,
    };
  });
  const up = root.querySelector('[data-role="dummy-up"]');
  const pile = root.querySelector('[data-role="pile"]');
  return {
    step: Number(root.dataset.step),
    perspective: root.dataset.perspective,
    seats,
    dummyUp: up ? [...up.querySelectorAll('[data-card]')].map((card) => card.dataset.card) : null,
    pileShown: pile ? pile.querySelectorAll('[data-card]').length : null,
    trick: [...root.querySelectorAll('[data-role="trick"] .sv-play')].map((play) =>
      [Number(play.dataset.seat), [...play.querySelectorAll('[data-card]')].map((c) => c.dataset.card)]),
    counter: root.querySelector('[data-role="step"]').textContent,
  };
}"""


def artifacts_dir() -> Path:
    folder = Path(os.environ.get("SEPTET_ARTIFACTS_DIR") or REPO / "var" / "artifacts" / "viewer")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], Path]]:
    """Game id -> (a real replay of it, its standalone page on disk)."""
    folder = tmp_path_factory.mktemp("viewer-pages")
    pages = {}
    for game_id in GAME_IDS:
        document = make_replay(game_id)
        path = folder / f"{game_id}.html"
        path.write_text(build_page(document), encoding="utf-8")
        pages[game_id] = (document, path)
    return pages


class Opened:
    """A viewer page in the browser, with every JS error and dialog it raised."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        page.on("pageerror", lambda error: self.errors.append(f"pageerror: {error}"))
        page.on("console", lambda message: message.type == "error" and self.errors.append(message.text))
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def open(self, url: str) -> Opened:
        self.page.goto(url)
        self.page.wait_for_selector(".septet-viewer.sv-ready, [data-role='error']")
        return self

    def go(self, step: int, perspective: str | int = "all") -> dict[str, Any]:
        self.page.evaluate(
            "([step, seat]) => { const v = document.querySelector('.septet-viewer').septetViewer;"
            " v.setPerspective(String(seat)); v.goTo(step); }",
            [step, perspective],
        )
        return self.table()

    def table(self) -> dict[str, Any]:
        return dict(self.page.evaluate(READ_TABLE))


def _open(page: Any, path: Path, fragment: str = "") -> Opened:
    return Opened(page).open(path.as_uri() + fragment)


def _sample(moments: list[Moment], count: int) -> list[Moment]:
    """`count` moments spread over the game, each inside a round."""
    inside = [moment for moment in moments if moment.round is not None]
    return [inside[i * (len(inside) - 1) // (count - 1)] for i in range(count)]


def _blind(game_id: str, moment: Moment) -> bool:
    return game_id == "seven-up-seven-down" and moment.info(game_id, 0).hand_size == 1


def _public_cards(game_id: str, moment: Moment, viewer_seat: int, other: int) -> Counter[str]:
    """The cards of `other` that `viewer_seat` may see (RULES.md §5): Oh 7?'s bet cards and a
    revealed Interrobang while still in the hand; nothing in the other games."""
    if not game_id.startswith("oh7"):
        return Counter()
    info = moment.info(game_id, viewer_seat)
    held = Counter(moment.hand(game_id, other))
    known = Counter(info.bet_cards[other]) + Counter(["?"] if info.revealer == other else [])
    return known & held


# Every game: all steps render, cards match the engine, screenshots -----------------------------


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_every_step_of_every_game_renders_without_errors(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]], game_id: str
) -> None:
    document, path = standalone[game_id]
    opened = _open(page, path)
    steps = int(page.get_attribute(".septet-viewer", "data-steps"))
    assert steps == len(shown_events(document)) + 1
    page.evaluate(
        """() => { const v = document.querySelector('.septet-viewer').septetViewer;
          for (const seat of ['all', '1']) { v.setPerspective(seat);
            for (let i = 0; i < v.model.steps.length; i++) v.goTo(i); } v.setPerspective('all'); }"""
    )
    end = opened.table()
    assert end["step"] == steps - 1 and end["counter"] == f"Step {steps - 1} / {steps - 1}"
    final = document["result"]
    result_text = page.text_content("[data-role='result']") or ""
    for seat, name in enumerate(seat["name"] for seat in document["seats"]):
        assert f"{name}: {final['scores'][seat]}" in result_text
    # The screenshot: the second round, in the middle of its second trick.
    page.evaluate(
        """() => { const v = document.querySelector('.septet-viewer').septetViewer;
          const round = v.model.rounds[Math.min(1, v.model.rounds.length - 1)];
          v.goTo(round.tricks[1] + 1); }"""
    )
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(artifacts_dir() / f"viewer-{game_id}.png"), full_page=True)
    assert opened.errors == [], opened.errors


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_the_cards_shown_are_the_hands_the_engine_deals_and_plays(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]], game_id: str
) -> None:
    document, path = standalone[game_id]
    opened = _open(page, path)
    players = len(document["seats"])
    for moment in _sample(engine_moments(document), 5):
        if _blind(game_id, moment):
            continue  # the engine's hand is empty there by design: its own test below
        table = opened.go(moment.step, "all")
        for seat in range(players):
            shown = table["seats"][str(seat)]
            assert sorted(shown["cards"]) == sorted(moment.hand(game_id, seat)), (moment.step, seat)
            assert shown["hidden"] == 0
        if game_id == "oh7-duel":
            assert sorted(table["dummyUp"]) == sorted(moment.info(game_id, 0).dummy_up)


@pytest.mark.parametrize("game_id", GAME_IDS)
def test_a_seats_view_shows_its_hand_and_hides_the_others(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]], game_id: str
) -> None:
    document, path = standalone[game_id]
    opened = _open(page, path)
    players = len(document["seats"])
    me = 1
    page.select_option("[data-role='perspective']", str(me))
    for moment in _sample(engine_moments(document), 5):
        if _blind(game_id, moment):
            continue
        table = opened.go(moment.step, me)
        assert table["perspective"] == str(me)
        assert sorted(table["seats"][str(me)]["cards"]) == sorted(moment.hand(game_id, me))
        for other in range(players):
            if other == me:
                continue
            shown = table["seats"][str(other)]
            assert Counter(shown["cards"]) == _public_cards(game_id, moment, me, other), (moment.step, other)
            assert len(shown["cards"]) + shown["hidden"] == len(moment.hand(game_id, other))
        if game_id == "oh7-duel":
            assert sorted(table["dummyUp"]) == sorted(moment.info(game_id, me).dummy_up), "face up: public"
            assert table["pileShown"] == 0, "the Dummy's pile stays face down"
    assert opened.errors == []


def test_a_redealt_round_shows_the_new_deal_and_stays_one_round(page: Any, tmp_path: Path) -> None:
    """Oh 7?: three bets summing to 7 redeal the round (seed 145 of the duel has one)."""
    document = make_replay("oh7-duel", 145)
    events = shown_events(document)
    redeal = next(i for i, event in enumerate(events, 1) if event["type"] == "redeal")
    path = tmp_path / "redeal.html"
    path.write_text(build_page(document), encoding="utf-8")
    opened = _open(page, path)
    after = next(m for m in engine_moments(document) if m.step > redeal)
    table = opened.go(after.step)
    for seat in range(2):
        assert sorted(table["seats"][str(seat)]["cards"]) == sorted(after.hand("oh7-duel", seat))
    rounds = {event["round"] for event in events if event["type"] == "deal"}
    assert page.locator("[data-role='seek-round'] option").count() == len(rounds)
    opened.go(redeal)
    assert "dealt again" in (page.text_content("[data-role='caption']") or "")
    assert opened.errors == []


def test_oh7_bet_cards_stay_visible_to_the_other_seats(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    """R-1.1: a card bet with is public for the round; the rest of the hand stays hidden."""
    document, path = standalone["oh7"]
    opened = _open(page, path)
    bets_step = next(i for i, event in enumerate(shown_events(document), 1) if event["type"] == "bets")
    table = opened.go(bets_step, 0)
    bet_card = shown_events(document)[bets_step - 1]["cards"][2]
    assert table["seats"]["2"]["cards"] == [bet_card]
    assert table["seats"]["2"]["hidden"] == 6


def test_blind_one_card_rounds_show_the_others_cards_but_not_ones_own(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    """7Up7Down R-4.4: the seat's own card is on its forehead; it sees everybody else's."""
    game_id = "seven-up-seven-down"
    document, path = standalone[game_id]
    opened = _open(page, path)
    players = len(document["seats"])
    moment = next(
        m
        for m in engine_moments(document)
        if _blind(game_id, m) and len(m.info(game_id, 2).visible_cards) == players - 1
    )
    info = moment.info(game_id, 2)
    table = opened.go(moment.step, 2)
    assert table["seats"]["2"] == {"cards": [], "hidden": 1}
    for other, card in info.visible_cards:
        assert table["seats"][str(other)] == {"cards": [card], "hidden": 0}


# Permalinks and controls -----------------------------------------------------------------------


def test_a_permalink_restores_the_moment_and_the_perspective(
    page: Any, browser: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    _, path = standalone["oh-hell"]
    opened = _open(page, path)
    opened.go(37)
    page.select_option("[data-role='perspective']", "2")
    href = page.get_attribute("[data-role='permalink']", "href")
    assert href == "#step=37&seat=2"
    page.wait_for_function("location.hash === '#step=37&seat=2'")  # the address bar follows the moment
    before = opened.table()

    context = browser.new_context()
    try:
        again = Opened(context.new_page()).open(path.as_uri() + href)
        assert again.table() == before
        again.page.evaluate("location.hash = '#step=5&seat=all'")
        again.page.wait_for_function("document.querySelector('.septet-viewer').dataset.step === '5'")
        assert again.table()["perspective"] == "all"
        assert again.errors == []
    finally:
        context.close()


@pytest.mark.parametrize("fragment", ["#step=999999&seat=9", "#step=-4&seat=x", "#step=abc", "#nonsense"])
def test_a_permalink_out_of_range_still_shows_a_moment(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]], fragment: str
) -> None:
    document, path = standalone["black-sevens"]
    opened = _open(page, path, fragment)
    table = opened.table()
    assert 0 <= table["step"] <= len(shown_events(document))
    assert table["perspective"] == "all"
    assert opened.errors == []


def test_the_address_bar_names_a_moment_only_once_one_is_chosen(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    """A page that embeds the viewer keeps its own address until the person moves the viewer."""
    _, path = standalone["oh7"]
    opened = _open(page, path)
    page.wait_for_timeout(400)
    assert page.evaluate("location.hash") == ""
    page.locator(".septet-viewer").focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function("location.hash === '#step=1&seat=all'")
    assert opened.errors == []


def test_mounting_a_newer_document_keeps_the_moment_and_follows_the_end(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    """A live match's page mounts each newer document in the same element."""
    document, path = standalone["oh-hell"]
    opened = _open(page, path)
    half = {**document, "events": document["events"][: len(document["events"]) // 2]}
    remount = "(doc) => SeptetViewer.mount(document.querySelector('.septet-viewer'), doc) !== null"
    assert page.evaluate(remount, half)
    half_last = len(shown_events(half))
    assert opened.go(10, 1)["step"] == 10
    assert page.evaluate(remount, half)
    assert opened.table()["step"] == 10 and opened.table()["perspective"] == "1"
    opened.go(half_last, 1)
    assert page.evaluate(remount, document)
    assert opened.table()["step"] == len(shown_events(document)), "at the end, it follows the end"
    assert opened.table()["perspective"] == "1"
    assert page.locator("[data-role='result']").count() == 1
    assert opened.errors == []


def test_controls_and_keyboard_move_through_the_replay(
    page: Any, standalone: dict[str, tuple[dict[str, Any], Path]]
) -> None:
    document, path = standalone["oh-hell"]
    opened = _open(page, path)
    last = len(shown_events(document))
    step = functools.partial(page.get_attribute, ".septet-viewer", "data-step")

    page.click("[data-action='forward']")
    page.click("[data-action='forward']")
    page.click("[data-action='back']")
    assert step() == "1"
    page.click("[data-action='last']")
    assert step() == str(last)
    page.click("[data-action='first']")
    assert step() == "0"

    page.select_option("[data-role='speed']", "8")
    page.click("[data-action='play']")
    page.wait_for_function("Number(document.querySelector('.septet-viewer').dataset.step) >= 3")
    page.click("[data-action='play']")
    paused = step()
    page.wait_for_timeout(400)
    assert step() == paused, "pause stops the playback"

    page.select_option("[data-role='seek-round']", "3")
    round_start = 1 + next(
        i for i, event in enumerate(shown_events(document)) if event["type"] == "deal" and event["round"] == 3
    )
    assert step() == str(round_start)
    page.select_option("[data-role='seek-trick']", "2")
    table = opened.table()
    assert len(table["trick"]) == 1, "a trick's first card"
    assert "Round 4 of 19, trick 3" in (page.text_content("[data-role='where']") or "")

    page.locator(".septet-viewer").focus()
    page.keyboard.press("Home")
    assert step() == "0"
    page.keyboard.press("ArrowRight")
    assert step() == "1"
    page.keyboard.press("ArrowDown")
    assert opened.table()["trick"] and len(opened.table()["trick"]) == 1
    page.keyboard.press("End")
    assert step() == str(last)
    page.keyboard.press("3")
    assert opened.table()["perspective"] == "2"
    page.keyboard.press("a")
    assert opened.table()["perspective"] == "all"
    page.keyboard.press("PageUp")
    assert page.text_content("[data-role='where']", timeout=1000).startswith("Round 19 of 19")
    page.keyboard.press("Space")
    page.wait_for_selector(".septet-viewer[data-playing]")
    page.keyboard.press("Space")
    assert page.get_attribute(".septet-viewer", "data-playing") is None
    assert opened.errors == []


def test_a_forfeit_shows_on_its_seat_from_the_moment_it_happens(page: Any, tmp_path: Path) -> None:
    document = make_replay("oh-hell", cheat_seat=2)
    path = tmp_path / "forfeit.html"
    path.write_text(build_page(document), encoding="utf-8")
    opened = _open(page, path)
    at = next(i for i, event in enumerate(shown_events(document), 1) if event["type"] == "forfeit")
    opened.go(at - 1)
    assert page.locator(".sv-seat[data-seat='2'] .sv-badge-forfeit").count() == 0
    opened.go(at)
    assert "INVALID" in (page.text_content(".sv-seat[data-seat='2'] .sv-badge-forfeit") or "")
    assert "forfeits" in (page.text_content("[data-role='caption']") or "")
    assert opened.errors == []


# Bad input ---------------------------------------------------------------------------------------


def test_hostile_names_render_as_text_and_never_run(page: Any, tmp_path: Path) -> None:
    document = make_replay("oh7")
    for seat, name in zip(document["seats"], HOSTILE_NAMES, strict=False):
        seat["name"] = name
    path = tmp_path / "hostile.html"
    path.write_text(build_page(document), encoding="utf-8")
    opened = _open(page, path)
    opened.go(len(shown_events(document)))
    shown = page.eval_on_selector_all("[data-role='name']", "nodes => nodes.map((n) => n.textContent)")
    assert shown[: len(HOSTILE_NAMES)] == HOSTILE_NAMES
    assert page.locator(".septet-viewer img, .septet-viewer script").count() == 0
    assert page.evaluate("window.pwned") is None
    assert HOSTILE_NAMES[0] in (page.text_content("[data-role='result']") or "")
    assert opened.dialogs == [] and opened.errors == []


def _first(document: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(event for event in document["events"] if event["type"] == kind)


def _swap_played_card(document: dict[str, Any]) -> None:
    play = _first(document, "play")
    deal = _first(document, "deal")
    other = next(card for card in deal["hands"][(play["seat"] + 1) % len(deal["hands"])])
    play["card"] = other


TAMPERS: dict[str, tuple[Callable[[dict[str, Any]], Any], str]] = {
    "card not in hand": (_swap_played_card, "which it does not hold"),
    "trick differs": (lambda d: _first(d, "trick")["plays"].reverse(), "differs from the cards played"),
    "bad card code": (lambda d: _first(d, "deal")["hands"][0].__setitem__(0, "ZZ"), "card codes"),
    "unknown format": (lambda d: d.__setitem__("format", "septet-replay/9"), "unsupported replay format"),
    "unknown game": (lambda d: d.__setitem__("game", "poker"), "unknown game id"),
    "events not a list": (lambda d: d.__setitem__("events", {"0": 1}), "events must be a list"),
    "an event not an object": (lambda d: d["events"].insert(3, "boom"), "event 3: not an event object"),
    "scores of the wrong length": (lambda d: _first(d, "round_end")["scores"].pop(), "scores must be"),
    "not an object": (lambda d: d.clear() or d.__setitem__("0", None), "unsupported replay format"),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_a_tampered_document_shows_an_error_inside_the_viewer(page: Any, tmp_path: Path, tamper: str) -> None:
    document = copy.deepcopy(make_replay("oh-hell"))
    change, expected = TAMPERS[tamper]
    change(document)
    path = tmp_path / "tampered.html"
    path.write_text(build_page(document), encoding="utf-8")
    opened = _open(page, path)
    error = page.text_content("[data-role='error']") or ""
    assert error.startswith("This replay cannot be shown.") and expected in error, error
    assert page.locator(".septet-viewer .sv-table").count() == 0
    assert opened.errors == [], "an error message, not a broken page"


def test_mount_refuses_text_that_is_not_json(page: Any) -> None:
    opened = Opened(page)
    page.set_content(f"<style>{(STATIC_DIR / 'viewer.css').read_text()}</style><div id=v></div>")
    page.add_script_tag(content=(STATIC_DIR / "viewer.js").read_text())
    assert page.evaluate("SeptetViewer.mount(document.getElementById('v'), '{not json') === null")
    assert "cannot be shown" in (page.text_content("[data-role='error']") or "")
    assert opened.errors == []


# The server contract: <div class="septet-viewer" data-replay-url="..."> ---------------------------


@pytest.fixture
def site(tmp_path: Path) -> Iterator[str]:
    """A real HTTP server on a free port: the viewer's static files, a page, and replays."""
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "septet-viewer").symlink_to(STATIC_DIR)
    matches = tmp_path / "matches"
    matches.mkdir()
    good = make_replay("oh7-duel")
    (matches / "42.json").write_text(json.dumps(good), encoding="utf-8")
    tampered = copy.deepcopy(good)
    _swap_played_card(tampered)
    (matches / "43.json").write_text(json.dumps(tampered), encoding="utf-8")
    (tmp_path / "favicon.ico").write_bytes(b"")
    for match in (42, 43, 44):
        (tmp_path / f"match-{match}.html").write_text(
            '<!DOCTYPE html><html><head><link rel="stylesheet" href="/static/septet-viewer/viewer.css">'
            '<script src="/static/septet-viewer/viewer.js"></script></head><body>'
            f'<div class="septet-viewer" data-replay-url="/matches/{match}.json"></div></body></html>',
            encoding="utf-8",
        )
    handler = functools.partial(_QuietHandler, directory=str(tmp_path))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_a_viewer_with_a_replay_url_fetches_and_mounts_it(page: Any, site: str) -> None:
    opened = Opened(page).open(f"{site}/match-42.html#step=20&seat=0")
    assert page.get_attribute(".septet-viewer", "data-game") == "oh7-duel"
    table = opened.table()
    assert table["step"] == 20 and table["perspective"] == "0"
    assert opened.errors == []


def test_a_replay_url_with_a_tampered_or_missing_document_shows_an_error(page: Any, site: str) -> None:
    Opened(page).open(f"{site}/match-43.html")
    assert "which it does not hold" in (page.text_content("[data-role='error']") or "")
    opened = Opened(page).open(f"{site}/match-44.html")
    assert "404" in (page.text_content("[data-role='error']") or "")
    assert [error for error in opened.errors if "404" not in error] == []
