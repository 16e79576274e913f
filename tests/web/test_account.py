"""The user area: sign-up, rate-limited sign-in, CSRF on every form, API tokens, browser uploads."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from web_data import Queued, Site

from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import AuthenticationFailed, api_token_authenticate, api_token_create
from septet_platform.bots.archives import DEFAULT_LIMITS
from septet_platform.bots.models import Bot, BotVersion

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "bots" / "examples" / "random"


def bot_archive(name: str, *, extra: dict[str, bytes] | None = None, manifest: bool = True) -> bytes:
    """The example random bot as a .tar.gz, renamed `name` in its manifest, plus `extra` members."""
    text = (RANDOM_BOT / "septet-bot.toml").read_text().replace('name = "random"', f'name = "{name}"')
    members = {"septet-bot.toml": text.encode()} if manifest else {}
    members["bot.py"] = (RANDOM_BOT / "bot.py").read_bytes()
    members.update(extra or {})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _text(response: object) -> str:
    return response.content.decode()  # type: ignore[attr-defined]


def _stored_files() -> list[Path]:
    root = Path(settings.SEPTET_ARCHIVES_DIR)
    return sorted(path for path in root.rglob("*") if path.is_file()) if root.exists() else []


# Sign-up, sign-in, sign-out -------------------------------------------------------------------


def test_sign_up_creates_the_account_and_signs_it_in(client: Client, storage: Path, db: None) -> None:
    response = client.post(
        "/account/sign-up/",
        {"username": "carol", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
    )
    assert response.status_code == 302 and response["Location"] == "/account/bots/"
    assert User.objects.filter(username="carol").exists()
    assert client.get("/account/bots/").status_code == 200


def test_sign_up_with_passwords_that_differ_shows_the_error_and_creates_nobody(
    client: Client, storage: Path, db: None
) -> None:
    response = client.post(
        "/account/sign-up/",
        {"username": "carol", "password1": "a-long-pass-phrase", "password2": "other-one-x"},
    )
    assert response.status_code == 200 and "didn’t match" in _text(response)
    assert not User.objects.filter(username="carol").exists()


def test_sign_in_and_sign_out(client: Client, site: Site) -> None:
    response = client.post("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"})
    assert response.status_code == 302 and response["Location"] == "/account/bots/"
    assert "alpha" in _text(client.get("/account/bots/"))
    assert client.post("/account/sign-out/").status_code == 302
    assert client.get("/account/bots/")["Location"].startswith("/account/sign-in/")


def test_a_wrong_password_is_refused_with_a_message(client: Client, site: Site) -> None:
    response = client.post("/account/sign-in/", {"username": "alice", "password": "guess"})
    assert response.status_code == 200 and "Please enter a correct username and password" in _text(response)
    assert "_auth_user_id" not in client.session


def test_sign_in_is_refused_after_five_failures_even_with_the_right_password(
    client: Client, site: Site
) -> None:
    for attempt in range(settings.SEPTET_SIGN_IN_ATTEMPTS):
        client.post("/account/sign-in/", {"username": "alice", "password": f"guess-{attempt}"})
    response = client.post("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"})
    assert response.status_code == 200 and "Too many failed sign-in attempts" in _text(response)
    assert "_auth_user_id" not in client.session
    # Another name from the same address still signs in: the address has a larger allowance.
    other = client.post("/account/sign-in/", {"username": "bob", "password": "bob-secret-pw"})
    assert other.status_code == 302


def test_one_address_guessing_many_names_is_refused_after_its_allowance(client: Client, site: Site) -> None:
    for attempt in range(settings.SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS):
        client.post("/account/sign-in/", {"username": f"someone-{attempt}", "password": "guess"})
    response = client.post("/account/sign-in/", {"username": "bob", "password": "bob-secret-pw"})
    assert "Too many failed sign-in attempts" in _text(response)
    assert "_auth_user_id" not in client.session
    elsewhere = Client(REMOTE_ADDR="203.0.113.9")
    assert (
        elsewhere.post("/account/sign-in/", {"username": "bob", "password": "bob-secret-pw"}).status_code
        == 302
    )


def test_a_failure_short_of_the_limit_does_not_lock_the_owner_out(client: Client, site: Site) -> None:
    for attempt in range(settings.SEPTET_SIGN_IN_ATTEMPTS - 1):
        client.post("/account/sign-in/", {"username": "alice", "password": f"guess-{attempt}"})
    assert (
        client.post("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"}).status_code
        == 302
    )


def test_the_user_area_asks_to_sign_in(client: Client, site: Site) -> None:
    for url in ("/account/bots/", "/account/tokens/", "/account/upload/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"] == f"/account/sign-in/?next={url}"


# CSRF -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "data"),
    [
        ("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"}),
        (
            "/account/sign-up/",
            {"username": "dave", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"},
        ),
        ("/account/sign-out/", {}),
        ("/account/tokens/", {"name": "laptop"}),
        ("/account/tokens/PREFIX/revoke/", {}),
        ("/account/upload/", {}),
        ("/account/self-hosted/", {"name": "csrf-bot", "games": "oh-hell"}),
    ],
)
def test_every_form_refuses_a_post_without_its_csrf_token(site: Site, url: str, data: dict[str, str]) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(site.alice)
    token, _ = api_token_create(user=site.alice, name="kept")
    if url == "/account/upload/":
        data = {"archive": SimpleUploadedFile("bot.tar.gz", bot_archive("csrf-bot"))}  # type: ignore[dict-item]
    response = client.post(url.replace("PREFIX", token.prefix), data)
    assert response.status_code == 403
    assert not User.objects.filter(username="dave").exists()
    assert ApiToken.objects.filter(user=site.alice).count() == 1
    assert ApiToken.objects.get(pk=token.pk).revoked is None
    assert not Bot.objects.filter(name="csrf-bot").exists()
    assert client.session.get("_auth_user_id") == str(site.alice.pk)


def test_every_form_page_carries_a_csrf_token(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    for url in ("/account/tokens/", "/account/upload/", "/"):
        assert 'name="csrfmiddlewaretoken"' in _text(client.get(url)), url
    client.logout()
    for url in ("/account/sign-in/", "/account/sign-up/"):
        assert 'name="csrfmiddlewaretoken"' in _text(client.get(url)), url


# API tokens -----------------------------------------------------------------------------------


def test_a_new_token_is_shown_once_and_authenticates(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    response = client.post("/account/tokens/", {"name": "laptop"}, follow=True)
    plaintext = response.context["new_token"]["plaintext"]
    assert plaintext.startswith("sep_") and plaintext in _text(response)
    assert api_token_authenticate(token=plaintext) == site.alice
    again = _text(client.get("/account/tokens/"))
    assert plaintext not in again and "laptop" in again
    token = ApiToken.objects.get(user=site.alice)
    assert f"sep_{token.prefix}…" in again and token.digest != plaintext


def test_a_token_without_a_name_is_refused_and_none_is_created(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    response = client.post("/account/tokens/", {"name": "   "})
    assert response.status_code == 200 and "This field is required." in _text(response)
    assert not ApiToken.objects.exists()


def test_revoking_a_token_stops_it_from_authenticating(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    plaintext = client.post("/account/tokens/", {"name": "ci"}, follow=True).context["new_token"]["plaintext"]
    token = ApiToken.objects.get(user=site.alice)
    response = client.post(f"/account/tokens/{token.prefix}/revoke/", follow=True)
    assert "Revoked the token" in _text(response) and "revoked" in _text(response)
    with pytest.raises(AuthenticationFailed, match="revoked"):
        api_token_authenticate(token=plaintext)


def test_nobody_revokes_another_users_token(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    client.post("/account/tokens/", {"name": "alice's"})
    token = ApiToken.objects.get(user=site.alice)
    client.force_login(site.bob)
    response = client.post(f"/account/tokens/{token.prefix}/revoke/", follow=True)
    assert "you have no API token with prefix" in _text(response)
    assert ApiToken.objects.get(pk=token.pk).revoked is None
    assert token.name not in _text(client.get("/account/tokens/"))


def test_revoking_is_a_post_only(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    client.post("/account/tokens/", {"name": "kept"})
    token = ApiToken.objects.get(user=site.alice)
    assert client.get(f"/account/tokens/{token.prefix}/revoke/").status_code == 405
    assert ApiToken.objects.get(pk=token.pk).revoked is None


# Uploading a bot from the browser -------------------------------------------------------------


def test_an_upload_stores_a_qualifying_version_and_queues_its_qualification(
    client: Client, site: Site, qualify_queue: Queued, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(site.alice)
    upload = SimpleUploadedFile("my-random.tar.gz", bot_archive("my-random"), "application/gzip")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/account/upload/", {"archive": upload})
    assert response.status_code == 302 and response["Location"] == "/bots/my-random/"
    version = BotVersion.objects.get(bot__name="my-random")
    assert qualify_queue.calls == [version.pk]
    assert version.status == BotVersion.Status.QUALIFYING and version.number == 1
    assert version.bot.owner == site.alice
    assert (Path(settings.SEPTET_ARCHIVES_DIR) / version.archive).is_file()
    assert "it is qualifying now" in _text(client.get("/bots/my-random/"))


def test_a_second_upload_of_the_same_bot_is_its_next_version(
    client: Client, site: Site, qualify_queue: Queued
) -> None:
    client.force_login(site.alice)
    for _ in range(2):
        client.post("/account/upload/", {"archive": SimpleUploadedFile("b.tar.gz", bot_archive("again"))})
    assert list(BotVersion.objects.filter(bot__name="again").values_list("number", flat=True)) == [2, 1]


@pytest.mark.parametrize(
    ("what", "archive", "error"),
    [
        ("a traversal path", bot_archive("evil", extra={"../escape.py": b"x"}), "in a path is not allowed"),
        ("not an archive at all", b"just some text, not a tar or zip", "not an archive"),
        ("an archive without a manifest", bot_archive("x", manifest=False), "septet-bot.toml"),
        (
            "a manifest naming no games",
            bot_archive("x", extra={"septet-bot.toml": b'name = "x"\ngames = []\n'}),
            "games",
        ),
        ("an empty file", b"", "empty"),
    ],
)
def test_a_bad_upload_shows_the_intakes_reason_and_stores_nothing(
    client: Client,
    site: Site,
    qualify_queue: Queued,
    django_capture_on_commit_callbacks: Any,
    what: str,
    archive: bytes,
    error: str,
) -> None:
    client.force_login(site.alice)
    before = (Bot.objects.count(), BotVersion.objects.count(), _stored_files())
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/account/upload/", {"archive": SimpleUploadedFile("bad.tar.gz", archive)})
    assert response.status_code == 200, what
    assert error in _text(response).lower(), (what, _text(response))
    assert (Bot.objects.count(), BotVersion.objects.count(), _stored_files()) == before, what
    assert qualify_queue.calls == []


def test_an_archive_over_the_size_limit_is_dropped_unread_with_a_clear_error(
    client: Client, site: Site, qualify_queue: Queued, tmp_path: Path
) -> None:
    client.force_login(site.alice)
    huge = bot_archive("huge") + b"\0" * DEFAULT_LIMITS.max_archive_bytes
    response = client.post("/account/upload/", {"archive": SimpleUploadedFile("huge.tar.gz", huge)})
    assert response.status_code == 200
    assert f"over the limit of {DEFAULT_LIMITS.max_archive_bytes} bytes" in _text(response)
    assert "This field is required" not in _text(response)
    assert not Bot.objects.filter(name="huge").exists() and _stored_files() == []
    assert qualify_queue.calls == []


def test_an_upload_past_the_hourly_submission_limit_is_refused_on_the_page_not_a_500(
    client: Client, site: Site, qualify_queue: Queued, settings: Any
) -> None:
    """Tried: a second upload with one submission allowed an hour (the Arena said so; the page
    answered 500)."""
    settings.SEPTET_SUBMISSIONS_PER_HOUR = 1
    client.force_login(site.alice)
    client.post("/account/upload/", {"archive": SimpleUploadedFile("a.tar.gz", bot_archive("first"))})
    before = (BotVersion.objects.count(), _stored_files())

    response = client.post(
        "/account/upload/", {"archive": SimpleUploadedFile("b.tar.gz", bot_archive("second"))}
    )

    assert response.status_code == 200
    assert "submission limit reached" in _text(response), _text(response)
    assert (BotVersion.objects.count(), _stored_files()) == before
    assert not Bot.objects.filter(name="second").exists()


def test_uploading_a_bot_named_like_another_users_bot_is_refused(
    client: Client, site: Site, qualify_queue: Queued
) -> None:
    client.force_login(site.alice)
    response = client.post(
        "/account/upload/", {"archive": SimpleUploadedFile("b.tar.gz", bot_archive("beta"))}
    )
    assert response.status_code == 200 and "belongs to another user" in _text(response)
    assert BotVersion.objects.filter(bot__name="beta").count() == 1
    assert qualify_queue.calls == []


# Self-hosted bots -------------------------------------------------------------------------------


def test_registering_a_self_hosted_bot_shows_its_connect_token_once(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    response = client.post(
        "/account/self-hosted/", {"name": "alices-gpu", "games": ["oh-hell", "oh7"]}, follow=True
    )
    plaintext = response.context["new_token"]["plaintext"]
    page = _text(response)
    assert "septet bot connect bots/mine" in page and plaintext in page
    bot = Bot.objects.get(name="alices-gpu")
    assert bot.self_hosted and bot.owner == site.alice
    token = ApiToken.objects.get(user=site.alice, bot=bot)
    assert api_token_authenticate(token=plaintext) == site.alice and token.bot_id == bot.pk
    again = _text(client.get("/account/tokens/"))
    assert plaintext not in again and "connect alices-gpu" in again and "connect only" in again
    bot_page = _text(client.get("/bots/alices-gpu/"))
    assert "self-hosted" in bot_page and "Not connected now" in bot_page
    # Another token for the same bot (a second machine); none for someone else's bot.
    client.post("/account/self-hosted/alices-gpu/token/", follow=True)
    assert ApiToken.objects.filter(bot=bot).count() == 2


def test_a_bad_self_hosted_registration_is_refused_and_creates_nothing(client: Client, site: Site) -> None:
    client.force_login(site.alice)
    tried = [
        ({"name": "Bad Name", "games": ["oh-hell"]}, "lower-case letters"),
        ({"name": "fine-name"}, "at least one game"),
        ({"name": "fine-name", "games": ["poker"]}, "at least one game"),
    ]
    for data, message in tried:
        response = client.post("/account/self-hosted/", data, follow=True)
        assert message in _text(response), data
    assert not Bot.objects.filter(self_hosted=True).exists()
    assert not ApiToken.objects.filter(user=site.alice).exists()
    bob = User.objects.create_user("bob-self-hosted")
    client.force_login(bob)
    response = client.post("/account/self-hosted/alices-gpu/token/", follow=True)
    assert "no self-hosted bot called" in _text(response)
    assert not ApiToken.objects.exists()
