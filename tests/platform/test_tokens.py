"""API tokens: shown once, stored as prefix + SHA-256, compared in constant time, revocable by
their owner only; every bad token is refused with a message saying how."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from septet_platform.accounts import services
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import (
    ApiTokenNotFound,
    AuthenticationFailed,
    api_token_authenticate,
    api_token_create,
    api_token_revoke,
)


@pytest.fixture
def alice(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("alice", password="x")


@pytest.fixture
def bob(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user("bob", password="x")


# Creating ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_create_returns_the_plaintext_once_and_stores_only_prefix_and_digest(alice: User) -> None:
    token, plaintext = api_token_create(user=alice, name="laptop")
    assert plaintext.startswith("sep_" + token.prefix)
    assert len(token.prefix) == 12 and len(plaintext) == 4 + 12 + 43
    row = ApiToken.objects.get(pk=token.pk)
    assert row.digest == hashlib.sha256(plaintext.encode()).hexdigest()
    stored = [str(value) for value in ApiToken.objects.values_list().get(pk=token.pk)]
    assert not any(plaintext in value or plaintext[16:] in value for value in stored)
    assert (row.user, row.name, row.last_used, row.revoked) == (alice, "laptop", None, None)


@pytest.mark.django_db
def test_two_tokens_never_share_a_prefix_or_a_secret(alice: User) -> None:
    tokens = [api_token_create(user=alice, name=f"t{i}") for i in range(20)]
    assert len({token.prefix for token, _ in tokens}) == 20
    assert len({plaintext for _, plaintext in tokens}) == 20


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["", "   ", "x" * 81])
def test_a_token_needs_a_name_of_1_to_80_characters(alice: User, name: str) -> None:
    with pytest.raises(ValueError, match="1-80 characters"):
        api_token_create(user=alice, name=name)
    assert not ApiToken.objects.exists()


# Authenticating ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_live_token_authenticates_its_user_and_records_its_use(alice: User) -> None:
    token, plaintext = api_token_create(user=alice, name="ci")
    assert api_token_authenticate(token=plaintext) == alice
    token.refresh_from_db()
    assert token.last_used is not None


@pytest.mark.django_db
def test_digests_are_compared_with_hmac_compare_digest(alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    """Timing-independent comparison: both a right and a wrong secret go through compare_digest."""
    _, plaintext = api_token_create(user=alice, name="ci")
    calls: list[tuple[str, str]] = []

    compare = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return compare(a, b)

    monkeypatch.setattr(services.hmac, "compare_digest", spy)
    api_token_authenticate(token=plaintext)
    wrong = plaintext[:-1] + ("A" if plaintext[-1] != "A" else "B")
    with pytest.raises(AuthenticationFailed, match="unknown API token"):
        api_token_authenticate(token=wrong)
    assert len(calls) == 2
    assert calls[0][0] == calls[0][1] and calls[1][0] != calls[1][1]


@pytest.mark.django_db
def test_an_unknown_prefix_is_compared_too_so_it_costs_what_a_wrong_secret_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(services.hmac, "compare_digest", lambda a, b: calls.append((a, b)) or False)
    with pytest.raises(AuthenticationFailed, match=r"^unknown API token$"):
        api_token_authenticate(token="sep_" + "0" * 12 + "a" * 43)
    assert len(calls) == 1


@pytest.mark.django_db
def test_a_wrong_secret_with_a_real_prefix_is_refused_and_not_recorded_as_a_use(alice: User) -> None:
    token, plaintext = api_token_create(user=alice, name="ci")
    _, other = api_token_create(user=alice, name="other")
    forged = plaintext[:16] + other[16:]
    with pytest.raises(AuthenticationFailed, match=r"^unknown API token$"):
        api_token_authenticate(token=forged)
    token.refresh_from_db()
    assert token.last_used is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tried",
    [
        "",
        "sep_",
        "Bearer sep_0123456789ab" + "a" * 43,
        "tok_0123456789ab" + "a" * 43,
        "sep_0123456789AB" + "a" * 43,  # upper-case hex prefix
        "sep_0123456789ab" + "a" * 42,  # one character short
        "sep_0123456789ab" + "a" * 44,  # one too many
        "sep_0123456789ab" + "a" * 42 + "!",
        "sep_0123456789ab" + "a" * 42 + "\n" + "a",
    ],
)
def test_a_malformed_token_is_refused_before_any_lookup(
    tried: str, django_assert_num_queries: Callable[..., Any]
) -> None:
    with django_assert_num_queries(0), pytest.raises(AuthenticationFailed, match=r"^malformed API token"):
        api_token_authenticate(token=tried)


@pytest.mark.django_db
def test_a_revoked_token_is_refused_saying_so(alice: User) -> None:
    token, plaintext = api_token_create(user=alice, name="old")
    api_token_revoke(user=alice, prefix=token.prefix)
    with pytest.raises(AuthenticationFailed, match=f"API token {token.prefix} was revoked on "):
        api_token_authenticate(token=plaintext)
    token.refresh_from_db()
    assert token.last_used is None


@pytest.mark.django_db
def test_a_token_of_a_deactivated_account_is_refused(alice: User) -> None:
    _, plaintext = api_token_create(user=alice, name="ci")
    alice.is_active = False
    alice.save()
    with pytest.raises(AuthenticationFailed, match="deactivated account"):
        api_token_authenticate(token=plaintext)


# Revoking ---------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_revoking_leaves_the_owners_other_tokens_working(alice: User) -> None:
    first, first_plain = api_token_create(user=alice, name="one")
    _, second_plain = api_token_create(user=alice, name="two")
    api_token_revoke(user=alice, prefix=first.prefix)
    assert api_token_authenticate(token=second_plain) == alice
    with pytest.raises(AuthenticationFailed, match="revoked"):
        api_token_authenticate(token=first_plain)


@pytest.mark.django_db
def test_revoking_twice_keeps_the_first_revocation_time(alice: User) -> None:
    token, _ = api_token_create(user=alice, name="one")
    first = api_token_revoke(user=alice, prefix=token.prefix).revoked
    again = api_token_revoke(user=alice, prefix=token.prefix).revoked
    assert first is not None and again == first


@pytest.mark.django_db
def test_a_user_cannot_revoke_someone_elses_token(alice: User, bob: User) -> None:
    token, plaintext = api_token_create(user=alice, name="mine")
    with pytest.raises(ApiTokenNotFound, match=f"you have no API token with prefix '{token.prefix}'"):
        api_token_revoke(user=bob, prefix=token.prefix)
    token.refresh_from_db()
    assert token.revoked is None
    assert api_token_authenticate(token=plaintext) == alice


@pytest.mark.django_db
def test_revoking_an_unknown_prefix_says_so_and_changes_nothing(alice: User) -> None:
    token, _ = api_token_create(user=alice, name="mine")
    with pytest.raises(ApiTokenNotFound, match="no API token with prefix 'ffffffffffff'"):
        api_token_revoke(user=alice, prefix="ffffffffffff")
    assert ApiToken.objects.filter(revoked__isnull=False).count() == 0
    assert ApiToken.objects.get().pk == token.pk
