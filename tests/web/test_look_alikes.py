"""Sign-ups that could pass for someone else, or come from many addresses of one caller, tried
through the real sign-up page: every refusal says why, and makes no account and counts nothing.

An audit, after its first address hit its sign-up limit, made `dеmo` (Cyrillic `е`) and `grееdy`
from a second loopback address; the ladder then showed `dеmo` beside the house bots' `demo`."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape

from septet_platform.accounts.models import CountedAction
from septet_platform.accounts.names import skeleton
from septet_platform.web.signin_limit import block_of

PASSWORD = "a-long-pass-phrase-9"


def _sign_up(name: str, address: str = "192.0.2.1") -> Any:
    return Client(REMOTE_ADDR=address).post(
        "/account/sign-up/", {"username": name, "password1": PASSWORD, "password2": PASSWORD}
    )


def _text(response: Any) -> str:
    return str(response.content.decode())


def _names() -> list[str]:
    return sorted(User.objects.values_list("username", flat=True))


@pytest.fixture
def demo_and_greedy(db: None, storage: Any) -> None:
    """The house bots' owner `demo` and a user `greedy`, as on a fresh platform."""
    User.objects.create_user("demo", password=PASSWORD)
    User.objects.create_user("greedy", password=PASSWORD)


# Look-alike user names ---------------------------------------------------------------------------

LOOK_ALIKES = {
    "`dеmo`, a Cyrillic е among Latin letters": ("d\u0435mo", "demo"),
    "`ԁеmо`, every letter Cyrillic but the m": ("\u0501\u0435m\u043e", "demo"),
    "`grееdy`, two Cyrillic е": ("gr\u0435\u0435dy", "greedy"),
}


@pytest.mark.parametrize("tried", list(LOOK_ALIKES))
def test_a_name_like_an_existing_users_is_refused_naming_it_and_makes_nothing(
    tried: str, demo_and_greedy: None
) -> None:
    name, existing = LOOK_ALIKES[tried]
    response = _sign_up(name)
    assert response.status_code == 200
    assert escape(f"is too like an existing name, '{existing}'") in _text(response)
    assert _names() == ["demo", "greedy"]
    assert not CountedAction.objects.exists(), "a refused sign-up counts against no limit"


def test_a_fullwidth_copy_is_normalised_and_refused_as_the_name_it_copies(demo_and_greedy: None) -> None:
    """Tried: `ｄｅｍｏ` in fullwidth letters: Django's NFKC normalisation makes it `demo`, taken."""
    response = _sign_up("\uff44\uff45\uff4d\uff4f")
    assert response.status_code == 200 and "A user with that username already exists" in _text(response)
    assert _names() == ["demo", "greedy"] and not CountedAction.objects.exists()


def test_a_mixed_script_name_is_refused_even_with_nothing_like_it(db: None, storage: Any) -> None:
    """Tried: `grееdy` on a site with no `greedy` yet (a name to squat before the bot exists)."""
    response = _sign_up("gr\u0435\u0435dy")
    assert response.status_code == 200
    assert "mixes letters of Cyrillic and Latin: use letters of one script" in _text(response)
    assert _names() == [] and not CountedAction.objects.exists()


@pytest.mark.parametrize(
    "name", ["\u042f\u0440\u043e\u0441\u043b\u0430\u0432", "\u5c0f\u660e", "carol_99", "dem0"]
)
def test_names_in_one_script_unlike_any_other_are_accepted(name: str, demo_and_greedy: None) -> None:
    assert _sign_up(name).status_code == 302
    assert name in _names()


def test_the_skeleton_sees_through_case_width_and_script() -> None:
    assert {skeleton(n) for n in ("demo", "DEMO", "d\u0435mo", "\uff44\uff45\uff4d\uff4f")} == {"demo"}
    assert skeleton("dem0") != skeleton("demo")


# Sign-ups per network block and per hour -----------------------------------------------------------


def test_sign_ups_from_many_addresses_of_one_block_are_held_to_its_allowance(
    db: None, storage: Any, settings: Any
) -> None:
    """Tried: one account from each of 127.0.0.1-127.0.0.6, each address under its own limit."""
    settings.SEPTET_SIGN_UPS_PER_ADDRESS = 3
    settings.SEPTET_SIGN_UPS_PER_BLOCK = 4

    made = [_sign_up(f"sock{n}", f"127.0.0.{n}").status_code for n in range(1, 7)]

    assert made == [302] * 4 + [200] * 2
    refused = _sign_up("sock9", "127.0.0.200")
    assert "Too many accounts were made from your network recently" in _text(refused)
    assert _names() == ["sock1", "sock2", "sock3", "sock4"]
    assert _sign_up("elsewhere", "127.0.1.1").status_code == 302, "another /24 has its own allowance"


def test_ipv6_sign_ups_are_counted_per_64(db: None, storage: Any, settings: Any) -> None:
    """Tried: accounts from ::1, ::2 and ::3 of one /64 with an allowance of 2 per block."""
    settings.SEPTET_SIGN_UPS_PER_BLOCK = 2

    made = [_sign_up(f"six{n}", f"2001:db8:0:7::{n}").status_code for n in range(1, 4)]

    assert made == [302, 302, 200]
    assert _names() == ["six1", "six2"]
    assert _sign_up("six9", "2001:db8:0:8::1").status_code == 302


def test_sign_ups_across_blocks_are_held_to_the_sites_hourly_total(
    db: None, storage: Any, settings: Any
) -> None:
    """Tried: one account from each of five different /24 blocks with a site total of 3."""
    settings.SEPTET_SIGN_UPS_PER_HOUR = 3

    made = [_sign_up(f"wide{n}", f"127.{n}.0.1").status_code for n in range(1, 6)]

    assert made == [302] * 3 + [200] * 2
    refused = _sign_up("wide9", "198.51.100.9")
    assert "Too many accounts were made on this site in the last hour" in _text(refused)
    assert _names() == ["wide1", "wide2", "wide3"]


@pytest.mark.parametrize(
    ("address", "block"),
    [
        ("127.0.0.5", "127.0.0.0/24"),
        ("192.0.2.77", "192.0.2.0/24"),
        ("2001:db8:0:7::1", "2001:db8:0:7::/64"),
        ("::ffff:192.0.2.9", "192.0.2.0/24"),
        ("", ""),
        ("not-an-address", "not-an-address"),
    ],
)
def test_block_of(address: str, block: str) -> None:
    assert block_of(address) == block
