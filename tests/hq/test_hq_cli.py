"""``inspector-hq``: init, enrolment codes, inspectors, registry, ranges, revocation, report,
and ``serve`` as a real process whose log never shows a CPF or CNH."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from hqkit import TLS, SimDevice, free_port

from inspector_app.hq.cli import main
from inspector_app.hq.logs import redact
from inspector_app.hq.reference import live_rows
from inspector_app.security.passwords import verify_password
from inspector_app.sync.protocol import API_PREFIX


def run(capsys, *argv, stdin=None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_creates_the_database_and_running_it_again_changes_nothing(tmp_path, capsys):
    for _ in range(2):
        code, out, _ = run(capsys, "init", "--data-dir", str(tmp_path))
        assert code == 0 and "banco de dados pronto" in out
    assert (tmp_path / "hq.db").is_file() and (tmp_path / "blobs").is_dir()


def test_commands_refuse_a_database_that_was_not_initialised(tmp_path, capsys):
    code, _, err = run(capsys, "report", "--data-dir", str(tmp_path))
    assert code == 2 and "inspector-hq init" in err


def test_enrol_code_prints_a_one_time_code_a_device_can_use(hq, capsys):
    code, out, _ = run(capsys, "enrol-code", "--database-url", hq.settings.database_url,
                       "--ttl-minutes", "10", "--series", "SEMOB", "--range-size", "20")
    assert code == 0
    device = SimDevice(hq).enrol(out.strip())
    assert (device.series, device.first) == ("SEMOB", 1)


def test_inspector_add_hashes_the_password_from_stdin_and_publishes_it(hq, capsys, monkeypatch):
    url = hq.settings.database_url
    code, out, _ = run(capsys, "inspector", "add", "4321", "Ana Lima", "supervisor",
                       "--password-stdin", "--database-url", url, stdin="senha-forte-1\n",
                       monkeypatch=monkeypatch)
    assert code == 0
    with hq.engine.connect() as conn:
        (row,) = list(live_rows(conn, "inspectors"))
    assert (row["id"], row["matricula"], row["role"], row["active"]) == (
        out.strip(), "4321", "supervisor", 1)
    assert row["password_hash"].startswith("$argon2id$")
    assert verify_password(row["password_hash"], "senha-forte-1")
    code, out, _ = run(capsys, "inspector", "disable", "4321", "--database-url", url)
    assert code == 0 and out.strip() == "desativado"
    with hq.engine.connect() as conn:
        assert next(live_rows(conn, "inspectors"))["active"] == 0


def test_inspector_add_refuses_a_password_not_given_on_stdin(hq, capsys):
    code, _, err = run(capsys, "inspector", "add", "1", "X", "inspector",
                       "--database-url", hq.settings.database_url)
    assert code == 2 and "--password-stdin" in err


def test_registry_import_keeps_good_rows_and_reports_bad_ones_without_the_cpf(
        hq, capsys, tmp_path):
    csv_file = tmp_path / "drivers.csv"
    csv_file.write_text(
        "id;name;cpf;cnh\n"
        "d1;João Silva;169.440.601-67;\n"
        "d2;Pedro Lima;169.440.601-00;\n", encoding="utf-8")
    code, out, _ = run(capsys, "registry", "import", str(csv_file),
                       "--database-url", hq.settings.database_url)
    assert code == 1
    assert "drivers: 1" in out
    assert "ERRO drivers.csv:3: cpf: CPF inválido" in out
    assert "16944060100" not in out and "169.440.601-00" not in out


def test_range_allocate_assigns_and_refuses_an_overlap(hq, device, capsys):
    url = hq.settings.database_url
    code, out, _ = run(capsys, "range", "allocate", device.device_id, "EXTRA", "1", "100",
                       "--database-url", url)
    assert code == 0 and "EXTRA 1..100" in out
    code, _, err = run(capsys, "range", "allocate", device.device_id, "EXTRA", "50", "60",
                       "--database-url", url)
    assert code == 2 and "se sobrepõe" in err


def test_device_revoke_and_report(hq, device, capsys):
    url = hq.settings.database_url
    device.push_one(device.record())
    code, out, _ = run(capsys, "device", "revoke", device.device_id, "--database-url", url)
    assert code == 0 and "revogado" in out
    code, out, _ = run(capsys, "report", "--json", "--database-url", url)
    report = json.loads(out)
    (dev,) = report["devices"]
    assert (dev["device_id"], dev["records"]) == (device.device_id, 1)
    assert dev["revoked_at"] is not None
    (rng,) = report["ranges"]
    assert (rng["issued"], rng["voided"], rng["missing"]) == (1, 0, 0)
    code, out, _ = run(capsys, "report", "--database-url", url)
    assert "emitidos 1, anulados 0, faltando 0" in out


def test_redaction_masks_cpf_and_cnh_but_not_ids_or_times():
    text = ("cpf 169.440.601-67 / 16944060167 cnh 02650306461 em "
            "2026-04-14T10:05:00.123456 id 3f2b6c1e-9a4d-4e8b-8f00-123456789012")
    assert redact(text) == ("cpf *** / *** cnh *** em 2026-04-14T10:05:00.123456 "
                            "id 3f2b6c1e-9a4d-4e8b-8f00-123456789012")


@pytest.mark.parametrize(("text", "masked"), [
    ("GET /verify/CPF16944060167 HTTP/1.1", "GET /verify/CPF*** HTTP/1.1"),
    ("/x?cpf=169.440.601-67&y=1", "/x?cpf=***&y=1"),
    ("/x?cpf=169%2E440%2E601%2D67", "/x?cpf=***"),
    ("/x?cnh=02650306461a", "/x?cnh=***a"),
    ("seq 123456789012 size 1234567890", "seq 123456789012 size 1234567890"),
])
def test_redaction_masks_identity_numbers_touching_letters_or_percent_encoded(text, masked):
    assert redact(text) == masked


class _ExternalHQ:
    """Enough of RunningHQ for SimDevice, for a server in another process."""

    def __init__(self, url):
        self.url = url

    def client(self, token=None, **kwargs):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=10, verify=TLS, **kwargs)


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_runs_hq_and_its_log_never_shows_cpf_or_cnh(tmp_path, capsys, workers):
    data = ["--data-dir", str(tmp_path)]
    assert run(capsys, "init", *data)[0] == 0
    code = run(capsys, "enrol-code", *data)[1].strip()
    port = free_port()
    log_path = tmp_path / "serve.log"
    with log_path.open("wb") as log:
        server = subprocess.Popen([Path(sys.executable).with_name("inspector-hq"), "serve",
                                   *data, "--port", str(port), "--workers", str(workers)],
                                  stdout=log,
                                  stderr=subprocess.STDOUT, env={**os.environ})
    try:
        hq = _ExternalHQ(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 30
        while True:
            try:
                with hq.client() as client:
                    if client.get(f"{API_PREFIX}/health").status_code == 200:
                        break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        device = SimDevice(hq).enrol(code)
        driver = {"name": "José", "cpf": "16944060167", "cnh": "02650306461"}
        body = {"driver": driver, "note": "CPF 169.440.601-67"}
        good = device.record(device.envelope(body=body))
        assert device.push_one(good)["status"] == "accepted"
        assert device.push_one(device.record(device.envelope(body=body),
                                             sha256="0" * 64))["status"] == "rejected"
        with device.client() as client:  # a malformed body echoes its input in the answer
            assert client.post(f"{API_PREFIX}/push",
                               json={"records": [{"payload": json.dumps(driver)}]}
                               ).status_code == 422
        with hq.client() as client:  # identity numbers in URLs reach uvicorn's access log
            assert client.get("/verify/CPF16944060167").status_code == 404
            assert client.get(f"{API_PREFIX}/verify/X?cpf=169.440.601-67").status_code == 404
            assert client.get("/verify/X?cpf=169%2E440%2E601%2D67").status_code == 404
        time.sleep(0.3)  # the access lines of another worker process reach the file
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    log = log_path.read_text(encoding="utf-8")
    assert "push from device" in log and "/api/v1/push" in log
    for secret in ("16944060167", "169.440.601-67", "169%2E440%2E601%2D67", "02650306461"):
        assert secret not in log
    # the access lines are whole, masked, and the formatter never broke on them
    assert "Logging error" not in log and "Traceback" not in log
    assert '"GET /verify/CPF*** HTTP/1.1" 404' in log
    assert f'"GET {API_PREFIX}/verify/X?cpf=*** HTTP/1.1" 404' in log
    assert '"GET /verify/X?cpf=*** HTTP/1.1" 404' in log


def _command_paths(parser, prefix="inspector-hq"):
    import argparse

    paths = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                paths += _command_paths(sub, f"{prefix} {name}") or [f"{prefix} {name}"]
    return paths


def test_every_inspector_hq_command_is_documented():
    from inspector_app.hq.cli import build_parser

    text = (Path(__file__).resolve().parents[2] / "docs" / "HQ.md").read_text(encoding="utf-8")
    missing = [path for path in _command_paths(build_parser()) if path not in text]
    assert not missing, f"docs/HQ.md does not mention: {missing}"
