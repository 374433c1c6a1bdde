"""Legal deadline arithmetic (Lei 9.784/1999 art. 66, received in the DF by Lei 2.834/2001).

* the first day is excluded and the last included (art. 66 caput);
* a deadline that ends on a day without public business, or on a day the office closes
  before its normal hour, moves to the next business day (§1). A day of partial expediente
  (Ash Wednesday from 14h; 24/12 and 31/12 when decreed from 14h) is a business day for
  counting; only an early close moves a due date that falls on it;
* days are calendar days unless the norm says *úteis* (§2); months count date to date (§3).

The calendar is injected: this module knows weekends, not holidays (see
``inspector_app.calendars`` for the national, DF/MG and pack-added days).
"""

from __future__ import annotations

import calendar as _cal
import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

ONE_DAY = dt.timedelta(days=1)


@dataclass(frozen=True)
class BusinessCalendar:
    """Business days are Monday–Friday that are not in ``holidays``.

    ``early_close`` are business days whose expediente ends before the normal hour: they
    count, but a due date that falls on one moves on (art. 66 §1). ``late_open`` days (Ash
    Wednesday from 14h) count and keep a due date. ``version`` names the calendar (pack
    calendar plus the dated exceptions HQ published) so every deadline can say which one
    it used.
    """

    holidays: frozenset[dt.date] = frozenset()
    names: tuple[tuple[dt.date, str], ...] = ()
    early_close: frozenset[dt.date] = frozenset()
    late_open: frozenset[dt.date] = frozenset()
    version: str = ""

    @classmethod
    def from_days(
        cls,
        days: Iterable[tuple[dt.date, str]],
        *,
        early_close: Iterable[tuple[dt.date, str]] = (),
        late_open: Iterable[tuple[dt.date, str]] = (),
        version: str = "",
    ) -> BusinessCalendar:
        early, late = dict(early_close), dict(late_open)
        closed = {d: n for d, n in days if d not in early and d not in late}
        pairs = tuple(sorted({**closed, **early, **late}.items()))
        return cls(
            holidays=frozenset(closed),
            names=pairs,
            early_close=frozenset(early),
            late_open=frozenset(late),
            version=version,
        )

    def is_business_day(self, day: dt.date) -> bool:
        return day.weekday() < 5 and day not in self.holidays

    def is_full_day(self, day: dt.date) -> bool:
        """A business day whose office does not close early (a due date may end on it)."""
        return self.is_business_day(day) and day not in self.early_close

    def due_day(self, day: dt.date) -> dt.date:
        """``day`` when a deadline may end on it, else the next such day (art. 66 §1)."""
        while not self.is_full_day(day):
            day += ONE_DAY
        return day

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
    return cal.due_day(day)


def add_calendar_days(start: dt.date, days: int, cal: BusinessCalendar) -> dt.date:
    """``start`` + ``days`` calendar days, moved forward to a business day (art. 66 §1)."""
    if days < 1:
        raise ValueError("a deadline counts at least one day")
    return cal.due_day(start + dt.timedelta(days=days))


@lru_cache(maxsize=8192)
def add_months(start: dt.date, months: int) -> dt.date:
    """Date to date (art. 66 §3); a day missing in the target month ends on its last day."""
    index = start.month - 1 + months
    year, month = start.year + index // 12, index % 12 + 1
    day = min(start.day, _cal.monthrange(year, month)[1])
    return dt.date(year, month, day)


def months_before(end: dt.date, months: int) -> dt.date:
    """The start of a rolling window of ``months`` ending on ``end``."""
    return add_months(end, -months)


# --- windows: one date-to-date rule (art. 66 §3) for every period the regulation counts ------

WINDOW_LAST_DAY_INCLUDED = "last_day_included"
WINDOW_LAST_DAY_EXCLUDED = "last_day_excluded"
WINDOW_RULES = (WINDOW_LAST_DAY_INCLUDED, WINDOW_LAST_DAY_EXCLUDED)


def window_end(start: dt.date, months: int) -> dt.date:
    """The day a period of ``months`` counted from ``start`` ends: date to date, a day
    missing in the target month ends on its last day (art. 66 §3)."""
    return add_months(start, months)


def within_window(start: dt.date, months: int, day: dt.date, rule: str) -> bool:
    """Whether ``day`` (on or after ``start``) falls inside the ``months`` counted from
    ``start``. ``last_day_included`` (art. 66 caput: the first day excluded, the last
    included): the end day itself is inside; ``last_day_excluded``: it is outside."""
    if day < start:
        return False
    end = add_months(start, months)
    return day <= end if rule == WINDOW_LAST_DAY_INCLUDED else day < end


def on_window_boundary(start: dt.date, months: int, day: dt.date) -> bool:
    """Whether ``day`` is the end day of the period, where the boundary rule decides."""
    return add_months(start, months) == day


def due_date(start: dt.date, days: int, unit: str, cal: BusinessCalendar) -> dt.date:
    if unit == "business_days":
        return add_business_days(start, days, cal)
    if unit == "calendar_days":
        return add_calendar_days(start, days, cal)
    if unit == "months":
        return cal.due_day(add_months(start, days))
    raise ValueError(f"unknown deadline unit {unit!r}")


CalendarFactory = Callable[[int, int], BusinessCalendar]
