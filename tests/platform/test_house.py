"""What `septet up` prepares (septet_platform.house): the demo account keeps one password and one
API token across restarts, kept 0600 in the data folder; the house montecarlo plays with a short
time per decision; a data folder's credentials file that cannot be trusted is refused."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import api_token_authenticate, api_token_revoke
from septet_platform.house import (
    DEMO_FILE,
    MONTECARLO_HOUSE_BUDGET,
    PrivateFileUnusable,
    _house_copy,
    demo_account_ensure,
)

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db


def test_a_restart_keeps_the_demo_accounts_password_and_token(
    tmp_path: Path, django_user_model: type
) -> None:
    first = demo_account_ensure(tmp_path)
    again = demo_account_ensure(tmp_path)

    assert (again.token, again.password) == (first.token, first.password), "no new token at a restart"
    assert first.password and django_user_model.objects.get(username="demo").check_password(first.password)
    assert api_token_authenticate(token=first.token).username == "demo"
    assert (tmp_path / DEMO_FILE).stat().st_mode & 0o777 == 0o600
    assert ApiToken.objects.filter(user__username="demo").count() == 1


def test_a_revoked_token_is_replaced_and_a_password_changed_on_the_site_is_not_reset(
    tmp_path: Path, django_user_model: type
) -> None:
    first = demo_account_ensure(tmp_path)
    user = django_user_model.objects.get(username="demo")
    api_token_revoke(user=user, prefix=first.token[4:16])
    user.set_password("chosen on the site")
    user.save()

    again = demo_account_ensure(tmp_path)

    assert again.token != first.token and api_token_authenticate(token=again.token).username == "demo"
    assert again.password is None, "the launcher no longer knows it, and does not print a stale one"
    assert django_user_model.objects.get(username="demo").check_password("chosen on the site")


def test_a_credentials_file_others_may_read_is_refused_and_left_alone(tmp_path: Path) -> None:
    """Tried: the file made readable by everyone (chmod 644), then replaced by a link."""
    demo_account_ensure(tmp_path)
    credentials = tmp_path / DEMO_FILE
    os.chmod(credentials, 0o644)
    before = credentials.read_bytes()
    with pytest.raises(PrivateFileUnusable, match="may be read by others"):
        demo_account_ensure(tmp_path)
    assert credentials.read_bytes() == before
    credentials.unlink()
    credentials.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(PrivateFileUnusable, match="not a regular file"):
        demo_account_ensure(tmp_path)


def test_the_house_montecarlo_is_the_example_with_a_short_budget(tmp_path: Path) -> None:
    source = ROOT / "bots" / "examples" / "montecarlo"
    copy = _house_copy(source, tmp_path / "montecarlo", ("--budget", MONTECARLO_HOUSE_BUDGET))
    manifest = tomllib.loads((copy / "septet-bot.toml").read_text())
    original = tomllib.loads((source / "septet-bot.toml").read_text())
    assert manifest["command"] == [*original["command"], "--budget", MONTECARLO_HOUSE_BUDGET]
    assert {key: value for key, value in manifest.items() if key != "command"} == {
        key: value for key, value in original.items() if key != "command"
    }
    assert float(MONTECARLO_HOUSE_BUDGET) < 0.2, "shorter than the example's own default"
