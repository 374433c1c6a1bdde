"""Demo registry: valid documents, the intended mix of problems, determinism, speed."""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections import Counter

import pytest

from inspector_app.demo import DEMO_INSPECTORS, seed_history, seed_parameters, seed_registry
from inspector_app.domain.identity import (
    check_cnh,
    normalize_cnpj,
    normalize_cpf,
    normalize_renavam,
    parse_plate,
)
from inspector_app.packs import get_pack
from inspector_app.security.passwords import verify_password
from inspector_app.store.db import StoreError, open_store
from inspector_app.store.reference import counts, find_driver, find_inspector, find_vehicle
from inspector_app.store.registry_import import import_registry

TODAY = dt.date(2026, 4, 14)
TABLES = ("ref_permit_holders", "ref_lines", "ref_vehicles", "ref_drivers", "ref_inspectors",
          "ref_history", "ref_parameters", "ref_pack_versions")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    store = open_store(tmp_path_factory.mktemp("demo"))
    written = seed_registry(store, vehicles=2000, seed=1, today=TODAY)
    yield store, written
    store.close()


def rows(store, table):
    return list(store.db.table(table).rows)


def test_seed_writes_the_requested_fleet_and_reports_the_counts(seeded):
    store, written = seeded
    assert written["vehicles"] == 2000
    assert counts(store) == written
    assert written["inspectors"] == len(DEMO_INSPECTORS)
    assert written["pack_versions"] == 3
    per_pack = Counter(v["pack_id"] for v in rows(store, "ref_vehicles"))
    assert set(per_pack) == {"DF_STPA", "DF_STPCR", "JF_1972"}
    assert store.meta("registry_source") == "demo"


@pytest.mark.parametrize("vehicles", [0, 1, 2, 3, 7])
def test_tiny_fleets_are_seeded_too(tmp_path, vehicles):
    store = open_store(tmp_path)
    written = seed_registry(store, vehicles=vehicles, seed=3, today=TODAY)
    assert written["vehicles"] == vehicles
    if vehicles >= 3:
        assert {v["pack_id"] for v in rows(store, "ref_vehicles")} == {"DF_STPA", "DF_STPCR", "JF_1972"}


def test_every_generated_document_is_valid(seeded):
    store, _ = seeded
    for h in rows(store, "ref_permit_holders"):
        if h["kind"] == "pf":
            assert normalize_cpf(h["cpf"]) == h["cpf"]
        else:
            assert normalize_cnpj(h["cnpj"]) == h["cnpj"]
            if h["cpf"] is not None:  # the MEI's owner
                assert normalize_cpf(h["cpf"]) == h["cpf"]
    plate_keys = set()
    for v in rows(store, "ref_vehicles"):
        plate = parse_plate(v["plate"])
        assert plate.text == v["plate"]
        assert plate.canonical_key() == v["plate_key"]
        plate_keys.add(v["plate_key"])
        assert normalize_renavam(v["renavam"]) == v["renavam"]
        assert re.fullmatch(r"[A-HJ-NPR-Z0-9]{17}", v["chassis"]), v["chassis"]
    assert len(plate_keys) == 2000
    for d in rows(store, "ref_drivers"):
        assert normalize_cpf(d["cpf"]) == d["cpf"]
        assert check_cnh(d["cnh"]).valid
    for h in rows(store, "ref_history"):
        assert h["rule_id"] in get_pack(
            store.db.table("ref_permit_holders").get(h["holder_id"])["pack_id"]
        ).rules


@pytest.mark.parametrize(
    ("pack_id", "seats", "doors", "uf", "first_letter"),
    [
        ("DF_STPA", (7, 16), (4, 20), "DF", "J"),  # Lei 194 art. 11: 7–16 seated, ≥ 4 doors
        ("DF_STPCR", (20, 44), (1, 3), "DF", "J"),
        ("JF_1972", (36, 48), (2, 3), "MG", "H"),  # Dec. 1.235 art. 35: ≥ 36 seats
    ],
)
def test_vehicles_fit_their_regime(seeded, pack_id, seats, doors, uf, first_letter):
    store, _ = seeded
    fleet = [v for v in rows(store, "ref_vehicles") if v["pack_id"] == pack_id]
    assert fleet
    for v in fleet:
        assert seats[0] <= v["seats"] <= seats[1]
        assert doors[0] <= v["doors"] <= doors[1]
        assert v["uf"] == uf and v["plate"].startswith(first_letter)
        assert v["body_year"] >= v["chassis_year"]
        assert v["category"] == "aluguel"


def test_holders_match_their_regime(seeded):
    store, _ = seeded
    holders = {h["id"]: h for h in rows(store, "ref_permit_holders")}
    fleets = Counter(v["holder_id"] for v in rows(store, "ref_vehicles"))
    for holder_id, n in fleets.items():
        h = holders[holder_id]
        if h["pack_id"] == "DF_STPA":
            assert h["kind"] == "pf" and n == 1  # one vehicle per holder (Lei 194 art. 4 §1)
        elif h["pack_id"] == "DF_STPCR":
            assert n <= 2  # one operational + one reserve (Dec. 15.154 art. 24)
        else:
            assert h["kind"] == "pj" and h["city"] == "Juiz de Fora"
    stpcr_kinds = Counter(h["kind"] for h in holders.values() if h["pack_id"] == "DF_STPCR")
    assert stpcr_kinds["pf"] > 0 and stpcr_kinds["pj"] > 0
    cnpjs = [h["cnpj"] for h in holders.values() if h["cnpj"]]
    assert any(not c[:12].isdigit() for c in cnpjs), "no alphanumeric CNPJ"
    assert all(c.isdigit() for h in holders.values() if h["pack_id"] == "JF_1972" for c in h["cnpj"])
    names = " ".join(h["name"] for h in holders.values())
    assert re.search(r"[ãâáçéêíóôõú]", names)


def test_the_registry_holds_the_intended_mix_of_problems(seeded):
    store, _ = seeded
    views = [find_vehicle(store, v["plate"], today=TODAY) for v in rows(store, "ref_vehicles")]
    warnings = Counter()
    for v in views:
        assert v is not None
        for w in v.warnings:
            warnings[w.split(" ")[0] + " " + w.split(" ")[1]] += 1
    total = len(views)
    assert 0.06 < warnings["Seguro vencido"] / total < 0.14
    assert 0.06 < warnings["Vistoria vencida"] / total < 0.14
    assert warnings["Idade do"] + warnings["Idade da"] > 0
    statuses = Counter(h["permit_status"] for h in rows(store, "ref_permit_holders"))
    assert statuses["active"] and statuses["suspended"] and statuses["revoked"]
    kinds = Counter(parse_plate(v.plate).kind for v in views if v is not None)
    assert kinds["old"] > 0 and kinds["mercosul"] > 0
    drivers = rows(store, "ref_drivers")
    unregistered = [d for d in drivers if not d["registered"]]
    assert 0 < len(unregistered) < len(drivers) * 0.1
    sample = find_driver(store, cpf=unregistered[0]["cpf"], today=TODAY)
    assert sample is not None
    history = Counter(h["status"] for h in rows(store, "ref_history"))
    assert set(history) == {"upheld", "pending", "cancelled"}


def test_line_names_are_plausible(seeded):
    store, _ = seeded
    lines = rows(store, "ref_lines")
    df = [f"{ln['code']} – {ln['name']}" for ln in lines if ln["pack_id"].startswith("DF")]
    jf = [f"{ln['code']} – {ln['name']}" for ln in lines if ln["pack_id"] == "JF_1972"]
    assert all(re.fullmatch(r"0\.\d{3} – .+ / .+", label) for label in df)
    assert all(re.fullmatch(r"\d{3} – .+ / .+", label) for label in jf)
    assert any(label.endswith("/ Centro") for label in jf)


def test_demo_inspectors_log_in_with_the_documented_passwords(seeded):
    store, _ = seeded
    for demo in DEMO_INSPECTORS:
        found = find_inspector(store, demo.matricula)
        assert found is not None and found.role == demo.role and found.active == demo.active
        assert found.password_hash.startswith("$argon2id$")
        assert verify_password(found.password_hash, f"demo{demo.matricula}")
        assert not verify_password(found.password_hash, "demo0000")


def test_pack_versions_and_parameters_are_copied(tmp_path):
    store = open_store(tmp_path)
    written = seed_parameters(store)
    versions = {r["pack_id"]: r for r in rows(store, "ref_pack_versions")}
    assert set(versions) == {"DF_STPA", "DF_STPCR", "JF_1972"}
    for pack_id, row in versions.items():
        pack = get_pack(pack_id)
        assert (row["version"], row["content_hash"]) == (pack.meta.version, pack.content_hash)
    params = {(r["pack_id"], r["name"]): r["value_json"] for r in rows(store, "ref_parameters")}
    assert params[("DF_STPCR", "vistoria.period_months")] == "2"
    assert params[("DF_STPA", "vehicle.max_age_chassis_years")] == "null"
    assert written == {"pack_versions": 3, "parameters": len(params)}
    assert seed_parameters(store) == written  # idempotent


def test_the_demo_registry_passes_the_importers_validation(seeded, tmp_path):
    store, _ = seeded
    names = {"permit_holders": "ref_permit_holders", "lines": "ref_lines",
             "vehicles": "ref_vehicles", "drivers": "ref_drivers",
             "inspectors": "ref_inspectors", "history": "ref_history"}
    path = tmp_path / "export.json"
    path.write_text(json.dumps({name: rows(store, table) for name, table in names.items()}))
    fresh = open_store(tmp_path / "fresh")
    report = import_registry(fresh, path)
    assert report.errors == [] and report.warnings == []
    assert {k: v for k, v in counts(fresh).items() if k in names} == {
        k: v for k, v in counts(store).items() if k in names
    }
    fresh.close()


def test_the_same_seed_gives_the_same_registry_and_another_seed_another(tmp_path):
    def dump(seed, folder):
        store = open_store(tmp_path / folder)
        seed_registry(store, vehicles=150, seed=seed, today=TODAY)
        out = {t: list(store.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2")) for t in TABLES}
        store.close()
        return out

    first, again, other = dump(7, "a"), dump(7, "b"), dump(8, "c")
    assert first == again
    assert first["ref_vehicles"] != other["ref_vehicles"]
    assert first["ref_inspectors"] == other["ref_inspectors"]  # hashes too: salts are derived


def test_reseeding_replaces_a_demo_registry_but_not_an_imported_one(tmp_path):
    store = open_store(tmp_path / "data")
    seed_registry(store, vehicles=200, today=TODAY)
    seed_registry(store, vehicles=30, today=TODAY)
    assert counts(store)["vehicles"] == 30
    (tmp_path / "lines.csv").write_text("id,code,name,pack_id\nLX,520,São Pedro / Centro,JF_1972\n")
    import_registry(store, tmp_path / "lines.csv")
    with pytest.raises(StoreError) as err:
        seed_registry(store, vehicles=30, today=TODAY)
    assert "--replace" in err.value.message_pt
    assert store.db.table("ref_lines").get("LX")["name"] == "São Pedro / Centro"
    seed_registry(store, vehicles=30, today=TODAY, replace=True)
    assert store.db.table("ref_lines").count_where("id = 'LX'") == 0


def test_history_rows_can_be_fixed_in_number(tmp_path):
    store = open_store(tmp_path)
    written = seed_registry(store, vehicles=50, today=TODAY, history=1234)
    assert written["history"] == counts(store)["history"] == 1234


def test_seed_history_adds_rows_for_registered_plates_and_is_repeatable(tmp_path):
    store = open_store(tmp_path)
    seed_registry(store, vehicles=40, today=TODAY, history=0)
    assert seed_history(store, rows=500, seed=2, today=TODAY) == 500
    assert seed_history(store, rows=500, seed=2, today=TODAY) == 500  # same ids rewritten
    assert seed_history(store, rows=100, seed=3, today=TODAY) == 100
    assert counts(store)["history"] == 600
    orphans = store.conn.execute(
        "SELECT count(*) FROM ref_history h LEFT JOIN ref_vehicles v ON v.plate_key = h.plate_key "
        "AND v.holder_id = h.holder_id WHERE v.id IS NULL"
    ).fetchone()[0]
    assert orphans == 0


@pytest.mark.slow
def test_one_hundred_thousand_vehicles_seed_well_under_a_minute(tmp_path, request):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("seeds 100,000 vehicles (~20 s): run with `make test-slow` (pytest -m slow)")
    store = open_store(tmp_path)
    start = time.perf_counter()
    written = seed_registry(store, vehicles=100_000, today=TODAY)
    elapsed = time.perf_counter() - start
    assert written["vehicles"] == 100_000
    assert elapsed < 60, f"{elapsed:.1f} s"
