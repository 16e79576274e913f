"""The user area: sign up, sign in/out, my bots, API tokens, and uploading a bot from the browser.

Every form posts with a CSRF token (Django's middleware refuses it otherwise). A new API token's
plaintext is kept in the session only until the next page shows it, once.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.views import LoginView, LogoutView
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_http_methods, require_POST

from referee.tools.botfolder import BotFolderError
from septet_platform.accounts.models import ApiToken
from septet_platform.accounts.services import ApiTokenNotFound, api_token_create, api_token_revoke
from septet_platform.bots.archives import DEFAULT_LIMITS, ArchiveRejected
from septet_platform.bots.models import Bot
from septet_platform.bots.quota import storage_use
from septet_platform.bots.self_hosted import (
    SelfHostedRefused,
    connect_token_create,
    open_ladders_enter,
    self_hosted_bot_register,
)
from septet_platform.bots.services import BotNameTaken
from septet_platform.submissions import services as submission_services
from septet_platform.web import selectors
from septet_platform.web.forms import (
    BotUploadForm,
    SelfHostedBotForm,
    SignInForm,
    SignUpForm,
    TokenCreateForm,
    client_address,
)
from septet_platform.web.signin_limit import sign_up_made, sign_up_open
from septet_platform.web.uploads import ArchiveSizeLimit

NEW_TOKEN_SESSION_KEY = "septet-new-token"


@require_http_methods(["GET", "POST"])
def sign_up(request: HttpRequest) -> HttpResponse:
    """A new account, signed in at once; within the address's allowance, and only while the
    organiser keeps sign-ups open (a closed sign-up page says so, with a 403)."""
    if not sign_up_open():
        return render(request, "web/sign_up.html", {"closed": True}, status=403)
    address = client_address(request)
    form = SignUpForm(request.POST or None, address=address)
    if request.method == "POST" and form.is_valid():
        with transaction.atomic():
            user = form.save()
            sign_up_made(address=address)
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("web:my-bots")
    return render(request, "web/sign_up.html", {"form": form})


class SignIn(LoginView):
    """Django's sign-in with the attempt limit of `SignInForm`."""

    form_class = SignInForm
    template_name = "web/sign_in.html"
    redirect_authenticated_user = True


class SignOut(LogoutView):
    """Signing out is a POST (a link could be followed by anyone's page)."""


@login_required
@require_http_methods(["GET"])
def my_bots(request: HttpRequest) -> HttpResponse:
    """The signed-in user's bots, the status of each version, and what their stored archives take
    of the user's storage quota (`bots.quota`)."""
    bots, storage = selectors.bots_of(owner=request.user), storage_use(owner_id=request.user.pk)
    return render(request, "web/my_bots.html", {"bots": bots, "storage": storage})


@login_required
@require_http_methods(["GET", "POST"])
def tokens(request: HttpRequest) -> HttpResponse:
    """The user's API tokens; a POST creates one, whose plaintext the next page shows once."""
    form = TokenCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        token, plaintext = api_token_create(user=request.user, name=form.cleaned_data["name"])
        request.session[NEW_TOKEN_SESSION_KEY] = {"name": token.name, "plaintext": plaintext}
        return redirect("web:tokens")
    listed = ApiToken.objects.filter(user=request.user).select_related("bot").order_by("-created")
    return render(
        request,
        "web/tokens.html",
        {
            "form": form,
            "self_hosted_form": SelfHostedBotForm(),
            "self_hosted_bots": Bot.objects.filter(owner=request.user, self_hosted=True).order_by("name"),
            "tokens": listed,
            "new_token": request.session.pop(NEW_TOKEN_SESSION_KEY, None),
            "arena": selectors.arena_address(request_host=request.get_host()),
        },
    )


@login_required
@require_POST
def self_hosted_register(request: HttpRequest) -> HttpResponse:
    """Registers a self-hosted bot and shows its connect token once (on the tokens page)."""
    form = SelfHostedBotForm(request.POST)
    if not form.is_valid():
        messages.error(request, "A self-hosted bot needs a name and at least one game.")
        return redirect("web:tokens")
    try:
        bot, plaintext = self_hosted_bot_register(
            owner=request.user, name=form.cleaned_data["name"], games=form.cleaned_data["games"]
        )
    except SelfHostedRefused as refused:
        messages.error(request, str(refused))
        return redirect("web:tokens")
    shown = {"name": f"connect {bot.name}", "plaintext": plaintext, "bot": bot.name}
    request.session[NEW_TOKEN_SESSION_KEY] = shown
    return redirect("web:tokens")


@login_required
@require_POST
def self_hosted_token(request: HttpRequest, name: str) -> HttpResponse:
    """Another connect token for one of the user's self-hosted bots, shown once."""
    try:
        token, plaintext = connect_token_create(owner=request.user, bot_name=name)
    except SelfHostedRefused as refused:
        messages.error(request, str(refused))
        return redirect("web:tokens")
    request.session[NEW_TOKEN_SESSION_KEY] = {"name": token.name, "plaintext": plaintext, "bot": name}
    return redirect("web:tokens")


@login_required
@require_POST
def open_ladders_switch(request: HttpRequest, name: str) -> HttpResponse:
    """The owner's switch: enter their sandboxed bot `name` on the open ladders, or take it off."""
    try:
        bot = open_ladders_enter(
            owner=request.user, bot_name=name, entered=request.POST.get("entered") == "1"
        )
    except SelfHostedRefused as refused:
        messages.error(request, str(refused))
    else:
        state = "plays on the open ladders too" if bot.open_ladders else "no longer plays on the open ladders"
        messages.success(request, f"{bot.name} {state}.")
    return redirect("web:my-bots")


@login_required
@require_POST
def token_revoke(request: HttpRequest, prefix: str) -> HttpResponse:
    """Revokes one of the user's own tokens (someone else's prefix is simply not found)."""
    try:
        token = api_token_revoke(user=request.user, prefix=prefix)
    except ApiTokenNotFound as missing:
        messages.error(request, str(missing))
    else:
        messages.success(request, f"Revoked the token {token.name!r} ({token.prefix}…).")
    return redirect("web:tokens")


@csrf_exempt  # checked by csrf_protect below, once the size-limiting upload handler is in place
@login_required
@require_http_methods(["GET", "POST"])
def upload(request: HttpRequest) -> HttpResponse:
    """A bot folder archive as a new QUALIFYING version, queued for qualification as the Arena's
    SubmitBot does; a bad archive shows the intake's reason and stores nothing."""
    limit = ArchiveSizeLimit(request, DEFAULT_LIMITS.max_archive_bytes)
    request.upload_handlers.insert(0, limit)
    return _upload(request, limit)


@csrf_protect
def _upload(request: HttpRequest, limit: ArchiveSizeLimit) -> HttpResponse:
    form = BotUploadForm(request.POST, request.FILES) if request.method == "POST" else BotUploadForm()
    if limit.exceeded:  # the file was dropped unread: say why, not that it is missing
        form.is_valid()
        form.errors.pop("archive", None)
        form.add_error(None, f"The archive is over the limit of {DEFAULT_LIMITS.max_archive_bytes} bytes.")
    elif request.method == "POST" and form.is_valid():
        try:
            version = submission_services.bot_submit(owner=request.user, archive=form.cleaned_data["archive"])
        except (
            ArchiveRejected,
            BotFolderError,
            BotNameTaken,
            submission_services.SubmissionsExhausted,
        ) as refused:
            form.add_error("archive", str(refused))  # hourly submissions and build time included
        else:
            messages.success(request, f"Stored {version.bot.name} v{version.number}; it is qualifying now.")
            return redirect("web:bot", name=version.bot.name)
    return render(request, "web/upload.html", {"form": form})
