"""Registry import: CSV and JSON validated row by row, bad rows reported, one transaction per file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from argon2 import PasswordHasher, Type

from inspector_app.security.passwords import MINIMUM_PARAMETERS, hash_password, verify_password
from inspector_app.store.db import StoreError, StoreFullError, open_store
from inspector_app.store.reference import counts, find_driver, find_inspector, find_vehicle
from inspector_app.store.registry_import import RegistryImportError, import_registry

REPO_ROOT = Path(__file__).resolve().parents[2]
HOLDERS_CSV = """\
id,kind,name,cpf,cnpj,permit_number,permit_status,pack_id
H1,pf,Maria da Conceição Araújo,169.440.601-67,,STPCR-0042,active,DF_STPCR
H2,pj,Viação São Mateus Ltda.,,11.222.333/0001-81,CONC-001/1994,ativa,JF_1972
"""


def write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def fast_hash(password: str = "demo1001") -> str:
    return hash_password(password, parameters=MINIMUM_PARAMETERS)  # the import floor


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "data")
    report = import_registry(s, write(tmp_path / "permit_holders.csv", HOLDERS_CSV))
    assert report.ok, report.lines()
    yield s
    s.close()


def where_and_field(report):
    return [(e.where, e.field) for e in report.errors]


# --- CSV ----------------------------------------------------------------------------------


def test_a_csv_with_good_and_bad_rows_keeps_the_good_and_reports_each_bad_line(store, tmp_path):
    path = write(
        tmp_path / "frota.csv",
        """\
        # table: vehicles
        id,plate,renavam,chassis_year,holder_id,pack_id,insurance_valid_until
        V1,ABC-1234,86769597308,2020,H1,DF_STPCR,2026-12-31
        V2,ABC12345,,2020,H1,DF_STPCR,

        V3,JKL1A23,86769597309,2020,H1,DF_STPCR,
        V4,JKL1A24,,20x0,H1,DF_STPCR,
        V5,JKL1A25,,2020,H404,DF_STPCR,
        V6,JKL1A26,,2020,H1,DF_STPCR,2026-13-01
        V7,"JKL1A27",,2021,H1,DF_STPCR,2027-01-31
        V8,ABC1C34,,2020,H1,DF_STPCR,
        V9,JKL1A29,,2020,H1,,
        """,
    )
    report = import_registry(store, path)
    assert report.imported == {"vehicles": 2}
    # Physical line numbers: line 1 is the comment, 2 the header, 5 is blank.
    assert where_and_field(report) == [
        ("frota.csv:4", "plate"),  # 8 characters
        ("frota.csv:6", "renavam"),  # check digit (…308 is the valid one)
        ("frota.csv:7", "chassis_year"),  # not an integer
        ("frota.csv:8", "holder_id"),  # no such holder
        ("frota.csv:9", "insurance_valid_until"),  # month 13
        ("frota.csv:11", "plate"),  # ABC1C34 is ABC-1234, already V1
        ("frota.csv:12", "pack_id"),  # required
    ]
    messages = {e.where: e.message for e in report.errors}
    assert "deve ter 7 caracteres" in messages["frota.csv:4"]
    assert "dígito verificador" in messages["frota.csv:6"]
    assert "já cadastrada para o veículo 'V1'" in messages["frota.csv:11"]
    assert {row["id"] for row in store.db.table("ref_vehicles").rows} == {"V1", "V7"}
    v1 = find_vehicle(store, "ABC1C34")
    assert v1 is not None and v1.plate == "ABC1234" and v1.plate_key == "ABC1C34"
    assert any("frota.csv:12" in line for line in report.lines())


def test_a_quoted_field_spanning_lines_keeps_the_physical_line_numbers(store, tmp_path):
    path = write(
        tmp_path / "lines.csv",
        """\
        id,code,name,pack_id,route
        L1,0.110,Planaltina / Rodoviária,DF_STPCR,"BR-020
        DF-230"
        L2,,Sobradinho / Rodoviária,DF_STPCR,
        """,
    )
    report = import_registry(store, path)
    assert report.imported == {"lines": 1}
    assert where_and_field(report) == [("lines.csv:4", "code")]


@pytest.mark.parametrize(
    ("file_name", "first_line", "table_argument"),
    [
        ("vehicles.csv", "", None),
        ("ref_vehicles.csv", "", None),
        ("export.csv", "# table: vehicles\n", None),
        ("export.csv", "# ref_vehicles\n", None),
        ("export.csv", "", "vehicles"),
    ],
)
def test_the_csv_table_is_named_by_argument_comment_or_file_name(
    store, tmp_path, file_name, first_line, table_argument
):
    path = tmp_path / file_name
    path.write_text(first_line + "id,plate,pack_id\nV1,JKL1A23,DF_STPA\n", encoding="utf-8")
    report = import_registry(store, path, table=table_argument)
    assert report.imported == {"vehicles": 1}


def test_a_csv_whose_table_cannot_be_told_is_refused(store, tmp_path):
    path = write(tmp_path / "export.csv", "id,plate,pack_id\nV1,JKL1A23,DF_STPA\n")
    with pytest.raises(RegistryImportError) as err:
        import_registry(store, path)
    assert "--table" in err.value.message_pt


STANDING_ROW = ("H1,DF_STPCR,2026-11-12,\"{\"\"4\"\": 14}\",{},1,,\"[[4, 12]]\"\n")
STANDING_HEADER = ("id,pack_id,as_of,points_json,reincidence_json,cassacao_proposed,"
                   "cassacao_json,windows_json\n")


@pytest.mark.parametrize(("file_name", "first_line"), [
    ("standing.csv", ""), ("ref_standing.csv", ""), ("export.csv", "# table: standing\n")])
def test_hqs_standing_is_not_a_registry_table_the_device_imports(
        store, tmp_path, file_name, first_line):
    path = write(tmp_path / file_name, first_line + STANDING_HEADER + STANDING_ROW)
    with pytest.raises(RegistryImportError) as err:
        import_registry(store, path)
    assert "desconhecida" in err.value.message_pt
    as_json = write(tmp_path / "standing.json", json.dumps({"standing": [{"id": "H1"}]}))
    assert where_and_field(import_registry(store, as_json)) == [("standing", "")]
    assert store.conn.execute("SELECT COUNT(*) FROM ref_standing").fetchone()[0] == 0


def test_a_semicolon_csv_with_bom_is_read(store, tmp_path):
    path = tmp_path / "lines.csv"
    path.write_bytes("\ufeffid;code;name;pack_id\nL1;520;São Pedro / Centro;JF_1972\n".encode())
    report = import_registry(store, path)
    assert report.imported == {"lines": 1} and report.ok


def test_a_missing_required_column_rejects_the_table_at_the_header_line(store, tmp_path):
    path = write(tmp_path / "vehicles.csv", "# frota de teste\nid,pack_id\nV1,DF_STPA\n")
    report = import_registry(store, path)
    assert report.imported == {"vehicles": 0}
    assert where_and_field(report) == [("vehicles.csv:2", "plate")]


def test_unknown_columns_are_ignored_with_a_warning(store, tmp_path):
    path = write(tmp_path / "vehicles.csv", "id,plate,pack_id,cor\nV1,JKL1A23,DF_STPA,branca\n")
    report = import_registry(store, path)
    assert report.imported == {"vehicles": 1}
    assert [(w.where, w.field) for w in report.warnings] == [("vehicles.csv:1", "cor")]


# --- JSON ---------------------------------------------------------------------------------


def registry_json(**overrides) -> dict:
    data = {
        # Out of dependency order on purpose: tables load holders → … → history anyway.
        "vehicles": [
            {"id": "V1", "plate": "JKL-1023", "pack_id": "DF_STPA", "holder_id": "H3",
             "line_id": "L1", "seats": 15, "doors": 4, "renavam": "639884962",
             "last_vistoria": "2026-03-01", "insurance_valid_until": "2026-12-31"},
            {"id": "V2", "plate": "HMG2B45", "pack_id": "JF_1972", "holder_id": "H4", "seats": 40},
            {"id": "V3", "plate": "HMG2B46", "pack_id": "JF_1972", "holder_id": "H5"},
            {"id": "V4", "plate": "HMG2B47", "pack_id": "JF_1972", "seats": "quarenta"},
        ],
        "permit_holders": [
            {"id": "H3", "kind": "pf", "name": "Antônio Carlos Gonçalves", "cpf": "41840660546",
             "permit_number": "STPA-00001/1999", "permit_status": "active", "pack_id": "DF_STPA"},
            {"id": "H4", "kind": "pj", "name": "12.ABC.345 Sebastião Simões",
             "cnpj": "12.abc.345/01de-35", "cpf": "16944060167", "permit_number": "STPCR-0007",
             "permit_status": "suspensa", "pack_id": "DF_STPCR"},
            {"id": "H5", "kind": "pf", "name": "CPF errado", "cpf": "123.456.789-00",
             "permit_number": "X", "permit_status": "active", "pack_id": "DF_STPA"},
        ],
        "lines": [{"id": "L1", "code": "0.110", "name": "Planaltina / Rodoviária", "pack_id": "DF_STPA"}],
        "drivers": [
            {"id": "D1", "name": "Luzia Magalhães", "cpf": "41840660546", "cnh": "50195471143",
             "cnh_category": "d", "holder_id": "H3", "registered": "sim"},
            {"id": "D2", "name": "Sem CPF", "holder_id": "H3"},
            {"id": "D3", "name": "Categoria X", "cpf": "16944060167", "cnh_category": "X"},
        ],
        "inspectors": [
            {"id": "I1", "matricula": "1001", "name": "João Batista Ferreira", "role": "inspector",
             "password_hash": fast_hash()},
        ],
        "history": [
            {"id": "R1", "plate": "JKL-1023", "holder_id": "H3", "rule_id": "DF15154.29.XIII",
             "date": "2026-01-10", "status": "upheld", "points": 2},
            {"id": "R2", "holder_id": "H3", "rule_id": "DF15154.29.I", "date": "2026-01-10",
             "status": "mantido"},
            {"id": "R3", "rule_id": "DF15154.29.I", "date": "2026-01-10", "status": "upheld"},
        ],
    }
    data.update(overrides)
    return data


def test_a_json_registry_is_imported_table_by_table_with_indexed_errors(store, tmp_path):
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(registry_json()), encoding="utf-8")
    report = import_registry(store, path)
    assert report.imported == {
        "permit_holders": 2, "lines": 1, "vehicles": 2, "drivers": 1, "inspectors": 1, "history": 1,
    }
    assert where_and_field(report) == [
        ("permit_holders[2]", "cpf"),
        ("vehicles[2]", "holder_id"),  # H5 was refused, so it does not exist
        ("vehicles[3]", "seats"),
        ("drivers[1]", "cpf"),
        ("drivers[2]", "cnh_category"),
        ("history[1]", "status"),
        ("history[2]", "holder_id"),  # neither holder nor plate
    ]
    # The failing CNH check digit is kept with a warning: HQ may hold old numbers.
    assert [(w.where, w.field) for w in report.warnings] == [("drivers[0]", "cnh")]
    driver = find_driver(store, cnh="50195471143")
    assert driver is not None and driver.cnh_category == "D" and driver.registered
    v1 = find_vehicle(store, "JKL1A23")
    assert v1 is not None and v1.renavam == "00639884962" and v1.line is not None
    holder = store.db.table("ref_permit_holders").get("H4")
    assert holder["cnpj"] == "12ABC34501DE35" and holder["permit_status"] == "suspended"
    history = list(store.db.table("ref_history").rows)
    assert [(h["id"], h["plate_key"]) for h in history] == [("R1", "JKL1A23")]


def test_invalid_json_and_unknown_tables_are_reported(store, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"vehicles": [', encoding="utf-8")
    with pytest.raises(RegistryImportError):
        import_registry(store, broken)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"veiculos": [], "lines": {"id": "L1"}}), encoding="utf-8")
    report = import_registry(store, odd)
    assert where_and_field(report) == [("veiculos", ""), ("lines", "")]


# --- inspectors and passwords ---------------------------------------------------------------


def bcrypt_like() -> str:
    return "$2b$04$8qJ5N8V3gHn3J6cZ0y7gUe0Y8sS0n7R2m9lYc1q3w5e7r9t1y3u5O"


@pytest.mark.parametrize(
    ("row", "field", "message_part"),
    [
        ({"password": "segredo-123"}, "password", "senha em texto puro recusada"),
        ({"password": "segredo-123", "password_hash": "HASH"}, "password", "texto puro"),
        ({"password_hash": bcrypt_like()}, "password_hash", "não é um hash argon2id"),
        ({"password_hash": PasswordHasher(time_cost=1, memory_cost=8, parallelism=1, type=Type.I).hash("x")}, "password_hash", "argon2id"),
        ({"password_hash": "$argon2id$v=19$lixo"}, "password_hash", "malformado"),
        ({}, "password_hash", "obrigatório"),
        ({"password_hash": "HASH", "role": "admin"}, "role", "não permitido"),
    ],
)
def test_inspector_rows_without_an_argon2id_hash_are_refused(store, tmp_path, row, field, message_part):
    if row.get("password_hash") == "HASH":
        row = {**row, "password_hash": fast_hash()}
    data = {"inspectors": [{"id": "I9", "matricula": "1009", "name": "Teste", "role": "inspector", **row}]}
    path = tmp_path / "inspectors.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = import_registry(store, path)
    assert report.imported == {"inspectors": 0}
    assert where_and_field(report) == [("inspectors[0]", field)]
    assert message_part in report.errors[0].message
    assert "segredo-123" not in "\n".join(report.lines())


def test_a_plain_password_column_in_csv_is_refused_and_a_hash_accepted(store, tmp_path):
    path = tmp_path / "inspectors.csv"
    path.write_text(
        "id,matricula,name,role,password,password_hash\n"
        "I1,1001,João Batista Ferreira,inspector,demo1001,\n"
        # argon2 hashes hold commas ("m=8,t=1,p=1"): a CSV writer quotes them.
        f'I2,1002,Maria da Conceição Araújo,supervisor,,"{fast_hash("demo1002")}"\n',
        encoding="utf-8",
    )
    report = import_registry(store, path)
    assert report.imported == {"inspectors": 1}
    assert where_and_field(report) == [("inspectors.csv:2", "password")]
    assert find_inspector(store, "1001") is None
    found = find_inspector(store, "1002")
    assert found is not None and verify_password(found.password_hash, "demo1002")


def test_a_matricula_taken_by_another_inspector_is_refused(store, tmp_path):
    path = tmp_path / "inspectors.json"
    rows = [
        {"id": "I1", "matricula": "1001", "name": "A", "role": "inspector", "password_hash": fast_hash()},
        {"id": "I2", "matricula": "1001", "name": "B", "role": "inspector", "password_hash": fast_hash()},
    ]
    path.write_text(json.dumps({"inspectors": rows}), encoding="utf-8")
    report = import_registry(store, path)
    assert report.imported == {"inspectors": 1}
    assert where_and_field(report) == [("inspectors[1]", "matricula")]


# --- upsert, editability, atomicity ---------------------------------------------------------


def vehicles_csv(path: Path, count: int, *, model: str, start: int = 0) -> Path:
    lines = ["id,plate,make_model,holder_id,pack_id"]
    lines += [f"V{i:04d},JKL{i:04d},{model},H1,DF_STPCR" for i in range(start, start + count)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_re_importing_updates_rows_in_place_without_duplicates(store, tmp_path):
    vehicles_csv(tmp_path / "vehicles.csv", 20, model="Marcopolo Volare W9")
    assert import_registry(store, tmp_path / "vehicles.csv").imported == {"vehicles": 20}
    vehicles_csv(tmp_path / "vehicles.csv", 20, model="Volkswagen 17.230 OD", start=10)
    assert import_registry(store, tmp_path / "vehicles.csv").imported == {"vehicles": 20}
    assert counts(store)["vehicles"] == 30
    models = {r["id"]: r["make_model"] for r in store.db.table("ref_vehicles").rows}
    assert models["V0000"] == "Marcopolo Volare W9"
    assert models["V0010"] == models["V0029"] == "Volkswagen 17.230 OD"


def test_a_row_replaces_the_stored_row_as_a_whole(store, tmp_path):
    write(tmp_path / "vehicles.csv", "id,plate,seats,pack_id\nV1,JKL1A23,30,DF_STPCR\n")
    import_registry(store, tmp_path / "vehicles.csv")
    write(tmp_path / "vehicles.csv", "id,plate,pack_id\nV1,JKL1A23,DF_STPCR\n")
    import_registry(store, tmp_path / "vehicles.csv")
    assert store.db.table("ref_vehicles").get("V1")["seats"] is None


def test_reference_tables_have_no_immutability_triggers(store):
    # Only the seal triggers (store/seals.py), which record each write and refuse none.
    triggers = store.conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name LIKE 'ref_%' "
        "AND name NOT LIKE '%\\_seal\\_%' ESCAPE '\\'"
    ).fetchall()
    assert triggers == []
    store.conn.execute("UPDATE ref_permit_holders SET name = 'Outro' WHERE id = 'H1'")
    store.conn.execute("DELETE FROM ref_permit_holders WHERE id = 'H2'")
    assert counts(store)["permit_holders"] == 1


def test_an_exception_half_way_through_a_file_leaves_the_previous_data(store, tmp_path):
    vehicles_csv(tmp_path / "vehicles.csv", 10, model="Antigo")
    import_registry(store, tmp_path / "vehicles.csv")
    vehicles_csv(tmp_path / "vehicles.csv", 20, model="Novo", start=5)

    def crash_half_way(table, done):
        if done == 10:
            raise RuntimeError("simulated crash after 10 of 20 rows")

    with pytest.raises(RuntimeError):
        import_registry(store, tmp_path / "vehicles.csv", progress=crash_half_way)
    assert counts(store)["vehicles"] == 10
    assert {r["make_model"] for r in store.db.table("ref_vehicles").rows} == {"Antigo"}
    assert not store.conn.in_transaction
    # The same file imports cleanly afterwards.
    assert import_registry(store, tmp_path / "vehicles.csv").imported == {"vehicles": 20}
    assert counts(store)["vehicles"] == 25


def test_a_killed_import_process_leaves_the_previous_data(store, tmp_path):
    vehicles_csv(tmp_path / "vehicles.csv", 100, model="Antigo")
    import_registry(store, tmp_path / "vehicles.csv")
    store.close()
    vehicles_csv(tmp_path / "vehicles.csv", 1000, model="Novo")
    child = textwrap.dedent(
        f"""
        import os, signal
        from pathlib import Path
        from inspector_app.store.db import open_store
        from inspector_app.store.registry_import import import_registry

        def die(table, done):
            if done == 500:
                os.kill(os.getpid(), signal.SIGKILL)

        store = open_store(Path({str(tmp_path / "data")!r}))
        import_registry(store, Path({str(tmp_path / "vehicles.csv")!r}), progress=die)
        """
    )
    result = subprocess.run([sys.executable, "-c", child], cwd=REPO_ROOT, capture_output=True)
    assert result.returncode == -signal.SIGKILL, result.stderr.decode()
    reopened = open_store(tmp_path / "data")
    assert reopened.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    assert counts(reopened)["vehicles"] == 100
    assert {r["make_model"] for r in reopened.db.table("ref_vehicles").rows} == {"Antigo"}
    reopened.close()


def test_a_failure_that_ends_the_transaction_stops_the_import(store, tmp_path):
    # A trigger raising ROLLBACK kills the whole transaction; the importer must not go on
    # writing the remaining rows one by one in autocommit.
    store.conn.execute(
        "CREATE TEMP TRIGGER boom BEFORE INSERT ON ref_vehicles WHEN NEW.id = 'V0005' "
        "BEGIN SELECT RAISE(ROLLBACK, 'simulated failure'); END"
    )
    vehicles_csv(tmp_path / "vehicles.csv", 10, model="Novo")
    with pytest.raises(StoreError):
        import_registry(store, tmp_path / "vehicles.csv")
    assert counts(store)["vehicles"] == 0


def test_a_full_disk_is_a_clear_error_and_nothing_is_half_written(store, tmp_path):
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 2}")
    vehicles_csv(tmp_path / "vehicles.csv", 3000, model="Mercedes-Benz OF-1721 / Caio Apache Vip")
    with pytest.raises(StoreFullError) as err:
        import_registry(store, tmp_path / "vehicles.csv")
    assert "disco cheio" in err.value.message_pt
    assert counts(store)["vehicles"] == 0
    store.conn.execute("PRAGMA max_page_count = 1073741823")
    assert import_registry(store, tmp_path / "vehicles.csv").imported == {"vehicles": 3000}


def test_a_folder_is_imported_in_dependency_order(tmp_path):
    folder = tmp_path / "hq"
    folder.mkdir()
    write(folder / "vehicles.csv", "id,plate,holder_id,line_id,pack_id\nV1,HMG2B45,H2,L1,JF_1972\n")
    write(folder / "permit_holders.csv", HOLDERS_CSV)
    (folder / "lines.json").write_text(
        json.dumps({"lines": [{"id": "L1", "code": "520", "name": "São Pedro / Centro", "pack_id": "JF_1972"}]}),
        encoding="utf-8",
    )
    s = open_store(tmp_path / "data")
    report = import_registry(s, folder)
    assert report.ok, report.lines()
    assert report.imported == {"permit_holders": 2, "lines": 1, "vehicles": 1}
    v = find_vehicle(s, "HMG2145")
    assert v is not None and v.holder is not None and v.holder.name == "Viação São Mateus Ltda."
    s.close()
