"""Business-day calendars for a pack: national + state/DF holidays (``holidays``) + pack days.

The ``holidays`` library has DF and MG but no Juiz de Fora municipal days, so packs add them
(``calendar.toml``). Pontos facultativos (Carnaval, Corpus Christi, ...) count as days without
public business when the pack's ``calendar.optional_days_closed`` parameter says so.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import holidays

from inspector_app.domain.deadlines import BusinessCalendar
from inspector_app.domain.pack import Pack


def _optional_closed(pack: Pack) -> bool:
    name = pack.calendar.include_optional_parameter
    return bool(name and pack.parameters[name].value is True)


@lru_cache(maxsize=64)
def _library_days(
    country: str, subdivision: str, years: tuple[int, ...], optional: bool
) -> tuple[tuple[dt.date, str], ...]:
    categories = ("public", "optional") if optional else ("public",)
    table = holidays.country_holidays(
        country,
        subdiv=subdivision or None,
        years=years,
        language="pt_BR",
        categories=categories,
    )
    return tuple(sorted((day, str(name)) for day, name in table.items()))


def calendar_for(pack: Pack, first_year: int, last_year: int) -> BusinessCalendar:
    """The pack's business-day calendar covering ``first_year``..``last_year``."""
    years = tuple(range(first_year, last_year + 1))
    spec = pack.calendar
    days = list(_library_days(spec.country, spec.subdivision, years, _optional_closed(pack)))
    for extra in spec.extra_holidays:
        for year in years:
            if extra.year not in (None, year):
                continue
            try:
                days.append((dt.date(year, extra.month, extra.day), extra.name))
            except ValueError:  # 02-29 outside leap years
                continue
    return BusinessCalendar.from_days(days)


_calendars: dict[tuple[str, str, int], BusinessCalendar] = {}


def calendar_around(pack: Pack, on: dt.date) -> BusinessCalendar:
    """A cached calendar from the year before ``on`` to two years after (every deadline fits)."""
    key = (pack.id, pack.content_hash, on.year)
    cal = _calendars.get(key)
    if cal is None:
        cal = _calendars[key] = calendar_for(pack, on.year - 1, on.year + 2)
    return cal
