"""The Challenge model moved from the Arena's app (arena_api) to its own (challenges) with its tables
as they were: a database made before the move (a user's var/septet.sqlite3, a PostgreSQL server)
migrates forward with every challenge, its matches and its content type kept, and nothing to copy.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from bot_versions import version_row
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from septet_platform.challenges.models import Challenge
from septet_platform.ladders.models import Ladder
from septet_platform.matches.models import Match

BEFORE_THE_MOVE = [("arena_api", "0001_initial")]
TABLES = {"arena_api_challenge", "arena_api_challenge_matches"}


@pytest.fixture
def before_the_move(transactional_db: None) -> Iterator[MigrationExecutor]:
    """The database as it was before the move (arena_api 0001 applied, challenges 0001 not), and
    back to every migration afterwards, whatever the test did."""
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_THE_MOVE)
    try:
        executor.loader.build_graph()
        yield executor
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())


def test_the_model_keeps_the_arena_apps_tables() -> None:
    assert Challenge._meta.db_table == "arena_api_challenge"
    through = Challenge._meta.get_field("matches").remote_field.through
    assert through._meta.db_table == "arena_api_challenge_matches"


def test_migrating_forward_from_before_the_move_keeps_every_challenge(
    before_the_move: MigrationExecutor,
) -> None:
    executor = before_the_move
    old_apps = executor.loader.project_state(BEFORE_THE_MOVE).apps
    assert ("challenges", "0001_initial") not in executor.loader.applied_migrations
    old_challenge = old_apps.get_model("arena_api", "Challenge")
    version = version_row("alice", "mine")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    matches = [Match.objects.create(ladder=ladder, seed=7, duplicate_set="c-1-1", rotation=r) for r in (0, 1)]
    row = old_challenge.objects.create(
        requester_id=version.bot.owner_id, ladder_id=ladder.pk, challenger_id=version.pk, sets=2
    )
    row.matches.add(*(match.pk for match in matches))
    # the content type as the old app had it (migrating back gave it back), and a permission on it
    old_type = ContentType.objects.get(app_label="arena_api", model="challenge")
    assert not ContentType.objects.filter(app_label="challenges").exists()
    permission = Permission.objects.create(content_type=old_type, codename="see_challenge", name="see")

    executor.migrate(executor.loader.graph.leaf_nodes())

    tables = set(connection.introspection.table_names())
    assert tables >= TABLES and "challenges_challenge" not in tables
    moved = Challenge.objects.get(pk=row.pk)
    assert moved.requester.username == "alice" and moved.challenger == version
    assert (moved.ladder, moved.sets) == (ladder, 2)
    assert list(moved.matches.order_by("id")) == matches
    assert list(matches[0].challenges.all()) == [moved]
    assert ContentType.objects.get_for_model(Challenge).pk == old_type.pk
    permission.refresh_from_db()
    assert permission.content_type.app_label == "challenges"
    assert not ContentType.objects.filter(app_label="arena_api", model="challenge").exists()


def test_migrating_back_keeps_the_rows_too(before_the_move: MigrationExecutor) -> None:
    """Forward, a challenge made by the moved model, then back before the move: the Arena app's
    record of the model reads the same row."""
    executor = before_the_move
    executor.migrate(executor.loader.graph.leaf_nodes())
    version = version_row("bob", "theirs")
    ladder = Ladder.objects.create(game="oh-hell", min_players=3, max_players=7)
    owner = version.bot.owner
    challenge = Challenge.objects.create(requester=owner, ladder=ladder, challenger=version, sets=1)
    executor.loader.build_graph()
    state = executor.migrate(BEFORE_THE_MOVE)
    old_challenge = state.apps.get_model("arena_api", "Challenge")
    assert old_challenge.objects.get(pk=challenge.pk).sets == 1
    assert set(connection.introspection.table_names()) >= TABLES
