"""The device's sync engine: enrolment, then push (records and their blobs) and pull
(reference changes), over HTTP to HQ (DESIGN.md §5).

Guarantees, each kept by the schema rather than by memory (STYLE.md §5):

* A record leaves the outbox only when a 2xx answer from HQ names it as ``accepted`` or
  ``duplicate``; nothing is ever deleted from the device here.
* A request that timed out or lost its connection is *unknown*, never *failed*: the
  records stay pending (``ack_status = 'unknown'``) and go again next time; HQ's
  idempotency (same id, same hash → ``duplicate``) makes the repeat harmless.
* ``conflict`` and ``rejected`` answers quarantine the record with HQ's reason
  (``ack_status``/``last_error``) for a person to look at; they are not retried until
  :func:`requeue` says so.
* Blobs go before the records that need them: one ``blobs/missing`` question per batch,
  then the files HQ lacks in bundles of about 8 MiB (``blobs/bundle``); blobs HQ confirmed
  are remembered in ``sync_blobs``, and HQ keeps every whole file of a bundle that broke
  off, so an interrupted run resumes without resending them.
* Each pull page and its cursor are applied in one transaction.

Caveat: ``sync_once`` does blocking network I/O; the GUI must call it from its network
worker, never from the GUI thread.
"""

from __future__ import annotations

import functools
import hashlib
import json
import socket
import ssl
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import certifi
import httpx
from pydantic import ValidationError

from inspector_app.store import dbapi, device_context, numbering
from inspector_app.store.db import Store, StoreError, utc_now
from inspector_app.store.sealing import device_key
from inspector_app.sync.protocol import (
    API_PREFIX,
    BUNDLE_MEDIA_TYPE,
    DEFAULT_PULL_LIMIT,
    DELIVERED,
    MAX_BLOB_QUERY,
    MAX_BUNDLE_PARTS,
    MAX_PUSH_RECORDS,
    REFERENCE_KEYS,
    BlobMissing,
    BundleResponse,
    Change,
    EnrolRequest,
    EnrolResponse,
    PullPage,
    PushRecord,
    PushRequest,
    PushResponse,
    PushResult,
    blobs_of_envelope,
    bundle_part_header,
    change_tag,
    display_number,
)

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
BUNDLE_BYTES = 8 * 1024 * 1024  # files per upload request: about this many bytes
QUARANTINED = ("conflict", "rejected")

META_HQ_URL = "hq_url"
META_TOKEN = "hq_device_token"
META_ENROLLED_AT = "hq_enrolled_at"
META_LOCAL_DEVICE_ID = "local_device_id"
META_PULL_CURSOR = "sync_pull_cursor"
META_PULL_TAG = "sync_pull_tag"
META_RESYNCED_AT = "sync_resynced_at"


class SyncError(StoreError):
    """Sync could not do what was asked; ``message_pt`` is for the window."""


class _Offline(Exception):
    """HQ did not answer (timeout, refused connection, reset) or answered 5xx."""


class _Refused(Exception):
    """HQ refused this device (401 unknown token, 403 revoked)."""


class _Resync(Exception):
    """HQ is behind this device (restored from a backup): pull from 0, offer every record."""


@dataclass(frozen=True)
class EnrolResult:
    device_id: str
    hq_url: str
    series: str
    first: int
    last: int


@dataclass
class SyncSummary:
    """What one :func:`sync_once` did; ``as_json()`` is what ``inspector sync`` prints."""

    started_at: str
    finished_at: str | None = None
    online: bool = False
    pushed: int = 0
    accepted: int = 0
    duplicate: int = 0
    conflict: int = 0
    rejected: int = 0
    missing_blobs: int = 0
    unknown: int = 0
    blobs_uploaded: int = 0
    blobs_present: int = 0
    pulled: int = 0
    pages: int = 0
    pending: int = 0
    quarantined: int = 0
    pull_quarantined: int = 0
    resynced: bool = False
    error: str | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    def count(self, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


# HQ's reasons start with a machine word (protocol.REJECT_*, record_schema); the screen
# shows these labels instead. For the words marked True the text after the word is already
# Portuguese (record_schema, the cancelamento checks) and is shown too.
REASON_LABELS: dict[str, tuple[str, bool]] = {
    "invalid_payload": ("registro malformado", True),
    "date_out_of_bounds": ("data fora dos limites aceitos pela sede", True),
    "bad_reference": ("cancelamento recusado pela sede", True),
    "not_canonical": ("registro fora da forma canônica", False),
    "hash_mismatch": ("o resumo SHA-256 não confere com o conteúdo", False),
    "wrong_device": ("registro selado por outro dispositivo ou chave", False),
    "bad_signature": ("a assinatura digital não confere com a chave cadastrada na sede", False),
    "envelope_mismatch": ("dados do registro divergem do conteúdo assinado", False),
    "number_out_of_range": ("número fora das faixas deste dispositivo", False),
    "number_taken": ("número já usado por outro registro na sede", False),
    "other_device": ("este identificador pertence a registro de outro dispositivo", False),
    "conflict": ("a sede guarda outra versão deste registro", False),
    "missing_blobs": ("arquivos do registro ausentes na sede", False),
}


def reason_pt(reason: str | None) -> str | None:
    """HQ's reason for a person: the machine word replaced by its Portuguese label."""
    if not reason:
        return reason
    word, _, detail = reason.partition(": ")
    label = REASON_LABELS.get(word)
    if label is None:
        return reason
    text, show_detail = label
    return f"{text}: {detail}" if show_detail and detail else text


@dataclass(frozen=True)
class QuarantinedRecord:
    record_id: str
    kind: str
    number: str | None
    status: str
    reason: str | None
    last_attempt_at: str | None

    @property
    def reason_pt(self) -> str | None:
        """:attr:`reason` as the screen shows it (no machine words)."""
        return reason_pt(self.reason)


# --- enrolment --------------------------------------------------------------------------------


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every run: building it (loading the CA bundle) costs ~80 ms."""
    return ssl.create_default_context(cafile=certifi.where())


def _client(base_url: str, *, transport: httpx.BaseTransport | None,
            timeout: httpx.Timeout | float, token: str | None = None,
            store: Store | None = None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    hooks = {"response": [_note_hq_time(store)]} if store is not None else None
    return httpx.Client(base_url=base_url, timeout=timeout, transport=transport,
                        headers=headers, verify=_tls_context(), event_hooks=hooks)


def _note_hq_time(store: Store) -> Any:
    """Every HQ answer's Date header is the last HQ time seen (trusted-time check)."""
    def hook(response: httpx.Response) -> None:
        device_context.note_hq_time(response.headers.get("date"))
    return hook


def _base_url(hq_url: str) -> str:
    url = hq_url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise SyncError(f"not an http(s) URL: {hq_url!r}",
                        "Endereço da sede inválido: use http://… ou https://….")
    return url


def _detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return str(body["detail"])
    return str(body)[:200]


def enrol(
    store: Store,
    *,
    hq_url: str,
    code: str,
    device_name: str | None = None,
    transport: httpx.BaseTransport | None = None,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
) -> EnrolResult:
    """Enrol this device with HQ using a one-time ``code``.

    Stores the device id, token and HQ URL in ``app_meta`` and adds the HQ number range,
    in one transaction. A code is used once: if HQ's answer is lost, ask HQ for a new code (HQ
    replaces the device it enrolled but never heard from again).
    """
    store.require_writable()
    if store.meta(META_TOKEN):
        raise SyncError("device already enrolled",
                        f"Este dispositivo já está cadastrado na sede ({store.meta(META_HQ_URL)}).")
    base = _base_url(hq_url)
    key = device_key(store)
    request = EnrolRequest(code=code.strip(), public_key=key.public_key_b64(),
                           device_name=(device_name or socket.gethostname() or "dispositivo")[:200])
    try:
        with _client(base, transport=transport, timeout=timeout, store=store) as client:
            response = client.post(f"{API_PREFIX}/enrol", json=request.model_dump())
    except httpx.TimeoutException as exc:
        raise SyncError(f"HQ did not answer: {exc}",
                        "A sede não respondeu a tempo. Se o código já foi usado, peça um novo "
                        "código à sede.") from exc
    except httpx.TransportError as exc:
        raise SyncError(
            f"cannot reach HQ: {exc}",
            "Não foi possível falar com a sede: verifique a conexão e o endereço.",
        ) from exc
    if response.status_code != 200:
        detail = _detail(response)
        raise SyncError(f"HQ refused the enrolment ({response.status_code}): {detail}",
                        f"A sede recusou o cadastro: {detail}")
    try:
        body = EnrolResponse.model_validate(response.json())
    except (ValueError, ValidationError) as exc:
        raise SyncError(f"unexpected enrolment answer: {exc}",
                        "Resposta inesperada da sede ao cadastro.") from exc
    rng = body.number_range
    with store.atomic():
        previous = store.meta("device_id")
        if previous and previous != body.device_id and not store.meta(META_LOCAL_DEVICE_ID):
            store.set_meta(META_LOCAL_DEVICE_ID, previous)
        store.set_meta("device_id", body.device_id)
        store.set_meta(META_TOKEN, body.token)
        store.set_meta(META_HQ_URL, base)
        store.set_meta(META_ENROLLED_AT, utc_now())
        if body.public_url:
            store.set_meta(device_context.META_PUBLIC_URL, body.public_url.rstrip("/"))
        device_context.persist_contact(store)
        store.set_meta(META_PULL_CURSOR, "0")
        _add_range(store, rng.series, rng.first, rng.last)
    return EnrolResult(body.device_id, base, rng.series, rng.first, rng.last)


def _add_range(store: Store, series: str, first: int, last: int) -> None:
    if any(r.series == series and r.first == first and r.last == last
           for r in numbering.ranges(store)):
        return
    numbering.add_range(store, series=series, first=first, last=last, source="hq")


# --- outbox state -----------------------------------------------------------------------------


def pending_count(store: Store) -> int:
    """Records not yet acknowledged by HQ and not quarantined."""
    row = store.conn.execute(
        "SELECT COUNT(*) FROM outbox WHERE acked_at IS NULL AND "
        "(ack_status IS NULL OR ack_status NOT IN ('conflict', 'rejected'))"
    ).fetchone()
    return int(row[0])


def quarantined(store: Store) -> list[QuarantinedRecord]:
    """Records HQ answered ``conflict`` or ``rejected``, with its reason (oldest first)."""
    rows = store.conn.execute(
        "SELECT o.record_id, r.kind, r.series, r.number, o.ack_status, o.last_error, "
        "o.last_attempt_at FROM outbox o JOIN records r ON r.id = o.record_id "
        "WHERE o.acked_at IS NULL AND o.ack_status IN ('conflict', 'rejected') "
        "ORDER BY r.journal_seq"
    ).fetchall()
    return [QuarantinedRecord(r[0], r[1], display_number(r[2], r[3]), r[4], r[5], r[6])
            for r in rows]


def requeue(store: Store, record_ids: Iterable[str]) -> int:
    """Send quarantined records again at the next sync (after HQ fixed its side)."""
    ids = list(record_ids)
    with store.atomic():
        changed = 0
        for rid in ids:
            cur = store.conn.execute(
                "UPDATE outbox SET ack_status = NULL WHERE record_id = ? AND acked_at IS NULL "
                "AND ack_status IN ('conflict', 'rejected')", [rid])
            changed += cur.rowcount
    return changed


def acked_count(store: Store) -> int:
    """Records HQ acknowledged to this device (HQ holds at least as many, unless restored)."""
    row = store.conn.execute("SELECT COUNT(*) FROM outbox WHERE acked_at IS NOT NULL").fetchone()
    return int(row[0])


def reoffer_everything(store: Store) -> int:
    """After HQ was restored: every acknowledged record becomes pending again (devices keep
    every sealed record), the blobs HQ confirmed are forgotten and the pull starts from 0.
    Returns how many records will be offered again."""
    with store.atomic():
        count = store.conn.execute(
            "UPDATE outbox SET acked_at = NULL, ack_status = 'reoffer', "
            "last_error = 'a sede foi restaurada: reenviado' WHERE acked_at IS NOT NULL"
        ).rowcount
        store.conn.execute("DELETE FROM sync_blobs")
        store.set_meta(META_PULL_CURSOR, "0")
        store.conn.execute("DELETE FROM app_meta WHERE key = ?", [META_PULL_TAG])
        store.set_meta(META_RESYNCED_AT, utc_now())
    return int(count)


def last_successful_sync(store: Store) -> str | None:
    row = store.conn.execute(
        "SELECT MAX(finished_at) FROM sync_runs WHERE error IS NULL AND online = 1"
    ).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def _pending_batch(store: Store, after_seq: int, limit: int) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = store.conn.execute(
        "SELECT r.id, r.kind, r.series, r.number, r.created_at, r.payload, r.sha256, "
        "r.signature, r.journal_seq FROM outbox o JOIN records r ON r.id = o.record_id "
        "WHERE o.acked_at IS NULL AND (o.ack_status IS NULL OR o.ack_status NOT IN "
        "('conflict', 'rejected')) AND r.journal_seq > ? ORDER BY r.journal_seq LIMIT ?",
        [after_seq, limit],
    ).fetchall()
    return rows


def _mark_attempt(store: Store, ids: Sequence[str], status: str, error: str) -> None:
    now = utc_now()
    with store.atomic():
        for rid in ids:
            store.conn.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_attempt_at = ?, "
                "ack_status = ?, last_error = ? WHERE record_id = ? AND acked_at IS NULL",
                [now, status, error, rid])


def _apply_results(store: Store, sent: Sequence[PushRecord], results: Sequence[PushResult],
                   summary: SyncSummary) -> None:
    """Record HQ's answers in the outbox, in one transaction."""
    by_id = {r.id: r for r in results}
    now = utc_now()
    with store.atomic():
        for record in sent:
            result = by_id.get(record.id)
            label = display_number(record.series, record.number) or record.id
            if result is None:
                status, error, acked = "unknown", "a resposta da sede não citou este registro", None
                summary.count("unknown")
            elif result.status in DELIVERED:
                status, error, acked = result.status, None, now
                summary.count(result.status)
            else:
                status, acked = result.status, None
                error = result.reason or result.status
                if result.missing:
                    error += " (" + ", ".join(s[:12] for s in result.missing) + ")"
                summary.count(result.status)
                summary.problems.append(f"{label}: {result.status}: {error}")
            store.conn.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_attempt_at = ?, "
                "ack_status = ?, last_error = ?, acked_at = ? "
                "WHERE record_id = ? AND acked_at IS NULL",
                [now, status, error, acked, record.id])


# --- HTTP -------------------------------------------------------------------------------------


def _check(response: httpx.Response) -> None:
    if response.status_code in (401, 403):
        raise _Refused(f"HTTP {response.status_code}: {_detail(response)}")
    if response.status_code >= 500:
        raise _Offline(f"HQ error HTTP {response.status_code}")


def _blob_file(store: Store, sha: str) -> Path | None:
    folder = store.blob_dir / sha[:2]
    for path in [*sorted(folder.glob(f"{sha}.*")), folder / sha]:
        if path.is_file():
            return path
    return None


def _confirmed_among(store: Store, shas: Sequence[str]) -> set[str]:
    """The blobs of ``shas`` HQ already confirmed to this device."""
    found: set[str] = set()
    for start in range(0, len(shas), 500):
        chunk = list(shas[start:start + 500])
        marks = ", ".join("?" for _ in chunk)
        found.update(str(r[0]) for r in store.conn.execute(
            f"SELECT sha256 FROM sync_blobs WHERE sha256 IN ({marks})", chunk))
    return found


def _confirm_all(store: Store, shas: Iterable[str]) -> None:
    """Remember, in one transaction, that HQ holds ``shas``."""
    rows = [(sha, utc_now()) for sha in shas]
    if rows:
        with store.atomic():
            store.conn.executemany(
                "INSERT OR IGNORE INTO sync_blobs(sha256, confirmed_at) VALUES (?, ?)", rows)


def _read_blob(store: Store, sha: str, summary: SyncSummary) -> bytes | None:
    path = _blob_file(store, sha)
    data = path.read_bytes() if path is not None else None
    if data is None or hashlib.sha256(data).hexdigest() != sha:
        summary.problems.append(f"arquivo {sha[:12]}… ausente ou corrompido neste dispositivo")
        return None
    return data


def _ensure_blobs(store: Store, client: httpx.Client, shas: Sequence[str],
                  summary: SyncSummary) -> None:
    """Make sure HQ has every blob of ``shas``: ask which it lacks (one request per
    1,000 files), send those in bundles of about :data:`BUNDLE_BYTES`, and remember each
    file HQ confirmed, so an interrupted run never sends a finished file again."""
    known = _confirmed_among(store, shas)
    summary.blobs_present += len(known)
    todo = [sha for sha in shas if sha not in known]
    lacking: list[str] = []
    for start in range(0, len(todo), MAX_BLOB_QUERY):
        asked = todo[start:start + MAX_BLOB_QUERY]
        response = client.post(f"{API_PREFIX}/blobs/missing", json={"sha256": asked})
        _check(response)
        if response.status_code != 200:
            raise _Offline(f"blobs/missing HTTP {response.status_code}: {_detail(response)}")
        try:
            missing = set(BlobMissing.model_validate(response.json()).missing)
        except (ValueError, ValidationError) as exc:
            raise _Offline(f"unreadable blobs/missing answer: {exc}") from exc
        absent = [sha for sha in asked if sha in missing]
        _confirm_all(store, [sha for sha in asked if sha not in missing])
        summary.blobs_present += len(asked) - len(absent)
        lacking += absent
    bundle: list[tuple[str, bytes]] = []
    size = 0
    for sha in lacking:
        data = _read_blob(store, sha, summary)
        if data is None:
            continue
        if bundle and (size + len(data) > BUNDLE_BYTES or len(bundle) >= MAX_BUNDLE_PARTS):
            _send_bundle(store, client, bundle, summary)
            bundle, size = [], 0
        bundle.append((sha, data))
        size += len(data)
    if bundle:
        _send_bundle(store, client, bundle, summary)


def _send_bundle(store: Store, client: httpx.Client, bundle: Sequence[tuple[str, bytes]],
                 summary: SyncSummary) -> None:
    body = b"".join(bundle_part_header(sha, len(data)) + data for sha, data in bundle)
    response = client.post(f"{API_PREFIX}/blobs/bundle", content=body,
                           headers={"Content-Type": BUNDLE_MEDIA_TYPE})
    _check(response)
    if response.status_code != 200:
        summary.problems.append(f"{len(bundle)} arquivo(s): a sede recusou o pacote "
                                f"({_detail(response)})")
        return
    try:
        parts = BundleResponse.model_validate(response.json()).parts
    except (ValueError, ValidationError) as exc:
        raise _Offline(f"unreadable blobs/bundle answer: {exc}") from exc
    _confirm_all(store, [p.sha256 for p in parts if p.status in ("stored", "present")])
    for part in parts:
        if part.status == "stored":
            summary.blobs_uploaded += 1
        elif part.status == "present":
            summary.blobs_present += 1
        else:
            summary.problems.append(f"arquivo {part.sha256[:12]}…: a sede recusou "
                                    f"({part.reason})")


def _post(client: httpx.Client, batch: Sequence[PushRecord]) -> list[PushResult]:
    """POST one batch; raises _Offline (no answer, 5xx, unreadable) or _Refused."""
    body = PushRequest(records=list(batch)).model_dump()
    try:
        response = client.post(f"{API_PREFIX}/push", json=body)
    except httpx.TransportError as exc:
        raise _Offline(f"{type(exc).__name__}: {exc}") from exc
    _check(response)
    if response.status_code == 413 and len(batch) > 1:
        # Larger than HQ takes in one body (HQ_MAX_JSON_BYTES): send it in halves.
        half = len(batch) // 2
        return _post(client, batch[:half]) + _post(client, batch[half:])
    if response.status_code != 200:
        raise _Offline(f"HTTP {response.status_code}: {_detail(response)}")
    try:
        return PushResponse.model_validate(response.json()).results
    except (ValueError, ValidationError) as exc:
        raise _Offline(f"unreadable push answer: {exc}") from exc


def _push_batch(store: Store, client: httpx.Client, batch: Sequence[PushRecord],
                summary: SyncSummary) -> None:
    try:
        results = _post(client, batch)
    except (_Offline, _Refused) as exc:
        # No acknowledgement: the batch may or may not be at HQ. Unknown, sent again later.
        _mark_attempt(store, [r.id for r in batch], "unknown",
                      f"sem confirmação da sede ({exc}); será reenviado")
        summary.unknown += len(batch)
        raise
    summary.pushed += len(batch)
    missing = {r.id: r for r in results if r.status == "missing_blobs"}
    if missing:
        # HQ lacks blobs we thought it had (or a file failed to go): forget those
        # confirmations, upload again and push the records once more.
        try:
            lost = sorted({sha for result in missing.values() for sha in result.missing})
            with store.atomic():
                store.conn.executemany("DELETE FROM sync_blobs WHERE sha256 = ?",
                                       [(sha,) for sha in lost])
            _ensure_blobs(store, client, lost, summary)
            again = {r.id: r for r in _post(client, [r for r in batch if r.id in missing])}
            results = [again.get(r.id, r) for r in results]
        except (_Offline, _Refused, httpx.TransportError):
            _apply_results(store, batch, results, summary)
            raise
    _apply_results(store, batch, results, summary)


def _push_all(store: Store, client: httpx.Client, summary: SyncSummary, batch_size: int) -> None:
    after = 0
    while True:
        rows = _pending_batch(store, after, batch_size)
        if not rows:
            return
        after = int(rows[-1][8])
        batch = []
        for r in rows:
            try:
                batch.append(PushRecord(
                    id=r[0], kind=r[1], series=r[2], number=r[3], created_at=r[4],
                    payload=r[5], sha256=r[6], signature=r[7],
                    blobs=blobs_of_envelope(_envelope(r[5]))))
            except (ValidationError, ValueError) as exc:
                # Cannot even be sent (should never happen): quarantine it, keep the rest going.
                _mark_attempt(store, [r[0]], "rejected",
                              f"dispositivo: registro fora do protocolo de envio ({exc})")
                summary.problems.append(f"{r[0]}: fora do protocolo de envio")
        if not batch:
            continue
        _ensure_blobs(store, client, sorted({b for record in batch for b in record.blobs}),
                      summary)
        _push_batch(store, client, batch, summary)


def _envelope(payload: str) -> dict[str, Any]:
    value = json.loads(payload)
    return value if isinstance(value, dict) else {}


# --- pull -------------------------------------------------------------------------------------


def _columns(store: Store, table: str) -> list[str]:
    return [str(r[1]) for r in store.conn.execute(f"PRAGMA table_info({table})").fetchall()]


def _apply_change(store: Store, change: Change, columns: dict[str, list[str]]) -> None:
    if change.table == "number_ranges":
        if change.op == "upsert":
            row = change.row
            _add_range(store, str(row["series"]), int(row["first"]), int(row["last"]))
        return  # a range is never taken back from a device
    if change.table not in REFERENCE_KEYS:
        return  # a table this app version does not know: HQ is newer
    table = f"ref_{change.table}"
    if table not in columns:
        columns[table] = _columns(store, table)
    known = columns[table]
    if change.op == "delete":
        pk = REFERENCE_KEYS[change.table]
        where = " AND ".join(f"{c} = ?" for c in pk)
        store.conn.execute(f"DELETE FROM {table} WHERE {where}", [change.row[c] for c in pk])
        return
    names = [c for c in change.row if c in known]
    marks = ", ".join("?" for _ in names)
    store.conn.execute(
        f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({marks})",
        [change.row[c] for c in names],
    )


MAX_QUARANTINED_ROW_TEXT = 100_000


def apply_page(store: Store, page: PullPage, summary: SyncSummary | None = None) -> None:
    """Apply ``page`` and move the cursor, in one transaction.

    Each change is applied in its own savepoint: one this device cannot apply (a number
    SQLite cannot hold, a row without its key, a value of the wrong type) is rolled back
    alone and kept in ``sync_pull_quarantine`` with the reason, and the cursor moves past
    it, so a poisoned change never stops the pull (issue 14, finding 2)."""
    _apply_pages(store, [page], summary)


def _apply_pages(store: Store, pages: Sequence[PullPage], summary: SyncSummary | None,
                 *, snapshot: bool = False) -> None:
    """Apply ``pages`` and move the cursor, in one transaction; with ``snapshot`` (the
    pages are the whole log from 0), then delete every reference row they did not name."""
    columns: dict[str, list[str]] = {}
    changes = [c for page in pages for c in page.changes]
    try:
        with store.atomic():
            # A page may hold a vehicle before the holder it names: check at COMMIT.
            store.conn.execute("PRAGMA defer_foreign_keys = ON")
            for page in pages:
                for change in page.changes:
                    store.conn.execute("SAVEPOINT pull_change")
                    try:
                        _apply_change(store, change, columns)
                    except (*dbapi.Error, OverflowError, KeyError, ValueError, TypeError,
                            StoreError) as exc:
                        store.conn.execute("ROLLBACK TO pull_change")
                        _quarantine_change(store, change, exc, summary)
                    store.conn.execute("RELEASE pull_change")
                _quarantine_orphans(store, page, summary)
            if snapshot:
                _drop_absent(store, changes)
            if pages:
                store.set_meta(META_PULL_CURSOR, str(pages[-1].next_cursor))
            if changes:
                last = changes[-1]
                store.set_meta(META_PULL_TAG, change_tag(last.seq, last.table, last.key,
                                                         last.op, last.row))
                store.set_meta("registry_source", "hq")
                store.set_meta("registry_updated_at", utc_now())
    except (*dbapi.Error, KeyError, ValueError, TypeError) as exc:
        first = changes[0].seq if changes else (pages[0].next_cursor if pages else 0)
        raise SyncError(
            f"pull page from seq {first} could not be applied: {exc}",
            "Os dados de referência recebidos da sede não puderam ser aplicados; nada foi "
            f"alterado (a partir da alteração {first}). Avise a sede.",
        ) from exc


def _drop_absent(store: Store, snapshot: Sequence[Change]) -> None:
    """After a snapshot: delete each reference row the snapshot does not hold (HQ deleted it
    while this device was behind the compaction point, and its tombstone is gone)."""
    kept: dict[str, set[tuple[Any, ...]]] = {}
    for change in snapshot:
        if change.op == "upsert" and change.table in REFERENCE_KEYS:
            pk = REFERENCE_KEYS[change.table]
            kept.setdefault(change.table, set()).add(tuple(change.row.get(c) for c in pk))
    for table, pk in REFERENCE_KEYS.items():
        if table == "number_ranges" or not _columns(store, f"ref_{table}"):
            continue  # a range is never taken back; a table this version does not have
        names = ", ".join(pk)
        held = [tuple(r) for r in store.conn.execute(f"SELECT {names} FROM ref_{table}")]
        gone = [key for key in held if key not in kept.get(table, set())]
        where = " AND ".join(f"{c} = ?" for c in pk)
        store.conn.executemany(f"DELETE FROM ref_{table} WHERE {where}", gone)


def _quarantine_orphans(store: Store, page: PullPage, summary: SyncSummary | None) -> None:
    """Rows of this page naming a parent that is not there (a vehicle whose holder HQ never
    sent): checked before COMMIT, where they would refuse the whole page; each is removed
    and its change quarantined, so the rest of the page and the cursor go through."""
    touched = {c.table for c in page.changes if c.op == "upsert" and c.table in REFERENCE_KEYS}
    present = {str(r[0]) for r in store.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'ref\\_%' "
        "ESCAPE '\\'")}
    for short in sorted(touched):
        table = f"ref_{short}"
        if table not in present:
            continue  # number_ranges (kept elsewhere), or a table this version lacks
        for found in store.conn.execute(f"PRAGMA foreign_key_check({table})").fetchall():
            rowid, parent = found[1], found[2]
            pk = REFERENCE_KEYS[short]
            row = store.conn.execute(f"SELECT {', '.join(pk)} FROM {table} WHERE rowid = ?",
                                     [rowid]).fetchone()
            if row is None:
                continue
            key = "|".join(str(v) for v in row)
            change = next((c for c in reversed(page.changes)
                           if c.table == short and c.key == key), None)
            if change is None:
                continue  # not from this page: an older row, left as it is
            store.conn.execute(f"DELETE FROM {table} WHERE rowid = ?", [rowid])
            _quarantine_change(store, change, ValueError(
                f"names a row of {parent.removeprefix('ref_')} this device does not have"),
                summary)


def _quarantine_change(store: Store, change: Change, exc: BaseException,
                       summary: SyncSummary | None) -> None:
    reason = f"{type(exc).__name__}: {exc}"[:500]
    try:
        text = json.dumps(change.row, sort_keys=True, ensure_ascii=False, default=str)
    except (ValueError, TypeError):
        text = repr(change.row)
    store.conn.execute(
        "INSERT OR REPLACE INTO sync_pull_quarantine(seq, table_name, key, op, row_json, "
        "reason, quarantined_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [change.seq, change.table[:100], change.key[:300], change.op,
         text[:MAX_QUARANTINED_ROW_TEXT], reason, utc_now()])
    if summary is not None:
        summary.pull_quarantined += 1
        summary.problems.append(
            f"alteração {change.seq} da sede ({change.table}) não pôde ser aplicada e ficou "
            f"em quarentena: {reason[:200]}")


@dataclass(frozen=True)
class QuarantinedChange:
    seq: int
    table: str
    key: str
    op: str
    reason: str
    quarantined_at: str


def pull_quarantine(store: Store) -> list[QuarantinedChange]:
    """Pull-log changes this device could not apply, oldest first, with the reason."""
    return [QuarantinedChange(int(r[0]), r[1], r[2], r[3], r[4], r[5]) for r in
            store.conn.execute("SELECT seq, table_name, key, op, reason, quarantined_at "
                               "FROM sync_pull_quarantine ORDER BY seq")]


def _pull_snapshot(store: Store, client: httpx.Client, summary: SyncSummary,
                   limit: int) -> None:
    """HQ compacted its pull log past this device's cursor: pull the whole log from 0 (a
    snapshot: the latest row of everything live) and apply it at once, deleting the rows
    it does not hold, in one transaction; the registry stays as it was until then."""
    pages: list[PullPage] = []
    cursor, tag = 0, None
    while True:
        page = _get_page(store, client, cursor, limit, tag)
        if page.resync or page.snapshot:
            raise SyncError("HQ asked for a snapshot from cursor 0",
                            "A sede pediu uma cópia completa duas vezes seguidas; avise a "
                            "sede.")
        pages.append(page)
        if page.changes:
            last = page.changes[-1]
            tag = change_tag(last.seq, last.table, last.key, last.op, last.row)
        summary.pages += 1
        summary.pulled += len(page.changes)
        cursor = page.next_cursor
        if not page.more:
            break
    _apply_pages(store, pages, summary, snapshot=True)
    summary.problems.append("dados de referência recarregados por inteiro da sede (cópia "
                            "completa: a sede compactou o registro de alterações)")


def _get_page(store: Store, client: httpx.Client, cursor: int, limit: int,
              tag: str | None = None) -> PullPage:
    """One pull page after ``cursor``; ``tag`` is the last change applied (else the
    store's, for a snapshot the last change of its previous page, still in memory)."""
    # ``pending``: what is left to send after the push, for HQ's Painel; ``snapshot``: the
    # device takes one when it is behind the log's compaction point (an older HQ ignores
    # both parameters).
    params: dict[str, Any] = {"cursor": cursor, "limit": limit, "acked": acked_count(store),
                              "pending": pending_count(store), "snapshot": "true"}
    tag = tag or store.meta(META_PULL_TAG)
    if cursor > 0 and tag:
        params["tag"] = tag
    response = client.get(f"{API_PREFIX}/pull", params=params)
    _check(response)
    if response.status_code != 200:
        raise _Offline(f"pull HTTP {response.status_code}: {_detail(response)}")
    try:
        return PullPage.model_validate(response.json())
    except (ValueError, ValidationError) as exc:
        raise _Offline(f"unreadable pull answer: {exc}") from exc


def _pull_all(store: Store, client: httpx.Client, summary: SyncSummary, limit: int) -> None:
    cursor = int(store.meta(META_PULL_CURSOR) or 0)
    while True:
        page = _get_page(store, client, cursor, limit)
        if page.snapshot:
            _pull_snapshot(store, client, summary, limit)
            return
        if page.resync:
            raise _Resync()
        if page.next_cursor < cursor:
            raise SyncError(f"HQ moved the pull cursor back ({cursor} → {page.next_cursor})",
                            "A sede respondeu com um cursor anterior ao atual; nada aplicado.")
        apply_page(store, page, summary)
        summary.pulled += len(page.changes)
        summary.pages += 1
        cursor = page.next_cursor
        if not page.more:
            return


# --- one run ----------------------------------------------------------------------------------


def sync_once(
    store: Store,
    *,
    transport: httpx.BaseTransport | None = None,
    timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
    batch_size: int = MAX_PUSH_RECORDS,
    pull_limit: int = DEFAULT_PULL_LIMIT,
) -> SyncSummary:
    """One full push (oldest first, blobs first) and pull; never raises for network trouble.

    HQ unreachable, timing out or answering 5xx ends the run with ``online`` False or
    ``error`` set and every record still pending; the next run picks up where this one
    stopped. Raises :class:`SyncError` only when the device is not enrolled.
    """
    store.require_writable()
    url, token = store.meta(META_HQ_URL), store.meta(META_TOKEN)
    if not url or not token:
        raise SyncError("device not enrolled",
                        "Este dispositivo ainda não está cadastrado na sede: use "
                        "`inspector enroll --hq URL --code CÓDIGO`.")
    summary = SyncSummary(started_at=utc_now())
    batch_size = max(1, min(batch_size, MAX_PUSH_RECORDS))
    try:
        with _client(url, transport=transport, timeout=timeout, token=token,
                     store=store) as client:
            _push_all(store, client, summary, batch_size)
            summary.online = True
            try:
                _pull_all(store, client, summary, pull_limit)
            except _Resync:
                # HQ was restored from a backup: it may lack records it once acknowledged
                # and changes this device saw. Offer every record again (HQ answers
                # duplicate for those it holds) and pull the whole log; once per run.
                reoffer_everything(store)
                summary.resynced = True
                summary.problems.append(
                    "a sede foi restaurada de uma cópia de segurança: todos os registros "
                    "deste dispositivo foram oferecidos de novo e os dados de referência "
                    "recarregados")
                _push_all(store, client, summary, batch_size)
                try:
                    _pull_all(store, client, summary, pull_limit)
                except _Resync:
                    raise SyncError("HQ asked for a resync twice in one run",
                                    "A sede pediu a ressincronização duas vezes seguidas; "
                                    "avise a sede.") from None
    except _Offline as exc:
        summary.error = f"sede inacessível ou sem resposta: {exc}"
    except httpx.TransportError as exc:
        summary.error = f"sede inacessível ou sem resposta: {type(exc).__name__}: {exc}"
    except _Refused as exc:
        summary.online = True
        summary.error = f"a sede recusou este dispositivo: {exc}"
    except SyncError as exc:
        summary.online = True
        summary.error = exc.message_pt
    summary.finished_at = utc_now()
    device_context.persist_contact(store)
    summary.pending = pending_count(store)
    summary.quarantined = len(quarantined(store))
    _record_run(store, summary)
    return summary


def _record_run(store: Store, s: SyncSummary) -> None:
    store.conn.execute(
        "INSERT INTO sync_runs(started_at, finished_at, online, pushed, accepted, duplicate, "
        "conflict, rejected, missing_blobs, unknown, blobs_uploaded, pulled, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [s.started_at, s.finished_at, int(s.online), s.pushed, s.accepted, s.duplicate,
         s.conflict, s.rejected, s.missing_blobs, s.unknown, s.blobs_uploaded, s.pulled,
         s.error],
    )
