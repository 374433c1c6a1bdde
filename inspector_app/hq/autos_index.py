"""``auto_index``: one row per auto HQ holds, with the fields the console's Autos table
searches, filters and sorts on, read from the signed payload when the record is accepted.

The payload in ``records`` stays the truth; this table is derived from it (and rebuilt from
it by :func:`rebuild`). A cancelamento accepted for an auto marks the auto's row
``cancelado`` in the same transaction.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from inspector_app.hq.tables import auto_index, records

INDEXED_KINDS = ("auto_infracao", "auto_vistoria")
STATUS_VALID, STATUS_CANCELLED = "valido", "cancelado"


def search_text(value: str) -> str:
    """Lower case without accents: what a holder's name is searched by."""
    decomposed = unicodedata.normalize("NFKD", value)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def _text(value: object, size: int) -> str | None:
    if isinstance(value, str | int) and not isinstance(value, bool):
        text = str(value).strip()
        if text and text.isprintable():
            return text[:size]
    return None


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def index_row(envelope: Mapping[str, Any], *, device_id: str, received_at: str) -> dict[str, Any]:
    """The ``auto_index`` row of an accepted auto (its envelope passed the record schema:
    the shapes read here are bounded; anything else is left empty, never guessed)."""
    body = _mapping(envelope.get("body"))
    vehicle = _mapping(body.get("vehicle"))
    agent = _mapping(body.get("agent"))
    pack = _mapping(body.get("pack"))
    location = _mapping(body.get("location"))
    outcome = _mapping(body.get("outcome"))
    infractions = outcome.get("infractions")
    rules: list[str] = []
    if isinstance(infractions, list):
        for inf in infractions:
            rule = _text(_mapping(inf).get("rule_id"), 80)
            if rule and rule not in rules:
                rules.append(rule)
    rule_text = " ".join(rules)
    holder = _text(vehicle.get("holder_name"), 200)
    occurred = _text(body.get("occurred_at"), 40) or _text(envelope.get("occurred_on"), 40) \
        or str(envelope.get("created_at"))[:40]
    return {
        "record_id": envelope["id"], "kind": envelope["kind"], "device_id": device_id,
        "series": envelope.get("series"), "number": envelope.get("number"),
        "verification_code": envelope["verification_code"],
        "plate_key": _text(envelope.get("plate_key"), 16),
        "plate": _text(vehicle.get("plate"), 16) or _text(envelope.get("plate_key"), 16),
        "holder_name": holder, "holder_search": search_text(holder) if holder else None,
        "holder_document": _text(vehicle.get("holder_document"), 20),
        "agent_matricula": _text(agent.get("matricula"), 40),
        "agent_name": _text(agent.get("name"), 200),
        "rule_ids": f" {rule_text} " if rule_text else None,
        "organ": _text(pack.get("organ"), 80),
        "occurred_at": occurred,
        "status": STATUS_VALID, "received_at": received_at,
        "place": _text(location.get("place"), 200),
        "latitude": _text(location.get("latitude"), 20),
        "longitude": _text(location.get("longitude"), 20),
    }


def on_stored(conn: Connection, envelopes: Iterable[Mapping[str, Any]], *, device_id: str,
              received_at: str) -> None:
    """Index the autos among records just stored, and mark cancelled the autos their
    cancelamentos refer to. Called by the ingest in the transaction that stored them."""
    rows = [index_row(e, device_id=device_id, received_at=received_at)
            for e in envelopes if e.get("kind") in INDEXED_KINDS]
    cancelled = [str(e["refers_to"]) for e in envelopes
                 if e.get("kind") == "cancelamento" and e.get("refers_to")]
    if rows:
        # An auto cancelled in the same batch (or before it arrived) is born cancelled.
        already = set(conn.execute(select(records.c.refers_to).where(
            records.c.kind == "cancelamento",
            records.c.refers_to.in_([r["record_id"] for r in rows]))).scalars())
        for row in rows:
            if row["record_id"] in already:
                row["status"] = STATUS_CANCELLED
        conn.execute(insert(auto_index), rows)
    if cancelled:
        conn.execute(update(auto_index).where(auto_index.c.record_id.in_(cancelled))
                     .values(status=STATUS_CANCELLED))


def rebuild(conn: Connection) -> int:
    """Empty ``auto_index`` and fill it again from every record HQ holds; the count."""
    conn.execute(delete(auto_index))
    count = 0
    batch: list[Mapping[str, Any]] = []
    query = select(records.c.device_id, records.c.received_at, records.c.payload).where(
        records.c.kind.in_([*INDEXED_KINDS, "cancelamento"])).order_by(records.c.received_at)
    last: tuple[str, str] | None = None
    for row in conn.execute(query):
        key = (row.device_id, row.received_at)
        if last is not None and key != last and batch:
            count += _flush(conn, batch, last)
            batch = []
        last = key
        batch.append(json.loads(row.payload))
    if batch and last is not None:
        count += _flush(conn, batch, last)
    return count


def _flush(conn: Connection, batch: list[Mapping[str, Any]], key: tuple[str, str]) -> int:
    on_stored(conn, batch, device_id=key[0], received_at=key[1])
    return sum(1 for e in batch if e.get("kind") in INDEXED_KINDS)
