"""Row seals: what the app wrote, told apart from what was written behind its back.

HQ's reference rows (``ref_*``), ``app_meta`` (HQ URL, device token, pinned key), the outbox
(acknowledgements), number ranges and login state change in place, so the journal cannot
vouch for them. Every write of the app to these tables fires a trigger that stores, in
``row_seals``, an HMAC-SHA256 of the whole row under a key derived from the database key,
computed by ``inspector_seal()`` — a function only the app's connections have
(``register``). A row edited, added or removed with any other tool (the triggers dropped,
or the function faked without the key) no longer matches its seal, and
``inspector store verify`` lists it.

Append-only tables (records, journal, prints, archived documents, …) get a row counter in
``app_meta`` (``rows.<table>``), raised by an insert trigger and itself sealed: a deleted
row — also the newest one — leaves the count short.

Limit (docs/ARCHITECTURE.md, "Data at rest"): whoever holds the database key can compute
seals too; the seals catch edits made without the app's scheme, not a rewrite by someone
who has read this code and the key.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator, Sequence
from typing import Any

from inspector_app.store import dbapi

SEAL_FUNCTION = "inspector_seal"
SEALED_TABLES = (
    "ref_permit_holders", "ref_lines", "ref_vehicles", "ref_drivers", "ref_inspectors",
    "ref_history", "ref_parameters", "ref_pack_versions", "ref_standing",
    "app_meta", "outbox", "number_ranges", "login_state",
)
COUNTED_TABLES = (
    "records", "journal", "number_usage", "outbox", "print_log", "documents", "inspections",
    "answers", "photos", "signatures",
)
COUNTER_PREFIX = "rows."


def seal_key(database_key: bytes) -> bytes:
    return hmac.new(database_key, b"inspector row seal v1", hashlib.sha256).digest()


def _encode(value: Any) -> Any:
    if isinstance(value, bytes | memoryview):
        return {"hex": bytes(value).hex()}
    return value


def seal(key: bytes, table: str, values: Sequence[Any]) -> str:
    message = json.dumps([table, [_encode(v) for v in values]], ensure_ascii=False,
                         separators=(",", ":"))
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def register(conn: dbapi.Connection, database_key: bytes) -> None:
    """Give ``conn`` the seal function the triggers call."""
    key = seal_key(database_key)

    def fn(table: str, *values: Any) -> str:
        return seal(key, table, values)

    conn.create_function(SEAL_FUNCTION, -1, fn, deterministic=True)


def primary_key(conn: Any, table: str) -> list[str]:
    cols = sorted((r[5], r[1]) for r in conn.execute(f"PRAGMA table_info({table})") if r[5])
    return [name for _, name in cols]


def columns(conn: Any, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _pk_sql(alias: str, pk: Sequence[str]) -> str:
    return " || char(31) || ".join(f"CAST({alias}.{c} AS TEXT)" for c in pk)


def install_statements(conn: Any, table: str) -> Iterator[str]:
    """Seal triggers for ``table`` as it is now (a migration that changes the table's
    columns must drop and install them again), and the seals of its present rows."""
    cols = columns(conn, table)
    pk = primary_key(conn, table)
    values = ", ".join(f"NEW.{c}" for c in cols)
    new_pk, old_pk = _pk_sql("NEW", pk), _pk_sql("OLD", pk)
    insert = (f"INSERT OR REPLACE INTO row_seals (tbl, pk, mac) VALUES ('{table}', {new_pk}, "
              f"{SEAL_FUNCTION}('{table}', {values}));")
    delete = f"DELETE FROM row_seals WHERE tbl = '{table}' AND pk = {old_pk};"
    for name in ("ins", "upd", "del"):
        yield f"DROP TRIGGER IF EXISTS {table}_seal_{name}"
    yield f"CREATE TRIGGER {table}_seal_ins AFTER INSERT ON {table} BEGIN {insert} END"
    yield f"CREATE TRIGGER {table}_seal_upd AFTER UPDATE ON {table} BEGIN {delete} {insert} END"
    yield f"CREATE TRIGGER {table}_seal_del AFTER DELETE ON {table} BEGIN {delete} END"
    row = ", ".join(f"t.{c}" for c in cols)
    yield (f"INSERT OR REPLACE INTO row_seals (tbl, pk, mac) SELECT '{table}', "
           f"{_pk_sql('t', pk)}, {SEAL_FUNCTION}('{table}', {row}) FROM {table} AS t")


def counter_statements(table: str) -> Iterator[str]:
    key = f"{COUNTER_PREFIX}{table}"
    yield f"DROP TRIGGER IF EXISTS {table}_count_ins"
    yield (f"INSERT OR REPLACE INTO app_meta (key, value) "
           f"SELECT '{key}', CAST(COUNT(*) AS TEXT) FROM {table}")
    yield (f"CREATE TRIGGER {table}_count_ins AFTER INSERT ON {table} BEGIN "
           f"UPDATE app_meta SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT) "
           f"WHERE key = '{key}'; END")


def check(conn: Any, database_key: bytes, limit: int = 20) -> list[str]:
    """Problems: rows whose seal is missing or does not match, seals of rows that are gone,
    counters that differ from the rows counted (``limit`` lines per table, then a count)."""
    problems: list[str] = []
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'row_seals'").fetchone()
    if not exists:
        return ["row_seals table is missing (removed, or a store from before 0005)"]
    key = seal_key(database_key)
    for table in SEALED_TABLES:
        cols = columns(conn, table)
        pk = primary_key(conn, table)
        seals = {str(r[0]): str(r[1]) for r in conn.execute(
            "SELECT pk, mac FROM row_seals WHERE tbl = ?", [table])}
        found: list[str] = []
        for row in conn.execute(f"SELECT {', '.join(cols)} FROM {table}"):
            values = dict(zip(cols, row, strict=True))
            row_pk = "\x1f".join(str(values[c]) for c in pk)
            mac = seals.pop(row_pk, None)
            shown = "/".join(str(values[c]) for c in pk)
            if mac is None:
                found.append(f"{table} {shown}: row not written by the app (no seal)")
            elif not hmac.compare_digest(mac, seal(key, table, row)):
                found.append(f"{table} {shown}: row changed outside the app (seal mismatch)")
        for row_pk in seals:
            found.append(f"{table} {row_pk.replace(chr(31), '/')}: row removed outside "
                         "the app (its seal remains)")
        problems.extend(found[:limit])
        if len(found) > limit:
            problems.append(f"{table}: … and {len(found) - limit} more rows")
    for table in COUNTED_TABLES:
        key_name = f"{COUNTER_PREFIX}{table}"
        counter = conn.execute("SELECT value FROM app_meta WHERE key = ?", [key_name]).fetchone()
        count = conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        if counter is None:
            problems.append(f"{table}: row counter {key_name} is missing")
        elif str(counter[0]) != str(count):
            verb = "removed" if int(count) < int(counter[0]) else "added"
            problems.append(f"{table}: {count} rows but {counter[0]} were written by the app "
                            f"(rows {verb} outside the app)")
    return problems
