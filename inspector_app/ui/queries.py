"""Read-only lookups the screens need, as list rows; every read goes through ``services``.

Run these on the store worker only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from inspector_app import services
from inspector_app.store.sealing import SealedRecord

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
    """Records sealed here and not yet acknowledged by HQ."""
    return services.pending_sync_count(store=store)


def _cancelled_ids(store: Any) -> set[str]:
    return services.cancelled_record_ids(store=store)


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
    """Records sealed at or after ``since`` (aware), newest first."""
    cancelled = _cancelled_ids(store)
    return [_summary(r, cancelled) for r in services.records_sealed(store=store, since=since)]


def records_of_today(store: Any) -> list[RecordSummary]:
    """Records sealed since local midnight on this device."""
    midnight = dt.datetime.combine(dt.date.today(), dt.time()).astimezone()
    return records_since(store, midnight)


def records_for_plate(store: Any, plate_text: str) -> list[RecordSummary]:
    """Every record of a plate (either format), newest first; raises ServiceError."""
    cancelled = _cancelled_ids(store)
    return [_summary(r, cancelled)
            for r in services.find_records(store=store, plate=plate_text)]


def summarise(store: Any, record: SealedRecord) -> RecordSummary:
    """The list row of one record (with whether it was cancelled)."""
    return _summary(record, _cancelled_ids(store))


def print_count(store: Any, record_id: str, copy: str) -> int:
    """How many times this copy of the record was printed: the next print's reprint number."""
    return services.print_count(store=store, record_id=record_id, copy=copy)
