"""An independent business-day oracle (its own holiday list, its own Easter) that must agree
with the engine for every day of 2024–2027, in the DF and in Juiz de Fora.

Sources of the oracle's list: Lei 662/1949 and Lei 6.802/1980 (national days), Lei
14.759/2023 (20/11 national from 2024), Lei Orgânica do DF / Lei distrital 963/1995 (30/11,
Dia do Evangélico) and 21/04 (Fundação de Brasília, same day as Tiradentes); Juiz de Fora:
13/06 (Santo Antônio) and Corpus Christi as municipal days (Lei 9.093/1995 art. 2º, as the
pack presumes). Pontos facultativos decreed every year (GDF / PJF practice): Carnaval
Monday and Tuesday and 28/10 closed; Corpus Christi closed; Ash Wednesday opens at 14h
(business day that keeps a due date); 24/12 and 31/12 close at 14h (business days, but a
due date falling on them moves on: Lei 9.784/1999 art. 66 §1).
"""

from __future__ import annotations

import datetime as dt

import pytest

from inspector_app.calendars import calendar_for
from inspector_app.domain.deadlines import add_business_days, add_calendar_days
from inspector_app.packs import get_pack

D = dt.date
ONE = dt.timedelta(days=1)


def easter(year: int) -> D:
    """Meeus/Jones/Butcher Gregorian algorithm."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    f = (b + 8) // 25
    g = (b - f + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    l_ = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * l_) // 451
    month = (h + l_ - 7 * m + 114) // 31
    day = (h + l_ - 7 * m + 114) % 31 + 1
    return D(year, month, day)


def oracle(place: str, year: int) -> tuple[set[D], set[D], set[D]]:
    """(closed, early_close, late_open) days of ``year``."""
    e = easter(year)
    closed = {D(year, m, d) for m, d in [(1, 1), (4, 21), (5, 1), (9, 7), (10, 12), (11, 2),
                                         (11, 15), (11, 20), (12, 25)]}
    closed |= {e - 2 * ONE}  # Sexta-feira da Paixão
    closed |= {e - 48 * ONE, e - 47 * ONE, e + 60 * ONE, D(year, 10, 28)}  # pontos facultativos
    if place == "DF":
        closed.add(D(year, 11, 30))
    else:
        closed.add(D(year, 6, 13))
    early = {D(year, 12, 24), D(year, 12, 31)} - closed
    late = {e - 46 * ONE} - closed
    return closed, early, late


@pytest.mark.parametrize(("pack_id", "place"), [("DF_STPCR", "DF"), ("DF_STPA", "DF"),
                                                ("JF_1972", "JF")])
def test_engine_calendar_agrees_with_the_oracle_2024_2027(pack_id: str, place: str) -> None:
    cal = calendar_for(get_pack(pack_id), 2024, 2027)
    closed: set[D] = set()
    early: set[D] = set()
    for year in range(2024, 2028):
        c, e, _ = oracle(place, year)
        closed |= c
        early |= e
    day = D(2024, 1, 1)
    disagreements = []
    while day <= D(2027, 12, 31):
        business = day.weekday() < 5 and day not in closed
        full = business and day not in early
        if cal.is_business_day(day) != business or cal.is_full_day(day) != full:
            disagreements.append((day, business, full, cal.holiday_name(day)))
        day += ONE
    assert disagreements == []


@pytest.mark.parametrize(("pack_id", "place"), [("DF_STPCR", "DF"), ("JF_1972", "JF")])
def test_due_dates_agree_with_the_oracle(pack_id: str, place: str) -> None:
    """Every start day of 2024–2027 (the last counting into 2028): 10 and 5 business days,
    30 calendar days (Lei 9.784 art. 66 caput and §1)."""
    cal = calendar_for(get_pack(pack_id), 2024, 2028)
    closed: set[D] = set()
    early: set[D] = set()
    for year in range(2024, 2029):
        c, e, _ = oracle(place, year)
        closed |= c
        early |= e

    def business(d: D) -> bool:
        return d.weekday() < 5 and d not in closed

    def due_day(d: D) -> D:
        while not business(d) or d in early:
            d += ONE
        return d

    def business_days(start: D, n: int) -> D:
        d, k = start, 0
        while k < n:
            d += ONE
            k += business(d)
        return due_day(d)

    start = D(2024, 1, 1)
    while start <= D(2027, 12, 31):
        for n in (5, 10):
            assert add_business_days(start, n, cal) == business_days(start, n), (start, n)
        assert add_calendar_days(start, 30, cal) == due_day(start + 30 * ONE), start
        start += ONE


@pytest.mark.parametrize(
    ("start", "days", "unit", "due", "cite"),
    [
        # Ash Wednesday 18/02/2026 (opens 14h) counts and keeps a due date.
        (D(2026, 2, 13), 1, "business", D(2026, 2, 18), "art. 66 §1: late opening keeps it"),
        (D(2026, 2, 12), 2, "business", D(2026, 2, 18), "the day before counts 13/02 and 18/02"),
        # 24/12/2026 (Thursday) closes at 14h: it counts, but a due date on it moves to 28/12.
        (D(2026, 12, 23), 1, "business", D(2026, 12, 28), "art. 66 §1: early close moves it"),
        (D(2026, 12, 22), 2, "business", D(2026, 12, 28), "24/12 counted as the 2nd day"),
        (D(2026, 12, 22), 3, "business", D(2026, 12, 28), "25/12 closed, 28/12 third day"),
        (D(2026, 11, 24), 30, "calendar", D(2026, 12, 28), "30 days end on 24/12: moved"),
        (D(2026, 11, 23), 30, "calendar", D(2026, 12, 23), "the day before the early close"),
    ],
)
def test_partial_expediente(start: D, days: int, unit: str, due: D, cite: str) -> None:
    cal = calendar_for(get_pack("DF_STPCR"), 2026, 2027)
    fn = add_business_days if unit == "business" else add_calendar_days
    assert fn(start, days, cal) == due, cite
