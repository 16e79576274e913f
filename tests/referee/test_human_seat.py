"""`human` in `septet match`: a person at the terminal plays a seat (referee.tools.human_seat).

Scripted input plays whole games through the command line; bad answers are refused with one
line and asked again; what the seat prints never holds a card it may not see yet (checked
against the replay the game wrote); end of input stops the series like Ctrl-C.
"""

from __future__ import annotations

import io
import random
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from public_cards import kept_public, made_public

from referee.engine import replay
from referee.engine.games import GAMES, get_game
from referee.engine.games.base import CHANCE, Action, DecisionKind
from referee.tools import cli
from referee.tools.human_seat import HumanSeat, LeftTheTable, Refused, parse_answer

ROOT = Path(__file__).resolve().parents[2]
ALWAYS_ANSWERS = "0\n1\n" * 4000
"""Answers every decision of every game: `0` is a bid (or, refused, no choice), `1` the first
legal action (or the bid 1 when 0 is the dealer's forbidden bid, R-2.2)."""

TABLES = {
    "oh7": ["human", "greedy", "random"],
    "oh7-advanced": ["human", "greedy", "random", "greedy"],
    "oh7-duel": ["human", "greedy"],
    "oh-hell": ["human", "greedy", "random"],
    "black-sevens": ["human", "greedy", "random", "greedy"],
    "seven-up-seven-down": ["human", "greedy", "random"],
}


def _septet(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, *words: str
) -> tuple[int, str, str]:
    """Runs `septet WORDS` in this process with `text` as its standard input."""
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    code = cli.main(list(words))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_every_game_id_has_a_table_here() -> None:
    assert set(TABLES) == set(GAMES)


@pytest.mark.parametrize("game_id", list(TABLES))
def test_scripted_input_plays_a_whole_game(
    game_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _septet(
        monkeypatch, capsys, ALWAYS_ANSWERS, "match", "--game", game_id, "--seed", "3",
        "--replays", str(tmp_path), *TABLES[game_id],
    )  # fmt: skip
    assert code == 0, err
    assert "=== game over" in out and "1 games from seed 3" in out
    (path,) = tmp_path.glob("*.json.gz")
    document = replay.load(path)
    replay.verify(document)
    assert document["forfeits"] == []
    assert [seat["name"] for seat in document["seats"]] == TABLES[game_id]
    assert "time_control" not in document["seats"][0], "the person is untimed"
    assert all("time_control" in seat for seat in document["seats"][1:]), "the bots keep theirs"
    _assert_no_hidden_card_printed(out, document)


def _deck(game_id: str) -> re.Pattern[str]:
    """Card codes as printed (Oh 7?'s `N` and `?` left out: they are also words of the text)."""
    if game_id.startswith("oh7"):
        return re.compile(r"(?<![\w*])(?:[0-7][SHCDF]|[1-4]\*)(?![\w*])")
    return re.compile(r"(?<!\w)[2-9TJQKA][SHDC](?!\w)")


def _assert_no_hidden_card_printed(out: str, document: dict[str, Any]) -> None:
    """Before each decision the person was asked, every card printed since that round's deal is
    its own (its hand, or in a 7Up7Down one-card round the others' cards) or was shown to the
    whole table by then. Checked against the replay: the omniscient record of the same game."""
    game_id = document["game"]
    seat = next(entry["seat"] for entry in document["seats"] if entry["name"] == "human")
    cards = _deck(game_id)
    title = get_game(game_id).title
    blocks = [match.start() for match in re.finditer(rf"^{re.escape(title)}, round ", out, re.M)]
    asked = [
        index
        for index, event in enumerate(document["events"])
        if event["type"] == "action" and event["seat"] == seat and not event.get("forced")
    ]
    assert len(blocks) == len(asked) > 0
    table: set[str] = set()  # Black Sevens: the last cards stay face up, out of the deck
    checked = 0
    for block, action_index in zip(blocks, asked, strict=True):
        public: set[str] = set()
        own: set[str] = set()
        for event in document["events"][:action_index]:
            if event["type"] == "chance":
                public = set(table)
            if event["type"] == "deal":
                blind = game_id == "seven-up-seven-down" and event.get("hand_size") == 1
                own = {
                    card
                    for other, hand in enumerate(event["hands"])
                    if (other == seat) is not blind
                    for card in hand
                }
            public |= made_public(event)
            if event["type"] == "round_end":
                table |= kept_public(event)
        end = out.index("\n> ", block)  # the block's own view, up to its first prompt
        round_start = out.rfind("--- round", 0, block)
        printed = set(cards.findall(out[round_start:end]))
        assert printed <= public | own, f"printed {sorted(printed - public - own)} before they were shown"
        checked += len(printed - own)
    assert checked > 0, "no card of another seat was printed: the check checked nothing"


def test_bad_answers_are_refused_with_one_line_and_asked_again() -> None:
    """A seat that must follow suit: an unknown card, a number out of range, a card it does not
    hold, a card it holds but may not play, an empty line, garbage; then a legal card."""
    game = get_game("oh-hell")
    state, seat = _following_suit(game)
    info = game.information_state(state, seat)
    legal = game.legal_actions(state, seat)
    not_held = next(card for card in ("AS", "AH", "AD", "AC", "KS", "KH") if card not in info.hand)
    illegal = next(card for card in info.hand if card not in legal)
    answers = ["ZZ", "99", not_held, illegal.lower(), "", "#$%!", f"{legal[-1]}"]
    output = io.StringIO()
    human = HumanSeat(stdin=io.StringIO("\n".join(answers) + "\n"), stdout=output)
    assert human.decide(info, legal) == legal[-1]
    lines = output.getvalue().splitlines()
    errors = [line for line in lines if line.startswith("  ! ")]
    assert errors == [
        f"  ! 'ZZ' is not a card: type a number from 1 to {len(legal)}, or the card, e.g. {legal[0]}",
        f"  ! there is no choice 99: type a number from 1 to {len(legal)}",
        f"  ! you do not hold {not_held}",
        f"  ! {illegal} is not yours to play now: you may play {' '.join(map(str, legal))}",
        f"  ! type a number from 1 to {len(legal)}, or the card, e.g. {legal[0]}",
        f"  ! '#$%!' is not a card: type a number from 1 to {len(legal)}, or the card, e.g. {legal[0]}",
    ]
    assert sum(1 for line in lines if line.startswith("> ")) == len(answers)


def _following_suit(game: Any) -> tuple[Any, int]:
    """A state of Oh Hell! where the seat to play holds a card it may not play (it must follow)."""
    state = game.start(3)
    state = game.apply(state, CHANCE, game.sample_chance(state, random.Random(1)))
    while True:
        decision = game.to_move(state)
        seat = decision.seats[0]
        legal = game.legal_actions(state, seat)
        if decision.kind is DecisionKind.PLAY and len(legal) < len(game.information_state(state, seat).hand):
            return state, seat
        state = game.apply(state, seat, legal[0])


@pytest.mark.parametrize(
    ("text", "legal", "hand", "expected"),
    [
        ("2", ("QS", "KS"), ("QS", "KS", "2H"), "KS"),
        ("ks", ("QS", "KS"), ("QS", "KS", "2H"), "KS"),
        ("10h", ("TH",), ("TH",), "TH"),
        ("3", (0, 1, 3, 4), (), 3),  # a bid is typed as itself
        ("y", (False, True), (), True),
        ("No", (False, True), (), False),
        ("1", (False, True), (), False),
        ("7d 7h", (("7D", "7H"), ("7H",)), ("7D", "7H", "9S"), ("7D", "7H")),
        ("n", ("N", "3S"), ("N", "3S", "?"), "N"),
        ("1*", ("1*", "3S"), ("1*", "3S"), "1*"),
    ],
)
def test_an_answer_is_a_number_or_the_action_itself(
    text: str, legal: tuple[Action, ...], hand: tuple[str, ...], expected: Action
) -> None:
    assert parse_answer(text, legal, hand) == expected


@pytest.mark.parametrize(
    ("text", "legal", "hand", "error"),
    [
        ("2", (0, 1, 3), (), "you may not bid 2 now: your bids are 0 1 3"),
        ("QS", (0, 1, 3), (), "type your bid, a number of tricks: 0 1 3"),
        ("maybe", (False, True), (), "type y to reveal the ? (or 2), n to keep it hidden (or 1)"),
        (
            "7D",
            (("7D", "7H"),),
            ("7D", "7H", "9S"),
            "7D is not a set you may play now: pick one of the 1 listed",
        ),
        ("QS KS", ("QS", "KS"), ("QS", "KS"), "play one card: type its number or its code"),
        ("0", ("QS",), ("QS",), "there is no choice 0: type a number from 1 to 1"),
    ],
)
def test_a_wrong_answer_says_why_in_one_line(
    text: str, legal: tuple[Action, ...], hand: tuple[str, ...], error: str
) -> None:
    with pytest.raises(Refused) as refused:
        parse_answer(text, legal, hand)
    assert str(refused.value) == error and "\n" not in error


def test_end_of_input_stops_the_series_like_an_interrupt(tmp_path: Path) -> None:
    """Run as a person would (the console script's module, input piped): exit code 130, the
    bots stopped, no traceback."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "referee.tools.cli",
            "match",
            "--game",
            "oh-hell",
            "--seed",
            "2",
            "human",
            "greedy",
            "greedy",
        ],
        input="1\nZZ\n",
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 130
    assert "(end of input: you leave the table)" in done.stdout
    assert "  ! 'ZZ' is not a card" in done.stdout
    assert done.stderr.strip().splitlines()[-1] == "septet: interrupted"
    assert "Traceback" not in done.stderr


def test_ctrl_c_at_the_prompt_stops_the_series(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Interrupted(io.StringIO):
        def readline(self, *args: Any) -> str:
            raise KeyboardInterrupt

    monkeypatch.setattr(sys, "stdin", Interrupted())
    assert cli.main(["match", "--game", "oh7", "--seed", "1", "human", "greedy", "greedy"]) == 130
    assert capsys.readouterr().err.strip() == "septet: interrupted"


def test_the_person_is_untimed_while_the_bots_keep_their_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Decision time and bank of 0.05 s: the person thinks 0.3 s over each of its first answers
    and does not forfeit."""

    class Slow(io.StringIO):
        slow = 2

        def readline(self, *args: Any) -> str:
            if self.slow:
                self.slow -= 1
                time.sleep(0.3)
            return super().readline(*args)

    monkeypatch.setattr(sys, "stdin", Slow(ALWAYS_ANSWERS))
    code = cli.main([
        "match", "--game", "oh7", "--seed", "4", "--decision-time", "0.05", "--bank", "0.05",
        "--replays", str(tmp_path), "human", "greedy", "greedy",
    ])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    (path,) = tmp_path.glob("*.json.gz")
    document = replay.load(path)
    assert document["forfeits"] == [] and document["time_control"] is None
    assert document["seats"][1]["time_control"]["per_decision"] == 0.05


def test_the_seating_rotates_and_the_person_moves_with_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _septet(
        monkeypatch, capsys, ALWAYS_ANSWERS, "match", "--game", "oh7-duel", "--games", "2", "--seed", "6",
        "human", "greedy",
    )  # fmt: skip
    assert code == 0, err
    assert "you are seat 0 (0: you, 1: greedy)" in out
    assert "you are seat 1 (0: greedy, 1: you)" in out
    assert "2 games from seed 6" in out


@pytest.mark.parametrize(
    ("words", "error"),
    [
        (["--game", "oh-hell", "human", "human", "greedy"], "human would sit in 2 seats"),
        (["--game", "oh-hell", "--players", "4", "human", "greedy"], "human would sit in 2 seats"),
        (["--game", "oh-hell", "--duplicate", "human", "greedy", "greedy"], "--duplicate deals each seed"),
        (["--game", "oh-hell", "--json", "human", "greedy", "greedy"], "--json is for scripts"),
    ],
)
def test_what_one_terminal_cannot_do_is_refused_in_one_line(
    words: list[str], error: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _septet(monkeypatch, capsys, "", "match", *words)
    assert code == 2
    assert err.startswith(f"septet: error: {error}") and err.count("\n") == 1
    assert out == ""


def test_check_and_compare_refuse_a_human(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for words in (
        ["check", "human", "--game", "oh-hell"],
        ["compare", "human", "greedy", "--game", "oh-hell"],
    ):
        code, _, err = _septet(monkeypatch, capsys, "", *words)
        assert code == 2
        assert err.strip() == "septet: error: human plays only in septet match (a person at the terminal)"


def test_leaving_raises_an_interrupt() -> None:
    human = HumanSeat(stdin=io.StringIO(""), stdout=io.StringIO())
    with pytest.raises(LeftTheTable) as left:
        human.decide(type("Info", (), {"hand": ("QS",)})(), ("QS", "KS"))
    assert isinstance(left.value, KeyboardInterrupt)
