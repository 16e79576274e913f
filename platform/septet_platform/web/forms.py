"""The user area's forms: sign-up, rate-limited sign-in, API token names, bot archive uploads."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth.forms import AuthenticationForm, UserCreationForm

from referee.engine.games import all_games
from septet_platform.accounts.names import NameRefused, user_name_check
from septet_platform.accounts.services import NAME_MAX_CHARS
from septet_platform.bots.archives import DEFAULT_LIMITS
from septet_platform.web.signin_limit import (
    sign_in_blocked,
    sign_in_failed,
    sign_in_succeeded,
    sign_up_refusal,
)

TOO_MANY_ATTEMPTS = "Too many failed sign-in attempts. Wait a few minutes and try again."


class SignUpForm(UserCreationForm):
    """A user name and a password twice (Django's validators), refused once the client address,
    its network block or the site made its allowance of accounts (signin_limit), and for a name
    that could pass for an existing user's (accounts.names)."""

    def __init__(self, *args: Any, address: str = "", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.address = address

    def clean_username(self) -> str:
        username = str(super().clean_username())
        try:
            user_name_check(username)
        except NameRefused as refused:
            raise forms.ValidationError(str(refused), code="look_alike") from None
        return username

    def clean(self) -> dict[str, Any]:
        refusal = sign_up_refusal(address=self.address)
        if refusal is not None:
            raise forms.ValidationError(refusal, code="rate_limited")
        return super().clean()


class SignInForm(AuthenticationForm):
    """Django's sign-in, refused early once the name or the client address failed too often."""

    def clean(self) -> dict[str, Any]:
        username = self.data.get("username", "") or ""
        address = client_address(self.request)
        if sign_in_blocked(username=username, address=address):
            raise forms.ValidationError(TOO_MANY_ATTEMPTS, code="rate_limited")
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            sign_in_failed(username=username, address=address)
            raise
        sign_in_succeeded(username=username, address=address)
        return cleaned


def client_address(request: Any) -> str:
    """The address the request came from (REMOTE_ADDR; a proxy in front must set it)."""
    return str(request.META.get("REMOTE_ADDR", "")) if request is not None else ""


class TokenCreateForm(forms.Form):
    """A name for a new API token, so its owner can tell tokens apart."""

    name = forms.CharField(max_length=NAME_MAX_CHARS, strip=True)


class SelfHostedBotForm(forms.Form):
    """A self-hosted bot's name and the games it plays (docs/self-hosted.md)."""

    name = forms.CharField(
        max_length=40, strip=True, help_text="lower-case letters, digits and hyphens, as in septet-bot.toml"
    )
    games = forms.MultipleChoiceField(
        choices=[(game, game) for game in sorted(all_games())],
        widget=forms.CheckboxSelectMultiple,
        help_text="the games it plays",
    )


class BotUploadForm(forms.Form):
    """A bot folder archive (.tar.gz, .tar or .zip with `septet-bot.toml`), as `septet submit` sends."""

    archive = forms.FileField(
        help_text="A .tar.gz, .tar or .zip of your bot folder, with its septet-bot.toml."
    )

    def clean_archive(self) -> bytes:
        """The archive's bytes; refused here already when over the intake's size limit."""
        upload = self.cleaned_data["archive"]
        limit = DEFAULT_LIMITS.max_archive_bytes
        if upload.size > limit:
            raise forms.ValidationError(
                f"The archive is {upload.size} bytes, over the limit of {limit} bytes."
            )
        return bytes(upload.read())
