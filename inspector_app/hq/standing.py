"""HQ's view of each permit holder from the full history: points, reincidence, cassação.

After each accepted ``auto_infracao`` HQ appends its infractions to the ``history``
reference table (status ``pending``, points as the engine computed them in the sealed
outcome); a ``cancelamento`` of that auto marks them ``cancelled``. Then the holder's
standing is recomputed from every history row HQ holds for it and published in the
``standing`` reference table through the same pull log (``changes``). Devices keep it in
``ref_standing`` (store migration ``0004_standing``) and show it, labelled as HQ's with its
``as_of`` date, beside their own computation; their rules engine does not read it. An
older device that does not know ``standing`` skips it (``sync.client._apply_change``). It
is never imported from a registry file (``registry.NOT_IMPORTED``).

Cassação (Decreto 15.154/1993, art. 39, I) uses the pack parameter
``cassacao.point_windows`` as HQ publishes it in the ``parameters`` reference table for the
auto's pack; when HQ has not imported it, the DF windows below (12 points in 4 months, 18 in
8, 22 in 12). HQ may not import the pack loader (import-linter), so the pack files are not
read here. A proposal is only a proposal: the authority decides.

Also here: the same plate with the same rule on the same day in autos from two different
devices is written to ``suspected_duplicates`` for ``inspector-hq report``.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, insert, select, update

from inspector_app.domain.deadlines import months_before
from inspector_app.hq.reference import append_change, current_row
from inspector_app.hq.registry import publish_row
from inspector_app.hq.tables import records, reference_rows, suspected_duplicates
from inspector_app.sync.protocol import display_number

STANDING_TABLE = "standing"
DF_POINT_WINDOWS: tuple[tuple[int, int], ...] = ((4, 12), (8, 18), (12, 22))
REINCIDENCE_MONTHS = 12


def infractions_of(envelope: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The infractions of a sealed auto's outcome (rule_id and points), well-formed only."""
    body = envelope.get("body")
    outcome = body.get("outcome") if isinstance(body, Mapping) else None
    found = outcome.get("infractions") if isinstance(outcome, Mapping) else None
    if not isinstance(found, list):
        return []
    out = []
    for inf in found:
        if isinstance(inf, Mapping) and isinstance(inf.get("rule_id"), str):
            points = inf.get("points")
            out.append({"rule_id": inf["rule_id"],
                        "points": points if isinstance(points, int) else 0})
    return out


def _pack_id(envelope: Mapping[str, Any]) -> str | None:
    body = envelope.get("body")
    outcome = body.get("outcome") if isinstance(body, Mapping) else None
    pack = outcome.get("pack") if isinstance(outcome, Mapping) else None
    return pack if isinstance(pack, str) else None


def _holder_key(holder_id: str | None, plate_key: str | None) -> str | None:
    if holder_id:
        return holder_id
    return f"plate:{plate_key}" if plate_key else None


def point_windows(conn: Connection, pack_id: str | None) -> tuple[tuple[int, int], ...]:
    """(months, points) pairs: the published pack parameter, else the DF defaults."""
    if pack_id:
        row = current_row(conn, "parameters", f"{pack_id}|cassacao.point_windows")
        if row is not None:
            try:
                value = json.loads(row["value_json"])
                return tuple((int(w["months"]), int(w["points"])) for w in value)
            except (ValueError, TypeError, KeyError):
                pass
    return DF_POINT_WINDOWS


def _history_of(conn: Connection, holder_key: str) -> list[dict[str, Any]]:
    # Rows are stored as compact sorted JSON, so a substring test narrows the scan before
    # any JSON is parsed; the exact test follows.
    if holder_key.startswith("plate:"):
        needle = '"plate_key":' + json.dumps(holder_key[len("plate:"):], ensure_ascii=False)
    else:
        needle = '"holder_id":' + json.dumps(holder_key, ensure_ascii=False)
    rows = []
    for (text,) in conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False),
            reference_rows.c.row.contains(needle, autoescape=True),
        )
    ):
        row: dict[str, Any] = json.loads(text)
        if _holder_key(row.get("holder_id"), row.get("plate_key")) == holder_key:
            rows.append(row)
    return rows


def compute_standing(history: Sequence[Mapping[str, Any]], windows: Sequence[tuple[int, int]],
                     *, holder_key: str, pack_id: str | None,
                     as_of: dt.date | None = None) -> dict[str, Any]:
    """Points per window, reincidence per rule and the art. 39, I proposal, as of the
    latest history date (or ``as_of``). Cancelled entries count for nothing; pending ones
    count, and a proposal resting on them is marked provisional."""
    live = [h for h in history if h.get("status") != "cancelled"]
    dates = [dt.date.fromisoformat(str(h["date"])) for h in live]
    end = as_of or (max(dates) if dates else dt.date.today())

    def inside(months: int) -> list[Mapping[str, Any]]:
        start = months_before(end, months)
        return [h for h, d in zip(live, dates, strict=True) if start < d <= end]

    points: dict[str, int] = {}
    proposal: dict[str, Any] | None = None
    for months, threshold in windows:
        rows = inside(months)
        total = sum(int(h.get("points") or 0) for h in rows)
        upheld = sum(int(h.get("points") or 0) for h in rows if h.get("status") == "upheld")
        points[str(months)] = total
        if proposal is None and total >= threshold:
            proposal = {
                "ground": "DF15154.39.I",
                "text": f"{total} pontos em {months} meses (limite {threshold})",
                "provisional": upheld < threshold,
                "citation": "Decreto 15.154/1993, art. 39, I",
            }
    per_rule: dict[str, int] = {}
    for h in inside(REINCIDENCE_MONTHS):
        per_rule[str(h["rule_id"])] = per_rule.get(str(h["rule_id"]), 0) + 1
    reincidence = {rule: n - 1 for rule, n in sorted(per_rule.items()) if n > 1}
    return {
        "id": holder_key, "pack_id": pack_id, "as_of": end.isoformat(),
        "points_json": json.dumps(points, sort_keys=True),
        "reincidence_json": json.dumps(reincidence, sort_keys=True),
        "cassacao_proposed": proposal is not None,
        "cassacao_json": json.dumps(proposal, sort_keys=True, ensure_ascii=False)
        if proposal else None,
        "windows_json": json.dumps([list(w) for w in windows]),
    }


def publish_standing(conn: Connection, holder_key: str, pack_id: str | None) -> int | None:
    """Recompute and publish the standing of ``holder_key``; None when unchanged."""
    row = compute_standing(_history_of(conn, holder_key), point_windows(conn, pack_id),
                           holder_key=holder_key, pack_id=pack_id)
    text = json.dumps(row, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    existing = conn.execute(
        select(reference_rows.c.row, reference_rows.c.deleted).where(
            reference_rows.c.table_name == STANDING_TABLE, reference_rows.c.key == holder_key
        )
    ).first()
    if existing is not None and not existing.deleted and existing.row == text:
        return None
    seq = append_change(conn, STANDING_TABLE, holder_key, "upsert", row)
    if existing is None:
        conn.execute(insert(reference_rows).values(
            table_name=STANDING_TABLE, key=holder_key, row=text, deleted=False, seq=seq))
    else:
        conn.execute(update(reference_rows).where(
            reference_rows.c.table_name == STANDING_TABLE, reference_rows.c.key == holder_key
        ).values(row=text, deleted=False, seq=seq))
    return seq


def standing_of(conn: Connection, holder_key: str) -> dict[str, Any] | None:
    found = conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == STANDING_TABLE, reference_rows.c.key == holder_key,
            reference_rows.c.deleted.is_(False))
    ).scalar_one_or_none()
    if found is None:
        return None
    value: dict[str, Any] = json.loads(found)
    return value


def _flag_duplicates(conn: Connection, record_id: str, device_id: str, plate_key: str,
                     occurred_on: str, rule_ids: set[str], now: str) -> None:
    others = conn.execute(
        select(records.c.id, records.c.device_id, records.c.payload).where(
            records.c.kind == "auto_infracao", records.c.plate_key == plate_key,
            records.c.occurred_on == occurred_on, records.c.device_id != device_id,
        ).order_by(records.c.received_at, records.c.id)
    ).all()
    rows = []
    for other in others:
        try:
            envelope = json.loads(other.payload)
        except ValueError:
            continue
        for rule_id in sorted(rule_ids & {i["rule_id"] for i in infractions_of(envelope)}):
            rows.append({"plate_key": plate_key, "rule_id": rule_id, "occurred_on": occurred_on,
                         "record_id": record_id, "device_id": device_id,
                         "other_record_id": other.id, "other_device_id": other.device_id,
                         "flagged_at": now})
    if rows:
        conn.execute(insert(suspected_duplicates), rows)


def on_accepted(conn: Connection, envelope: Mapping[str, Any], device_id: str,
                now: str) -> None:
    """Update history, standing and duplicate flags for a record just stored."""
    kind = envelope.get("kind")
    if kind == "auto_infracao":
        _on_auto(conn, envelope, device_id, now)
    elif kind == "cancelamento" and isinstance(envelope.get("refers_to"), str):
        _on_cancel(conn, envelope["refers_to"])


def _on_auto(conn: Connection, envelope: Mapping[str, Any], device_id: str, now: str) -> None:
    infractions = infractions_of(envelope)
    if not infractions:
        return
    holder_id = envelope.get("holder_id") if isinstance(envelope.get("holder_id"), str) else None
    plate_key = envelope.get("plate_key") if isinstance(envelope.get("plate_key"), str) else None
    occurred = envelope.get("occurred_on")
    try:
        date = dt.date.fromisoformat(str(occurred)[:10]).isoformat()
    except ValueError:
        return
    holder_key = _holder_key(holder_id, plate_key)
    number = display_number(envelope.get("series"), envelope.get("number"))
    cancelled = conn.execute(
        select(records.c.id).where(records.c.kind == "cancelamento",
                                   records.c.refers_to == envelope["id"])
    ).first() is not None
    for index, inf in enumerate(infractions):
        publish_row(conn, "history", {
            "id": f"{envelope['id']}:{index}", "holder_id": holder_id, "plate_key": plate_key,
            "rule_id": inf["rule_id"], "date": date,
            "status": "cancelled" if cancelled else "pending",
            "points": inf["points"], "auto_number": number,
        }, updated_at=now)
    if holder_key is not None:
        publish_standing(conn, holder_key, _pack_id(envelope))
    if plate_key:
        _flag_duplicates(conn, str(envelope["id"]), device_id, plate_key, date,
                         {i["rule_id"] for i in infractions}, now)


def _on_cancel(conn: Connection, auto_id: str) -> None:
    auto = conn.execute(
        select(records.c.payload).where(records.c.id == auto_id,
                                        records.c.kind == "auto_infracao")
    ).scalar_one_or_none()
    if auto is None:
        return
    envelope = json.loads(auto)
    touched: set[str] = set()
    for index in range(len(infractions_of(envelope))):
        row = current_row(conn, "history", f"{auto_id}:{index}")
        if row is None or row.get("status") == "cancelled":
            continue
        row.pop("updated_at", None)
        publish_row(conn, "history", {**row, "status": "cancelled"})
        key = _holder_key(row.get("holder_id"), row.get("plate_key"))
        if key is not None:
            touched.add(key)
    for key in sorted(touched):
        publish_standing(conn, key, _pack_id(envelope))


def list_suspected_duplicates(conn: Connection) -> list[dict[str, Any]]:
    return [dict(r._mapping) for r in conn.execute(
        select(suspected_duplicates).order_by(suspected_duplicates.c.id))]
