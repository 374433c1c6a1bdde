"""The sync contract shared by the device and HQ: request and answer bodies under ``/api/v1``.

Pydantic v2 models, so HQ validates what arrives and publishes an OpenAPI spec from the same
classes the client uses to read the answers. This module imports nothing from the app: HQ
depends on it (and on ``domain``/``security``), never on the device's store.

Caveat: a record's ``payload`` is the canonical JSON text exactly as the device signed it;
it travels as a string so that no JSON re-encoding on either side can change a byte of what
the signature and the SHA-256 cover.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import urllib.parse
import uuid
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

API_PREFIX = "/api/v1"
MAX_PUSH_RECORDS = 100
DEFAULT_PULL_LIMIT = 500
MAX_PULL_LIMIT = 1000
PUBLIC_KEY_BYTES = 32
MAX_BLOB_QUERY = 1000
MAX_BUNDLE_PARTS = 1000
BUNDLE_MEDIA_TYPE = "application/vnd.inspector.blob-bundle"

Sha256 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
# Narrow alphabets wherever a field is stored in an indexed column: no control characters
# (PostgreSQL refuses NUL), nothing that could mean something else downstream.
Kind = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,39}$")]
ENROL_URI_SCHEME = "inspector-enrol"
ENROL_CODE_PATTERN = r"^[A-Za-z0-9 -]{4,64}$"
SERIES_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$"
Series = Annotated[str, StringConstraints(pattern=SERIES_PATTERN)]
Timestamp = Annotated[str, StringConstraints(
    pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$")]
Base64 = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]+={0,2}$", max_length=200)]
NUMBER_MAX = 2**62

# Reference tables HQ publishes (short names, as in registry files) and their primary keys.
# ``number_ranges`` rows are published only to the device they are assigned to. ``standing``
# is computed by HQ from the autos it receives (``hq/standing.py``), never imported from a
# registry file: the HQ and device registry imports have their own table lists.
REFERENCE_KEYS: dict[str, tuple[str, ...]] = {
    "permit_holders": ("id",),
    "lines": ("id",),
    "vehicles": ("id",),
    "drivers": ("id",),
    "inspectors": ("id",),
    "history": ("id",),
    "parameters": ("pack_id", "name"),
    "pack_versions": ("pack_id", "version"),
    "number_ranges": ("id",),
    "standing": ("id",),
}
REFERENCE_TABLES = tuple(REFERENCE_KEYS)

# Why HQ rejected a record: the first word of ``PushResult.reason``.
REJECT_INVALID_PAYLOAD = "invalid_payload"
REJECT_NOT_CANONICAL = "not_canonical"
REJECT_HASH_MISMATCH = "hash_mismatch"
REJECT_WRONG_DEVICE = "wrong_device"
REJECT_BAD_SIGNATURE = "bad_signature"
REJECT_ENVELOPE_MISMATCH = "envelope_mismatch"
REJECT_NUMBER_OUT_OF_RANGE = "number_out_of_range"
REJECT_NUMBER_TAKEN = "number_taken"
REJECT_OTHER_DEVICE = "other_device"


def _uuid_text(value: str) -> str:
    try:
        parsed = uuid.UUID(value)
    except ValueError:
        raise ValueError("not a UUID") from None
    if str(parsed) != value:
        raise ValueError("UUID must be in lowercase hyphenated form")
    return value


def _public_key(value: str) -> str:
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("public key is not standard base64") from None
    if len(raw) != PUBLIC_KEY_BYTES:
        raise ValueError(f"an Ed25519 public key has {PUBLIC_KEY_BYTES} bytes")
    return value


RecordId = Annotated[str, AfterValidator(_uuid_text)]
PublicKeyB64 = Annotated[str, AfterValidator(_public_key)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --- enrolment --------------------------------------------------------------------------------


class NumberRangeBody(_Model):
    """A talonário range: numbers ``first..last`` (inclusive) of ``series``."""

    series: Series
    first: int = Field(ge=1, le=NUMBER_MAX)
    last: int = Field(ge=1, le=NUMBER_MAX)


class EnrolRequest(_Model):
    """A device asks to be enrolled with a one-time code an administrator gave it."""

    code: Annotated[str, StringConstraints(pattern=ENROL_CODE_PATTERN)]
    public_key: PublicKeyB64 = Field(description="raw Ed25519 public key, standard base64")
    device_name: Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f\x7f]{1,200}$")]


class EnrolResponse(_Model):
    """The device's id, its bearer token (shown once; HQ keeps only its hash) and range."""

    device_id: str
    token: str
    number_range: NumberRangeBody
    # HQ's public address (verification URL printed on documents); older HQs omit it.
    public_url: str | None = Field(default=None, max_length=500)


def enrolment_uri(hq_url: str, code: str) -> str:
    """What HQ's console puts in the enrolment QR code: the HQ address and the one-time
    code (``inspector-enrol:?hq=https%3A%2F%2Fsede…&code=K7QX-…``); the desktop reads it
    from a photo with :func:`parse_enrolment_uri`."""
    return (f"{ENROL_URI_SCHEME}:?hq={urllib.parse.quote(hq_url, safe='')}"
            f"&code={urllib.parse.quote(code, safe='-')}")


def parse_enrolment_uri(text: str) -> tuple[str, str]:
    """(HQ address, code) of an enrolment QR code; ``ValueError`` with a Portuguese
    message for anything else (another QR code, a damaged one)."""
    scheme, sep, rest = text.strip().partition(":")
    if not sep or scheme.lower() != ENROL_URI_SCHEME or not rest.startswith("?"):
        raise ValueError("Este código QR não é um código de cadastro da sede.")
    fields = urllib.parse.parse_qs(rest[1:], keep_blank_values=True, max_num_fields=4)
    hq, code = fields.get("hq", [""])[0].strip(), fields.get("code", [""])[0].strip()
    if not hq.startswith(("https://", "http://")) or len(hq) > 500 or any(
            c.isspace() or ord(c) < 32 for c in hq):
        raise ValueError("O código QR não traz um endereço da sede válido.")
    if not re.fullmatch(ENROL_CODE_PATTERN, code):
        raise ValueError("O código QR não traz um código de cadastro válido.")
    return hq, code


# --- push -------------------------------------------------------------------------------------


class PushRecord(_Model):
    """One sealed record as the device stored it.

    ``id``, ``kind``, ``series``, ``number`` and ``created_at`` repeat envelope fields so HQ
    can index without trusting them: it checks each against the signed payload.
    """

    id: RecordId
    kind: Kind
    series: Series | None = None
    number: int | None = Field(default=None, ge=1, le=NUMBER_MAX)
    created_at: Timestamp
    payload: Annotated[str, StringConstraints(min_length=2, max_length=2_000_000)]
    sha256: Sha256
    signature: Base64
    blobs: list[Sha256] = Field(default_factory=list, max_length=1000)


class PushRequest(_Model):
    records: list[PushRecord] = Field(min_length=1, max_length=MAX_PUSH_RECORDS)


PushStatus = Literal["accepted", "duplicate", "conflict", "rejected", "missing_blobs"]
DELIVERED: frozenset[str] = frozenset({"accepted", "duplicate"})


class PushResult(_Model):
    """HQ's answer for one record.

    ``accepted`` and ``duplicate`` (same id, same hash) mean HQ holds the record: the
    device may mark it delivered. ``conflict`` (same id, other hash) and ``rejected`` need a
    person; ``missing_blobs`` lists the files to upload before pushing the record again.
    ``reason`` starts with a machine word (``number_out_of_range: …``).
    """

    id: str
    status: PushStatus
    reason: str | None = None
    missing: list[str] = Field(default_factory=list)


class PushResponse(_Model):
    results: list[PushResult]


# --- pull -------------------------------------------------------------------------------------


class Change(_Model):
    """One reference change in server order.

    ``row`` is the whole row for an upsert and only its primary-key columns for a delete
    (a tombstone); ``key`` is the primary key values joined by ``|``.
    """

    seq: int
    table: str
    key: str
    op: Literal["upsert", "delete"]
    row: dict[str, Any]


class PullPage(_Model):
    """A page of changes. ``resync`` true means HQ does not know the device's cursor (its
    database was restored from a backup older than what the device saw, or it holds fewer
    of the device's records than the device saw acknowledged): the device pulls again from
    0 and offers every record again (:func:`change_tag`)."""

    changes: list[Change]
    next_cursor: int = Field(ge=0)
    more: bool
    resync: bool = False
    # The device's cursor is behind the pull log's compaction point (issue 19): it pulls
    # from 0, a snapshot, and deletes the rows the snapshot does not hold. Sent only to a
    # device that asked for snapshots (``snapshot=true``) and only when true, so an older
    # app, which forbids unknown fields, never sees it (it gets ``resync`` instead).
    snapshot: bool = False


def change_tag(seq: int, table: str, key: str, op: str, row: Mapping[str, Any]) -> str:
    """What identifies a change of the pull log beyond its number: the device sends the tag
    of the last change it applied with its cursor, and HQ answers ``resync`` when the change
    it now holds under that number is another one (a restored database that went on)."""
    text = json.dumps([seq, table, key, op, dict(row)], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# --- blobs in bulk ------------------------------------------------------------------------------


class BlobQuery(_Model):
    """Which of these files does HQ lack? (one request instead of a HEAD per file)"""

    sha256: list[Sha256] = Field(min_length=1, max_length=MAX_BLOB_QUERY)


class BlobMissing(_Model):
    missing: list[str]


class BundlePart(_Model):
    """HQ's answer for one file of a bundle: ``stored`` (new, on disk and fsynced),
    ``present`` (HQ had it already) or ``refused`` (its bytes do not hash to its name, or it
    is larger than HQ accepts); ``reason`` says why in Portuguese."""

    sha256: str
    status: Literal["stored", "present", "refused"]
    reason: str | None = None


class BundleResponse(_Model):
    parts: list[BundlePart]


def bundle_part_header(sha256: str, size: int) -> bytes:
    """A bundle is files one after another, each preceded by the ASCII line
    ``<sha256> <size>\n`` (lowercase hex, decimal byte count): no escaping, no multipart
    parser, and HQ hashes each file as it streams in."""
    return f"{sha256} {size}\n".encode("ascii")


# --- verification and health ------------------------------------------------------------------


class VerifyResult(_Model):
    """What the public verification of a printed code says (no personal data)."""

    code: str
    authentic: bool
    kind: str | None = None
    number: str | None = None
    date: str | None = None
    plate: str | None = None
    status: Literal["valid", "cancelled"] | None = None
    cancelled_on: str | None = None
    organ: str | None = None
    received_at: str | None = None
    # "Horário do dispositivo não confirmado desde …" when the sealing device's clock had
    # not been confirmed against HQ (the record's own time is never changed).
    clock_note: str | None = None


class Health(_Model):
    """No version: the public does not learn which release (and its known bugs) runs."""

    status: Literal["ok", "degraded"]
    database: str


class ErrorBody(_Model):
    detail: str


# --- helpers both sides use -------------------------------------------------------------------


def reference_key(table: str, row: Mapping[str, Any]) -> str:
    """The change key of ``row`` in ``table``: its primary-key values joined by ``|``."""
    return "|".join(str(row[column]) for column in REFERENCE_KEYS[table])


def verification_code_for(record_id: str) -> str:
    """The short code printed (and in the QR) for a record: 12 base32 characters in 3
    groups, derived from the record id. Same rule as ``store.sealing.verification_code``
    (a test keeps the two equal); HQ checks every pushed envelope against it."""
    digest = hashlib.sha256(b"inspector-verify:" + uuid.UUID(record_id).bytes).digest()
    text = base64.b32encode(digest).decode("ascii")[:12]
    return f"{text[:4]}-{text[4:8]}-{text[8:]}"


def display_number(series: str | None, number: int | None) -> str | None:
    """The printed number ``SERIES-000123`` (None for a record without a number)."""
    if not series or number is None:
        return None
    return f"{series}-{number:06d}"


def blobs_of_envelope(envelope: Mapping[str, Any]) -> list[str]:
    """SHA-256s of the files a sealed record names: photos (original, working copy,
    thumbnail) and signature images. Sorted, without repeats.

    Only those places are read: other ``*_sha256`` fields (``cancelled_sha256``) are hashes
    of records, not files.
    """
    body = envelope.get("body")
    if not isinstance(body, Mapping):
        return []
    found: set[str] = set()
    photos = body.get("photos")
    if isinstance(photos, list):
        for photo in photos:
            if isinstance(photo, Mapping):
                for name in ("original_sha256", "working_sha256", "thumb_sha256"):
                    value = photo.get(name)
                    if isinstance(value, str) and value:
                        found.add(value)
    signatures = body.get("signatures")
    if isinstance(signatures, Mapping):
        for signature in signatures.values():
            if isinstance(signature, Mapping):
                value = signature.get("png_sha256")
                if isinstance(value, str) and value:
                    found.add(value)
    return sorted(found)
