"""The store commands of ``inspector``: demo seed, store verify and status, registry import."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from inspector_app.store.db import connect_data_dir, open_store

REPO_ROOT = Path(__file__).resolve().parents[2]
HOLDERS_WITH_A_BAD_ROW = """\
id,kind,name,cpf,cnpj,permit_number,permit_status,pack_id
H1,pf,Maria da Conceição Araújo,169.440.601-67,,STPCR-0042,active,DF_STPCR
H2,pf,José Geraldo Assunção,123.456.789-00,,STPCR-0043,active,DF_STPCR
H3,pj,Viação São Mateus Ltda.,,11.222.333/0001-81,CONC-001/1994,ativa,JF_1972
"""


def inspector(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m inspector_app.cli --data-dir DATA_DIR ARGS``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("INSPECTOR_FORMS_DIR", "INSPECTOR_DATA_DIR")}
    return subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", "--data-dir", str(data_dir), *args],
        capture_output=True, text=True, encoding="utf-8", cwd=REPO_ROOT, env=env,
        timeout=120, check=False,
    )


def assert_no_traceback(result: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """A data folder seeded by ``demo seed --vehicles 30 --autos 5`` (shared, never altered)."""
    data_dir = tmp_path_factory.mktemp("cli") / "data"
    return data_dir, inspector(data_dir, "demo", "seed", "--vehicles", "30", "--autos", "5")


@pytest.fixture
def seeded_copy(seeded, tmp_path) -> Path:
    data_dir = tmp_path / "data"
    shutil.copytree(seeded[0], data_dir)
    return data_dir


def test_demo_seed_prints_the_counts_as_json(seeded):
    _data_dir, result = seeded
    assert (result.returncode, result.stderr) == (0, "")
    counts = json.loads(result.stdout)
    assert counts["vehicles"] == 30
    assert counts["autos"] == 5
    assert counts["inspectors"] == 7
    assert counts["permit_holders"] > 0 and counts["drivers"] > 0


def test_store_verify_of_a_freshly_seeded_store_exits_0_saying_store_ok(seeded):
    data_dir, _ = seeded
    result = inspector(data_dir, "store", "verify")
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.startswith("store ok: ")
    assert " 0 voided" in result.stdout


def test_store_status_prints_counts_ranges_and_outbox_as_json(seeded):
    data_dir, _ = seeded
    result = inspector(data_dir, "store", "status")
    assert (result.returncode, result.stderr) == (0, "")
    status = json.loads(result.stdout)
    records = status["counts"]["records"]
    assert records >= 5  # five autos, and the termos de retenção they required
    assert status["counts"]["outbox"] == status["outbox_pending"] == records
    assert status["counts"]["ref_vehicles"] == 30
    assert (status["readonly"], status["alerts"]) == (False, [])
    assert status["data_dir"] == str(data_dir)
    # One demo series per órgão, created at demo setup (issue 11); each auto takes the
    # series of its pack's órgão.
    ranges = {r["series"].split("-")[1]: r for r in status["ranges"]}
    assert sorted(ranges) == ["DF", "JF"]
    assert {r["source"] for r in ranges.values()} == {"demo"}
    issued = sum(r["issued"] for r in ranges.values())
    assert (issued, sum(r["voided"] for r in ranges.values())) == (records, 0)
    for r in ranges.values():
        assert r["remaining"] == r["last"] - r["first"] + 1 - r["issued"]


def test_store_verify_lists_an_altered_payload_and_exits_1_once_triggers_are_dropped(
    seeded_copy,
):
    conn = connect_data_dir(seeded_copy)
    try:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'"):
            conn.execute(f"DROP TRIGGER {name}")
        record_id, payload = conn.execute(
            "SELECT id, payload FROM records WHERE kind = 'auto_infracao' ORDER BY journal_seq "
            "LIMIT 1"
        ).fetchone()
        altered = payload.replace('"narrative":"', '"narrative":"Nada consta. ', 1)
        assert altered != payload
        conn.execute("UPDATE records SET payload = ? WHERE id = ?", [altered, record_id])
    finally:
        conn.close()

    result = inspector(seeded_copy, "store", "verify")
    assert result.returncode == 1
    assert_no_traceback(result)
    assert result.stdout.startswith("store has ")
    problems = [line.strip() for line in result.stdout.splitlines()[1:]]
    assert f"record {record_id}: payload does not match its SHA-256 (altered)" in problems
    assert f"record {record_id}: device signature does not verify" in problems
    assert all(record_id in line for line in problems)


def test_registry_import_reports_the_bad_line_keeps_the_good_rows_and_exits_1(tmp_path):
    csv = tmp_path / "permit_holders.csv"
    csv.write_text(HOLDERS_WITH_A_BAD_ROW, encoding="utf-8")
    result = inspector(tmp_path / "data", "registry", "import", str(csv))
    assert result.returncode == 1
    assert_no_traceback(result)
    lines = result.stdout.splitlines()
    assert lines[0].endswith("linhas importadas – permit_holders: 2.")
    assert lines[1].strip().startswith("ERRO permit_holders.csv:3: cpf: CPF inválido")
    assert lines[-1] == "1 linha(s) recusada(s); as demais foram importadas."
    store = open_store(tmp_path / "data")
    try:
        ids = [r[0] for r in store.conn.execute("SELECT id FROM ref_permit_holders ORDER BY id")]
    finally:
        store.close()
    assert ids == ["H1", "H3"]


def newer_version_store(data_dir: Path) -> Path:
    open_store(data_dir).close()
    conn = connect_data_dir(data_dir)
    conn.execute("INSERT INTO _sqlite_migrations(migration_set, name, applied_at) "
                 "VALUES ('inspector', '0099_future', '2030-01-01')")
    conn.close()
    return data_dir


def unreadable_csv(tmp_path: Path) -> Path:
    path = tmp_path / "misterio.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    return path


def broken_json(tmp_path: Path) -> Path:
    path = tmp_path / "vehicles.json"
    path.write_text("{", encoding="utf-8")
    return path


ERRORS = [
    # (how to run it, exit code, stderr says)
    pytest.param(lambda tmp: (newer_version_store(tmp / "data"), ("store", "verify")), 1,
                 "newer version", id="verify of a store from a newer app"),
    pytest.param(lambda tmp: (newer_version_store(tmp / "data"), ("store", "status")), 1,
                 "newer version", id="status of a store from a newer app"),
    pytest.param(lambda tmp: (tmp / "data", ("registry", "import", str(tmp / "nada.csv"))), 2,
                 "no such file", id="import of a missing file"),
    pytest.param(lambda tmp: (tmp / "data", ("registry", "import", str(unreadable_csv(tmp)))),
                 2, "cannot tell which table", id="import of a file naming no table"),
    pytest.param(lambda tmp: (tmp / "data", ("registry", "import", str(broken_json(tmp)))), 2,
                 "invalid JSON", id="import of broken JSON"),
    pytest.param(lambda tmp: (tmp / "data", ("demo", "seed", "--vehicles", "0", "--autos", "2")),
                 1, "seed the registry first", id="autos without a registry"),
    pytest.param(
        lambda tmp: (tmp / "data", ("demo", "seed", "--vehicles", "-1")), 2, "vehicles",
        id="a negative vehicle count",
    ),
]


@pytest.mark.parametrize(("setup", "code", "says"), ERRORS)
def test_store_command_errors_exit_non_zero_with_one_message_and_no_traceback(
    tmp_path, setup, code, says
):
    data_dir, args = setup(tmp_path)
    result = inspector(data_dir, *args)
    assert_no_traceback(result)
    assert result.returncode == code, (result.stdout, result.stderr)
    assert says in result.stderr
    assert result.stderr.startswith("inspector: ")


def test_render_writes_a_signed_pdf_and_labels_the_second_render_as_reprint(tmp_path):
    from pypdf import PdfReader

    data = tmp_path / "data"
    seeded = inspector(data, "demo", "seed", "--vehicles", "20", "--autos", "1")
    assert seeded.returncode == 0, seeded.stderr
    store = open_store(data)
    try:
        number = store.conn.execute(
            "SELECT series || '-' || printf('%06d', number) FROM records "
            "WHERE kind = 'auto_infracao' ORDER BY number LIMIT 1"
        ).fetchone()[0]
    finally:
        store.close()
    first = inspector(data, "render", "--auto", number, "--out", str(tmp_path / "a.pdf"))
    assert first.returncode == 0, first.stderr
    second = inspector(data, "render", "--auto", number, "--layout", "80mm", "--copy", "1",
                       "--out", str(tmp_path / "b.pdf"))
    assert second.returncode == 0 and "(reprint 1)" in second.stdout
    text = "".join(p.extract_text() for p in PdfReader(tmp_path / "b.pdf").pages)
    assert "Reimpressão n.º 1 (" in text and number in text and "2ª VIA" not in text
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    from inspector_app.documents.pades import validate_pdf_signature

    pem = (data / "device_certificate.pem").read_bytes()
    der = x509.load_pem_x509_certificate(pem).public_bytes(Encoding.DER)
    check = validate_pdf_signature((tmp_path / "a.pdf").read_bytes(), trust_certificate_der=der)
    assert check.ok, check.message_pt
    missing = inspector(data, "render", "--auto", "XYZ-000999", "--out", str(tmp_path / "c.pdf"))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
