"""Sign-in and sign-up limits, counted in the database (accounts.limits) so every site process
counts against one total.

Sign-in: after `SEPTET_SIGN_IN_ATTEMPTS` failures for one user name *from one client address*, or
`SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS` failures of any names from one address, within
`SEPTET_SIGN_IN_WINDOW` seconds, further attempts of that name from that address (or any from
that address) are refused before the password is checked. Failures are never counted against a
name alone: a stranger guessing someone's password locks out only the stranger's own address,
never the owner signing in from theirs. A successful sign-in clears that name's count at that
address.

Sign-up: at most `SEPTET_SIGN_UPS_PER_ADDRESS` new accounts per client address per
`SEPTET_SIGN_UP_WINDOW` seconds (per-user limits mean little if accounts are free), and none at
all when the organiser sets `SEPTET_SIGN_UP=closed` (accounts then come from the admin).

The address is REMOTE_ADDR: behind a proxy, the proxy (or the WSGI server) must set it to the
client's.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings

from septet_platform.accounts.limits import Limit


def _failures_of_name() -> Limit:
    window = timedelta(seconds=settings.SEPTET_SIGN_IN_WINDOW)
    return Limit("sign-in:name-at-address", settings.SEPTET_SIGN_IN_ATTEMPTS, window)


def _failures_of_address() -> Limit:
    window = timedelta(seconds=settings.SEPTET_SIGN_IN_WINDOW)
    return Limit("sign-in:address", settings.SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS, window)


def _sign_ups() -> Limit:
    window = timedelta(seconds=settings.SEPTET_SIGN_UP_WINDOW)
    return Limit("sign-up:address", settings.SEPTET_SIGN_UPS_PER_ADDRESS, window)


def _name_key(username: str, address: str) -> str:
    return f"{address} {username.strip().lower()}"


def sign_in_blocked(*, username: str, address: str) -> bool:
    """True when this name from this address, or this address, used up its failed attempts."""
    return _failures_of_address().exhausted(address) or _failures_of_name().exhausted(
        _name_key(username, address)
    )


def sign_in_failed(*, username: str, address: str) -> None:
    """Counts one failed attempt against the name at this address and against the address."""
    _failures_of_name().record(_name_key(username, address))
    _failures_of_address().record(address)


def sign_in_succeeded(*, username: str, address: str) -> None:
    """Forgets the name's failures at this address (the address keeps its count: it may be
    guessing other names)."""
    _failures_of_name().forget(_name_key(username, address))


def sign_up_open() -> bool:
    """False when the organiser closed sign-ups (SEPTET_SIGN_UP=closed)."""
    return settings.SEPTET_SIGN_UP != "closed"


def sign_up_blocked(*, address: str) -> bool:
    """True when this address made its allowance of accounts in the current window."""
    return _sign_ups().exhausted(address)


def sign_up_made(*, address: str) -> None:
    """Counts one new account against the address."""
    _sign_ups().record(address)
