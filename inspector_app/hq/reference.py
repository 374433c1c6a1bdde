"""Reference data HQ owns and publishes: current rows and the pull log (``changes``).

Every upsert or tombstone gets the next server sequence number; devices pull changes after
their cursor, in that order. An upsert of a row identical to the current one publishes
nothing. Number ranges are published only to the device they belong to.

Caveat on ordering: a pull skips nothing only if sequence numbers become visible in order.
On PostgreSQL two writers could commit out of order, so every writer of ``changes`` first
takes an EXCLUSIVE lock on it (readers are not blocked); SQLite serialises writers anyway.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from sqlalchemy import Connection, and_, func, insert, or_, select, update

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import changes, reference_rows
from inspector_app.sync.protocol import REFERENCE_KEYS, Change, PullPage, reference_key


def row_json(row: Mapping[str, Any]) -> str:
    return json.dumps(dict(row), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _lock_changes(conn: Connection) -> None:
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("LOCK TABLE changes IN EXCLUSIVE MODE")


def append_change(
    conn: Connection,
    table: str,
    key: str,
    op: str,
    row: Mapping[str, Any],
    *,
    device_id: str | None = None,
) -> int:
    """Append one change to the pull log; returns its sequence number."""
    _lock_changes(conn)
    result = conn.execute(
        insert(changes).values(
            table_name=table, key=key, op=op, row=row_json(row), device_id=device_id,
            at=utc_now(),
        )
    )
    seq = result.inserted_primary_key
    assert seq is not None
    return int(seq[0])


def current_row(conn: Connection, table: str, key: str) -> dict[str, Any] | None:
    """The live row of ``table`` with ``key`` (None if absent or deleted)."""
    found = conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == table,
            reference_rows.c.key == key,
            reference_rows.c.deleted.is_(False),
        )
    ).scalar_one_or_none()
    if found is None:
        return None
    value: dict[str, Any] = json.loads(found)
    return value


def live_rows(conn: Connection, table: str) -> Iterator[dict[str, Any]]:
    for (text,) in conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == table, reference_rows.c.deleted.is_(False)
        )
    ):
        value: dict[str, Any] = json.loads(text)
        yield value


def upsert_row(conn: Connection, table: str, row: Mapping[str, Any]) -> int | None:
    """Make ``row`` the current row of ``table`` and publish it; None when unchanged."""
    key = reference_key(table, row)
    text = row_json(row)
    existing = conn.execute(
        select(reference_rows.c.row, reference_rows.c.deleted).where(
            reference_rows.c.table_name == table, reference_rows.c.key == key
        )
    ).first()
    if existing is not None and not existing.deleted and existing.row == text:
        return None
    seq = append_change(conn, table, key, "upsert", row)
    if existing is None:
        conn.execute(
            insert(reference_rows).values(
                table_name=table, key=key, row=text, deleted=False, seq=seq
            )
        )
    else:
        conn.execute(
            update(reference_rows)
            .where(reference_rows.c.table_name == table, reference_rows.c.key == key)
            .values(row=text, deleted=False, seq=seq)
        )
    return seq


def delete_row(conn: Connection, table: str, key: str) -> int | None:
    """Tombstone the row ``key`` of ``table``; None when there is no live row."""
    current = current_row(conn, table, key)
    if current is None:
        return None
    pk = {column: current[column] for column in REFERENCE_KEYS[table]}
    seq = append_change(conn, table, key, "delete", pk)
    conn.execute(
        update(reference_rows)
        .where(reference_rows.c.table_name == table, reference_rows.c.key == key)
        .values(deleted=True, seq=seq)
    )
    return seq


def pull_page(conn: Connection, *, device_id: str, cursor: int, limit: int) -> PullPage:
    """Changes after ``cursor`` meant for everyone or for ``device_id``, oldest first."""
    rows = conn.execute(
        select(changes)
        .where(
            and_(
                changes.c.seq > cursor,
                or_(changes.c.device_id.is_(None), changes.c.device_id == device_id),
            )
        )
        .order_by(changes.c.seq)
        .limit(limit + 1)
    ).all()
    page = rows[:limit]
    return PullPage(
        changes=[
            Change(seq=r.seq, table=r.table_name, key=r.key, op=r.op, row=json.loads(r.row))
            for r in page
        ],
        next_cursor=page[-1].seq if page else cursor,
        more=len(rows) > limit,
    )


def last_seq(conn: Connection) -> int:
    return int(conn.execute(select(func.coalesce(func.max(changes.c.seq), 0))).scalar_one())
