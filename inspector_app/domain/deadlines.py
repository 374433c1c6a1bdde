"""Legal deadline arithmetic (Lei 9.784/1999 art. 66, received in the DF by Lei 2.834/2001).

* the first day is excluded and the last included (art. 66 caput);
* a deadline that ends on a day without public business moves to the next business day (§1);
* days are calendar days unless the norm says *úteis* (§2); months count date to date (§3).

The calendar is injected: this module knows weekends, not holidays (see
``inspector_app.calendars`` for the national, DF/MG and pack-added days).
"""

from __future__ import annotations

import calendar as _cal
import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass

ONE_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class BusinessCalendar:
    """Business days are Monday–Friday that are not in ``holidays``."""

    holidays: frozenset[dt.date] = frozenset()
    names: tuple[tuple[dt.date, str], ...] = ()

    @classmethod
    def from_days(cls, days: Iterable[tuple[dt.date, str]]) -> BusinessCalendar:
        pairs = tuple(sorted(days))
        return cls(holidays=frozenset(d for d, _ in pairs), names=pairs)

    def is_business_day(self, day: dt.date) -> bool:
        return day.weekday() < 5 and day not in self.holidays

    def holiday_name(self, day: dt.date) -> str | None:
        for d, name in self.names:
            if d == day:
                return name
        return None

    def next_business_day(self, day: dt.date) -> dt.date:
        """``day`` itself when it is a business day, else the first one after it."""
        while not self.is_business_day(day):
            day += ONE_DAY
        return day


def add_business_days(start: dt.date, days: int, cal: BusinessCalendar) -> dt.date:
    """The ``days``-th business day after ``start`` (``start`` itself is excluded)."""
    if days < 1:
        raise ValueError("a deadline counts at least one day")
    day = start
    counted = 0
    while counted < days:
        day += ONE_DAY
        if cal.is_business_day(day):
            counted += 1
    return day


def add_calendar_days(start: dt.date, days: int, cal: BusinessCalendar) -> dt.date:
    """``start`` + ``days`` calendar days, moved forward to a business day (art. 66 §1)."""
    if days < 1:
        raise ValueError("a deadline counts at least one day")
    return cal.next_business_day(start + dt.timedelta(days=days))


def add_months(start: dt.date, months: int) -> dt.date:
    """Date to date (art. 66 §3); a day missing in the target month ends on its last day."""
    index = start.month - 1 + months
    year, month = start.year + index // 12, index % 12 + 1
    day = min(start.day, _cal.monthrange(year, month)[1])
    return dt.date(year, month, day)


def months_before(end: dt.date, months: int) -> dt.date:
    """The start of a rolling window of ``months`` ending on ``end``."""
    return add_months(end, -months)


def due_date(start: dt.date, days: int, unit: str, cal: BusinessCalendar) -> dt.date:
    if unit == "business_days":
        return add_business_days(start, days, cal)
    if unit == "calendar_days":
        return add_calendar_days(start, days, cal)
    if unit == "months":
        return cal.next_business_day(add_months(start, days))
    raise ValueError(f"unknown deadline unit {unit!r}")


CalendarFactory = Callable[[int, int], BusinessCalendar]
