"""Receiving pushed records: check each one, store it with its receipt, answer per record.

Checks, in order (the first that fails decides the answer):

1. the payload is a JSON object in canonical form and hashes to the given SHA-256;
2. the envelope names this device (``device_id`` and ``key_id``): a record replayed with
   another device's token is rejected;
3. the signature verifies with the public key pinned at enrolment, over the payload bytes;
4. ``id``, ``kind``, ``series``, ``number`` and ``created_at`` equal the envelope's, and
   its verification code is the one derived from the id;
4b. the envelope fits the schema of its kind (``sync/record_schema.py``: shape, bounds,
   dates against HQ's clock, required fields), so nothing HQ derives from it (history,
   standing, duplicate flags, the pull log) can hold a value a device cannot store;
5. a record with the same id already held: same hash → ``duplicate`` (a success), other
   hash → ``conflict``;
6. the number lies in a range assigned to this device and no other record carries it;
6b. a ``cancelamento`` refers to a record of this same device (held at HQ or earlier in
   the batch) that is not itself a cancelamento or voided number, and names a supervisor
   whose role HQ's registry confirms (``inspectors`` reference table);
7. every blob the record names (its list and the photos/signatures in the payload) is here,
   else ``missing_blobs`` with the list.

A batch is one database transaction: records, their blob links and a receipt for every
answer commit together or not at all. Checks 1-4 need no database; 5 and 6 are one query
each for the whole batch (records already held under these ids, numbers already carried),
and the accepted records go in with one multi-row insert in a savepoint, so a batch costs a
handful of round trips however many records it holds (``make bench``: HQ ingest). When a
concurrent push of the same record or number wins the race, the unique index fails that
savepoint and the batch is answered again record by record, each in its own savepoint, so
the loser becomes a duplicate (or conflict) instead of an error.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, and_, insert, or_, select, update
from sqlalchemy import text as sql_text
from sqlalchemy.exc import IntegrityError

from inspector_app.hq.autos_index import on_stored
from inspector_app.hq.blob_index import Presence
from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.devices import Device
from inspector_app.hq.numbering import AllocatedRange, device_ranges
from inspector_app.hq.record_facts import rule_rows
from inspector_app.hq.reference import live_rows
from inspector_app.hq.standing import lock_holders_of, on_accepted, on_accepted_batch
from inspector_app.hq.tables import devices, receipts, record_blobs, record_rules, records
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
from inspector_app.sync.record_schema import (
    REJECT_REFERENCE,
    RecordInvalid,
    check_record,
    check_shape,
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


# The payload and envelope of a record that passed checks 1-4, or the answer that ended it.
_Checked = tuple[bytes, dict[str, Any]] | PushResult


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
    except RecursionError:
        raise _reject(REJECT_INVALID_PAYLOAD, "payload nested too deeply") from None
    if not isinstance(envelope, dict):
        raise _reject(REJECT_INVALID_PAYLOAD, "payload is not a JSON object")
    try:
        # Depth, text and number bounds first: canonical_json walks the value recursively.
        check_shape(envelope)
    except RecordInvalid as exc:
        raise _reject(exc.code, exc.text) from None
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
    try:
        check_record(envelope, now=dt.datetime.now(dt.UTC))
    except RecordInvalid as exc:
        raise _reject(exc.code, exc.text) from None


def _held_and_taken(conn: Connection, candidates: Sequence[PushRecord]
                    ) -> tuple[dict[str, tuple[str, str]], dict[tuple[str, int], str]]:
    """Checks 5 and 6 read from the database, one query each: the records HQ holds under
    these ids (id → sha256, device) and the numbers already carried ((series, number) →
    id).

    Numbers are read first. Under READ COMMITTED a concurrent push of the same record may
    commit between the two queries; read in this order it then shows as held (answered
    ``duplicate``, check 5 coming first) rather than as its own number taken."""
    taken = _numbers_taken(conn, candidates)
    held: dict[str, tuple[str, str]] = {}
    if candidates:
        for row in conn.execute(select(records.c.id, records.c.sha256, records.c.device_id)
                                .where(records.c.id.in_({r.id for r in candidates}))):
            held[row.id] = (row.sha256, row.device_id)
    return held, taken


def _check_held_and_number(conn: Connection, record: PushRecord, device: Device,
                           ranges: Sequence[AllocatedRange]) -> None:
    """Checks 5 and 6 for one record, from the database."""
    held, taken = _held_and_taken(conn, [record])
    _answer_from_held(record, device, held.get(record.id))
    _answer_from_numbers(record, ranges, taken)


@dataclass
class _References:
    """What check 6b reads for a batch's cancelamentos: the records they cancel (id →
    device, kind), those already cancelled, and the supervisors' matrículas."""

    targets: dict[str, tuple[str, str]] = field(default_factory=dict)
    cancelled: set[str] = field(default_factory=set)
    supervisors: set[str] = field(default_factory=set)

    def accept(self, record: PushRecord, envelope: Mapping[str, Any], device: Device) -> None:
        """A record accepted earlier in the batch counts for the ones after it."""
        self.targets[record.id] = (device.id, record.kind)
        if record.kind == "cancelamento":
            self.cancelled.add(str(envelope["refers_to"]))


def _references(conn: Connection, envelopes: Sequence[Mapping[str, Any]]) -> _References:
    wanted = {str(e["refers_to"]) for e in envelopes
              if e.get("kind") == "cancelamento" and isinstance(e.get("refers_to"), str)}
    if not wanted:
        return _References()
    refs = _References()
    for row in conn.execute(select(records.c.id, records.c.device_id, records.c.kind)
                            .where(records.c.id.in_(wanted))):
        refs.targets[row.id] = (row.device_id, row.kind)
    refs.cancelled = set(conn.execute(
        select(records.c.refers_to).where(records.c.kind == "cancelamento",
                                          records.c.refers_to.in_(wanted))).scalars())
    refs.supervisors = {str(row.get("matricula")) for row in live_rows(conn, "inspectors")
                        if row.get("role") == "supervisor"}
    return refs


def _answer_from_references(envelope: Mapping[str, Any], device: Device,
                            refs: _References) -> None:
    """Check 6b: a cancelamento cancels a record of this device, once, by a supervisor."""
    if envelope.get("kind") != "cancelamento":
        return
    target_id = str(envelope["refers_to"])
    target = refs.targets.get(target_id)
    if target is None:
        raise _reject(REJECT_REFERENCE, f"o registro cancelado {target_id} não está na sede "
                      "(envie-o antes do cancelamento)")
    if target[0] != device.id:
        raise _reject(REJECT_REFERENCE, f"o registro cancelado {target_id} pertence a outro "
                      "dispositivo: só o dispositivo que o emitiu pode cancelá-lo")
    if target[1] in ("cancelamento", "numero_anulado"):
        what = "um cancelamento" if target[1] == "cancelamento" else "um número anulado"
        raise _reject(REJECT_REFERENCE, f"{what} não pode ser cancelado")
    if target_id in refs.cancelled:
        raise _reject(REJECT_REFERENCE, f"o registro {target_id} já foi cancelado")
    matricula = str(envelope["body"]["supervisor"]["matricula"])
    if matricula not in refs.supervisors:
        raise _reject(REJECT_REFERENCE, f"a matrícula {matricula[:40]} não consta como "
                      "supervisor no cadastro da sede")


def _record_row(record: PushRecord, envelope: Mapping[str, Any], device: Device,
                now: str) -> dict[str, Any]:
    occurred_on = _short_text(envelope.get("occurred_on"), 64)
    return {
        "id": record.id, "device_id": device.id, "kind": record.kind, "series": record.series,
        "number": record.number, "created_at": record.created_at, "received_at": now,
        "payload": record.payload, "sha256": record.sha256, "signature": record.signature,
        "verification_code": envelope["verification_code"],
        "refers_to": envelope.get("refers_to"),
        "plate_key": _short_text(envelope.get("plate_key"), 16),
        "occurred_on": occurred_on[:10] if occurred_on else None,
    }


def _one(conn: Connection, record: PushRecord, check: _Checked, device: Device,
         ranges: Sequence[AllocatedRange], blobs: Presence, now: str) -> PushResult:
    """One record in its own savepoint: the path after a batch lost a race."""
    if isinstance(check, PushResult):
        return check
    _, envelope = check
    try:
        _check_held_and_number(conn, record, device, ranges)
        _answer_from_references(envelope, device, _references(conn, [envelope]))
        needed = _needed_blobs(record, envelope, blobs)
        try:
            with conn.begin_nested():
                conn.execute(insert(records).values(_record_row(record, envelope, device, now)))
                if rules := rule_rows(envelope, record.id):
                    conn.execute(insert(record_rules), rules)
                if needed:
                    conn.execute(insert(record_blobs),
                                 [{"record_id": record.id, "sha256": b} for b in needed])
                on_stored(conn, [envelope], device_id=device.id, received_at=now)
                on_accepted(conn, envelope, device.id, now)
        except IntegrityError:
            # Lost a race with a concurrent push of the same record (or number): answer
            # from what is now committed.
            _check_held_and_number(conn, record, device, ranges)
            raise _reject(REJECT_ENVELOPE_MISMATCH,
                          "clashes with a record HQ holds (verification code)") from None
        return PushResult(id=record.id, status="accepted")
    except _Answer as answer:
        return _answer(record, answer)


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
    checked = [_precheck(record, device) for record in batch]
    with engine.begin() as conn:
        ranges = device_ranges(conn, device.id)
        # Which of the files the batch names HQ has: one query for the whole batch.
        presence = Presence(conn, blobs)
        presence.load(sha for check, record in zip(checked, batch, strict=True)
                      if not isinstance(check, PushResult)
                      for sha in _named_blobs(record, check[1]) if _valid_sha(sha))
        accepted: list[dict[str, Any]] = []
        try:
            with conn.begin_nested():
                results = _ingest_together(conn, device, batch, checked, ranges, presence,
                                           now, accepted)
        except IntegrityError:
            accepted.clear()  # record by record, each with its own bookkeeping
            lock_holders_of(conn, [c[1] for c in checked if not isinstance(c, PushResult)])
            results = [_one(conn, record, check, device, ranges, presence, now)
                       for record, check in zip(batch, checked, strict=True)]
        conn.execute(
            insert(receipts),
            [{"record_id": r.id, "device_id": device.id, "status": r.status,
              "reason": r.reason, "sha256": rec.sha256, "at": now}
             for r, rec in zip(results, batch, strict=True)],
        )
        conn.execute(update(devices).where(devices.c.id == device.id).values(last_seen_at=now))
        # Last: it takes the pull log's lock, held until the commit just after.
        on_accepted_batch(conn, accepted, device.id, now)
    return results



def _precheck(record: PushRecord, device: Device) -> _Checked:
    """Checks 1-4 (no database): the payload and envelope, or the answer that ends it."""
    try:
        raw, envelope = _envelope(record)
        _check_envelope(record, raw, envelope, device)
    except _Answer as answer:
        return _answer(record, answer)
    return raw, envelope


def _answer(record: PushRecord, answer: _Answer) -> PushResult:
    return PushResult(id=record.id, status=answer.result_status, reason=answer.reason,
                      missing=answer.missing)


def _ingest_together(conn: Connection, device: Device, batch: Sequence[PushRecord],
                     checked: Sequence[_Checked], ranges: Sequence[AllocatedRange],
                     blobs: Presence, now: str,
                     accepted_envelopes: list[dict[str, Any]]) -> list[PushResult]:
    """Checks 5-7 for the whole batch with one query each, then one insert of every
    accepted record (their envelopes are appended to ``accepted_envelopes`` for the
    bookkeeping). Same answers as :func:`_one` record by record, in order: a record
    earlier in the batch counts as held for the ones after it."""
    candidates = [r for r, c in zip(batch, checked, strict=True) if not isinstance(c, PushResult)]
    held, taken = _held_and_taken(conn, candidates)
    refs = _references(conn, [c[1] for c in checked if not isinstance(c, PushResult)])
    results: list[PushResult] = []
    accepted: list[tuple[PushRecord, dict[str, Any], list[str]]] = []
    for record, check in zip(batch, checked, strict=True):
        if isinstance(check, PushResult):
            results.append(check)
            continue
        _, envelope = check
        try:
            _answer_from_held(record, device, held.get(record.id))
            _answer_from_numbers(record, ranges, taken)
            _answer_from_references(envelope, device, refs)
            needed = _needed_blobs(record, envelope, blobs)
        except _Answer as answer:
            results.append(_answer(record, answer))
            continue
        held[record.id] = (record.sha256, device.id)
        refs.accept(record, envelope, device)
        if record.series is not None and record.number is not None:
            taken[(record.series, record.number)] = record.id
        accepted.append((record, envelope, needed))
        results.append(PushResult(id=record.id, status="accepted"))
    if accepted:
        conn.execute(insert(records), [_record_row(r, e, device, now) for r, e, _ in accepted])
        rules = [row for r, e, _ in accepted for row in rule_rows(e, r.id)]
        if rules:
            conn.execute(insert(record_rules), rules)
        links = [{"record_id": r.id, "sha256": b} for r, _, needed in accepted for b in needed]
        if links:
            conn.execute(insert(record_blobs), links)
        on_stored(conn, [e for _, e, _ in accepted], device_id=device.id, received_at=now)
        accepted_envelopes.extend(envelope for _, envelope, _ in accepted)
    return results


def _numbers_taken(conn: Connection,
                   candidates: Sequence[PushRecord]) -> dict[tuple[str, int], str]:
    """(series, number) → id of the record HQ holds with it, for the numbers in the batch."""
    wanted: dict[str, set[int]] = {}
    for record in candidates:
        if record.series is not None and record.number is not None:
            wanted.setdefault(record.series, set()).add(record.number)
    if not wanted:
        return {}
    if conn.dialect.name == "postgresql":
        # One index lookup per number (issue 19): ``series = … AND number IN (…)`` made
        # PostgreSQL read every number of the series from the index, a batch costing more
        # with every record held.
        pairs = [(series, n) for series, numbers in wanted.items() for n in sorted(numbers)]
        found = conn.execute(sql_text(
            "SELECT r.series, r.number, r.id FROM unnest(CAST(:series AS text[]), "
            "CAST(:numbers AS bigint[])) AS w(s, n) "
            "JOIN records r ON r.series = w.s AND r.number = w.n"),
            {"series": [p[0] for p in pairs], "numbers": [p[1] for p in pairs]})
        return {(row.series, int(row.number)): row.id for row in found}
    rows = conn.execute(select(records.c.series, records.c.number, records.c.id).where(
        or_(*(and_(records.c.series == series, records.c.number.in_(numbers))
              for series, numbers in wanted.items()))))
    return {(row.series, int(row.number)): row.id for row in rows}


def _answer_from_held(record: PushRecord, device: Device, held: tuple[str, str] | None) -> None:
    """Check 5: raises the answer when a record with this id is held already."""
    if held is None:
        return
    sha256, device_id = held
    if device_id != device.id:
        raise _reject(REJECT_OTHER_DEVICE, "a record with this id belongs to another device")
    if sha256 == record.sha256:
        raise _Answer("duplicate")
    raise _Answer("conflict", f"conflict: HQ holds this id with sha256 {sha256}")


def _answer_from_numbers(record: PushRecord, ranges: Sequence[AllocatedRange],
                         taken: dict[tuple[str, int], str]) -> None:
    """Check 6: the number is in one of this device's ranges and carried by no record."""
    if record.number is None and record.series is None:
        return
    label = display_number(record.series, record.number) or f"{record.series} {record.number}"
    if record.number is None or record.series is None or not any(
        r.series == record.series and r.first <= record.number <= r.last for r in ranges
    ):
        raise _reject(REJECT_NUMBER_OUT_OF_RANGE,
                      f"{label} is not in a range assigned to this device")
    other = taken.get((record.series, record.number))
    if other is not None:
        raise _reject(REJECT_NUMBER_TAKEN, f"{label} is already carried by record {other}")


def _named_blobs(record: PushRecord, envelope: Mapping[str, Any]) -> list[str]:
    return sorted(set(record.blobs) | set(blobs_of_envelope(envelope)))


def _needed_blobs(record: PushRecord, envelope: Mapping[str, Any], blobs: Presence) -> list[str]:
    """Check 7: every file the record names is here (HQ's list of files, hq/blob_index.py);
    the sorted list of them."""
    needed = _named_blobs(record, envelope)
    if not all(_valid_sha(sha) for sha in needed):
        raise _reject(REJECT_INVALID_PAYLOAD, "names a file by something not a SHA-256")
    missing = blobs.missing(needed)
    if missing:
        raise _Answer("missing_blobs", f"missing_blobs: {len(missing)} file(s) not at HQ",
                      missing)
    return needed
