"""Read-only lookups the screens need and ``services`` does not offer yet.

Stopgap: each function stands in for a service proposed to the lead (named in its
docstring) and reads through sqlite-utils' table API, never writing. When the service
exists, the function becomes a one-line call to it. Run these on the store worker only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from inspector_app.domain.identity import parse_plate
from inspector_app.store.sealing import SealedRecord, load_record

KIND_LABELS = {
    "auto_infracao": "Auto de infração",
    "auto_vistoria": "Auto de vistoria",
    "termo_retencao": "Termo de retenção",
    "termo_liberacao": "Termo de liberação",
    "termo_compromisso": "Termo de compromisso",
    "cancelamento": "Cancelamento",
    "retificacao": "Retificação",
    "numero_anulado": "Número anulado",
}


@dataclass(frozen=True)
class RecordSummary:
    """One sealed record as a row of a list (day's work, search results)."""

    id: str
    kind: str
    number: str
    created_at: str
    plate: str
    place: str
    verification_code: str
    cancelled: bool
    refers_to: str | None

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)


def pending_sync_count(store: Any) -> int:
    """Records sealed here and not yet acknowledged by HQ.

    Proposed service: ``services.pending_sync_count(*, store) -> int`` (the count of
    ``store status``'s ``outbox_pending``).
    """
    return int(store.db["outbox"].count_where("acked_at IS NULL"))


def _cancelled_ids(store: Any) -> set[str]:
    return {
        str(r["refers_to"])
        for r in store.db["records"].rows_where("kind = ?", ["cancelamento"], select="refers_to")
        if r["refers_to"]
    }


def _summary(record: SealedRecord, cancelled: set[str]) -> RecordSummary:
    env = record.envelope
    body = env.get("body", {})
    vehicle = body.get("vehicle") or {}
    location = body.get("location") or {}
    place = str(location.get("place") or body.get("place") or "")
    return RecordSummary(
        id=record.id, kind=record.kind, number=record.display_number,
        created_at=record.created_at, plate=str(vehicle.get("plate") or ""),
        place=place, verification_code=record.verification_code,
        cancelled=record.id in cancelled, refers_to=env.get("refers_to"),
    )


def records_since(store: Any, since: dt.datetime) -> list[RecordSummary]:
    """Records sealed at or after ``since`` (aware), newest first.

    Proposed service: ``services.records_sealed(*, store, since: datetime) -> list[dict]``.
    """
    stamp = since.astimezone(dt.UTC).isoformat(timespec="microseconds")
    cancelled = _cancelled_ids(store)
    rows = store.db["records"].rows_where(
        "created_at >= ?", [stamp], select="id", order_by="created_at DESC"
    )
    return [_summary(load_record(store, r["id"]), cancelled) for r in rows]


def records_of_today(store: Any) -> list[RecordSummary]:
    """Records sealed since local midnight on this device."""
    midnight = dt.datetime.combine(dt.date.today(), dt.time()).astimezone()
    return records_since(store, midnight)


def records_for_plate(store: Any, plate_text: str) -> list[RecordSummary]:
    """Every record of a plate (either format), newest first; raises IdentityError.

    Proposed service: ``services.find_records(*, store, plate=None, holder=None,
    day=None) -> list[dict]``.
    """
    key = parse_plate(plate_text).canonical_key()
    cancelled = _cancelled_ids(store)
    rows = store.db["records"].rows_where(
        "plate_key = ?", [key], select="id", order_by="created_at DESC"
    )
    return [_summary(load_record(store, r["id"]), cancelled) for r in rows]


def summarise(store: Any, record: SealedRecord) -> RecordSummary:
    """The list row of one record (with whether it was cancelled)."""
    return _summary(record, _cancelled_ids(store))


def print_count(store: Any, record_id: str, copy: str) -> int:
    """How many times this copy of the record was printed: the next print's reprint number.

    Proposed service: ``services.next_reprint_number(*, store, record_id, copy) -> int``.
    """
    return int(store.db["print_log"].count_where("record_id = ? AND copy = ?",
                                                 [record_id, copy]))
