"""Strict case input, impossible timelines and Portuguese errors (issue 13).

Each row names the object and the field; a misspelt key must never silently drop a legal
precondition (Decreto 15.154/1993 art. 37 V needs ``start_of_operation``; art. 30 I and
art. 37 I need ``driver.registered``).
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from inspector_app.domain.case import CaseError, parse_case
from inspector_app.domain.legaltime import LEGAL_TZ, legal_date
from tests.domain.casebuild import build_case, run_case
from tests.test_cli import inspector

NOW = dt.datetime(2026, 4, 14, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        # art. 37 V (start of operation) silently lost before
        ({"start_of_operaton": True}, "start_of_operaton"),
        # arts. 30 I / 37 I (unregistered driver) silently lost before
        ({"driver": {"registred": False}}, "driver.registred"),
        ({"vehicle": {"last_vistorai": "2026-01-01"}}, "vehicle.last_vistorai"),
        ({"vehicle": {"age_exception": {"act": "P-1", "acto": "x"}}}, "vehicle.age_exception.acto"),
        ({"autuado": {"kind": "permissionario", "cpf": "16944060167", "nome": "X"}}, "autuado.nome"),
        ({"place": {"address": "Rod.", "lat": 1}}, "place.lat"),
        ({"checklist": {"DF-SEG-02": {"result": "fail", "rule": ["DF15154.29.XIII"]}}},
         "checklist.DF-SEG-02.rule"),
        ({"history": [{"rule_id": "DF15154.29.XIII", "date": "2026-01-01", "stauts": "upheld"}]},
         "history[0].stauts"),
        ({"facts": {"vehicle_stoped": True}}, "facts.vehicle_stoped"),
        ({"historical_reevaluation": {"reason": "x", "why": "y"}}, "historical_reevaluation.why"),
    ],
)
def test_unknown_key_is_refused_naming_the_field(changes: dict, field: str) -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", **changes)
    assert err.value.field == field
    assert err.value.code in ("unknown_key", "unknown_fact")
    assert field in err.value.message_pt


def test_unknown_parameter_is_refused_by_the_engine() -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", parameters={"reincidence.window_month": 6})
    assert err.value.field == "parameters.reincidence.window_month"
    assert "reincidence.window_months" in err.value.message


def test_suggestion_for_a_near_miss() -> None:
    with pytest.raises(CaseError) as err:
        parse_case(build_case("DF_STPCR", start_of_operaton=True))
    assert "start_of_operation" in err.value.message
    assert "quis dizer" in err.value.message_pt


# --- impossible timelines: boundary day, the day before, the day after ---------------------
@pytest.mark.parametrize(
    ("vehicle", "ok", "field"),
    [
        ({"last_vistoria": "2026-04-13"}, True, ""),  # day before the fact
        ({"last_vistoria": "2026-04-14"}, True, ""),  # the fact's day (vistoria that morning)
        ({"last_vistoria": "2026-04-15"}, False, "vehicle.last_vistoria"),  # day after
        ({"chassis_year": 2025}, True, ""),
        ({"chassis_year": 2026}, True, ""),  # manufactured in the fact's year
        ({"chassis_year": 2027}, False, "vehicle.chassis_year"),
        ({"body_year": 2027}, False, "vehicle.body_year"),
        ({"insurance_valid_from": "2026-01-01", "insurance_valid_until": "2026-12-31"}, True, ""),
        ({"insurance_valid_from": "2026-12-31", "insurance_valid_until": "2026-12-31"}, True, ""),
        ({"insurance_valid_from": "2027-01-01", "insurance_valid_until": "2026-12-31"}, False,
         "vehicle.insurance_valid_from"),
    ],
)
def test_vehicle_timeline(vehicle: dict, ok: bool, field: str) -> None:
    data = build_case("DF_STPCR", vehicle=vehicle)
    if ok:
        parse_case(data, now=NOW)
        return
    with pytest.raises(CaseError) as err:
        parse_case(data, now=NOW)
    assert err.value.field == field
    assert err.value.code == "timeline"


@pytest.mark.parametrize(
    ("date", "ok"), [("2026-04-13", True), ("2026-04-14", True), ("2026-04-15", False)]
)
def test_history_after_the_fact_is_refused(date: str, ok: bool) -> None:
    data = build_case("DF_STPCR", history=[{"rule_id": "DF15154.29.XIII", "date": date}])
    if ok:
        parse_case(data, now=NOW)
    else:
        with pytest.raises(CaseError) as err:
            parse_case(data, now=NOW)
        assert err.value.field == "history[0].date"


@pytest.mark.parametrize(
    ("offset", "ok"),
    [
        (dt.timedelta(minutes=-1), True),
        (dt.timedelta(minutes=15), True),  # the clock tolerance itself
        (dt.timedelta(minutes=16), False),
        (dt.timedelta(days=365 * 73), False),  # 2099
    ],
)
def test_fact_in_the_future_is_refused(offset: dt.timedelta, ok: bool) -> None:
    data = build_case("DF_STPCR", occurred_at=(NOW + offset).isoformat())
    if ok:
        parse_case(data, now=NOW)
    else:
        with pytest.raises(CaseError) as err:
            parse_case(data, now=NOW)
        assert err.value.field == "occurred_at"
        assert err.value.code == "future"
        assert "posterior ao momento atual" in err.value.message_pt


def test_legal_date_is_brasilia_not_utc() -> None:
    # 22:30 in Brasília is 01:30 UTC the next day: the fact's date is still the 14th.
    late = dt.datetime(2026, 4, 14, 22, 30, tzinfo=LEGAL_TZ)
    utc = late.astimezone(dt.UTC)
    assert utc.date() == dt.date(2026, 4, 15)
    assert legal_date(utc) == dt.date(2026, 4, 14)
    case = parse_case(build_case("DF_STPCR", occurred_at=utc.isoformat()), now=utc)
    assert case.date == dt.date(2026, 4, 14)
    # a vistoria on the 15th is after the fact even though UTC says the 15th
    with pytest.raises(CaseError):
        parse_case(
            build_case("DF_STPCR", occurred_at=utc.isoformat(),
                       vehicle={"last_vistoria": "2026-04-15"}),
            now=utc,
        )


# --- the autuado: CPF or CNPJ (alphanumeric CNPJ included) -------------------------------
@pytest.mark.parametrize(
    ("autuado", "field"),
    [
        ({"kind": "permissionario", "cpf": "16944060167"}, ""),
        ({"kind": "permissionario", "cpf": "16944060168"}, "autuado.cpf"),
        ({"kind": "permissionario"}, "autuado.cpf"),
        ({"kind": "permissionario", "cpf": "16944060167", "cnpj": "11222333000181"},
         "autuado.cnpj"),
        ({"kind": "empresa", "cnpj": "11.222.333/0001-81"}, ""),
        ({"kind": "empresa", "cnpj": "12.ABC.345/01DE-35"}, ""),  # IN RFB 2.229/2024
        ({"kind": "empresa", "cnpj": "12.ABC.345/01DE-36"}, "autuado.cnpj"),
        ({"kind": "empresa"}, "autuado.cnpj"),
        ({"kind": "pessoa"}, "autuado.kind"),
    ],
)
def test_autuado_identity(autuado: dict, field: str) -> None:
    data = build_case("DF_STPCR", autuado=autuado)
    if not field:
        case = parse_case(data, now=NOW)
        assert case.autuado is not None and case.autuado.kind == autuado["kind"]
        return
    with pytest.raises(CaseError) as err:
        parse_case(data, now=NOW)
    assert err.value.field == field
    assert err.value.message_pt


def test_every_error_has_a_portuguese_message_not_the_english_one() -> None:
    cases = [
        build_case("DF_STPCR", vehicle={"doors": "two"}),
        build_case("DF_STPCR", occurred_at="2026-04-14T10:30:00"),
        build_case("DF_STPCR", location_type="rua"),
        build_case("DF_STPCR", vehicle={"last_vistoria": "2026-04-15"}),
    ]
    for data in cases:
        with pytest.raises(CaseError) as err:
            parse_case(data, now=NOW)
        assert err.value.message_pt != err.value.message
        assert not any(w in err.value.message_pt for w in ("expected", "is after", "must be"))


# --- CLI: exit 2, one line naming the field ------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"start_of_operaton": True}, "start_of_operaton"),
        ({"driver": {"registred": False}}, "driver.registred"),
        ({"occurred_at": "2099-04-14T10:30:00-03:00"}, "occurred_at"),
        ({"vehicle": {"last_vistoria": "2026-05-01"}}, "vehicle.last_vistoria"),
        ({"vehicle": {"chassis_year": 2030}}, "vehicle.chassis_year"),
        ({"vehicle": {"insurance_valid_from": "2026-02-01", "insurance_valid_until": "2026-01-01"}},
         "vehicle.insurance_valid_from"),
        ({"history": [{"rule_id": "DF15154.29.XIII", "date": "2026-05-01"}]}, "history[0].date"),
    ],
)
def test_cli_refuses_with_exit_2_and_one_line(changes: dict, field: str) -> None:
    data = build_case("DF_STPCR", **changes)
    result = inspector("rules", "evaluate", "-", stdin=json.dumps(data))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert field in lines[0]
