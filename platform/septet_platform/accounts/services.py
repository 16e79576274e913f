"""API tokens: created once in plaintext, stored as a prefix and a SHA-256 digest, checked in
constant time, revocable by their owner.

A token reads `sep_<prefix><secret>`: 12 hex characters of prefix (the row's key, safe to show
in lists and logs) and 43 URL-safe characters of secret (256 bits from `secrets`). Only the
SHA-256 of the whole token is stored; a leaked database does not yield usable tokens.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from typing import TYPE_CHECKING

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils import timezone

from septet_platform.accounts.models import ApiToken

if TYPE_CHECKING:
    from septet_platform.bots.models import Bot

TOKEN_SCHEME = "sep_"
PREFIX_BYTES = 6  # 12 hex characters
SECRET_BYTES = 32  # 43 URL-safe characters
TOKEN_FORMAT = re.compile(r"sep_(?P<prefix>[0-9a-f]{12})(?P<secret>[A-Za-z0-9_-]{43})")
NAME_MAX_CHARS = ApiToken._meta.get_field("name").max_length or 80
CREATE_ATTEMPTS = 5
# Compared against when no row has the prefix, so an unknown token costs what a wrong one does.
_NO_DIGEST = hashlib.sha256(b"no such token").hexdigest()


class AuthenticationFailed(Exception):
    """A token that does not authenticate; the message says which way (never whose)."""


class ApiTokenNotFound(LookupError):
    """No token with that prefix belongs to the user."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def api_token_create(*, user: AbstractBaseUser, name: str, bot: Bot | None = None) -> tuple[ApiToken, str]:
    """A new token for `user`; returns the row and the plaintext, which is never available again.
    With `bot` (one of the user's self-hosted bots) the token is scoped to it: it may only Connect
    as that bot, so a token kept on the bot's machine can do nothing else with the account."""
    name = name.strip()
    if not name or len(name) > NAME_MAX_CHARS:
        raise ValueError(f"a token name must be 1-{NAME_MAX_CHARS} characters, not {len(name)}")
    for _ in range(CREATE_ATTEMPTS):
        prefix = secrets.token_hex(PREFIX_BYTES)
        plaintext = f"{TOKEN_SCHEME}{prefix}{secrets.token_urlsafe(SECRET_BYTES)}"
        try:
            with transaction.atomic():
                token = ApiToken.objects.create(
                    user=user, name=name, prefix=prefix, digest=_digest(plaintext), bot=bot
                )
        except IntegrityError:
            continue  # the prefix was taken: 48 random bits make this very rare
        return token, plaintext
    raise RuntimeError(f"could not find a free token prefix in {CREATE_ATTEMPTS} attempts")


def api_token_authenticate(*, token: str) -> AbstractBaseUser:
    """The user whose live token this is, its `last_used` updated; else AuthenticationFailed."""
    return api_token_check(token=token).user


def api_token_check(*, token: str) -> ApiToken:
    """The live token row (with its user and, for a bot-scoped token, its bot), its `last_used`
    updated; else AuthenticationFailed."""
    match = TOKEN_FORMAT.fullmatch(token.strip()) if isinstance(token, str) else None
    if match is None:
        raise AuthenticationFailed(
            f"malformed API token: expected {TOKEN_SCHEME} followed by 12 hex and 43 URL-safe characters"
        )
    row = ApiToken.objects.select_related("user", "bot").filter(prefix=match["prefix"]).first()
    digest = _digest(match[0])
    if not hmac.compare_digest(digest, row.digest if row is not None else _NO_DIGEST) or row is None:
        raise AuthenticationFailed("unknown API token")
    if row.revoked is not None:
        raise AuthenticationFailed(f"API token {row.prefix} was revoked on {row.revoked:%Y-%m-%d %H:%M} UTC")
    if not row.user.is_active:
        raise AuthenticationFailed(f"API token {row.prefix} belongs to a deactivated account")
    ApiToken.objects.filter(pk=row.pk).update(last_used=timezone.now())
    return row


def api_token_revoke(*, user: AbstractBaseUser, prefix: str) -> ApiToken:
    """Revokes one of `user`'s own tokens by its prefix (revoking twice keeps the first time)."""
    token = ApiToken.objects.filter(user=user, prefix=prefix).first()
    if token is None:
        raise ApiTokenNotFound(f"you have no API token with prefix {prefix!r}")
    if token.revoked is None:
        token.revoked = timezone.now()
        token.save(update_fields=["revoked"])
    return token
