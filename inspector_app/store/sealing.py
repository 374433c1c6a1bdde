"""Sealing: turning drafts into legal records, all in one transaction (DESIGN.md §4).

For each draft: take the next number from the device's range (when the kind is numbered),
build the canonical JSON envelope (sorted keys, UTF-8; photo and signature SHA-256s are in
the body), sign it with the device's Ed25519 key, append it to the hash-chained journal and
enqueue it in the outbox. Either every draft of a call is sealed or none is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector_app.security.keys import DeviceKey, load_or_create_device_key
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.store import dbapi, numbering
from inspector_app.store.db import Store, StoreError, translate_error, utc_now
from inspector_app.store.device_context import context_for

GENESIS = "0" * 64
ENVELOPE_VERSION = 1

# Document kinds. Numbered kinds take a number from the talonário.
NUMBERED_KINDS = frozenset(
    {
        "auto_vistoria",
        "auto_infracao",
        "termo_retencao",
        "termo_liberacao",
        "termo_compromisso",
        "cancelamento",
        "retificacao",
        "numero_anulado",
    }
)
RECORD_KINDS = NUMBERED_KINDS


@dataclass(frozen=True)
class RecordDraft:
    kind: str
    body: Mapping[str, Any]
    inspection_id: str | None = None
    refers_to: str | None = None
    plate_key: str | None = None
    holder_id: str | None = None
    occurred_on: str | None = None
    record_id: str | None = None  # pre-chosen so records sealed together can refer to each other


def new_record_id() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class SealedRecord:
    id: str
    kind: str
    series: str | None
    number: int | None
    created_at: str
    sha256: str
    signature: str
    journal_seq: int
    verification_code: str
    envelope: Mapping[str, Any]

    @property
    def display_number(self) -> str:
        return f"{self.series}-{self.number:06d}" if self.series and self.number else self.id


def device_key(store: Store) -> DeviceKey:
    """The device key, created on first use; its public half is pinned in ``app_meta``."""
    key = load_or_create_device_key(store.key_path)
    pinned = store.meta("device_public_key")
    if pinned is None:
        store.set_meta("device_public_key", key.public_key_b64())
        store.set_meta("device_key_id", key.device_key_id)
    elif pinned != key.public_key_b64():
        raise StoreError(
            f"device key {store.key_path} does not match the key that signed this store",
            "A chave do dispositivo não corresponde à que assinou os registros deste banco. "
            "Nada foi gravado; chame o suporte.",
        )
    return key


def ensure_device(store: Store) -> DeviceKey:
    """Device id and key. A device not enrolled gets its demo number range at demo setup
    (``numbering.ensure_demo_ranges``) or, at the latest, inside its first seal."""
    if store.meta("device_id") is None:
        store.set_meta("device_id", str(uuid.uuid4()))
    return device_key(store)


def record_jurisdiction(body: Mapping[str, Any]) -> str | None:
    """The órgão's jurisdiction of a record body (its pack's ``jurisdiction``, else the
    prefix of the pack id: ``DF_STPCR`` → ``DF``); None for a record without a pack."""
    pack = body.get("pack")
    if not isinstance(pack, Mapping):
        return None
    value = pack.get("jurisdiction")
    if isinstance(value, str) and value:
        return value
    pack_id = pack.get("id")
    if isinstance(pack_id, str) and pack_id:
        return pack_id.split("_", 1)[0]
    return None


def verification_code(record_id: str) -> str:
    """A short code for the printed QR/verify page: 12 base32 characters in 3 groups."""
    digest = hashlib.sha256(b"inspector-verify:" + uuid.UUID(record_id).bytes).digest()
    text = base64.b32encode(digest).decode("ascii")[:12]
    return f"{text[:4]}-{text[4:8]}-{text[8:]}"


def journal_entry_hash(seq: int, record_id: str, kind: str, record_sha: str, prev: str,
                       created_at: str) -> str:
    line = f"{seq}|{record_id}|{kind}|{record_sha}|{prev}|{created_at}"
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def _last_journal(store: Store) -> tuple[int, str]:
    row = store.conn.execute(
        "SELECT seq, entry_hash FROM journal ORDER BY seq DESC LIMIT 1"
    ).fetchone()
    return (0, GENESIS) if row is None else (int(row[0]), str(row[1]))


def _seal_one(store: Store, key: DeviceKey, draft: RecordDraft) -> SealedRecord:
    if draft.kind not in RECORD_KINDS:
        raise StoreError(f"unknown record kind {draft.kind!r}")
    record_id = draft.record_id or new_record_id()
    series = number = None
    if draft.kind in NUMBERED_KINDS:
        jurisdiction = record_jurisdiction(draft.body)
        numbering.ensure_demo_range(store, jurisdiction)
        series, number = numbering.take_next(
            store, record_id, void=draft.kind == "numero_anulado", jurisdiction=jurisdiction
        )
    created_at = utc_now()
    code = verification_code(record_id)
    envelope = {
        "envelope_version": ENVELOPE_VERSION,
        "id": record_id,
        "kind": draft.kind,
        "series": series,
        "number": number,
        "created_at": created_at,
        "device_id": store.meta("device_id"),
        "key_id": key.device_key_id,
        "inspection_id": draft.inspection_id,
        "refers_to": draft.refers_to,
        "plate_key": draft.plate_key,
        "holder_id": draft.holder_id,
        "occurred_on": draft.occurred_on,
        "verification_code": code,
        "body": dict(draft.body),
        # What the device knew at sealing: clock trust, registry age, HQ address, filing.
        "context": context_for(store, draft.body),
    }
    canonical = canonical_json(envelope)
    digest = sha256_hex(canonical)
    signature = base64.b64encode(key.sign(canonical)).decode("ascii")
    seq_before, prev = _last_journal(store)
    seq = seq_before + 1
    store.conn.execute(
        "INSERT INTO records(id, kind, series, number, inspection_id, refers_to, plate_key, "
        "holder_id, occurred_on, created_at, payload, sha256, signature, key_id, journal_seq, "
        "verification_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [record_id, draft.kind, series, number, draft.inspection_id, draft.refers_to,
         draft.plate_key, draft.holder_id, draft.occurred_on, created_at,
         canonical.decode("utf-8"), digest, signature, key.device_key_id, seq, code],
    )
    store.conn.execute(
        "INSERT INTO journal(seq, record_id, kind, record_sha256, prev_hash, entry_hash, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [seq, record_id, draft.kind, digest, prev,
         journal_entry_hash(seq, record_id, draft.kind, digest, prev, created_at), created_at],
    )
    store.conn.execute(
        "INSERT INTO outbox(record_id, kind, enqueued_at) VALUES (?, ?, ?)",
        [record_id, draft.kind, created_at],
    )
    return SealedRecord(record_id, draft.kind, series, number, created_at, digest, signature,
                        seq, code, envelope)


def seal_records(
    store: Store,
    drafts: Sequence[RecordDraft],
    *,
    close_inspection: str | None = None,
) -> list[SealedRecord]:
    """Seal ``drafts`` (and mark ``close_inspection`` sealed) in one transaction."""
    if not drafts:
        raise StoreError("nothing to seal")
    store.require_writable()  # before ensure_device, which may write the device id and key
    key = ensure_device(store)
    try:
        with store.atomic():
            sealed = [_seal_one(store, key, d) for d in drafts]
            if close_inspection is not None:
                cur = store.conn.execute(
                    "UPDATE inspections SET status = 'sealed', sealed_at = ? "
                    "WHERE id = ? AND status = 'open'",
                    [sealed[0].created_at, close_inspection],
                )
                if cur.rowcount != 1:
                    raise StoreError(
                        f"inspection {close_inspection} is not open",
                        "Esta inspeção já foi selada ou não existe.",
                    )
    except dbapi.Error as exc:
        raise translate_error(exc) from exc
    return sealed


def load_record(store: Store, record_id: str) -> SealedRecord:
    row = store.conn.execute(
        "SELECT id, kind, series, number, created_at, sha256, signature, journal_seq, "
        "verification_code, payload FROM records WHERE id = ?",
        [record_id],
    ).fetchone()
    if row is None:
        raise StoreError(f"no record {record_id}", "Registro não encontrado.")
    return SealedRecord(
        id=row[0], kind=row[1], series=row[2], number=row[3], created_at=row[4],
        sha256=row[5], signature=row[6], journal_seq=row[7], verification_code=row[8],
        envelope=json.loads(row[9]),
    )
