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
all when the organiser sets `SEPTET_SIGN_UP=closed` (accounts then come from the admin). One
caller usually holds many addresses of one network (a /24 of IPv4, and an IPv6 /64 is what one
home or host is given), so the accounts of each such block are counted too
(`SEPTET_SIGN_UPS_PER_BLOCK` per window); and a caller with many networks still meets
`SEPTET_SIGN_UPS_PER_HOUR` accounts per hour for the whole site, a ceiling an organiser raises
for a planned rush of newcomers.

The address is REMOTE_ADDR: behind a proxy, the proxy (or the WSGI server) must set it to the
client's.
"""

from __future__ import annotations

import ipaddress
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


def _sign_ups_of_block() -> Limit:
    window = timedelta(seconds=settings.SEPTET_SIGN_UP_WINDOW)
    return Limit("sign-up:block", settings.SEPTET_SIGN_UPS_PER_BLOCK, window)


def _sign_ups_of_site() -> Limit:
    return Limit("sign-up:site", settings.SEPTET_SIGN_UPS_PER_HOUR, timedelta(hours=1))


SITE_KEY = "all"
BLOCK_PREFIX = {4: 24, 6: 64}
"""The network block an address is counted in: its /24 (IPv4) or /64 (IPv6)."""


def block_of(address: str) -> str:
    """The network block holding `address` (an IPv4-mapped IPv6 address counts as IPv4), e.g.
    `192.0.2.0/24`; an address that does not parse is its own block."""
    try:
        parsed = ipaddress.ip_address(address.strip())
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    network = ipaddress.ip_network(f"{parsed}/{BLOCK_PREFIX[parsed.version]}", strict=False)
    return str(network)


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


def sign_up_refusal(*, address: str) -> str | None:
    """Why no account may be made from `address` now (its own allowance, its network block's or
    the site's hourly one is used up), or None when one may."""
    if _sign_ups().exhausted(address):
        return "Too many accounts were made from your address recently. Try again later."
    if _sign_ups_of_block().exhausted(block_of(address)):
        return "Too many accounts were made from your network recently. Try again later."
    if _sign_ups_of_site().exhausted(SITE_KEY):
        return "Too many accounts were made on this site in the last hour. Try again later."
    return None


def sign_up_made(*, address: str) -> None:
    """Counts one new account against the address, its network block and the site."""
    _sign_ups().record(address)
    _sign_ups_of_block().record(block_of(address))
    _sign_ups_of_site().record(SITE_KEY)
