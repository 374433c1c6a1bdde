"""Reference-data lookups: plates in either format, drivers, history, warnings for a date."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from inspector_app.domain.case import parse_case
from inspector_app.domain.identity import IdentityError, parse_plate
from inspector_app.security.passwords import FAST_PARAMETERS, hash_password, verify_password
from inspector_app.store.db import Store, open_store
from inspector_app.store.reference import (
    counts,
    find_driver,
    find_inspector,
    find_vehicle,
    history_for,
    search_vehicles,
    standing_for,
)

STAMP = "2026-04-01T00:00:00+00:00"
TODAY = dt.date(2026, 4, 14)


def add_holder(store: Store, holder_id: str = "H1", **values: Any) -> None:
    row = {
        "id": holder_id,
        "kind": "pf",
        "name": "Maria da Conceição Araújo",
        "cpf": "16944060167",
        "cnpj": None,
        "permit_number": "STPCR-0042",
        "permit_status": "active",
        "permit_valid_until": "2030-12-31",
        "pack_id": "DF_STPCR",
        "city": "Planaltina",
        "updated_at": STAMP,
        **values,
    }
    store.db.table("ref_permit_holders").insert(row)


def add_line(store: Store, line_id: str = "L1") -> None:
    store.db.table("ref_lines").insert(
        {"id": line_id, "code": "0.110", "name": "Planaltina / Rodoviária",
         "pack_id": "DF_STPCR", "route": None, "updated_at": STAMP}
    )


def add_vehicle(store: Store, vehicle_id: str = "V1", plate: str = "ABC1234", **values: Any) -> None:
    parsed = parse_plate(plate)
    row = {
        "id": vehicle_id,
        "plate": parsed.text,
        "plate_key": parsed.canonical_key(),
        "renavam": "86769597308",
        "make_model": "Marcopolo Volare W9",
        "chassis_year": 2022,
        "body_year": 2022,
        "seats": 30,
        "doors": 2,
        "holder_id": "H1",
        "line_id": "L1",
        "insurance_valid_until": "2026-12-31",
        "last_vistoria": "2026-03-01",
        "pack_id": "DF_STPCR",
        "updated_at": STAMP,
        **values,
    }
    store.db.table("ref_vehicles").insert(row)


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path)
    add_holder(s)
    add_line(s)
    yield s
    s.close()


# --- plates ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("registered", "typed"),
    [
        # RULES.md §B3: the 5th character 2 → C, so ABC1234 and ABC1C34 are one vehicle.
        ("ABC1234", "ABC1234"),
        ("ABC1234", "ABC-1234"),
        ("ABC1234", "abc 1234"),
        ("ABC1234", "ABC1C34"),
        ("ABC1C34", "ABC-1234"),
        ("ABC1C34", "abc1c34"),
        ("JKL1A23", "JKL-1023"),
        # A Mercosul plate past J in the 5th place never had an old form.
        ("JKL1Z23", "JKL1Z23"),
    ],
)
def test_a_vehicle_is_found_by_its_plate_in_either_format(store, registered, typed):
    add_vehicle(store, plate=registered)
    found = find_vehicle(store, typed, today=TODAY)
    assert found is not None
    assert found.id == "V1"
    assert found.plate == registered.replace("-", "")


def test_an_unregistered_plate_is_not_found(store):
    add_vehicle(store, plate="ABC1234")
    assert find_vehicle(store, "ABC1235", today=TODAY) is None


@pytest.mark.parametrize("typed", ["", "   ", "AB1234", "ABCD123", "ABC12345", "ÁBC1234", "1BC1234"])
def test_a_malformed_plate_raises_an_identity_error(store, typed):
    with pytest.raises(IdentityError) as err:
        find_vehicle(store, typed, today=TODAY)
    assert err.value.field == "plate"


def test_the_view_carries_holder_line_and_display_plate(store):
    add_vehicle(store, plate="ABC1234")
    v = find_vehicle(store, "ABC1C34", today=TODAY)
    assert v is not None
    assert v.plate_display == "ABC-1234"
    assert v.holder is not None and v.holder.name == "Maria da Conceição Araújo"
    assert v.holder.document == "16944060167"
    assert v.holder.permit_number == "STPCR-0042"
    assert v.line is not None and v.line.label() == "0.110 – Planaltina / Rodoviária"
    assert v.warnings == ()


def test_the_view_feeds_a_rules_engine_case(store):
    add_vehicle(store, plate="ABC1234")
    v = find_vehicle(store, "ABC1234", today=TODAY)
    assert v is not None
    case = parse_case(
        {
            "pack": v.pack_id,
            "occurred_at": "2026-04-14T10:30:00-03:00",
            "location_type": "terminal",
            "vehicle": v.case_vehicle(),
            "history": history_for(store, holder_id="H1"),
        }
    )
    assert case.vehicle.plate is not None and case.vehicle.plate.canonical_key() == "ABC1C34"
    assert case.vehicle.last_vistoria == dt.date(2026, 3, 1)


# --- warnings for a date --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("vehicle", "holder", "today", "expected"),
    [
        # Insurance (Dec. 15.154 art. 29 XXIV): valid through its last day, expired the next.
        ({"insurance_valid_until": "2026-04-14"}, {}, TODAY, None),
        ({"insurance_valid_until": "2026-04-13"}, {}, TODAY, "Seguro vencido em 13/04/2026."),
        ({"insurance_valid_until": None}, {}, TODAY, "Seguro sem validade cadastrada."),
        # STPCR vistoria every 2 months (Dec. 15.154 art. 21): 2026-02-14 + 2 months = 04-14.
        ({"last_vistoria": "2026-02-14"}, {}, TODAY, None),
        ({"last_vistoria": "2026-02-13"}, {}, TODAY, "Vistoria vencida em 13/04/2026"),
        ({"last_vistoria": None}, {}, TODAY, "Nenhuma vistoria registrada."),
        # STPA vistoria every 4 months (Lei 194 art. 11 §2): 2026-01-01 is still valid.
        ({"last_vistoria": "2026-01-01", "pack_id": "DF_STPA"}, {}, TODAY, None),
        ({"last_vistoria": "2025-12-13", "pack_id": "DF_STPA"}, {}, TODAY, "periodicidade de 4 meses"),
        # JF: 12 months presumed (RULES.md §A3).
        ({"last_vistoria": "2025-04-14", "pack_id": "JF_1972", "seats": 40}, {}, TODAY, None),
        ({"last_vistoria": "2025-04-13", "pack_id": "JF_1972", "seats": 40}, {}, TODAY, "Vistoria vencida em 13/04/2026"),
        # STPCR maximum age 8 years from the chassis (Dec. 15.154 art. 22), calendar years.
        ({"chassis_year": 2018, "body_year": 2018}, {}, TODAY, None),
        ({"chassis_year": 2017, "body_year": 2017}, {}, TODAY, "Idade do chassi acima do limite: 9 anos"),
        # JF: chassis ≤ 12 years, body ≤ 8 years (Dec. 1.235 art. 33 §1).
        ({"chassis_year": 2014, "body_year": 2018, "pack_id": "JF_1972", "seats": 40, "last_vistoria": "2026-01-01"}, {}, TODAY, None),
        ({"chassis_year": 2013, "body_year": 2018, "pack_id": "JF_1972", "seats": 40, "last_vistoria": "2026-01-01"}, {}, TODAY, "Idade do chassi acima do limite: 13 anos"),
        ({"chassis_year": 2016, "body_year": 2017, "pack_id": "JF_1972", "seats": 40, "last_vistoria": "2026-01-01"}, {}, TODAY, "Idade da carroceria acima do limite: 9 anos"),
        # STPA: Lei 194 sets no maximum operating age (gap G7): no age warning at all.
        ({"chassis_year": 2005, "body_year": 2005, "pack_id": "DF_STPA", "seats": 15, "doors": 4}, {}, TODAY, None),
        # Permit status and validity.
        ({}, {"permit_status": "suspended"}, TODAY, "Permissão STPCR-0042 suspensa"),
        ({}, {"permit_status": "revoked"}, TODAY, "Permissão STPCR-0042 cassada"),
        ({}, {"permit_valid_until": "2026-04-13"}, TODAY, "Permissão STPCR-0042 vencida em 13/04/2026."),
        ({}, {"permit_valid_until": "2026-04-14"}, TODAY, None),
        # The same vehicle, checked a day later, has expired insurance.
        ({"insurance_valid_until": "2026-04-14"}, {}, dt.date(2026, 4, 15), "Seguro vencido em 14/04/2026."),
    ],
)
def test_warnings_are_computed_for_the_given_date(tmp_path, vehicle, holder, today, expected):
    store = open_store(tmp_path)
    add_holder(store, **holder)
    add_line(store)
    add_vehicle(store, plate="JKL1A23", **vehicle)
    found = find_vehicle(store, "JKL1A23", today=today)
    assert found is not None
    if expected is None:
        assert found.warnings == ()
    else:
        assert len(found.warnings) == 1, found.warnings
        assert expected in found.warnings[0]


def test_vistoria_validity_date_is_reported_with_the_view(store):
    add_vehicle(store, plate="ABC1234", last_vistoria="2025-12-31")
    v = find_vehicle(store, "ABC1234", today=TODAY)
    assert v is not None
    # 2 months date to date from 31 Dec ends on the last day of February.
    assert v.vistoria_valid_until == dt.date(2026, 2, 28)


def test_a_vehicle_without_holder_warns(store):
    add_vehicle(store, plate="ABC1234", holder_id=None)
    v = find_vehicle(store, "ABC1234", today=TODAY)
    assert v is not None
    assert v.warnings == ("Permissionário não cadastrado para este veículo.",)


# --- drivers --------------------------------------------------------------------------------


def add_driver(store: Store, driver_id: str, **values: Any) -> None:
    row = {
        "id": driver_id,
        "name": "José Geraldo Assunção",
        "cpf": "41840660546",
        "cnh": "50195131143",
        "cnh_category": "D",
        "cnh_valid_until": "2028-01-01",
        "holder_id": "H1",
        "role": "auxiliar",
        "registered": 1,
        "updated_at": STAMP,
        **values,
    }
    store.db.table("ref_drivers").insert(row)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({}, ()),
        ({"registered": 0}, ("Condutor não cadastrado junto ao órgão gestor.",)),
        ({"cnh_valid_until": "2026-04-13"}, ("CNH vencida em 13/04/2026.",)),
        ({"cnh_category": "B"}, ("CNH categoria B: transporte de passageiros exige categoria D (CTB art. 143, IV).",)),
        ({"cnh_category": "E"}, ()),
        ({"cnh": "50195471143"}, ("CNH suspeita: dígito verificador não confere",)),
    ],
)
def test_driver_warnings(store, values, expected):
    add_driver(store, "D1", **values)
    d = find_driver(store, cpf="418.406.605-46", today=TODAY)
    assert d is not None
    assert len(d.warnings) == len(expected)
    for warning, start in zip(d.warnings, expected, strict=True):
        assert warning.startswith(start)


def test_a_driver_is_found_by_cpf_or_cnh(store):
    add_driver(store, "D1")
    by_cpf = find_driver(store, cpf="41840660546", today=TODAY)
    by_cnh = find_driver(store, cnh="501.951.311-43", today=TODAY)
    assert by_cpf is not None and by_cnh is not None
    assert by_cpf.id == by_cnh.id == "D1"
    assert by_cpf.holder is not None and by_cpf.holder.id == "H1"
    assert by_cpf.case_driver() == {
        "cpf": "41840660546", "registered": True, "name": "José Geraldo Assunção", "cnh": "50195131143",
    }
    assert find_driver(store, cpf="16944060167", today=TODAY) is None


def test_a_cnh_differing_from_the_registered_one_is_a_warning(store):
    add_driver(store, "D1")
    d = find_driver(store, cpf="41840660546", cnh="58316794534", today=TODAY)
    assert d is not None
    assert d.warnings[0].startswith("A CNH informada (58316794534) difere da cadastrada")


def test_the_registered_row_wins_when_a_driver_serves_several_holders(store):
    add_holder(store, "H2", cpf="41840660546", permit_number="STPCR-0043")
    add_driver(store, "D1", registered=0, holder_id="H2")
    add_driver(store, "D2", registered=1)
    d = find_driver(store, cpf="41840660546", today=TODAY)
    assert d is not None and d.id == "D2"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"cpf": "11111111111"}, IdentityError),
        ({"cpf": "1234"}, IdentityError),
        ({"cnh": "abc"}, IdentityError),
        ({}, ValueError),
    ],
)
def test_bad_driver_lookups_raise(store, kwargs, error):
    with pytest.raises(error):
        find_driver(store, **kwargs)


# --- history, inspectors, search, counts ----------------------------------------------------


def test_history_is_shaped_like_engine_case_rows_and_merges_holder_and_plate(store):
    add_vehicle(store, plate="ABC1234")
    rows = [
        ("R1", "H1", "ABC1C34", "DF15154.29.XIII", "2026-01-10", "upheld", 2, "DF-2026-0000001"),
        ("R2", "H1", None, "DF15154.29.I", "2025-11-02", "pending", None, None),
        ("R3", None, "ABC1C34", "DF15154.29.II", "2025-06-30", "cancelled", None, None),
        ("R4", "H9", "XYZ9A99", "DF15154.29.II", "2025-06-30", "upheld", 1, None),
    ]
    for rid, holder, key, rule, date, status, points, auto in rows:
        store.db.table("ref_history").insert(
            {"id": rid, "holder_id": holder, "plate_key": key, "rule_id": rule, "date": date,
             "status": status, "points": points, "auto_number": auto, "updated_at": STAMP}
        )
    assert history_for(store, holder_id="H1") == [
        {"rule_id": "DF15154.29.I", "date": "2025-11-02", "status": "pending"},
        {"rule_id": "DF15154.29.XIII", "date": "2026-01-10", "status": "upheld", "points": 2, "auto": "DF-2026-0000001"},
    ]
    by_plate = history_for(store, plate_key="ABC-1234")  # old format accepted
    assert [r["rule_id"] for r in by_plate] == ["DF15154.29.II", "DF15154.29.XIII"]
    both = history_for(store, holder_id="H1", plate_key="ABC1C34")
    assert [r["date"] for r in both] == ["2025-06-30", "2025-11-02", "2026-01-10"]
    with pytest.raises(ValueError):
        history_for(store)


def test_an_inspector_is_found_by_matricula_and_the_hash_is_not_in_repr(store):
    password_hash = hash_password("demo1001", parameters=FAST_PARAMETERS)
    store.db.table("ref_inspectors").insert(
        {"id": "I1", "matricula": "1001", "name": "João Batista Ferreira", "role": "supervisor",
         "password_hash": password_hash, "organ": "SEMOB-DF", "active": 1, "updated_at": STAMP}
    )
    found = find_inspector(store, " 1001 ")
    assert found is not None and found.role == "supervisor" and found.active
    assert verify_password(found.password_hash, "demo1001")
    assert "argon2" not in repr(found)
    assert find_inspector(store, "9999") is None


def test_search_finds_plate_prefixes_in_either_format_and_holder_names_without_accents(store):
    add_holder(store, "H2", name="João Antônio Gonçalves", cpf="41840660546")
    add_vehicle(store, "V1", plate="ABC1C34")
    add_vehicle(store, "V2", plate="ABC1299")
    add_vehicle(store, "V3", plate="JKL1A23", holder_id="H2")

    def plates(text):
        return [v.plate for v in search_vehicles(store, text, today=TODAY)]

    # "ABC12" typed in the old form also finds ABC1C34, registered in the Mercosul form.
    assert plates("ABC12") == ["ABC1C34", "ABC1299"]
    assert plates("ABC1C") == ["ABC1C34", "ABC1299"]
    assert plates("abc-129") == ["ABC1299"]
    assert plates("ABC1D") == []
    assert plates("conceicao") == ["ABC1C34", "ABC1299"]
    assert plates("GONÇ") == ["JKL1A23"]
    assert plates("antonio") == ["JKL1A23"]
    assert plates("ntonio") == []  # word prefixes only
    assert plates("%") == []
    assert len(search_vehicles(store, "abc", limit=1, today=TODAY)) == 1


def test_counts_lists_every_reference_table(store):
    add_vehicle(store)
    assert counts(store) == {
        "permit_holders": 1, "lines": 1, "vehicles": 1, "drivers": 0, "inspectors": 0,
        "history": 0, "parameters": 0, "pack_versions": 0,
    }


# --- HQ standing (ref_standing, pulled from HQ) ---------------------------------------------

PROPOSAL = {"ground": "DF15154.39.I", "text": "14 pontos em 4 meses (limite 12)",
            "provisional": True, "citation": "Decreto 15.154/1993, art. 39, I"}


def add_standing(store: Store, key: str = "H1", *, points: object = None,
                 reincidence: object = None, proposal: object = None,
                 as_of: str = "2026-11-12", raw: dict[str, Any] | None = None) -> None:
    row = {
        "id": key, "pack_id": "DF_STPCR", "as_of": as_of,
        "points_json": json.dumps(points if points is not None else {"4": 0, "8": 0, "12": 0}),
        "reincidence_json": json.dumps(reincidence or {}),
        "cassacao_proposed": proposal is not None,
        "cassacao_json": json.dumps(proposal) if proposal is not None else None,
        "windows_json": "[[4, 12], [8, 18], [12, 22]]",
        **(raw or {}),
    }
    store.db.table("ref_standing").insert(row)


@pytest.mark.parametrize(
    ("key", "values", "expected"),
    [
        ("H1", {"points": {"4": 14, "8": 14, "12": 20},
                "reincidence": {"DF15154.29.XIII": 1}, "proposal": PROPOSAL},
         "Situação na sede (em 12/11/2026): 14 pontos em 4 meses, 14 em 8 meses e 20 em 12 "
         "meses; reincidência (12 meses) em DF15154.29.XIII (2 ocorrências); proposta de "
         "cassação (Decreto 15.154/1993, art. 39, I): 14 pontos em 4 meses (limite 12) – "
         "provisória (inclui autos pendentes)."),
        ("H1", {"points": {"12": 3, "4": 1, "8": 1},
                "reincidence": {"R2": 2, "R1": 1, "R3": 0}},
         "Situação na sede (em 12/11/2026): 1 ponto em 4 meses, 1 em 8 meses e 3 em 12 meses; "
         "reincidência (12 meses) em R1 (2 ocorrências) e R2 (3 ocorrências); sem proposta de "
         "cassação."),
        ("H1", {"points": {"4": 12}, "proposal": {**PROPOSAL, "provisional": False,
                                                    "text": "12 pontos em 4 meses (limite 12)"}},
         "Situação na sede (em 12/11/2026): 12 pontos em 4 meses; sem reincidência; proposta "
         "de cassação (Decreto 15.154/1993, art. 39, I): 12 pontos em 4 meses (limite 12)."),
        ("plate:ABC1C34", {"points": {"4": 2, "8": 2, "12": 2}, "as_of": "2026-04-14"},
         "Situação na sede (placa ABC1C34, em 14/04/2026): 2 pontos em 4 meses, 2 em 8 meses "
         "e 2 em 12 meses; sem reincidência; sem proposta de cassação."),
        # Issue 15: only upheld autos are definitive; pending ones are said apart, and the
        # authority's decision on the proposal is said with its date.
        ("H1", {"points": {"4": 5, "8": 5, "12": 5}, "proposal": PROPOSAL,
                "raw": {"pending_points_json": '{"4": 9, "8": 9, "12": 9}',
                        "provisional_reincidence_json": '{"R1": 1}',
                        "cassacao_decision_json": '{"decision": "instaurar", '
                                                  '"at": "2026-11-20"}'}},
         "Situação na sede (em 12/11/2026): 5 pontos em 4 meses, 5 em 8 meses e 5 em 12 "
         "meses; pendentes de julgamento (provisórios): 9 em 4 meses, 9 em 8 meses e 9 em 12 "
         "meses; sem reincidência; reincidência provisória, com autos pendentes, em R1 (2 "
         "ocorrências); proposta de cassação (Decreto 15.154/1993, art. 39, I): 14 pontos em "
         "4 meses (limite 12) – provisória (inclui autos pendentes); processo de cassação "
         "instaurado pela autoridade em 20/11/2026."),
        # HQ's row is read as far as it makes sense: malformed fields read as absent.
        ("H1", {"raw": {"points_json": "{não é json", "reincidence_json": "[1, 2]",
                        "cassacao_proposed": 1, "cassacao_json": "null", "as_of": "?"}},
         "Situação na sede (data não informada): pontos não informados; sem reincidência; "
         "proposta de cassação."),
    ],
)
def test_hq_standing_is_read_and_said_in_portuguese_as_hqs(store, key, values, expected):
    add_standing(store, key, **values)
    holder_id, plate = (None, "ABC-1234") if key.startswith("plate:") else (key, None)
    view = standing_for(store, holder_id=holder_id, plate_key=plate)
    assert view is not None and view.key == key
    assert view.text_pt() == expected


def test_the_vehicle_view_carries_the_holders_standing_or_the_plates_when_it_has_no_holder(
        store):
    add_vehicle(store, "V1", plate="ABC1234")
    add_vehicle(store, "V2", plate="JKL1A23", holder_id=None)
    assert find_vehicle(store, "ABC1234", today=TODAY).standing is None
    assert find_vehicle(store, "JKL1A23", today=TODAY).standing is None
    add_standing(store, "H1", points={"4": 5})
    add_standing(store, "plate:JKL1A23", points={"4": 2})
    add_standing(store, "plate:ABC1C34", points={"4": 9})  # the holder's row wins
    assert find_vehicle(store, "ABC-1234", today=TODAY).standing.points == ((4, 5),)
    assert find_vehicle(store, "JKL-1023", today=TODAY).standing.points == ((4, 2),)
    assert standing_for(store) is None
