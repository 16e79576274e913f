"""Plain SQL for the site's busiest reads: what the ORM would give, without building a query.

Building an ORM query costs a few tenths of a millisecond before the database sees it, more than
the database's own work for most of a page's reads (one row by key, a page of an index). The
busiest pages (the bot, ladder and match pages, replay downloads) write those statements out
once, in SQL that PostgreSQL and SQLite read alike, and read tuples. Values come back as the ORM
would hand them over: `moment` and `document` undo what SQLite's plain cursor leaves raw.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from django.db import connection, models
from django.db.models import Model
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from septet_platform.matches.models import Match
from septet_platform.matches.selectors import OVER


def fetch(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Every row of `sql` (with %s placeholders) as tuples."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


BIGGEST_ID = 2**63 - 1
"""Ids past this (a 64-bit column's largest) name no row; SQLite's driver refuses to send them."""


def marks(count: int) -> str:
    """`count` placeholders for an IN (...) list."""
    return ", ".join(["%s"] * count)


def literals(values: Iterable[str]) -> str:
    """Constant status values as SQL string literals (our own enum values, never user input)."""
    words = sorted(str(value) for value in values)
    if not all(re.fullmatch(r"[a-z_]+", word) for word in words):
        raise ValueError(f"not a plain status value: {words}")
    return ", ".join(f"'{word}'" for word in words)


def table(model: type[Model]) -> str:
    return model._meta.db_table


def columns(model: type[Model], alias: str = "") -> tuple[list[str], str]:
    """The model's concrete fields' attribute names, and its columns as a SELECT list."""
    fields = model._meta.concrete_fields
    prefix = f"{alias}." if alias else ""
    return [f.attname for f in fields], ", ".join(f"{prefix}{f.column}" for f in fields)


def moment(value: Any) -> datetime | None:
    """A time column as the ORM gives it (aware, in UTC): SQLite hands plain SQL a naive one."""
    if value is None:
        return None
    parsed = parse_datetime(value) if isinstance(value, str) else value
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, UTC)
    return parsed


def document(value: Any) -> Any:
    """A JSON column as the ORM gives it (PostgreSQL's driver may have parsed it already)."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def instance(model: type[Model], values: Sequence[Any]) -> Any:
    """A `model` instance from a row of `columns(model)`, its values as the ORM would convert
    them (times aware, JSON parsed, booleans as bool)."""
    fields = model._meta.concrete_fields
    converted = [_value(field, value) for field, value in zip(fields, values, strict=True)]
    return model.from_db(connection.alias, [field.attname for field in fields], converted)


def _value(field: models.Field[Any, Any], value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.DateTimeField):
        return moment(value)
    if isinstance(field, models.JSONField):
        return document(value)
    if isinstance(field, models.BooleanField):
        return bool(value)
    return value


def set_open(alias: str) -> str:
    """An SQL expression, 1 or 0: the match `alias` is in a duplicate set that still has a match
    that is not over (same ladder, tournament and set name). `matches.selectors`' publication
    rule (`published_match_ids`, `match_is_published`) in SQL: a match is published when its
    status is in OVER and this is 0 (tests/web/test_plain_reads.py holds them equal)."""
    return f"""CASE WHEN {alias}.duplicate_set <> '' AND EXISTS (
        SELECT 1 FROM {table(Match)} o
        WHERE o.duplicate_set = {alias}.duplicate_set AND o.ladder_id = {alias}.ladder_id
            AND (o.tournament_id = {alias}.tournament_id
                OR (o.tournament_id IS NULL AND {alias}.tournament_id IS NULL))
            AND o.status NOT IN ({literals(OVER)})
    ) THEN 1 ELSE 0 END"""
