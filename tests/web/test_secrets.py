"""What the site keeps secret and what it limits, tried through its real pages: a duplicate set's
seed and replay hidden until the set is over (from the bot's owner too), forfeit reasons shown to
the seat's owner only (page and replay document), sign-up floods from one address, closed
sign-ups, and a stranger's failed sign-ins that must not lock the owner out."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils.html import escape
from web_data import Site, match_play_recorded

from referee.engine import replay as replays
from septet_platform.matches.models import Match, Seat

STRANGER = "198.51.100.7"


def _text(response: Any) -> str:
    return response.content.decode()


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _reasons(document: dict[str, Any]) -> list[str]:
    events = [e for e in document["events"] if e.get("type") == "forfeit"]
    return [e["reason"] for e in events + document["forfeits"]]


# Seeds and replays of an unfinished duplicate set -----------------------------------------------


def test_a_finished_rotation_shows_no_seed_or_replay_until_its_set_is_over(
    client: Client, site: Site
) -> None:
    """Rotation 0 is played; rotation 1 (same seed) is still scheduled: its deal must stay unknown."""
    Match.objects.filter(pk=site.match.pk).update(duplicate_set="set-a", rotation=0)
    waiting = Match.objects.create(
        ladder=site.ladder, seed=site.match.seed, duplicate_set="set-a", rotation=1
    )
    Seat.objects.bulk_create(
        Seat(match=waiting, seat=i, bot_version=v)
        for i, v in enumerate([site.beta, site.scripted, site.alpha])
    )
    seed = f"seed {site.match.seed}"

    for who, viewer in {"anonymous": client, "owner alice": signed_in(site.alice)}.items():
        page = _text(viewer.get(f"/matches/{site.match.pk}/"))
        assert seed not in page and "data-replay-url" not in page, who  # no replay viewer
        assert "published when its duplicate set is over" in page, who
        # Only the public live stream, as it was played (no hand, no seed: docs/live.md).
        assert f"/live/matches/{site.match.pk}/events" in page, who
        document = viewer.get(f"/matches/{site.match.pk}/replay.json")
        assert document.status_code == 404, who
        assert "published when its duplicate set is over" in _text(document), who
        assert seed not in _text(viewer.get(f"/matches/{waiting.pk}/")), who

    Match.objects.filter(pk=waiting.pk).update(status=Match.Status.CANCELLED)

    page = _text(client.get(f"/matches/{site.match.pk}/"))
    assert seed in page and "septet-viewer" in page
    assert client.get(f"/matches/{site.match.pk}/replay.json").json()["seed"] == site.match.seed


# Forfeit reasons ----------------------------------------------------------------------------------


def test_forfeit_reasons_are_shown_to_the_seats_owner_only_on_the_page_and_in_the_replay(
    client: Client, site: Site
) -> None:
    """In site.forfeited, alice's alpha (seat 1) forfeited."""
    reason = Seat.objects.get(match=site.forfeited, seat=1).forfeit_reason
    assert reason

    seen = {}
    for who, viewer in {
        "anonymous": client,
        "bob": signed_in(site.bob),
        "alice": signed_in(site.alice),
    }.items():
        page = _text(viewer.get(f"/matches/{site.forfeited.pk}/"))
        assert "<strong>INVALID</strong>" in page, who  # that it forfeited stays public
        plain = viewer.get(f"/matches/{site.forfeited.pk}/replay.json").json()
        zipped = viewer.get(f"/matches/{site.forfeited.pk}/replay.json", HTTP_ACCEPT_ENCODING="gzip")
        from_gzip = json.loads(gzip.decompress(zipped.content))
        assert replays.verify(plain).events == len(plain["events"]), who
        assert "private" in zipped["Cache-Control"], who
        seen[who] = (escape(reason) in page, set(_reasons(plain)), set(_reasons(from_gzip)))

    assert seen == {
        "anonymous": (False, {""}, {""}),
        "bob": (False, {""}, {""}),
        "alice": (True, {reason}, {reason}),
    }


def test_the_bot_page_lists_forfeit_reasons_to_its_owner_only(client: Client, site: Site) -> None:
    reason = escape(Seat.objects.get(match=site.forfeited, seat=1).forfeit_reason)
    assert reason not in _text(client.get("/bots/alpha/"))
    assert reason not in _text(signed_in(site.bob).get("/bots/alpha/"))
    assert reason in _text(signed_in(site.alice).get("/bots/alpha/"))


# Sign-ups -------------------------------------------------------------------------------------------


def _sign_up(client: Client, name: str) -> Any:
    return client.post(
        "/account/sign-up/",
        {"username": name, "password1": "a-long-pass-phrase-9", "password2": "a-long-pass-phrase-9"},
    )


def test_a_sign_up_flood_from_one_address_is_held_to_its_allowance(
    db: None, storage: Any, settings: Any
) -> None:
    settings.SEPTET_SIGN_UPS_PER_ADDRESS = 3
    flooder = Client(REMOTE_ADDR=STRANGER)

    made = [_sign_up(flooder, f"sock{number}").status_code for number in range(10)]

    assert made == [302] * 3 + [200] * 7
    assert sorted(User.objects.values_list("username", flat=True)) == ["sock0", "sock1", "sock2"]
    refused = _sign_up(Client(REMOTE_ADDR=STRANGER), "sock99")
    assert "Too many accounts were made from your address" in _text(refused)
    assert not User.objects.filter(username="sock99").exists()
    assert _sign_up(Client(REMOTE_ADDR="192.0.2.20"), "someone-else").status_code == 302


def test_closed_sign_ups_make_no_account(db: None, storage: Any, settings: Any) -> None:
    settings.SEPTET_SIGN_UP = "closed"

    page = Client().get("/account/sign-up/")
    posted = _sign_up(Client(), "newcomer")

    assert page.status_code == 403 and "Sign-ups are closed" in _text(page)
    assert posted.status_code == 403 and not User.objects.exists()


# Sign-in lock ----------------------------------------------------------------------------------------


def test_a_strangers_failed_sign_ins_do_not_lock_the_owner_out(site: Site, settings: Any) -> None:
    stranger = Client(REMOTE_ADDR=STRANGER)
    for attempt in range(settings.SEPTET_SIGN_IN_ATTEMPTS_PER_ADDRESS + 5):
        stranger.post("/account/sign-in/", {"username": "alice", "password": f"guess-{attempt}"})
    locked = stranger.post("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"})
    assert "Too many failed sign-in attempts" in _text(locked), "the stranger is held back"

    owner = Client(REMOTE_ADDR="192.0.2.44")
    response = owner.post("/account/sign-in/", {"username": "alice", "password": "alice-secret-pw"})

    assert response.status_code == 302 and owner.session["_auth_user_id"] == str(site.alice.pk)


def test_failed_sign_ins_are_counted_in_the_database_shared_by_every_process(site: Site) -> None:
    """A second site process has its own memory but the same database: its count includes ours."""
    from septet_platform.accounts.models import CountedAction

    Client(REMOTE_ADDR=STRANGER).post("/account/sign-in/", {"username": "alice", "password": "nope"})

    assert CountedAction.objects.filter(key__contains=STRANGER).count() == 2  # name-at-address, address


@pytest.mark.parametrize("seed", [21])
def test_a_played_match_with_no_set_is_published_once_finished(client: Client, site: Site, seed: int) -> None:
    match = match_play_recorded(site.ladder, [site.alpha, site.beta, site.scripted], seed=seed)
    assert f"seed {seed}" in _text(client.get(f"/matches/{match.pk}/"))
