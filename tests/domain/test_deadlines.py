"""Legal deadlines as dates (RULES.md §A6; Lei 9.784/1999 art. 66) with real holiday calendars."""

from __future__ import annotations

import datetime as dt

import pytest
from casebuild import run_case
from hypothesis import given
from hypothesis import strategies as st

from inspector_app.calendars import calendar_for
from inspector_app.domain.deadlines import (
    BusinessCalendar,
    add_business_days,
    add_calendar_days,
    add_months,
    due_date,
)
from inspector_app.packs import get_pack

D = dt.date


# --- §A6 rows that run from the auto handed to the driver ------------------------------------
@pytest.mark.parametrize(
    ("pack", "occurred_at", "changes", "kind", "due", "cite"),
    [
        (
            "DF_STPCR",
            "2026-04-14T10:30:00-03:00",
            {},
            "defesa",
            "2026-04-29",
            "Dec. 15.154 art. 40 I: 10 dias úteis; 21/04 Tiradentes + Fundação de Brasília",
        ),
        (
            "DF_STPCR",
            "2026-02-11T09:00:00-03:00",
            {},
            "defesa",
            "2026-02-27",
            "art. 40 I: Carnaval 16–17/02 closed (ponto facultativo); Cinzas 18/02 opens at 14h, "
            "a business day for counting (Lei 9.784 art. 66 §1)",
        ),
        (
            "DF_STPCR",
            "2026-11-20T09:00:00-03:00",
            {},
            "defesa",
            "2026-12-07",
            "art. 40 I: 20/11 counts from the next day; 30/11 Dia do Evangélico (DF)",
        ),
        (
            "DF_STPA",
            "2026-04-14T10:30:00-03:00",
            {},
            "defesa",
            "2026-04-29",
            "STPA by analogy: art. 40 I",
        ),
        (
            "JF_1972",
            "2026-06-01T09:00:00-03:00",
            {},
            "defesa",
            "2026-06-09",
            "JF art. 48 §2: 5 dias úteis; 04/06 Corpus Christi (JF municipal)",
        ),
        (
            "JF_1972",
            "2026-06-08T09:00:00-03:00",
            {},
            "defesa",
            "2026-06-15",
            "JF art. 48 §2: 13/06 Santo Antônio falls on a Saturday, changes nothing",
        ),
        (
            "JF_1972",
            "2025-06-10T09:00:00-03:00",
            {},
            "defesa",
            "2025-06-18",
            "JF art. 48 §2: 13/06/2025 Santo Antônio (Friday) is not a business day",
        ),
        (
            "DF_STPCR",
            "2026-04-14T10:30:00-03:00",
            {"vehicle": {"chassis_year": 2016}},
            "substituicao_veiculo",
            "2026-05-14",
            "art. 39 III: 30 days (calendar, Lei 9.784 art. 66 §2) to replace an over-age vehicle",
        ),
        (
            "DF_STPCR",
            "2026-03-09T10:30:00-03:00",
            {"vehicle": {"chassis_year": 2016}},
            "substituicao_veiculo",
            "2026-04-08",
            "art. 39 III: 30 calendar days",
        ),
        (
            "DF_STPCR",
            "2026-03-22T10:30:00-03:00",
            {"vehicle": {"chassis_year": 2016}},
            "substituicao_veiculo",
            "2026-04-22",
            "art. 39 III: ends on 21/04 holiday → next business day 22/04 (art. 66 §1)",
        ),
    ],
)
def test_deadline_due_dates(
    pack: str, occurred_at: str, changes: dict[str, object], kind: str, due: str, cite: str
) -> None:
    infractions = {
        "DF_STPCR": ["DF15154.29.IV"],
        "DF_STPA": ["DF15154.29.IV"],
        "JF_1972": ["JF1235.1.9"],
    }[pack]
    out = run_case(pack, occurred_at=occurred_at, infractions=infractions, **changes)
    found = {d.kind: d for d in out.deadlines}
    assert found[kind].due == D.fromisoformat(due)
    assert found[kind].basis


@pytest.mark.parametrize(
    ("pack", "kinds", "cite"),
    [
        (
            "DF_STPCR",
            {"recurso", "recurso_cassacao", "pagamento", "divida_ativa"},
            "arts. 36, 36 §2, 40 II–III: run from later acts",
        ),
        ("JF_1972", {"recurso"}, "art. 48 §3: runs from the decision"),
    ],
)
def test_deadlines_of_later_acts_are_listed_without_date(
    pack: str, kinds: set[str], cite: str
) -> None:
    rule = "JF1235.1.9" if pack == "JF_1972" else "DF15154.29.IV"
    out = run_case(pack, infractions=[rule])
    assert {d.kind for d in out.later_deadlines} == kinds
    assert all(d.due is None for d in out.later_deadlines)


def test_jf_appeal_unit_is_a_presumed_rule_g28() -> None:
    out = run_case("JF_1972", infractions=["JF1235.1.9"])
    appeal = next(d for d in out.later_deadlines if d.kind == "recurso")
    assert appeal.unit == "calendar_days"
    assert [a.parameter for a in appeal.assumptions] == ["deadline.appeal_unit"]


def test_no_infraction_means_no_defence_deadline() -> None:
    assert run_case("DF_STPCR").deadlines == ()


def test_business_day_deadline_is_printed_with_its_count() -> None:
    out = run_case("DF_STPCR", infractions=["DF15154.29.IV"])
    defesa = out.deadlines[0].as_json()
    assert defesa["business_days"] == 10 and defesa["body"]


# --- arithmetic -------------------------------------------------------------------------------
def test_calendar_has_national_df_and_pack_days() -> None:
    df = calendar_for(get_pack("DF_STPCR"), 2026, 2026)
    jf = calendar_for(get_pack("JF_1972"), 2026, 2026)
    assert not df.is_business_day(D(2026, 4, 21))  # Tiradentes / Fundação de Brasília
    assert not df.is_business_day(D(2026, 11, 30))  # Dia do Evangélico (DF)
    assert jf.is_business_day(D(2026, 11, 30))
    assert not jf.is_business_day(D(2026, 6, 4))  # Corpus Christi, JF municipal
    assert jf.holiday_name(D(2026, 6, 13)) == "Dia de Santo Antônio, padroeiro de Juiz de Fora"
    assert df.holiday_name(D(2026, 9, 7)) == "Independência do Brasil"  # pt_BR names


@pytest.mark.parametrize(
    ("start", "months", "end", "cite"),
    [
        (D(2026, 1, 31), 1, D(2026, 2, 28), "art. 66 §3: no 31 Feb, last day of the month"),
        (D(2024, 1, 31), 1, D(2024, 2, 29), "leap year"),
        (D(2026, 3, 15), 2, D(2026, 5, 15), "date to date"),
        (D(2026, 3, 15), -12, D(2025, 3, 15), "rolling window start"),
    ],
)
def test_add_months_date_to_date(start: dt.date, months: int, end: dt.date, cite: str) -> None:
    assert add_months(start, months) == end


def test_calendar_deadline_on_saturday_moves_to_monday() -> None:
    assert add_calendar_days(D(2026, 4, 1), 10, BusinessCalendar()) == D(2026, 4, 13)


dates = st.dates(min_value=D(2000, 1, 1), max_value=D(2060, 12, 31))
holiday_sets = st.frozensets(
    st.dates(min_value=D(2000, 1, 1), max_value=D(2061, 6, 30)), max_size=40
)


@given(start=dates, days=st.integers(1, 60), holidays=holiday_sets)
def test_business_deadline_counts_exactly_n_business_days_after_start(
    start: dt.date, days: int, holidays: frozenset[dt.date]
) -> None:
    cal = BusinessCalendar(holidays=holidays)
    due = add_business_days(start, days, cal)
    assert due > start and cal.is_business_day(due)
    span = [start + dt.timedelta(n) for n in range(1, (due - start).days + 1)]
    assert sum(cal.is_business_day(d) for d in span) == days


@given(start=dates, days=st.integers(1, 120), holidays=holiday_sets)
def test_calendar_deadline_is_first_business_day_on_or_after_nominal_end(
    start: dt.date, days: int, holidays: frozenset[dt.date]
) -> None:
    cal = BusinessCalendar(holidays=holidays)
    nominal = start + dt.timedelta(days)
    due = add_calendar_days(start, days, cal)
    assert due >= nominal and cal.is_business_day(due)
    assert all(
        not cal.is_business_day(nominal + dt.timedelta(n)) for n in range((due - nominal).days)
    )


@given(start=dates, months=st.integers(-24, 24))
def test_add_months_keeps_the_day_or_clamps_to_month_end(start: dt.date, months: int) -> None:
    end = add_months(start, months)
    assert (end.year * 12 + end.month) - (start.year * 12 + start.month) == months
    assert end.day == start.day or (end.day < start.day and (end + dt.timedelta(1)).day == 1)


@given(
    start=dates,
    days=st.integers(1, 30),
    unit=st.sampled_from(["business_days", "calendar_days", "months"]),
)
def test_due_date_is_always_a_business_day_after_the_start(
    start: dt.date, days: int, unit: str
) -> None:
    cal = BusinessCalendar()
    due = due_date(start, days, unit, cal)
    assert due > start and cal.is_business_day(due)


def test_deadline_counts_at_least_one_day() -> None:
    with pytest.raises(ValueError):
        add_business_days(D(2026, 1, 1), 0, BusinessCalendar())
