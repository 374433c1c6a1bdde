"""``inspector store verify``: is every sealed record intact, chained, signed and accounted for?

Checks, each problem reported in a line of its own:

* SQLite ``integrity_check``;
* every record: SHA-256 of the stored payload, payload in canonical form, every indexed
  column equal to the envelope, the device signature;
* the journal: sequence without gaps, each entry chained to the previous one, each entry's
  hash and record hash;
* numbering: every number used once, inside a range, without gaps, by the record that
  carries it; every record in the outbox (acknowledged or pending);
* the outbox: an acknowledgement only with a delivered status, after an attempt, on an
  enrolled device;
* files: every photo, signature and archived PDF a record or row names exists in the blob
  folder with its SHA-256; prints and archived copies numbered without gaps;
* row seals and counters (``store/seals.py``): registry rows, ``app_meta``, the outbox,
  ranges and login state as the app wrote them; no row of an append-only table removed;
* a database re-created beside the files of an older one (the device key file remains but
  the database pins none, or blobs remain and no record names them).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field

from inspector_app.media.photos import verify_blob
from inspector_app.security.keys import verify_signature
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.store import dbapi, numbering, seals
from inspector_app.store.db import Store, database_key
from inspector_app.store.sealing import GENESIS, journal_entry_hash
from inspector_app.sync.protocol import DELIVERED, blobs_of_envelope

COLUMNS = ("id", "kind", "series", "number", "created_at", "inspection_id", "refers_to",
           "plate_key", "holder_id", "occurred_on", "verification_code", "key_id")


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    records: int = 0
    journal_entries: int = 0
    numbers_issued: int = 0
    numbers_voided: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, text: str) -> None:
        self.problems.append(text)


def _check_records(store: Store, report: Report, public_key: bytes | None) -> None:
    cols = ", ".join(COLUMNS)
    rows = store.conn.execute(
        f"SELECT {cols}, CAST(payload AS BLOB), sha256, signature, journal_seq FROM records "
        "ORDER BY rowid"
    ).fetchall()
    report.records = len(rows)
    for row in rows:
        values = dict(zip(COLUMNS, row[: len(COLUMNS)], strict=True))
        payload, digest, signature, seq = row[len(COLUMNS):]
        rid = values["id"]
        label = f"record {rid}"
        if not isinstance(payload, bytes):
            report.add(f"{label}: payload is missing")
            continue
        raw = payload
        if sha256_hex(raw) != digest:
            report.add(f"{label}: payload does not match its SHA-256 (altered)")
        try:
            envelope = json.loads(raw.decode("utf-8"))
            if canonical_json(envelope) != raw:
                report.add(f"{label}: payload is not in canonical form (altered)")
        except (ValueError, TypeError) as exc:
            report.add(f"{label}: payload is not valid JSON ({exc})")
            continue
        if not isinstance(envelope, dict):
            report.add(f"{label}: payload is not an object")
            continue
        for column, value in values.items():
            if envelope.get(column) != value:
                report.add(
                    f"{label}: column {column} = {value!r} differs from the sealed payload "
                    f"({envelope.get(column)!r})"
                )
        try:
            sig = base64.b64decode(signature, validate=True)
        except (ValueError, TypeError):
            sig = b""
        if public_key is None:
            report.add(f"{label}: no device public key to check the signature")
        elif not verify_signature(public_key, raw, sig):
            report.add(f"{label}: device signature does not verify")
        elif base64.b64encode(sig).decode("ascii") != signature:
            # b64decode ignores the unused bits before "=": other text, the same bytes.
            report.add(f"{label}: signature text is not the one sealed (altered)")
        if not isinstance(seq, int):
            report.add(f"{label}: journal_seq {seq!r} is not a number")


def _check_journal(store: Store, report: Report) -> None:
    rows = store.conn.execute(
        "SELECT seq, record_id, kind, record_sha256, prev_hash, entry_hash, created_at "
        "FROM journal ORDER BY seq"
    ).fetchall()
    report.journal_entries = len(rows)
    records = {
        r[0]: r[1:]
        for r in store.conn.execute(
            "SELECT id, kind, sha256, journal_seq, created_at FROM records"
        ).fetchall()
    }
    prev = GENESIS
    expected_seq = 1
    seen: set[str] = set()
    for seq, rid, kind, rsha, prev_hash, entry_hash, created_at in rows:
        label = f"journal entry {seq}"
        if seq != expected_seq:
            report.add(f"{label}: sequence gap (expected {expected_seq})")
        expected_seq = seq + 1
        if prev_hash != prev:
            report.add(f"{label}: not chained to the previous entry")
        if journal_entry_hash(seq, rid, kind, rsha, prev_hash, created_at) != entry_hash:
            report.add(f"{label}: entry hash does not match its content (altered)")
        prev = entry_hash
        rec = records.get(rid)
        if rec is None:
            report.add(f"{label}: record {rid} is missing")
            continue
        seen.add(rid)
        r_kind, r_sha, r_seq, r_created = rec
        if (r_kind, r_sha, r_seq, r_created) != (kind, rsha, seq, created_at):
            report.add(f"{label}: does not match record {rid} (kind, hash, seq or time)")
    for rid in records.keys() - seen:
        report.add(f"record {rid}: has no journal entry")


def _check_numbers(store: Store, report: Report) -> None:
    usage = store.conn.execute(
        "SELECT series, number, status, record_id FROM number_usage ORDER BY series, number"
    ).fetchall()
    numbered = {
        (r[0], r[1]): (r[2], r[3])
        for r in store.conn.execute(
            "SELECT series, number, id, kind FROM records WHERE number IS NOT NULL"
        ).fetchall()
    }
    all_ranges = numbering.ranges(store)
    used: dict[str, list[int]] = {}
    for series, number, status, rid in usage:
        label = f"number {series}-{number}"
        if status == "issued":
            report.numbers_issued += 1
        else:
            report.numbers_voided += 1
        if not any(r.series == series and r.first <= number <= r.last for r in all_ranges):
            report.add(f"{label}: outside every range assigned to this device")
        rec = numbered.pop((series, number), None)
        if rec is None:
            report.add(f"{label}: marked {status} but no sealed record carries it")
        else:
            r_id, r_kind = rec
            if r_id != rid:
                report.add(f"{label}: used by {rid} but carried by record {r_id}")
            if (status == "voided") != (r_kind == "numero_anulado"):
                report.add(f"{label}: status {status} does not match record kind {r_kind}")
        used.setdefault(series, []).append(number)
    for (series, number), (rid, _kind) in numbered.items():
        report.add(f"record {rid}: number {series}-{number} is not in the number accounting")
    for r in all_ranges:
        inside = sorted(n for n in used.get(r.series, []) if r.first <= n <= r.last)
        if inside and inside != list(range(r.first, r.first + len(inside))):
            missing = sorted(set(range(r.first, inside[-1] + 1)) - set(inside))
            report.add(
                f"range {r.series} {r.first}..{r.last}: numbers missing from the accounting: "
                f"{', '.join(map(str, missing[:10]))}{' …' if len(missing) > 10 else ''}"
            )
    orphans = store.conn.execute(
        "SELECT id FROM records WHERE id NOT IN (SELECT record_id FROM outbox)"
    ).fetchall()
    for (rid,) in orphans:
        report.add(f"record {rid}: not in the outbox (would never reach HQ)")


def _check_recreated(store: Store, report: Report, public_key: bytes | None) -> None:
    if public_key is None and store.key_path.exists():
        report.add(
            f"device key {store.key_path.name} exists but this database pins no device key: "
            "the database was emptied, re-created or replaced (sealed records may be lost)"
        )
    # Blobs are written for open inspections too (photos, signatures): only a store that
    # names no file at all has no reason to keep any.
    naming = store.conn.execute(
        "SELECT (SELECT COUNT(*) FROM records) + (SELECT COUNT(*) FROM photos) + "
        "(SELECT COUNT(*) FROM signatures) + (SELECT COUNT(*) FROM documents)"
    ).fetchone()[0]
    if naming == 0 and store.blob_dir.is_dir() and any(
        p.is_file() for p in store.blob_dir.glob("*/*")
    ):
        report.add("blob files exist but the database holds no record: the database was "
                   "emptied, re-created or replaced")


def _check_outbox(store: Store, report: Report) -> None:
    enrolled = bool(store.meta("hq_url")) and bool(store.meta("hq_device_token"))
    rows = store.conn.execute(
        "SELECT record_id, acked_at, ack_status, attempts, last_attempt_at, enqueued_at "
        "FROM outbox WHERE acked_at IS NOT NULL ORDER BY enqueued_at"
    ).fetchall()
    for rid, acked, status, attempts, last_attempt, enqueued in rows:
        label = f"outbox {rid}"
        if not enrolled:
            report.add(f"{label}: acknowledged by HQ but this device was never enrolled")
        if status not in DELIVERED:
            report.add(f"{label}: acknowledged with status {status!r} (HQ acknowledges only "
                       f"{', '.join(sorted(DELIVERED))})")
        if not isinstance(attempts, int) or attempts < 1 or last_attempt is None:
            report.add(f"{label}: acknowledged but never sent (no attempt recorded)")
        elif last_attempt != acked:
            report.add(f"{label}: acknowledged at {acked} but last sent at {last_attempt}")
        if isinstance(acked, str) and isinstance(enqueued, str) and acked < enqueued:
            report.add(f"{label}: acknowledged before it was queued")


def _check_blobs(store: Store, report: Report) -> None:
    named: dict[str, str] = {}
    for rid, payload in store.conn.execute("SELECT id, payload FROM records ORDER BY rowid"):
        try:
            envelope = json.loads(payload)
        except (ValueError, TypeError):
            continue  # reported by _check_records
        if isinstance(envelope, dict):
            for sha in blobs_of_envelope(envelope):
                named.setdefault(sha, f"record {rid}")
    for doc_id, rid, sha in store.conn.execute(
        "SELECT id, record_id, pdf_sha256 FROM documents ORDER BY id"
    ):
        named.setdefault(sha, f"archived PDF {doc_id} of record {rid}")
    for table, cols in (("photos", ("original_sha256", "working_sha256", "thumb_sha256")),
                        ("signatures", ("png_sha256",))):
        for row in store.conn.execute(f"SELECT id, inspection_id, {', '.join(cols)} "
                                      f"FROM {table} ORDER BY id"):
            for sha in row[2:]:
                if sha:
                    named.setdefault(sha, f"{table[:-1]} {row[0]} of inspection {row[1]}")
    for sha, where in named.items():
        if not isinstance(sha, str) or len(sha) != 64 or not sha.isalnum():
            report.add(f"{where}: file hash {sha!r} is not a SHA-256")
            continue
        folder = store.blob_dir / sha[:2]
        present = sorted(folder.glob(f"{sha}*")) if folder.is_dir() else []
        if not present:
            report.add(f"{where}: file {sha[:16]}… is missing from the blob folder")
        elif not any(verify_blob(p, sha) for p in present):
            report.add(f"{where}: file {sha[:16]}… does not match its SHA-256 (altered)")


def _check_prints(store: Store, report: Report) -> None:
    """Reprint numbers run 0, 1, 2, … per record and copy, in prints and archived PDFs."""
    for table in ("print_log", "documents"):
        groups: dict[tuple[str, str], list[int]] = {}
        for rid, copy, number in store.conn.execute(
            f"SELECT record_id, copy, reprint_number FROM {table} ORDER BY id"
        ):
            groups.setdefault((rid, copy), []).append(number)
        for (rid, copy), numbers in groups.items():
            if sorted(numbers) != list(range(len(numbers))):
                missing = sorted(set(range(max(numbers) + 1)) - set(numbers))
                report.add(f"{table} of record {rid}, copy {copy}: reprint numbers "
                           f"{missing} missing (rows removed)")


def _lenient_text(data: bytes) -> str:
    # A tampered column may not be valid UTF-8; decoding it must not stop the checks.
    return data.decode("utf-8", "replace")


def verify_store(store: Store) -> Report:
    report = Report()
    previous = store.conn.text_factory
    store.conn.text_factory = _lenient_text
    try:
        return _verify(store, report)
    finally:
        store.conn.text_factory = previous


def _verify(store: Store, report: Report) -> Report:
    try:
        result = [str(r[0]) for r in store.conn.execute("PRAGMA integrity_check").fetchall()]
    except dbapi.DatabaseError as exc:
        report.add(f"integrity_check failed: {exc}")
        return report
    if result != ["ok"]:
        report.problems.extend(f"integrity_check: {line}" for line in result)
    key_b64 = store.meta("device_public_key")
    public_key = base64.b64decode(key_b64) if key_b64 else None
    try:
        _check_recreated(store, report, public_key)
        _check_records(store, report, public_key)
        _check_journal(store, report)
        _check_numbers(store, report)
        _check_outbox(store, report)
        _check_blobs(store, report)
        _check_prints(store, report)
        report.problems.extend(seals.check(store.conn, database_key(store.data_dir,
                                                                     create=False)))
    except dbapi.DatabaseError as exc:
        report.add(f"cannot read the store: {exc}")
    return report
