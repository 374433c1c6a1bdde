"""Business-day calendars for a pack: national + state/DF holidays (``holidays``) + pack days
+ dated exceptions.

The ``holidays`` library has DF and MG but no Juiz de Fora municipal days, so packs add them
(``calendar.toml``). Pontos facultativos (Carnaval, Corpus Christi, ...) count as days without
public business when the pack's ``calendar.optional_days_closed`` parameter says so, except
the days of partial expediente (Lei 9.784/1999 art. 66 §1): Ash Wednesday opens at 14h (a
business day that keeps a due date) and 24/12 and 31/12 close at 14h (business days that
move a due date falling on them).

Dated exceptions (a decree of the year: a day closed, or closing early) come from the pack
(``[[exceptions]]``) and from HQ (published through the pull log and held in the device's
reference store, usable offline); the later wins for the same day. Every calendar has a
``version`` that names the pack calendar and the exceptions applied, printed by deadlines.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from functools import lru_cache

import holidays

from inspector_app.domain.calendar_exceptions import (  # noqa: F401 (re-exported)
    CALENDAR_EXCEPTIONS_PARAMETER,
    describe_exception,
    parse_exceptions,
)
from inspector_app.domain.deadlines import BusinessCalendar
from inspector_app.domain.pack import CalendarException, Pack

# Library "optional" days that are partial expediente, not closed (federal/GDF practice).
LATE_OPEN_NAMES = frozenset({"Quarta-feira de Cinzas"})
EARLY_CLOSE_NAMES = frozenset({"Véspera de Natal", "Véspera de Ano-Novo"})


def _optional_closed(pack: Pack) -> bool:
    name = pack.calendar.include_optional_parameter
    return bool(name and pack.parameters[name].value is True)


@lru_cache(maxsize=64)
def _library_days(
    country: str, subdivision: str, years: tuple[int, ...], category: str
) -> tuple[tuple[dt.date, str], ...]:
    table = holidays.country_holidays(
        country,
        subdiv=subdivision or None,
        years=years,
        language="pt_BR",
        categories=(category,),
    )
    return tuple(sorted((day, str(name)) for day, name in table.items()))


def calendar_version(pack: Pack, exceptions: Iterable[CalendarException] = ()) -> str:
    """``<pack>@<hash of the pack files>`` plus ``+exc:<hash>`` of the extra exceptions."""
    base = f"{pack.id}@{pack.content_hash[:12]}"
    rows = sorted(
        f"{e.date.isoformat()}|{e.kind}|{e.name}|{e.decree}|{e.source}" for e in exceptions
    )
    if not rows:
        return base
    digest = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:12]
    return f"{base}+exc:{digest}"


def calendar_for(
    pack: Pack,
    first_year: int,
    last_year: int,
    exceptions: Iterable[CalendarException] = (),
) -> BusinessCalendar:
    """The pack's business-day calendar covering ``first_year``..``last_year``."""
    years = tuple(range(first_year, last_year + 1))
    spec = pack.calendar
    closed = dict(_library_days(spec.country, spec.subdivision, years, "public"))
    early: dict[dt.date, str] = {}
    late: dict[dt.date, str] = {}
    if _optional_closed(pack):
        for day, name in _library_days(spec.country, spec.subdivision, years, "optional"):
            if day in closed:
                continue
            if name in LATE_OPEN_NAMES:
                late[day] = f"{name} (expediente a partir das 14h)"
            elif name in EARLY_CLOSE_NAMES:
                early[day] = f"{name} (expediente até as 14h)"
            else:
                closed[day] = f"{name} (ponto facultativo)"
    for extra in spec.extra_holidays:
        for year in years:
            if extra.year not in (None, year):
                continue
            try:
                day = dt.date(year, extra.month, extra.day)
            except ValueError:  # 02-29 outside leap years
                continue
            closed[day] = extra.name
            early.pop(day, None)
            late.pop(day, None)
    extra_exc = tuple(exceptions)
    for exc in (*spec.exceptions, *extra_exc):
        if not first_year <= exc.date.year <= last_year:
            continue
        for table in (closed, early, late):
            table.pop(exc.date, None)
        label = f"{exc.name} ({exc.decree})" if exc.decree else exc.name
        {"closed": closed, "early_close": early, "late_open": late}[exc.kind][exc.date] = label
    return BusinessCalendar.from_days(
        closed.items(),
        early_close=early.items(),
        late_open=late.items(),
        version=calendar_version(pack, extra_exc),
    )


_calendars: dict[tuple[str, str, int, str], BusinessCalendar] = {}


def calendar_around(
    pack: Pack, on: dt.date, exceptions: Iterable[CalendarException] = ()
) -> BusinessCalendar:
    """A cached calendar from the year before ``on`` to two years after (every deadline fits)."""
    extra = tuple(exceptions)
    key = (pack.id, pack.content_hash, on.year, calendar_version(pack, extra))
    cal = _calendars.get(key)
    if cal is None:
        if len(_calendars) > 256:
            _calendars.clear()
        cal = _calendars[key] = calendar_for(pack, on.year - 1, on.year + 2, extra)
    return cal
