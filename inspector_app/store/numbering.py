"""Talonário numbering: sequential numbers from ranges the authority assigns to the device.

Every number of every range ends as ``issued`` (a sealed document carries it) or ``voided``
(a sealed void record gives the reason); numbers are taken in order, so the accounting of a
range is: issued + voided + remaining = size, with no gaps.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from inspector_app.store.db import Store, StoreError, utc_now

LOW_WATER = 20  # warn when this many numbers or fewer remain
DEMO_SIZE = 99_999


class NumbersExhaustedError(StoreError):
    """No number left in any range: nothing can be issued until HQ assigns a new range."""


@dataclass(frozen=True)
class NumberRange:
    id: str
    series: str
    first: int
    last: int
    source: str
    jurisdiction: str | None = None  # the órgão's jurisdiction ("DF", "JF"); None: any

    @property
    def size(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class RangeStatus:
    range: NumberRange
    issued: int
    voided: int
    next_number: int | None

    @property
    def remaining(self) -> int:
        return self.range.size - self.issued - self.voided


def _has_jurisdiction(store: Store) -> bool:
    # A store opened by this code is migrated (0005_i11b); the check keeps the code usable
    # on an older schema (upgrade tests build their stores with the older migrations).
    return any(r[1] == "jurisdiction" for r in
               store.conn.execute("PRAGMA table_info(number_ranges)").fetchall())


def ranges(store: Store) -> list[NumberRange]:
    column = "jurisdiction" if _has_jurisdiction(store) else "NULL"
    rows = store.conn.execute(
        f"SELECT id, series, first, last, source, {column} FROM number_ranges "
        "ORDER BY assigned_at, first"
    ).fetchall()
    return [NumberRange(*row) for row in rows]


def add_range(
    store: Store, *, series: str, first: int, last: int, source: str = "hq",
    jurisdiction: str | None = None,
) -> NumberRange:
    """Record a range assigned by the authority (or the demo range). Overlaps are refused."""
    if not series or first < 1 or last < first:
        raise StoreError(
            f"invalid range {series!r} {first}..{last}",
            "Faixa de numeração inválida: informe a série e início ≤ fim.",
        )
    for r in ranges(store):
        if r.series == series and not (last < r.first or first > r.last):
            raise StoreError(
                f"range {series} {first}..{last} overlaps {r.first}..{r.last}",
                "A faixa de numeração se sobrepõe a uma faixa já recebida.",
            )
    rng = NumberRange(str(uuid.uuid4()), series, first, last, source, jurisdiction)
    if _has_jurisdiction(store):
        store.conn.execute(
            "INSERT INTO number_ranges(id, series, first, last, source, assigned_at, "
            "jurisdiction) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [rng.id, rng.series, rng.first, rng.last, rng.source, utc_now(), rng.jurisdiction],
        )
    else:
        store.conn.execute(
            "INSERT INTO number_ranges(id, series, first, last, source, assigned_at) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [rng.id, rng.series, rng.first, rng.last, rng.source, utc_now()],
        )
    return rng


def ensure_demo_range(store: Store, jurisdiction: str | None = None) -> NumberRange | None:
    """When the device has no HQ range (not enrolled), give it a demo range labelled DEMO:
    one per órgão's jurisdiction (``DEMO-DF-AB12``), so each órgão keeps its own series.
    Without a jurisdiction, a range only when the device has none at all."""
    have = ranges(store)
    if any(r.source == "hq" for r in have):
        return None
    if jurisdiction is None:
        if have:
            return None
    elif any(r.jurisdiction == jurisdiction for r in have) or not _has_jurisdiction(store):
        return None if have else ensure_demo_range(store)
    device = (store.meta("device_id") or "0000")[:4].upper()
    series = f"DEMO-{jurisdiction}-{device}" if jurisdiction else f"DEMO-{device}"
    return add_range(store, series=series, first=1, last=DEMO_SIZE, source="demo",
                     jurisdiction=jurisdiction)


def ensure_demo_ranges(store: Store, jurisdictions: Iterable[str]) -> list[NumberRange]:
    """Demo setup: a demo range for each jurisdiction (the packs installed), created now so
    the first screen never says the numbering is exhausted."""
    made = []
    for jurisdiction in sorted(set(jurisdictions)):
        rng = ensure_demo_range(store, jurisdiction)
        if rng is not None:
            made.append(rng)
    return made


def status(store: Store) -> list[RangeStatus]:
    out = []
    for r in ranges(store):
        # Index-only counts (PK and idx_number_usage_status): no row of the table is read.
        row = store.conn.execute(
            "SELECT COUNT(*), MAX(number) FROM number_usage "
            "WHERE series = ? AND number BETWEEN ? AND ?",
            [r.series, r.first, r.last],
        ).fetchone()
        voided = int(store.conn.execute(
            "SELECT COUNT(*) FROM number_usage WHERE series = ? AND status = 'voided' "
            "AND number BETWEEN ? AND ?", [r.series, r.first, r.last]).fetchone()[0])
        issued, top = int(row[0] or 0) - voided, row[1]
        nxt = r.first if top is None else int(top) + 1
        out.append(RangeStatus(r, issued, voided, nxt if nxt <= r.last else None))
    return out


def usable(store: Store, jurisdiction: str | None = None) -> list[RangeStatus]:
    """The ranges numbers are taken from: HQ's once the device has one (a demo range left
    from before enrolment is never used again), else the demo ranges. For a jurisdiction,
    its own ranges when it has any, else the ranges tied to none."""
    statuses = status(store)
    if any(s.range.source == "hq" for s in statuses):
        statuses = [s for s in statuses if s.range.source == "hq"]
    if jurisdiction is None:
        return statuses
    own = [s for s in statuses if s.range.jurisdiction == jurisdiction]
    return own or [s for s in statuses if s.range.jurisdiction is None]


def remaining(store: Store, jurisdiction: str | None = None) -> int:
    return sum(s.remaining for s in usable(store, jurisdiction))


def take_next(store: Store, record_id: str, *, void: bool = False,
              jurisdiction: str | None = None) -> tuple[str, int]:
    """The next number (first usable range with numbers left), marked used by ``record_id``.

    Must run inside ``store.atomic()`` together with the record that carries it.
    """
    if not store.conn.in_transaction:
        raise StoreError("take_next must run inside a write transaction")
    for s in usable(store, jurisdiction):
        if s.next_number is not None:
            store.conn.execute(
                "INSERT INTO number_usage(series, number, status, record_id, at) "
                "VALUES (?, ?, ?, ?, ?)",
                [s.range.series, s.next_number, "voided" if void else "issued", record_id,
                 utc_now()],
            )
            return s.range.series, s.next_number
    raise NumbersExhaustedError(
        "no numbers left in any range",
        "Não há mais números de auto disponíveis neste dispositivo. Sincronize com a sede "
        "para receber uma nova faixa de numeração; nada foi emitido.",
    )


def low_numbers_warning(store: Store, jurisdiction: str | None = None) -> str | None:
    """The warning to show, only when it is true: a device with no range at all (not
    enrolled) is given a demo range at its first seal, so it is not out of numbers."""
    if not ranges(store):
        return None
    left = remaining(store, jurisdiction)
    if left == 0:
        return "Numeração esgotada: nenhum auto pode ser emitido até receber nova faixa."
    if left <= LOW_WATER:
        return f"Restam apenas {left} números de auto neste dispositivo: sincronize com a sede."
    return None
