"""Read-only lookups the screens need, as list rows; every read goes through ``services``.

Run these on the store worker only.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from inspector_app import services
from inspector_app.domain.documents import RECORD_KIND_LABELS
from inspector_app.domain.fieldtext import plate_display
from inspector_app.store.sealing import SealedRecord

KIND_LABELS = RECORD_KIND_LABELS


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
    holder: str = ""  # permit holder's name (records about a registered vehicle)

    @property
    def kind_label(self) -> str:
        return KIND_LABELS.get(self.kind, self.kind)


def pending_sync_count(store: Any) -> int:
    """Records sealed here and not yet acknowledged by HQ."""
    return services.pending_sync_count(store=store)


def _cancelled_ids(store: Any, records: list[SealedRecord]) -> set[str]:
    return services.cancelled_record_ids(store=store, among=[r.id for r in records])


def _summary(record: SealedRecord, cancelled: set[str]) -> RecordSummary:
    env = record.envelope
    body = env.get("body", {})
    vehicle = body.get("vehicle") or {}
    location = body.get("location") or {}
    place = str(location.get("place") or body.get("place") or "")
    return RecordSummary(
        id=record.id, kind=record.kind, number=record.display_number,
        created_at=record.created_at, plate=plate_display(str(vehicle.get("plate") or "")),
        place=place, verification_code=record.verification_code,
        cancelled=record.id in cancelled, refers_to=env.get("refers_to"),
        holder=str(vehicle.get("holder_name") or ""),
    )


def records_since(store: Any, since: dt.datetime) -> list[RecordSummary]:
    """Records sealed at or after ``since`` (aware), newest first."""
    found = services.records_sealed(store=store, since=since)
    cancelled = _cancelled_ids(store, found)
    return [_summary(r, cancelled) for r in found]


def records_of_today(store: Any) -> list[RecordSummary]:
    """Records sealed since local midnight on this device."""
    midnight = dt.datetime.combine(dt.date.today(), dt.time()).astimezone()
    return records_since(store, midnight)


def find_records(store: Any, *, plate: str | None = None, holder: str | None = None,
                 day: dt.date | None = None, limit: int = 200) -> list[RecordSummary]:
    """Records by plate, permit holder (id, name, CPF/CNPJ) and/or day of the fact, all
    given criteria at once; newest first. Raises ServiceError without any criterion."""
    found = services.find_records(store=store, plate=plate, holder=holder, day=day,
                                  limit=limit)
    cancelled = _cancelled_ids(store, found)
    return [_summary(r, cancelled) for r in found]


def summarise(store: Any, record: SealedRecord) -> RecordSummary:
    """The list row of one record (with whether it was cancelled)."""
    return _summary(record, _cancelled_ids(store, [record]))


def print_count(store: Any, record_id: str, copy: str) -> int:
    """How many times this copy of the record was printed: the next print's reprint number."""
    return services.print_count(store=store, record_id=record_id, copy=copy)


@dataclass(frozen=True)
class DeviceIdentity:
    """What the "Sobre" section says about this device and its store."""

    device_id: str | None  # set when the first record is sealed (or by enrolment)
    device_key_id: str | None  # set when the device key first signs
    store_path: str
    data_dir: str
    enrolled_hq_url: str | None  # HQ this device is enrolled with, None in demo mode
    registry_source: str | None  # "demo", "hq" (pulled by sync) or "import" (a file)
    registry_updated_at: str | None = None  # last pull or import that changed the registry


def device_identity(store: Any) -> DeviceIdentity:
    """Device id, key id and where the store is (reads ``app_meta``; writes nothing)."""
    return DeviceIdentity(
        device_id=store.meta("device_id"), device_key_id=store.meta("device_key_id"),
        store_path=str(store.path), data_dir=str(store.data_dir),
        enrolled_hq_url=store.meta("hq_url"), registry_source=store.meta("registry_source"),
        registry_updated_at=store.meta("registry_updated_at"),
    )


@dataclass(frozen=True)
class NumberRangeLine:
    """One talonário range numbers are taken from, and how many are left."""

    series: str
    first: int
    last: int
    remaining: int
    source: str  # "hq" or "demo"


def number_ranges(store: Any) -> list[NumberRangeLine]:
    """The ranges the next numbers come from (HQ's once the device has one)."""
    from inspector_app.store import numbering

    return [NumberRangeLine(s.range.series, s.range.first, s.range.last, s.remaining,
                            s.range.source) for s in numbering.usable(store)]
