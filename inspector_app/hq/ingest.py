"""Receiving pushed records: check each one, store it with its receipt, answer per record.

Checks, in order (the first that fails decides the answer):

1. the payload is a JSON object in canonical form and hashes to the given SHA-256;
2. the envelope names this device (``device_id`` and ``key_id``): a record replayed with
   another device's token is rejected;
3. the signature verifies with the public key pinned at enrolment, over the payload bytes;
4. ``id``, ``kind``, ``series``, ``number`` and ``created_at`` equal the envelope's, and
   its verification code is the one derived from the id;
5. a record with the same id already held: same hash → ``duplicate`` (a success), other
   hash → ``conflict``;
6. the number lies in a range assigned to this device and no other record carries it;
7. every blob the record names (its list and the photos/signatures in the payload) is here,
   else ``missing_blobs`` with the list.

A batch is one database transaction: records, their blob links and a receipt for every
answer commit together or not at all. Each record runs in a savepoint, so when a concurrent
push of the same record wins the race the unique index turns this one into a duplicate (or
conflict) instead of an error.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update
from sqlalchemy.exc import IntegrityError

from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.devices import Device
from inspector_app.hq.numbering import AllocatedRange, device_ranges
from inspector_app.hq.standing import on_accepted
from inspector_app.hq.tables import devices, receipts, record_blobs, records
from inspector_app.security.records import canonical_json, sha256_hex, verify_record
from inspector_app.sync.protocol import (
    REJECT_BAD_SIGNATURE,
    REJECT_ENVELOPE_MISMATCH,
    REJECT_HASH_MISMATCH,
    REJECT_INVALID_PAYLOAD,
    REJECT_NOT_CANONICAL,
    REJECT_NUMBER_OUT_OF_RANGE,
    REJECT_NUMBER_TAKEN,
    REJECT_OTHER_DEVICE,
    REJECT_WRONG_DEVICE,
    PushRecord,
    PushResult,
    PushStatus,
    blobs_of_envelope,
    display_number,
    verification_code_for,
)

ENVELOPE_VERSIONS = frozenset({1})
_MIRRORED = ("id", "kind", "series", "number", "created_at")


class _Answer(Exception):
    def __init__(self, status: PushStatus, reason: str | None = None,
                 missing: Sequence[str] = ()) -> None:
        super().__init__(reason or status)
        self.result_status = status
        self.reason = reason
        self.missing = list(missing)


def _reject(code: str, text: str) -> _Answer:
    return _Answer("rejected", f"{code}: {text}")


def _envelope(record: PushRecord) -> tuple[bytes, dict[str, Any]]:
    try:
        raw = record.payload.encode("utf-8")
    except UnicodeEncodeError:
        raise _reject(REJECT_INVALID_PAYLOAD, "payload is not valid UTF-8 text") from None
    try:
        envelope = json.loads(raw)
    except ValueError:
        raise _reject(REJECT_INVALID_PAYLOAD, "payload is not JSON") from None
    if not isinstance(envelope, dict):
        raise _reject(REJECT_INVALID_PAYLOAD, "payload is not a JSON object")
    try:
        canonical = canonical_json(envelope)
    except TypeError as exc:
        raise _reject(REJECT_NOT_CANONICAL, str(exc)) from None
    if canonical != raw:
        raise _reject(REJECT_NOT_CANONICAL, "payload is not in canonical form")
    if sha256_hex(raw) != record.sha256:
        raise _reject(REJECT_HASH_MISMATCH, "payload does not hash to the given sha256")
    return raw, envelope


def _check_envelope(record: PushRecord, raw: bytes, envelope: Mapping[str, Any],
                    device: Device) -> None:
    if envelope.get("device_id") != device.id or envelope.get("key_id") != device.key_id:
        raise _reject(
            REJECT_WRONG_DEVICE,
            f"record sealed by device {envelope.get('device_id')!r} "
            f"(key {envelope.get('key_id')!r}), pushed with the token of device {device.id}",
        )
    if not verify_record(device.public_key_bytes, raw, record.signature):
        raise _reject(REJECT_BAD_SIGNATURE,
                      "signature does not verify with the key enrolled for this device")
    if envelope.get("envelope_version") not in ENVELOPE_VERSIONS:
        raise _reject(REJECT_ENVELOPE_MISMATCH,
                      f"unknown envelope_version {envelope.get('envelope_version')!r}")
    for name in _MIRRORED:
        if envelope.get(name) != getattr(record, name):
            raise _reject(REJECT_ENVELOPE_MISMATCH,
                          f"{name} differs from the signed payload")
    if envelope.get("verification_code") != verification_code_for(record.id):
        raise _reject(REJECT_ENVELOPE_MISMATCH, "verification_code does not match the id")
    refers_to = envelope.get("refers_to")
    if refers_to is not None and not _is_uuid(refers_to):
        raise _reject(REJECT_ENVELOPE_MISMATCH, "refers_to is not a record id")


def _existing(conn: Connection, record: PushRecord, device: Device) -> None:
    held = conn.execute(
        select(records.c.sha256, records.c.device_id).where(records.c.id == record.id)
    ).first()
    if held is None:
        return
    if held.device_id != device.id:
        raise _reject(REJECT_OTHER_DEVICE, "a record with this id belongs to another device")
    if held.sha256 == record.sha256:
        raise _Answer("duplicate")
    raise _Answer("conflict", f"conflict: HQ holds this id with sha256 {held.sha256}")


def _check_number(conn: Connection, record: PushRecord, ranges: Sequence[AllocatedRange]) -> None:
    if record.number is None and record.series is None:
        return
    label = display_number(record.series, record.number) or f"{record.series} {record.number}"
    if record.number is None or record.series is None or not any(
        r.series == record.series and r.first <= record.number <= r.last for r in ranges
    ):
        raise _reject(REJECT_NUMBER_OUT_OF_RANGE,
                      f"{label} is not in a range assigned to this device")
    other = conn.execute(
        select(records.c.id).where(
            records.c.series == record.series, records.c.number == record.number
        )
    ).first()
    if other is not None:
        raise _reject(REJECT_NUMBER_TAKEN, f"{label} is already carried by record {other.id}")


def _store(conn: Connection, record: PushRecord, envelope: Mapping[str, Any],
           device: Device, blob_list: Sequence[str], now: str) -> None:
    occurred_on = _short_text(envelope.get("occurred_on"), 64)
    conn.execute(
        insert(records).values(
            id=record.id, device_id=device.id, kind=record.kind, series=record.series,
            number=record.number, created_at=record.created_at, received_at=now,
            payload=record.payload, sha256=record.sha256, signature=record.signature,
            verification_code=envelope["verification_code"],
            refers_to=envelope.get("refers_to"),
            plate_key=_short_text(envelope.get("plate_key"), 16),
            occurred_on=occurred_on[:10] if occurred_on else None,
        )
    )
    if blob_list:
        conn.execute(insert(record_blobs), [{"record_id": record.id, "sha256": b}
                                            for b in blob_list])


def _one(conn: Connection, record: PushRecord, device: Device,
         ranges: Sequence[AllocatedRange], blobs: BlobStore, now: str) -> PushResult:
    try:
        raw, envelope = _envelope(record)
        _check_envelope(record, raw, envelope, device)
        _existing(conn, record, device)
        _check_number(conn, record, ranges)
        needed = sorted(set(record.blobs) | set(blobs_of_envelope(envelope)))
        if not all(_valid_sha(sha) for sha in needed):
            raise _reject(REJECT_INVALID_PAYLOAD, "names a file by something not a SHA-256")
        missing = [sha for sha in needed if not blobs.has(sha)]
        if missing:
            raise _Answer("missing_blobs", f"missing_blobs: {len(missing)} file(s) not at HQ",
                          missing)
        try:
            with conn.begin_nested():
                _store(conn, record, envelope, device, needed, now)
                on_accepted(conn, envelope, device.id, now)
        except IntegrityError:
            # Lost a race with a concurrent push of the same record (or number): answer
            # from what is now committed.
            _existing(conn, record, device)
            _check_number(conn, record, ranges)
            raise _reject(REJECT_ENVELOPE_MISMATCH,
                          "clashes with a record HQ holds (verification code)") from None
        return PushResult(id=record.id, status="accepted")
    except _Answer as answer:
        return PushResult(id=record.id, status=answer.result_status, reason=answer.reason,
                          missing=answer.missing)


def _is_uuid(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        return str(uuid.UUID(value)) == value
    except ValueError:
        return False


def _short_text(value: object, size: int) -> str | None:
    """``value`` for an indexed column, or None when it is not a short printable string."""
    if isinstance(value, str) and 0 < len(value) <= size and value.isprintable():
        return value
    return None


def _valid_sha(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def ingest(engine: Engine, device: Device, batch: Sequence[PushRecord],
           blobs: BlobStore) -> list[PushResult]:
    """Check and store ``batch`` for ``device`` in one transaction; one answer per record."""
    now = utc_now()
    with engine.begin() as conn:
        ranges = device_ranges(conn, device.id)
        results = [_one(conn, record, device, ranges, blobs, now) for record in batch]
        conn.execute(
            insert(receipts),
            [{"record_id": r.id, "device_id": device.id, "status": r.status,
              "reason": r.reason, "sha256": rec.sha256, "at": now}
             for r, rec in zip(results, batch, strict=True)],
        )
        conn.execute(update(devices).where(devices.c.id == device.id).values(last_seen_at=now))
    return results
