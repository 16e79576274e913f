"""`septet tournament list|standings|enter` against an Arena server running in this process: what
each prints, and a refusal as one line with exit code 1 and nothing stored."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from tournament_data import make_version

from septet_platform.accounts.services import api_token_create
from septet_platform.tournaments.models import Entrant, Tournament

pytestmark = pytest.mark.django_db(transaction=True)


def test_list_and_standings(septet: Callable, running_cup: Tournament) -> None:
    code, out, err = septet("tournament", "list")
    assert code == 0, err
    assert "cup" in out and "The Cup" in out and "round-robin" in out

    code, out, err = septet("tournament", "standings", "cup")
    assert code == 0, err
    assert "12 of 12 matches played" in out
    # a row starts with its place; a narrow terminal folds "tied with" onto lines of its own
    lines = [line for line in out.splitlines() if line.split() and line.split()[0].rstrip("=").isdigit()]
    assert [line.split()[1] for line in lines] == ["ann-bot", "ben-bot", "cat-bot", "dan-bot"]
    assert lines[0].split()[3] == "1.00"

    code, out, _ = septet("tournament", "standings", "cup", "--json")
    assert code == 0 and json.loads(out)["standings"][3]["bot"] == "dan-bot"


def test_enter_with_a_token_and_the_refusals(septet: Callable, open_cup: Tournament) -> None:
    version = make_version("ada", "ada-bot")
    make_version("bob", "bob-bot")
    _, token = api_token_create(user=version.bot.owner, name="cli")

    code, _, err = septet("tournament", "enter", "cup", "ada-bot")
    assert code == 2 and "entering needs an API token" in err
    code, _, err = septet("tournament", "enter", "cup", "bob-bot", token=token)
    assert code == 2 and err.strip() == "septet: error: bob-bot is not your bot: enter only bots you own"
    code, _, err = septet("tournament", "standings", "nope")
    assert code == 2 and err.strip() == "septet: error: no tournament named 'nope'"
    assert not Entrant.objects.exists()

    code, out, err = septet("tournament", "enter", "cup", "ada-bot", token=token)
    assert code == 0, err
    assert "ada-bot is entered in The Cup" in out
    assert list(Entrant.objects.values_list("bot__name", flat=True)) == ["ada-bot"]
