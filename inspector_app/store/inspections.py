"""Open inspections: the header, and every answer, photo and signature as it is given.

Each write is one autocommit statement with ``synchronous=FULL``: when the call returns, the
answer is on disk, so a crash in the middle of a checklist loses nothing. Answers are an
append-only log; the latest answer per item is the current one. Once the inspection is
sealed, triggers refuse any further change.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector_app.store import dbapi
from inspector_app.store.db import Store, StoreError, translate_error, utc_now


@dataclass(frozen=True)
class InspectionRow:
    id: str
    pack_id: str
    pack_version: str
    pack_hash: str
    kind: str
    matricula: str
    started_at: str
    occurred_at: str
    location_type: str
    place: str
    latitude: float | None
    longitude: float | None
    vehicle_id: str | None
    plate: str | None
    plate_key: str | None
    vehicle: dict[str, Any]
    driver: dict[str, Any]
    facts: dict[str, Any]
    start_of_operation: bool
    manifest_insecurity: bool
    status: str
    sealed_at: str | None


@dataclass(frozen=True)
class AnswerRow:
    item_id: str
    result: str
    rules: tuple[str, ...]
    note: str
    value: object
    answered_at: str


@dataclass(frozen=True)
class PhotoRow:
    id: int
    item_id: str | None
    original_sha256: str
    working_sha256: str
    thumb_sha256: str
    original_name: str
    width: int
    height: int
    taken_at: str | None


@dataclass(frozen=True)
class SignatureRow:
    role: str
    status: str
    png_sha256: str | None
    note: str
    signed_at: str


_COLUMNS = (
    "id, pack_id, pack_version, pack_hash, kind, matricula, started_at, occurred_at, "
    "location_type, place, latitude, longitude, vehicle_id, plate, plate_key, vehicle_json, "
    "driver_json, facts_json, start_of_operation, manifest_insecurity, status, sealed_at"
)


def _write(store: Store, sql: str, params: list[Any]) -> dbapi.Cursor:
    store.require_writable()
    try:
        return store.conn.execute(sql, params)
    except dbapi.Error as exc:
        raise translate_error(exc) from exc


def create_inspection(store: Store, row: Mapping[str, Any]) -> None:
    data = dict(row)
    for key in ("vehicle", "driver", "facts"):
        data[f"{key}_json"] = json.dumps(data.pop(key), ensure_ascii=False, sort_keys=True)
    data["start_of_operation"] = int(bool(data["start_of_operation"]))
    data["manifest_insecurity"] = int(bool(data["manifest_insecurity"]))
    columns = ", ".join(data)
    marks = ", ".join("?" for _ in data)
    _write(store, f"INSERT INTO inspections({columns}) VALUES ({marks})", list(data.values()))


def get_inspection(store: Store, inspection_id: str) -> InspectionRow:
    row = store.conn.execute(
        f"SELECT {_COLUMNS} FROM inspections WHERE id = ?", [inspection_id]
    ).fetchone()
    if row is None:
        raise StoreError(f"no inspection {inspection_id}", "Inspeção não encontrada.")
    values = list(row)
    for i in (15, 16, 17):
        values[i] = json.loads(values[i])
    values[18] = bool(values[18])
    values[19] = bool(values[19])
    return InspectionRow(*values)


def require_open(store: Store, inspection_id: str) -> InspectionRow:
    insp = get_inspection(store, inspection_id)
    if insp.status != "open":
        raise StoreError(
            f"inspection {inspection_id} is {insp.status}",
            "Esta inspeção já foi encerrada (selada ou abandonada) e não pode mudar.",
        )
    return insp


def update_open(store: Store, inspection_id: str, changes: Mapping[str, Any]) -> None:
    """Change header fields of an open inspection (place, driver, facts …)."""
    data = dict(changes)
    for key in ("vehicle", "driver", "facts"):
        if key in data:
            data[f"{key}_json"] = json.dumps(data.pop(key), ensure_ascii=False, sort_keys=True)
    sets = ", ".join(f"{k} = ?" for k in data)
    cur = _write(
        store,
        f"UPDATE inspections SET {sets} WHERE id = ? AND status = 'open'",
        [*data.values(), inspection_id],
    )
    if cur.rowcount != 1:
        require_open(store, inspection_id)


def add_answer(
    store: Store,
    inspection_id: str,
    item_id: str,
    result: str,
    *,
    rules: tuple[str, ...] = (),
    note: str = "",
    value: object = None,
) -> None:
    _write(
        store,
        "INSERT INTO answers(inspection_id, item_id, result, rules_json, note, value_json, "
        "answered_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [inspection_id, item_id, result, json.dumps(list(rules)), note,
         json.dumps(value, ensure_ascii=False), utc_now()],
    )


def current_answers(store: Store, inspection_id: str) -> dict[str, AnswerRow]:
    """The latest answer of each item (earlier answers stay in the log)."""
    rows = store.conn.execute(
        "SELECT item_id, result, rules_json, note, value_json, answered_at FROM answers "
        "WHERE inspection_id = ? ORDER BY id",
        [inspection_id],
    ).fetchall()
    out: dict[str, AnswerRow] = {}
    for item_id, result, rules, note, value, at in rows:
        out[item_id] = AnswerRow(item_id, result, tuple(json.loads(rules)), note,
                                 json.loads(value), at)
    return out


def add_photo(store: Store, inspection_id: str, values: Mapping[str, Any]) -> int:
    data = {"inspection_id": inspection_id, **values, "added_at": utc_now()}
    cur = _write(
        store,
        f"INSERT INTO photos({', '.join(data)}) VALUES ({', '.join('?' for _ in data)})",
        list(data.values()),
    )
    return int(cur.lastrowid or 0)


def photos(store: Store, inspection_id: str) -> list[PhotoRow]:
    """The inspection's photos, without those removed while it was open."""
    rows = store.conn.execute(
        "SELECT id, item_id, original_sha256, working_sha256, thumb_sha256, original_name, "
        "width, height, taken_at FROM photos WHERE inspection_id = ? AND id NOT IN "
        "(SELECT photo_id FROM photo_removals) ORDER BY id",
        [inspection_id],
    ).fetchall()
    return [PhotoRow(*r) for r in rows]


def remove_photo(store: Store, inspection_id: str, photo_id: int) -> None:
    """Take a photo out of an open inspection (the trigger refuses a sealed one)."""
    _write(store, "INSERT INTO photo_removals(photo_id, inspection_id, removed_at) "
                  "VALUES (?, ?, ?)", [photo_id, inspection_id, utc_now()])


def add_signature(store: Store, inspection_id: str, role: str, status: str,
                  png_sha256: str | None, note: str) -> None:
    _write(
        store,
        "INSERT INTO signatures(inspection_id, role, status, png_sha256, note, signed_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [inspection_id, role, status, png_sha256, note, utc_now()],
    )


def current_signatures(store: Store, inspection_id: str) -> dict[str, SignatureRow]:
    rows = store.conn.execute(
        "SELECT role, status, png_sha256, note, signed_at FROM signatures "
        "WHERE inspection_id = ? ORDER BY id",
        [inspection_id],
    ).fetchall()
    return {r[0]: SignatureRow(*r) for r in rows}


def open_inspections(store: Store) -> list[InspectionRow]:
    ids = store.conn.execute(
        "SELECT id FROM inspections WHERE status = 'open' ORDER BY started_at"
    ).fetchall()
    return [get_inspection(store, i) for (i,) in ids]
