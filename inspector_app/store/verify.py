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

Streams (issue 17): every check walks a cursor (joins on the unique indexes instead of
dictionaries of every row; the files named go to a temporary table), so memory stays
constant whatever the store holds; ``progress(stage, done, total)`` is called as it goes.
``since`` = a checkpoint of an earlier clean run (:class:`Checkpoint`: the journal entry it
ended at) checks only the records and journal entries sealed after it, chained to that
entry; numbering, outbox, files, prints and row seals are still checked whole.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
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
    last_seq: int = 0  # the journal entry the run ended at (a checkpoint for the next one)
    last_entry_hash: str = GENESIS
    since_seq: int = 0  # 0: a full run

    @property
    def ok(self) -> bool:
        return not self.problems

    def add(self, text: str) -> None:
        self.problems.append(text)


@dataclass(frozen=True)
class Checkpoint:
    """Where a clean run ended: journal ``seq`` and its ``entry_hash``."""

    seq: int
    entry_hash: str


Progress = Callable[[str, int, int], None]
_EVERY = 5000


def _quiet(_stage: str, _done: int, _total: int) -> None:
    return None


def _check_records(store: Store, report: Report, public_key: bytes | None,
                   progress: Progress, since: int) -> None:
    cols = ", ".join(COLUMNS)
    total = int(store.conn.execute("SELECT COUNT(*) FROM records WHERE journal_seq > ?",
                                   [since]).fetchone()[0])
    rows = store.conn.execute(
        f"SELECT {cols}, CAST(payload AS BLOB), sha256, signature, journal_seq FROM records "
        "WHERE journal_seq > ? ORDER BY rowid", [since])
    named: list[tuple[str, str]] = []
    for row in rows:
        report.records += 1
        if report.records % _EVERY == 0:
            progress("records", report.records, total)
            _name_blobs(store, named)
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
        named.extend((sha, label) for sha in blobs_of_envelope(envelope))
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
        else:
            _against_journal_and_numbers(store, report, values, digest, seq)
    _name_blobs(store, named)
    progress("records", report.records, total)


def _against_journal_and_numbers(store: Store, report: Report, values: dict[str, object],
                                 digest: object, seq: int) -> None:
    """The record's journal entry (by its unique record id) and its number's accounting
    row (by primary key): looked up from the record, so the big records table is read
    once, in order, and never probed at random."""
    rid = values["id"]
    entry = store.conn.execute(
        "SELECT seq, kind, record_sha256, created_at FROM journal WHERE record_id = ?",
        [rid]).fetchone()
    # No entry at all: reported by _check_journal ("has no journal entry").
    if entry is not None and tuple(entry) != (seq, values["kind"], digest,
                                              values["created_at"]):
        report.add(f"journal entry {entry[0]}: does not match record {rid} (kind, hash, seq "
                   "or time)")
    series, number = values["series"], values["number"]
    if number is None:
        return
    usage = store.conn.execute(
        "SELECT status, record_id FROM number_usage WHERE series = ? AND number = ?",
        [series, number]).fetchone()
    if usage is None:
        return  # reported by _check_numbers
    status, used_by = usage
    label = f"number {series}-{number}"
    if used_by != rid:
        report.add(f"{label}: used by {used_by} but carried by record {rid}")
    if (status == "voided") != (values["kind"] == "numero_anulado"):
        report.add(f"{label}: status {status} does not match record kind {values['kind']}")


def _name_blobs(store: Store, named: list[tuple[str, str]]) -> None:
    """Files named so far, into the temporary table (first naming kept)."""
    if named:
        store.conn.executemany(
            "INSERT OR IGNORE INTO temp.verify_blobs(sha, named_by) VALUES (?, ?)", named)
        named.clear()


def _check_journal(store: Store, report: Report, progress: Progress,
                   since: Checkpoint | None) -> None:
    start = since.seq if since else 0
    prev = since.entry_hash if since else GENESIS
    if since is not None:
        row = store.conn.execute("SELECT entry_hash FROM journal WHERE seq = ?",
                                 [since.seq]).fetchone()
        if row is None or row[0] != since.entry_hash:
            report.add(f"journal entry {since.seq}: no longer the one the last clean run "
                       "ended at (journal rewritten): run a full verify")
    rows = store.conn.execute(
        "SELECT j.seq, j.record_id, j.kind, j.record_sha256, j.prev_hash, j.entry_hash, "
        "j.created_at, EXISTS (SELECT 1 FROM records r WHERE r.id = j.record_id) "
        "FROM journal j WHERE j.seq > ? ORDER BY j.seq", [start])
    expected_seq = start + 1
    for seq, rid, kind, rsha, prev_hash, entry_hash, created_at, r_exists in rows:
        report.journal_entries += 1
        if report.journal_entries % _EVERY == 0:
            progress("journal", report.journal_entries, 0)
        label = f"journal entry {seq}"
        if seq != expected_seq:
            report.add(f"{label}: sequence gap (expected {expected_seq})")
        expected_seq = seq + 1
        if prev_hash != prev:
            report.add(f"{label}: not chained to the previous entry")
        if journal_entry_hash(seq, rid, kind, rsha, prev_hash, created_at) != entry_hash:
            report.add(f"{label}: entry hash does not match its content (altered)")
        prev = entry_hash
        report.last_seq, report.last_entry_hash = seq, entry_hash
        if not r_exists:
            report.add(f"{label}: record {rid} is missing")
    if since is not None and report.last_seq == 0:
        report.last_seq, report.last_entry_hash = since.seq, since.entry_hash
    for (rid,) in store.conn.execute(
            "SELECT id FROM records r WHERE journal_seq > ? AND NOT EXISTS "
            "(SELECT 1 FROM journal j WHERE j.record_id = r.id)", [start]):
        report.add(f"record {rid}: has no journal entry")


def _check_numbers(store: Store, report: Report, progress: Progress) -> None:
    all_ranges = numbering.ranges(store)
    # Per range: the next number expected and the numbers found missing (first 10 listed).
    expected = {r.id: r.first for r in all_ranges}
    missing: dict[str, list[int]] = {r.id: [] for r in all_ranges}
    missing_count = dict.fromkeys(expected, 0)
    for done, (series, number, status, _rid, carried) in enumerate(store.conn.execute(
            "SELECT u.series, u.number, u.status, u.record_id, EXISTS (SELECT 1 FROM "
            "records r WHERE r.series = u.series AND r.number = u.number) "
            "FROM number_usage u ORDER BY u.series, u.number"), start=1):
        if done % _EVERY == 0:
            progress("numbers", done, 0)
        label = f"number {series}-{number}"
        if status == "issued":
            report.numbers_issued += 1
        else:
            report.numbers_voided += 1
        inside = [r for r in all_ranges
                  if r.series == series and r.first <= number <= r.last]
        if not inside:
            report.add(f"{label}: outside every range assigned to this device")
        for r in inside:
            if number > expected[r.id]:
                gap = range(expected[r.id], number)
                missing[r.id].extend(list(gap)[: max(0, 11 - len(missing[r.id]))])
                missing_count[r.id] += len(gap)
            expected[r.id] = number + 1
        if not carried:
            report.add(f"{label}: marked {status} but no sealed record carries it")
        # Who carries it and whether the kind matches: checked from each record
        # (_against_journal_and_numbers), where the record's row is already read.
    for rid, series, number in store.conn.execute(
            "SELECT r.id, r.series, r.number FROM records r WHERE r.number IS NOT NULL AND "
            "NOT EXISTS (SELECT 1 FROM number_usage u WHERE u.series = r.series AND "
            "u.number = r.number) ORDER BY r.rowid"):
        report.add(f"record {rid}: number {series}-{number} is not in the number accounting")
    for r in all_ranges:
        if missing_count[r.id]:
            shown = missing[r.id][:10]
            report.add(
                f"range {r.series} {r.first}..{r.last}: numbers missing from the accounting: "
                f"{', '.join(map(str, shown))}{' …' if missing_count[r.id] > 10 else ''}"
            )
    for (rid,) in store.conn.execute(
            "SELECT id FROM records r WHERE NOT EXISTS "
            "(SELECT 1 FROM outbox o WHERE o.record_id = r.id)"):
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
        "SELECT EXISTS (SELECT 1 FROM records) OR EXISTS (SELECT 1 FROM photos) OR "
        "EXISTS (SELECT 1 FROM signatures) OR EXISTS (SELECT 1 FROM documents)"
    ).fetchone()[0]
    if not naming and store.blob_dir.is_dir() and any(
        p.is_file() for p in store.blob_dir.glob("*/*")
    ):
        report.add("blob files exist but the database holds no record: the database was "
                   "emptied, re-created or replaced")


def _check_outbox(store: Store, report: Report) -> None:
    enrolled = bool(store.meta("hq_url")) and bool(store.meta("hq_device_token"))
    rows = store.conn.execute(
        "SELECT record_id, acked_at, ack_status, attempts, last_attempt_at, enqueued_at "
        "FROM outbox WHERE acked_at IS NOT NULL ORDER BY enqueued_at"
    )
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


def _check_blobs(store: Store, report: Report, progress: Progress) -> None:
    named: list[tuple[str, str]] = []
    for doc_id, rid, sha in store.conn.execute(
        "SELECT id, record_id, pdf_sha256 FROM documents ORDER BY id"
    ):
        named.append((sha, f"archived PDF {doc_id} of record {rid}"))
        if len(named) >= _EVERY:
            _name_blobs(store, named)
    for table, cols in (("photos", ("original_sha256", "working_sha256", "thumb_sha256")),
                        ("signatures", ("png_sha256",))):
        for row in store.conn.execute(f"SELECT id, inspection_id, {', '.join(cols)} "
                                      f"FROM {table} ORDER BY id"):
            named.extend((sha, f"{table[:-1]} {row[0]} of inspection {row[1]}")
                         for sha in row[2:] if sha)
            if len(named) >= _EVERY:
                _name_blobs(store, named)
    _name_blobs(store, named)
    done = 0
    for sha, where in store.conn.execute("SELECT sha, named_by FROM temp.verify_blobs "
                                         "ORDER BY rowid"):
        done += 1
        if done % _EVERY == 0:
            progress("files", done, 0)
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
        group: tuple[str, str] | None = None
        numbers: list[int] = []

        def close(key: tuple[str, str] | None, found: list[int], table: str = table) -> None:
            if key is not None and sorted(found) != list(range(len(found))):
                missing = sorted(set(range(max(found) + 1)) - set(found))
                report.add(f"{table} of record {key[0]}, copy {key[1]}: reprint numbers "
                           f"{missing} missing (rows removed)")

        for rid, copy, number in store.conn.execute(
            f"SELECT record_id, copy, reprint_number FROM {table} "
            "ORDER BY record_id, copy, reprint_number"
        ):
            if (rid, copy) != group:
                close(group, numbers)
                group, numbers = (rid, copy), []
            numbers.append(number)
        close(group, numbers)


def _lenient_text(data: bytes) -> str:
    # A tampered column may not be valid UTF-8; decoding it must not stop the checks.
    return data.decode("utf-8", "replace")


def verify_store(store: Store, *, progress: Progress | None = None,
                 since: Checkpoint | None = None) -> Report:
    report = Report(since_seq=since.seq if since else 0)
    previous = store.conn.text_factory
    store.conn.text_factory = _lenient_text
    cache = store.conn.execute("PRAGMA cache_size").fetchone()[0]
    store.conn.execute("PRAGMA cache_size = -32768")  # 32 MiB while it runs, then as before
    store.conn.execute("CREATE TEMP TABLE IF NOT EXISTS verify_blobs "
                       "(sha TEXT PRIMARY KEY, named_by TEXT NOT NULL)")
    store.conn.execute("DELETE FROM temp.verify_blobs")
    try:
        return _verify(store, report, progress or _quiet, since)
    finally:
        store.conn.execute("DROP TABLE IF EXISTS temp.verify_blobs")
        store.conn.execute(f"PRAGMA cache_size = {int(cache)}")
        store.conn.text_factory = previous


def _verify(store: Store, report: Report, progress: Progress,
            since: Checkpoint | None) -> Report:
    try:
        result = [str(r[0]) for r in store.conn.execute("PRAGMA integrity_check").fetchall()]
    except dbapi.DatabaseError as exc:
        report.add(f"integrity_check failed: {exc}")
        return report
    progress("integrity", 1, 1)
    if result != ["ok"]:
        report.problems.extend(f"integrity_check: {line}" for line in result)
    key_b64 = store.meta("device_public_key")
    public_key = base64.b64decode(key_b64) if key_b64 else None
    try:
        _check_recreated(store, report, public_key)
        _check_records(store, report, public_key, progress, since.seq if since else 0)
        _check_journal(store, report, progress, since)
        _check_numbers(store, report, progress)
        _check_outbox(store, report)
        _check_blobs(store, report, progress)
        _check_prints(store, report)
        progress("seals", 0, 1)
        report.problems.extend(seals.check(store.conn, database_key(store.data_dir,
                                                                     create=False)))
    except dbapi.DatabaseError as exc:
        report.add(f"cannot read the store: {exc}")
    return report
