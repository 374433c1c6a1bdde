"""Talonário ranges HQ assigns to devices, and the accounting of every number in them.

Ranges of one series never overlap, whichever devices hold them. Each range is published
to its device through the pull log. The accounting of a range: numbers ``issued`` (a record
carries them), ``voided`` (a ``numero_anulado`` record carries them), ``missing`` (below the
highest number received but not received: still on the device, or lost) and ``unused``
(above it).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field

from sqlalchemy import Connection, Engine, func, insert, select

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.reference import append_change
from inspector_app.hq.tables import devices, number_ranges, records
from inspector_app.sync.protocol import NUMBER_MAX, SERIES_PATTERN, NumberRangeBody


class RangeError(ValueError):
    """A range that cannot be allocated; the message says why (Portuguese)."""


@dataclass(frozen=True)
class AllocatedRange:
    id: str
    device_id: str
    series: str
    first: int
    last: int

    @property
    def body(self) -> NumberRangeBody:
        return NumberRangeBody(series=self.series, first=self.first, last=self.last)


def allocate_range(
    conn: Connection, *, device_id: str, series: str, first: int, last: int
) -> AllocatedRange:
    """Assign ``series`` ``first..last`` to ``device_id`` and publish it to that device."""
    series = series.strip()
    if not re.fullmatch(SERIES_PATTERN, series):
        raise RangeError(f"série inválida {series!r}: use letras, dígitos, '.', '_' ou '-' "
                         "(até 40 caracteres)")
    if first < 1 or last < first or last > NUMBER_MAX:
        raise RangeError(f"faixa inválida {series} {first}..{last}: use 1 ≤ início ≤ fim")
    device = conn.execute(
        select(devices.c.id, devices.c.revoked_at).where(devices.c.id == device_id)
    ).first()
    if device is None:
        raise RangeError(f"dispositivo {device_id} não existe")
    if device.revoked_at is not None:
        raise RangeError(f"dispositivo {device_id} foi revogado")
    overlap = conn.execute(
        select(number_ranges.c.first, number_ranges.c.last, number_ranges.c.device_id)
        .where(
            number_ranges.c.series == series,
            number_ranges.c.first <= last,
            number_ranges.c.last >= first,
        )
        .limit(1)
    ).first()
    if overlap is not None:
        raise RangeError(
            f"a faixa {series} {first}..{last} se sobrepõe a {overlap.first}..{overlap.last} "
            f"do dispositivo {overlap.device_id}"
        )
    allocated = AllocatedRange(str(uuid.uuid4()), device_id, series, first, last)
    conn.execute(
        insert(number_ranges).values(
            id=allocated.id, device_id=device_id, series=series, first=first, last=last,
            allocated_at=utc_now(),
        )
    )
    append_change(
        conn, "number_ranges", allocated.id, "upsert",
        {"id": allocated.id, "series": series, "first": first, "last": last},
        device_id=device_id,
    )
    return allocated


def allocate_next(conn: Connection, *, device_id: str, series: str, size: int) -> AllocatedRange:
    """The next ``size`` numbers of ``series`` after every range already allocated."""
    top = conn.execute(
        select(func.max(number_ranges.c.last)).where(number_ranges.c.series == series)
    ).scalar_one_or_none()
    first = int(top or 0) + 1
    return allocate_range(conn, device_id=device_id, series=series, first=first,
                          last=first + size - 1)


def device_ranges(conn: Connection, device_id: str) -> list[AllocatedRange]:
    rows = conn.execute(
        select(number_ranges)
        .where(number_ranges.c.device_id == device_id)
        .order_by(number_ranges.c.allocated_at, number_ranges.c.first)
    ).all()
    return [AllocatedRange(r.id, r.device_id, r.series, int(r.first), int(r.last)) for r in rows]


@dataclass(frozen=True)
class RangeAccount:
    range: AllocatedRange
    issued: int
    voided: int
    missing: list[int] = field(default_factory=list)

    @property
    def unused(self) -> int:
        size = self.range.last - self.range.first + 1
        return size - self.issued - self.voided - len(self.missing)

    def as_json(self) -> dict[str, object]:
        return {
            "range_id": self.range.id, "device_id": self.range.device_id,
            "series": self.range.series, "first": self.range.first, "last": self.range.last,
            "issued": self.issued, "voided": self.voided, "missing": len(self.missing),
            "missing_numbers": self.missing[:50], "unused": self.unused,
        }


def account(engine: Engine) -> list[RangeAccount]:
    """Every range with its issued, voided, missing and unused numbers."""
    out = []
    with engine.connect() as conn:
        ranges = conn.execute(
            select(number_ranges).order_by(number_ranges.c.series, number_ranges.c.first)
        ).all()
        for r in ranges:
            rng = AllocatedRange(r.id, r.device_id, r.series, int(r.first), int(r.last))
            used = conn.execute(
                select(records.c.number, records.c.kind).where(
                    records.c.series == rng.series,
                    records.c.number.between(rng.first, rng.last),
                )
            ).all()
            numbers = {int(n) for n, _ in used}
            voided = sum(1 for _, kind in used if kind == "numero_anulado")
            top = max(numbers, default=rng.first - 1)
            missing = [n for n in range(rng.first, top + 1) if n not in numbers]
            out.append(RangeAccount(rng, len(used) - voided, voided, missing))
    return out
