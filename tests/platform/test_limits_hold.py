"""Limits that hold under pressure: parallel uploads of one user never pass the hourly
submission limit (each upload a real SubmitBot call to a real Arena server on PostgreSQL), and a
weak password is refused on sign-up with Django's own message, making no account."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from fixtures_intake import random_copy

from referee.botkit.protocol import arena_pb2 as pb
from referee.botkit.protocol import arena_pb2_grpc
from referee.tools.packing import pack_folder
from septet_platform.accounts.services import api_token_create
from septet_platform.bots.models import BotVersion

LIMIT = 3
UPLOADS = 10


def _chunks(data: bytes) -> Iterator[pb.SubmitBotChunk]:
    yield pb.SubmitBotChunk(data=data)


@pytest.mark.django_db(transaction=True)
def test_parallel_uploads_of_one_user_never_pass_the_hourly_limit(
    arena_address: str, settings: Any, tmp_path: Path
) -> None:
    """Tried: 10 uploads of one user sent at the same instant against a limit of 3 (before the
    row lock, every upload counted the same committed rows and more than 3 were stored)."""
    if connection.vendor != "postgresql":
        pytest.skip("SQLite has no row locks (and serializes writers anyway); this needs PostgreSQL")
    settings.SEPTET_SUBMISSIONS_PER_HOUR = LIMIT
    user = User.objects.create(username="uploader")
    _, token = api_token_create(user=user, name="cli")
    metadata = [("authorization", f"Bearer {token}")]
    archive = pack_folder(random_copy(tmp_path, "uploader-random"))
    start = threading.Barrier(UPLOADS)
    outcomes: list[str] = []

    def upload() -> None:
        with grpc.insecure_channel(arena_address) as channel:
            stub = arena_pb2_grpc.ArenaStub(channel)
            start.wait(timeout=30)
            try:
                stub.SubmitBot(_chunks(archive), metadata=metadata, timeout=60)
                outcomes.append("stored")
            except grpc.RpcError as error:
                outcomes.append(error.code().name)

    threads = [threading.Thread(target=upload) for _ in range(UPLOADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=90)

    assert sorted(outcomes) == ["RESOURCE_EXHAUSTED"] * (UPLOADS - LIMIT) + ["stored"] * LIMIT
    assert BotVersion.objects.filter(bot__owner=user).count() == LIMIT
    stored = sorted(path.name for path in (Path(settings.SEPTET_ARCHIVES_DIR) / "uploader-random").iterdir())
    assert stored == [f"v{number}.tar.gz" for number in range(1, LIMIT + 1)], "no file of a refused upload"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("password", "message"),
    [
        ("a", "This password is too short. It must contain at least 8 characters."),
        ("password", "This password is too common."),
        ("8675309123", "This password is entirely numeric."),
        ("newcomer1", "The password is too similar to the username."),
    ],
    ids=["one letter", "common", "digits only", "like the name"],
)
def test_a_weak_password_is_refused_on_sign_up_saying_why_and_makes_no_account(
    password: str, message: str, storage: Any
) -> None:
    """Tried: signing up with each kind of weak password."""
    response = Client().post(
        "/account/sign-up/", {"username": "newcomer", "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert message in response.content.decode().replace("&#x27;", "'")
    assert not User.objects.filter(username="newcomer").exists()


@pytest.mark.django_db
def test_a_good_pass_phrase_still_signs_up(storage: Any) -> None:
    response = Client().post(
        "/account/sign-up/",
        {"username": "newcomer", "password1": "quiet-harbour-lantern", "password2": "quiet-harbour-lantern"},
    )
    assert response.status_code == 302
    assert User.objects.filter(username="newcomer").exists()
