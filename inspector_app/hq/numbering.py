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
from typing import Any

from sqlalchemy import Connection, Engine, case, func, insert, or_, select

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
    return [_allocated(r) for r in rows]


# How many missing numbers an account lists (it counts them all).
MISSING_LISTED = 50


@dataclass(frozen=True)
class RangeAccount:
    range: AllocatedRange
    issued: int
    voided: int
    # The first :data:`MISSING_LISTED` missing numbers; ``missing_count`` counts them all.
    missing: list[int] = field(default_factory=list)
    missing_count: int | None = None

    @property
    def missing_total(self) -> int:
        return len(self.missing) if self.missing_count is None else self.missing_count

    @property
    def size(self) -> int:
        return self.range.last - self.range.first + 1

    @property
    def unused(self) -> int:
        return self.size - self.issued - self.voided - self.missing_total

    def as_json(self) -> dict[str, object]:
        return {
            "range_id": self.range.id, "device_id": self.range.device_id,
            "series": self.range.series, "first": self.range.first, "last": self.range.last,
            "issued": self.issued, "voided": self.voided, "missing": self.missing_total,
            "missing_numbers": self.missing[:MISSING_LISTED], "unused": self.unused,
        }


def range_account(conn: Connection, rng: AllocatedRange) -> RangeAccount:
    """The accounting of one range from the database's aggregates (one index range scan
    on ``(series, number)``, and one more for the first missing numbers when there are)."""
    in_range = (records.c.series == rng.series, records.c.number.between(rng.first, rng.last))
    used, voided, top = conn.execute(
        select(func.count(),
               func.coalesce(func.sum(case((records.c.kind == "numero_anulado", 1), else_=0)),
                             0),
               func.max(records.c.number)).where(*in_range)
    ).one()
    used, voided = int(used), int(voided)
    missing_count = 0 if top is None else int(top) - rng.first + 1 - used
    listed: list[int] = []
    if missing_count:
        numbers = select(records.c.number.label("n"),
                         func.lag(records.c.number).over(order_by=records.c.number)
                         .label("prev")).where(*in_range).subquery()
        gaps = conn.execute(
            select(numbers.c.prev, numbers.c.n)
            .where(or_(numbers.c.prev.is_(None), numbers.c.n > numbers.c.prev + 1))
            .order_by(numbers.c.n).limit(MISSING_LISTED + 1)
        ).all()
        for prev, n in gaps:
            start = rng.first if prev is None else int(prev) + 1
            listed += range(start, min(int(n), start + MISSING_LISTED - len(listed)))
            if len(listed) >= MISSING_LISTED:
                break
    return RangeAccount(rng, used - voided, voided, listed, missing_count)


def _allocated(row: Any) -> AllocatedRange:
    return AllocatedRange(row.id, row.device_id, row.series, int(row.first), int(row.last))


def count_ranges(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(number_ranges)).scalar_one())


def account(engine: Engine, *, limit: int | None = None, offset: int = 0,
            device_id: str | None = None) -> list[RangeAccount]:
    """Ranges (by series and first number; ``limit`` of them from ``offset``, or those of
    ``device_id``) with their issued, voided, missing and unused numbers."""
    query = select(number_ranges).order_by(number_ranges.c.series, number_ranges.c.first)
    if device_id is not None:
        query = query.where(number_ranges.c.device_id == device_id)
    if limit is not None:
        query = query.limit(limit).offset(offset)
    with engine.connect() as conn:
        return [range_account(conn, _allocated(r)) for r in conn.execute(query).all()]
