"""Lineup: one process per seat, never the same process for two rotations of one deal.

A bot that serves two seats sees both hands, and one kept across the rotations of a duplicate set
knows the deal before it is dealt: these tests start real bot processes that write down who they
are (their pid) and what they were told (seat, match id), and read it back.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from referee.engine.games import get_game
from referee.engine.match import TimeControl, new_match_id, play_match
from referee.tools.lineup import Lineup, parse_bot

WITNESS_BOT = '''
import json, os, sys
from referee.botkit.sdk import Bot, serve

class Witness(Bot):
    """Plays the first legal action; notes its pid with every seat and match it is told of."""

    name = "witness"

    def start_match(self, start):
        with open(sys.argv[1], "a") as notes:
            notes.write(json.dumps({"pid": os.getpid(), "seat": start.seat, "match": start.match_id}) + "\\n")

    def decide(self, info, legal):
        return legal[0]

serve(Witness())
'''


def _witness_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "witness"
    folder.mkdir()
    (folder / "bot.py").write_text(WITNESS_BOT)
    notes = tmp_path / "notes.jsonl"
    (folder / "septet-bot.toml").write_text(
        'name = "witness"\ngames = ["oh-hell"]\n'
        f'command = ["{sys.executable}", "bot.py", "{notes}", "--address", "{{address}}"]\n'
    )
    return folder, notes


def _notes(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_folder_seated_twice_plays_from_two_processes_and_rotations_never_share_one(
    tmp_path: Path,
) -> None:
    folder, notes = _witness_folder(tmp_path)
    game = get_game("oh-hell")
    spec = parse_bot(str(folder))
    seatings = [(0, 0, 1), (1, 0, 0), (0, 1, 0)]  # three rotations of one deal, then a new seed
    with Lineup([spec, parse_bot("random")], game) as lineup:
        for seating in seatings:
            players = lineup.players(seating, 7)
            play_match(game, players, seed=7, time_control=TimeControl(1.0, 5.0), match_id=new_match_id())
        players = lineup.players((0, 0, 1), 8)
        play_match(game, players, seed=8, time_control=TimeControl(1.0, 5.0), match_id=new_match_id())
    seen = _notes(notes)
    by_match: dict[object, list[dict[str, object]]] = {}
    for note in seen:
        by_match.setdefault(note["match"], []).append(note)
    assert len(by_match) == 4
    for match, seated in by_match.items():
        pids = [note["pid"] for note in seated]
        assert len(pids) == 2 == len(set(pids)), f"match {match}: two seats, two processes ({pids})"
    pids_of_seed_7 = [note["pid"] for match in list(by_match)[:3] for note in by_match[match]]
    assert len(set(pids_of_seed_7)) == 6, "no process plays two rotations of one deal"
    pids_of_seed_8 = {note["pid"] for note in by_match[list(by_match)[3]]}
    assert pids_of_seed_8 <= set(pids_of_seed_7), "a new seed reuses processes instead of starting more"


def test_a_series_of_one_seed_each_game_starts_each_seats_process_once(tmp_path: Path) -> None:
    folder, notes = _witness_folder(tmp_path)
    game = get_game("oh-hell")
    with Lineup([parse_bot(str(folder))], game) as lineup:
        for seed in range(4):
            players = lineup.players((0, 0, 0), seed)
            play_match(game, players, seed=seed, time_control=TimeControl(1.0, 5.0), match_id=new_match_id())
        assert lineup.started == 3
    assert len({note["pid"] for note in _notes(notes)}) == 3


def test_match_ids_are_random_and_say_nothing_of_the_seed() -> None:
    ids = [new_match_id() for _ in range(50)]
    assert len(set(ids)) == 50
    assert all(len(match_id) == 16 and int(match_id, 16) >= 0 for match_id in ids)


def test_septet_match_seats_a_folder_twice_as_two_processes_with_random_match_ids(tmp_path: Path) -> None:
    """Through the command a person types: a duplicate set of seed 42, the folder in two seats.
    With --no-sandbox: the witness writes its notes outside its folder and tells processes apart by
    pid, which a sandbox (a read-only folder, a pid namespace of its own) would not let it do; the
    seating it witnesses is the same either way (Lineup decides it)."""
    folder, notes = _witness_folder(tmp_path)
    septet = str(Path(sys.executable).with_name("septet"))
    words = [septet, "match", "--game", "oh-hell", "--games", "1", "--seed", "42", "--duplicate", "--json"]
    words.append("--no-sandbox")
    for _ in range(2):
        run = subprocess.run(
            [*words, str(folder), str(folder), "random"], capture_output=True, text=True, timeout=120
        )
        assert run.returncode == 0, run.stderr
    seen = _notes(notes)
    assert len(seen) == 2 * 3 * 2, "two runs, three rotations, two seats"
    assert len({note["pid"] for note in seen}) == 12, "every seat of every rotation is its own process"
    match_ids = {str(note["match"]) for note in seen}
    assert len(match_ids) == 6, "the same seed and rotation get a new id each run"
    assert not any("oh-hell" in match_id or "s42" in match_id for match_id in match_ids)


def test_a_duplicate_series_starts_processes_for_the_first_deal_only(tmp_path: Path) -> None:
    """Three rotations of each seed need three processes of a one-seat folder; the next seed's
    rotations reuse them (none of them has played it), so a long series starts no more."""
    folder, notes = _witness_folder(tmp_path)
    game = get_game("oh-hell")
    with Lineup([parse_bot(str(folder)), parse_bot("random")], game) as lineup:
        for seed in (1, 2):
            for seating in ((0, 1, 1), (1, 0, 1), (1, 1, 0)):
                players = lineup.players(seating, seed)
                play_match(
                    game, players, seed=seed, time_control=TimeControl(1.0, 5.0), match_id=new_match_id()
                )
        assert lineup.started == 3
    by_pid: dict[object, int] = {}
    for note in _notes(notes):
        by_pid[note["pid"]] = by_pid.get(note["pid"], 0) + 1
    assert sorted(by_pid.values()) == [2, 2, 2], "each process played one rotation of each seed"
