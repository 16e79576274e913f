"""Sign-in attempt limiting: a count of failures per user name and per client address in the cache.

After `SEPTET_SIGN_IN_ATTEMPTS` failures for one user name, or `SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS`
from one client address, within `SEPTET_SIGN_IN_WINDOW` seconds, further attempts for that name or
from that address are refused before the password is even checked, until the window (counted from
the first failure) runs out. A successful sign-in clears the name's count. The address is
REMOTE_ADDR: behind a proxy, the proxy (or the WSGI server) must set it to the client's.
The default cache is per process; with several site processes, configure a shared cache (Redis)
so the limit holds across them.
"""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache


def _keys(username: str, address: str) -> list[str]:
    return [f"septet:sign-in:user:{username.strip().lower()}", f"septet:sign-in:addr:{address}"]


def sign_in_blocked(*, username: str, address: str) -> bool:
    """True when the name or the address used up its failed attempts in the current window."""
    name_key, address_key = _keys(username, address)
    counts = cache.get_many([name_key, address_key])
    return (
        counts.get(name_key, 0) >= settings.SEPTET_SIGN_IN_ATTEMPTS
        or counts.get(address_key, 0) >= settings.SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS
    )


def sign_in_failed(*, username: str, address: str) -> None:
    """Counts one failed attempt against the name and the address."""
    for key in _keys(username, address):
        if cache.add(key, 1, timeout=settings.SEPTET_SIGN_IN_WINDOW):
            continue
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.add(key, 1, timeout=settings.SEPTET_SIGN_IN_WINDOW)


def sign_in_succeeded(*, username: str) -> None:
    """Forgets the name's failures (the address keeps its count: it may be guessing other names)."""
    cache.delete(_keys(username, "")[0])
