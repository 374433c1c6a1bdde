"""Devices: one-time enrolment codes, enrolment, bearer-token lookup, revocation.

Enrolment pins the device's Ed25519 public key, gives it a token (HQ keeps only the
token's SHA-256) and its first number range. A code is single-use, forever, and expires: a
used code never issues a token again, not even with the same public key (that key is in the
certificate of every signed PDF, so anyone could replay it and log the real device out;
issue 14, finding 8). A device whose enrolment answer was lost asks for a new code: a new
code with the key of an enrolled device that never came back to HQ (no request since) revokes
that orphan and enrols the device afresh.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, Row, insert, select, update

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.core.security import (
    hash_secret,
    new_enrolment_code,
    new_token,
    normalize_code,
)
from inspector_app.hq.numbering import allocate_next
from inspector_app.hq.tables import devices, enrolment_codes
from inspector_app.security.keys import device_key_id_of
from inspector_app.sync.protocol import SERIES_PATTERN, EnrolRequest, EnrolResponse

DEFAULT_SERIES = "AI"
DEFAULT_RANGE_SIZE = 1000


@dataclass(frozen=True)
class Device:
    id: str
    name: str
    public_key: str
    key_id: str
    enrolled_at: str
    revoked_at: str | None
    last_seen_at: str | None
    last_contact_at: str | None = None
    pending_reported: int | None = None
    pending_reported_at: str | None = None

    @property
    def public_key_bytes(self) -> bytes:
        return base64.b64decode(self.public_key)

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None


class EnrolError(Exception):
    """Enrolment refused. ``status`` is the HTTP status; ``counts`` says whether it counts
    as a failed attempt for the rate limit (a wrong, expired or used code does)."""

    def __init__(self, status: int, detail: str, *, counts: bool = True) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.counts = counts


class DeviceError(ValueError):
    """An administrative operation on a device that cannot be done (Portuguese message)."""


def _device(row: Row[Any]) -> Device:
    return Device(
        id=row.id, name=row.name, public_key=row.public_key, key_id=row.key_id,
        enrolled_at=row.enrolled_at, revoked_at=row.revoked_at, last_seen_at=row.last_seen_at,
        last_contact_at=row.last_contact_at, pending_reported=row.pending_reported,
        pending_reported_at=row.pending_reported_at,
    )


def create_enrolment_code(
    engine: Engine,
    *,
    ttl_minutes: int = 60,
    series: str = DEFAULT_SERIES,
    range_size: int = DEFAULT_RANGE_SIZE,
) -> str:
    """A new one-time code valid for ``ttl_minutes``; only its hash is stored."""
    if ttl_minutes < 1:
        raise DeviceError("o prazo de validade deve ser de pelo menos 1 minuto")
    if range_size < 1 or not re.fullmatch(SERIES_PATTERN, series.strip()):
        raise DeviceError("informe a série (letras, dígitos, '.', '_' ou '-') e um tamanho de "
                          "faixa ≥ 1")
    code = new_enrolment_code()
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        conn.execute(
            insert(enrolment_codes).values(
                code_hash=hash_secret(code), created_at=now.isoformat(timespec="microseconds"),
                expires_at=(now + dt.timedelta(minutes=ttl_minutes)).isoformat(
                    timespec="microseconds"),
                series=series.strip(), range_size=range_size,
            )
        )
    return code


def enrol(engine: Engine, request: EnrolRequest, *, address: str | None = None) -> EnrolResponse:
    """Enrol the device that sent ``request``; raises :class:`EnrolError`."""
    code_hash = hash_secret(normalize_code(request.code))
    token = new_token()
    now = utc_now()
    with engine.begin() as conn:
        code = conn.execute(
            select(enrolment_codes)
            .where(enrolment_codes.c.code_hash == code_hash)
            .with_for_update()
        ).first()
        if code is None:
            raise EnrolError(400, "Código de cadastro inválido.")
        if code.expires_at <= now:
            raise EnrolError(400, "Código de cadastro expirado: peça um novo à sede.")
        if code.used_at is not None:
            raise EnrolError(400, "Código de cadastro já utilizado: peça um novo código à sede.")
        active = conn.execute(
            select(devices.c.id, devices.c.last_seen_at).where(
                devices.c.public_key == request.public_key, devices.c.revoked_at.is_(None)
            )
        ).first()
        if active is not None and active.last_seen_at is None:
            # Enrolled, but the device never got the answer (it never came back): revoke
            # the orphan; its range stays accounted as unused.
            conn.execute(update(devices).where(devices.c.id == active.id)
                         .values(revoked_at=now))
            active = None
        if active is not None:
            raise EnrolError(
                409, f"Este dispositivo já está cadastrado na sede (id {active.id}).",
                counts=False,
            )
        device_id = str(uuid.uuid4())
        conn.execute(
            insert(devices).values(
                id=device_id, name=request.device_name, public_key=request.public_key,
                key_id=device_key_id_of(base64.b64decode(request.public_key)),
                token_hash=hash_secret(token), enrolled_at=now,
                enrolled_from=(address or "")[:64] or None,
            )
        )
        allocated = allocate_next(
            conn, device_id=device_id, series=code.series, size=code.range_size
        )
        conn.execute(
            update(enrolment_codes)
            .where(enrolment_codes.c.code_hash == code_hash)
            .values(used_at=now, device_id=device_id)
        )
    return EnrolResponse(device_id=device_id, token=token, number_range=allocated.body)


def mark_seen(engine: Engine, device_id: str) -> None:
    """Note that ``device_id`` used its token (its first pull): from then on a new
    enrolment code with its key no longer replaces it."""
    with engine.begin() as conn:
        conn.execute(update(devices).where(devices.c.id == device_id,
                                           devices.c.last_seen_at.is_(None))
                     .values(last_seen_at=utc_now()))


# The most a device may say it still has to send (it keeps far fewer on disk).
MAX_PENDING_REPORTED = 10_000_000


def note_contact(engine: Engine, device_id: str, *, pending: int | None = None) -> None:
    """Note that ``device_id`` pushed or pulled now and, when it said so on its pull, how
    many records it still had to send (an older device says nothing: the count it last
    reported is kept with its date, and the console shows that date)."""
    values: dict[str, Any] = {"last_contact_at": utc_now()}
    if pending is not None:
        if not 0 <= pending <= MAX_PENDING_REPORTED:
            raise DeviceError(f"contagem de pendências fora de 0..{MAX_PENDING_REPORTED}")
        values.update(pending_reported=pending, pending_reported_at=values["last_contact_at"])
    with engine.begin() as conn:
        conn.execute(update(devices).where(devices.c.id == device_id).values(**values))


def device_for_token(engine: Engine, token: str) -> Device | None:
    with engine.connect() as conn:
        row = conn.execute(
            select(devices).where(devices.c.token_hash == hash_secret(token))
        ).first()
    return None if row is None else _device(row)


def get_device(engine: Engine, device_id: str) -> Device | None:
    with engine.connect() as conn:
        row = conn.execute(select(devices).where(devices.c.id == device_id)).first()
    return None if row is None else _device(row)


def list_devices(engine: Engine) -> list[Device]:
    with engine.connect() as conn:
        rows = conn.execute(select(devices).order_by(devices.c.enrolled_at)).all()
    return [_device(r) for r in rows]


def revoke_device(engine: Engine, device_id: str) -> Device:
    """Revoke ``device_id``: its token is refused from the next request on."""
    with engine.begin() as conn:
        row = conn.execute(select(devices).where(devices.c.id == device_id)).first()
        if row is None:
            raise DeviceError(f"dispositivo {device_id} não existe")
        if row.revoked_at is None:
            conn.execute(
                update(devices).where(devices.c.id == device_id).values(revoked_at=utc_now())
            )
    found = get_device(engine, device_id)
    assert found is not None
    return found
