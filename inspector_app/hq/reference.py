"""Reference data HQ owns and publishes: current rows and the pull log (``changes``).

Every upsert or tombstone gets the next server sequence number; devices pull changes after
their cursor, in that order. An upsert of a row identical to the current one publishes
nothing. Number ranges are published only to the device they belong to.

Caveat on ordering: a pull skips nothing only if sequence numbers become visible in order.
On PostgreSQL two writers could commit out of order, so every writer of ``changes`` first
takes an EXCLUSIVE lock on it (readers are not blocked); SQLite serialises writers anyway.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, and_, bindparam, func, insert, or_, select, update
from sqlalchemy import text as sql_text

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import (
    changes,
    devices,
    history_facts,
    pull_compactions,
    records,
    reference_rows,
)
from inspector_app.sync.protocol import (
    REFERENCE_KEYS,
    Change,
    PullPage,
    change_tag,
    reference_key,
)

# What a published row may hold: every device stores it in SQLite (64-bit integers, text
# without NUL), so anything else would stop every device's pull (issue 14, finding 2).
MAX_PUBLISHED_INT = 2**63 - 1
MAX_PUBLISHED_TEXT = 100_000


class PublishError(ValueError):
    """A row HQ was about to publish holds a value devices cannot store (a bug upstream:
    records and registry files are checked before anything is derived from them)."""


def check_publishable(table: str, row: Mapping[str, Any]) -> None:
    """Raise :class:`PublishError` unless every value of ``row`` is NULL, a boolean, a
    64-bit integer or a text of at most :data:`MAX_PUBLISHED_TEXT` characters without NUL,
    and its key columns are present."""
    for column in REFERENCE_KEYS.get(table, ()):
        if row.get(column) is None:
            raise PublishError(f"{table}: key column {column} missing")
    for column, value in row.items():
        if value is None or isinstance(value, bool):
            continue
        if isinstance(value, int):
            if not -MAX_PUBLISHED_INT <= value <= MAX_PUBLISHED_INT:
                raise PublishError(f"{table}.{column}: integer outside 64 bits")
        elif isinstance(value, str):
            if len(value) > MAX_PUBLISHED_TEXT or "\x00" in value:
                raise PublishError(f"{table}.{column}: text too long or with NUL")
        else:
            raise PublishError(f"{table}.{column}: {type(value).__name__} is not a column value")


def row_json(row: Mapping[str, Any]) -> str:
    return json.dumps(dict(row), sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def lock_changes(conn: Connection) -> None:
    """Take the pull log's write lock until the transaction ends (see the caveat above):
    taken before reading what a publication is computed from, so the publication sees
    every change committed before it."""
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql("LOCK TABLE changes IN EXCLUSIVE MODE")


def lock_holders(conn: Connection, holder_keys: Iterable[str]) -> None:
    """Serialise, until the transaction ends, the transactions that recompute the standing
    of any of these holders (PostgreSQL advisory locks, taken in one order so two batches
    cannot deadlock); SQLite serialises writers anyway. Taken before a holder's history is
    read, so a standing is computed from every auto committed before it."""
    keys = sorted({_lock_number(key) for key in holder_keys})
    if keys and conn.dialect.name == "postgresql":
        conn.execute(sql_text("SELECT pg_advisory_xact_lock(k) "
                              "FROM unnest(CAST(:keys AS bigint[])) AS k ORDER BY k"),
                     {"keys": keys})


def _lock_number(key: str) -> int:
    return int.from_bytes(hashlib.sha256(b"holder:" + key.encode()).digest()[:8], "big",
                          signed=True)


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
    check_publishable(table, row)
    lock_changes(conn)
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


def history_holder_key(row: Mapping[str, Any]) -> str | None:
    """Whose history a ``history`` row is: the permit holder's id, else ``plate:<plate>``."""
    holder, plate = row.get("holder_id"), row.get("plate_key")
    if holder:
        return str(holder)
    return f"plate:{plate}" if plate else None


def upsert_row(conn: Connection, table: str, row: Mapping[str, Any]) -> int | None:
    """Make ``row`` the current row of ``table`` and publish it; None when unchanged."""
    published = upsert_tables(conn, [(table, [row])])
    return published[0] if published else None


def upsert_tables(conn: Connection,
                  tables: Sequence[tuple[str, Sequence[Mapping[str, Any]]]]) -> list[int]:
    """Make each row current and publish it, for several tables at once, in a handful of
    statements: one query per table for the current rows, then (holding the pull log's
    lock) one insert into the log for every change, one insert of the new rows and one
    batched update of the rows that existed. Rows equal to the current one are skipped; of
    two rows with one key the later wins. Returns the sequence numbers published, in order
    (the tables' order, then the rows')."""
    todo: list[tuple[str, str, Mapping[str, Any], str, bool]] = []
    for table, rows in tables:
        wanted: dict[str, tuple[Mapping[str, Any], str]] = {}
        for row in rows:
            check_publishable(table, row)
            wanted[reference_key(table, row)] = (row, row_json(row))
        keys = list(wanted)
        held: dict[str, Any] = {}
        if conn.dialect.name == "postgresql" and keys:
            # One index lookup per key (issue 19): ``table_name = … AND key IN (…)`` made
            # PostgreSQL read the table's every key from the index, a batch costing more
            # with every history row held.
            for found in conn.execute(sql_text(
                    "SELECT r.key, r.row, r.deleted FROM unnest(CAST(:keys AS text[])) AS w(k) "
                    "CROSS JOIN LATERAL (SELECT key, row, deleted FROM reference_rows "
                    "WHERE table_name = :t AND key = w.k LIMIT 1) AS r"),
                    {"keys": keys, "t": table}):
                held[found.key] = found
            keys = []
        for start in range(0, len(keys), 500):
            for found in conn.execute(
                select(reference_rows.c.key, reference_rows.c.row,
                       reference_rows.c.deleted).where(
                    reference_rows.c.table_name == table,
                    reference_rows.c.key.in_(keys[start:start + 500]))
            ):
                held[found.key] = found
        todo += [(table, key, row, text, key in held) for key, (row, text) in wanted.items()
                 if key not in held or held[key].deleted or held[key].row != text]
    if not todo:
        return []
    lock_changes(conn)
    at = utc_now()
    seqs = [int(seq) for seq in conn.execute(
        insert(changes).returning(changes.c.seq, sort_by_parameter_order=True),
        [{"table_name": table, "key": key, "op": "upsert", "row": text, "device_id": None,
          "at": at} for table, key, _, text, _ in todo],
    ).scalars()]
    written = [{"t": table, "k": key, "row": text, "seq": seq, "deleted": False,
                "holder_key": history_holder_key(row) if table == "history" else None,
                "existed": existed}
               for (table, key, row, text, existed), seq in zip(todo, seqs, strict=True)]
    fresh = [{"table_name": w["t"], "key": w["k"], "row": w["row"], "deleted": False,
              "seq": w["seq"], "holder_key": w["holder_key"]} for w in written
             if not w["existed"]]
    if fresh:
        conn.execute(insert(reference_rows), fresh)
    changed = [{k: v for k, v in w.items() if k != "existed"} for w in written if w["existed"]]
    if changed:
        conn.execute(
            update(reference_rows).where(reference_rows.c.table_name == bindparam("t"),
                                         reference_rows.c.key == bindparam("k")),
            changed,
        )
    record_history_facts(conn, [row for table, _, row, _, _ in todo if table == "history"])
    return seqs


def history_fact(row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The ``history_facts`` row of a published history row (None when it names no holder
    or no date: it is part of no standing)."""
    holder_key, date = history_holder_key(row), row.get("date")
    if holder_key is None or not isinstance(date, str) or not date:
        return None
    status, rule = row.get("status"), row.get("rule_id")
    return {"key": str(row["id"]), "holder_key": holder_key, "date": date[:10],
            "status": str(status)[:40] if status is not None else None, "row": row_json(row),
            "rule_id": str(rule)[:80] if rule is not None else None}


def record_history_facts(conn: Connection, rows: Sequence[Mapping[str, Any]]) -> None:
    """Make ``rows`` (history rows) HQ's facts, one statement: a new row is added, a known
    one (its status changed, say) replaces the old; the later of two with one id wins."""
    facts: dict[str, dict[str, Any]] = {}
    for row in rows:
        fact = history_fact(row)
        if fact is not None:
            facts[fact["key"]] = fact
    if not facts:
        return
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as upsert
    else:
        from sqlalchemy.dialects.sqlite import insert as upsert  # type: ignore[assignment]
    statement = upsert(history_facts)
    conn.execute(statement.on_conflict_do_update(
        index_elements=[history_facts.c.key],
        set_={c: statement.excluded[c]
              for c in ("holder_key", "date", "status", "row", "rule_id")}),
        list(facts.values()))


def delete_row(conn: Connection, table: str, key: str) -> int | None:
    """Tombstone the row ``key`` of ``table``; None when there is no live row."""
    current = current_row(conn, table, key)
    if current is None:
        return None
    pk = {column: current[column] for column in REFERENCE_KEYS[table]}
    seq = append_change(conn, table, key, "delete", pk)
    if table == "history":  # an administrator's delete: no longer a fact (expiry keeps it)
        conn.execute(history_facts.delete().where(history_facts.c.key == key))
    conn.execute(
        update(reference_rows)
        .where(reference_rows.c.table_name == table, reference_rows.c.key == key)
        .values(deleted=True, seq=seq)
    )
    return seq


def pull_page(conn: Connection, *, device_id: str, cursor: int, limit: int,
              tag: str | None = None, acked: int | None = None,
              snapshots: bool = False) -> PullPage:
    """Changes after ``cursor`` meant for everyone or for ``device_id``, oldest first.

    Answers ``resync`` (no changes, cursor 0) when HQ is behind the device: the change at
    ``cursor`` is not in its log or is not the one the device applied (``tag``), or it
    holds fewer records of this device than the device saw acknowledged (``acked``). Both
    happen after HQ's database was restored from a backup (docs/hq-operations.md §4).
    A cursor behind the log's compaction point is answered ``snapshot`` when the device
    said it takes snapshots (``snapshots``), else ``resync``."""
    if acked is not None and acked > 0:
        held = conn.execute(select(func.count()).select_from(records)
                            .where(records.c.device_id == device_id)).scalar_one()
        if int(held) < acked:
            return PullPage(changes=[], next_cursor=0, more=True, resync=True)
    if cursor > 0:
        latest = conn.execute(select(pull_compactions.c.id, pull_compactions.c.floor_seq)
                              .order_by(pull_compactions.c.id.desc()).limit(1)).first()
        floor, compaction = (int(latest.floor_seq), int(latest.id)) if latest else (0, 0)
        seen = conn.execute(select(devices.c.pull_compaction)
                            .where(devices.c.id == device_id)).scalar_one_or_none()
        at = conn.execute(select(changes).where(changes.c.seq == cursor)).first()
        if (seen or 0) != compaction and (cursor < floor or (cursor == floor and at is None)):
            # Behind the compaction point (hq/compaction.py): tombstones it has not seen
            # may be gone. A snapshot, or a resync for an app that knows no snapshots.
            return PullPage(changes=[], next_cursor=0, more=True, resync=not snapshots,
                            snapshot=snapshots)
        if at is None or at.device_id not in (None, device_id) or (
                tag is not None and tag != change_tag(at.seq, at.table_name, at.key, at.op,
                                                      json.loads(at.row))):
            return PullPage(changes=[], next_cursor=0, more=True, resync=True)
    _note_compaction_seen(conn, device_id)
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


def _note_compaction_seen(conn: Connection, device_id: str) -> None:
    """The device pulls after the latest compaction (from 0, or in step past its floor): a
    later cursor of it below that floor is its snapshot going on (issue 19)."""
    latest = select(func.coalesce(func.max(pull_compactions.c.id), 0)).scalar_subquery()
    conn.execute(update(devices).where(devices.c.id == device_id,
                                       devices.c.pull_compaction != latest)
                 .values(pull_compaction=latest))


def last_seq(conn: Connection) -> int:
    return int(conn.execute(select(func.coalesce(func.max(changes.c.seq), 0))).scalar_one())
