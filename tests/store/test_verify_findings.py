"""Issue 14, finding 11: ``inspector store verify`` exits 1 with a line per problem after each
change the red team made and verify used to miss.

A real store (CLI ``demo seed`` with sealed autos, PDFs rendered and archived, prints logged,
an acknowledged record, an enrolled device), copied per case, altered as a person with the
database key and a SQLite tool would (triggers dropped first), then checked by the real
``inspector store verify`` in a subprocess.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from test_store_cli import inspector

from inspector_app import services
from inspector_app.store import seals
from inspector_app.store.db import DB_NAME, connect_data_dir, open_store, utc_now
from inspector_app.store.verify import verify_store

SUPERVISOR = services.Session(matricula="1004", name="Luíza Helena Magalhães",
                              role="supervisor")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("verify") / "data"
    seeded = inspector(data_dir, "demo", "seed", "--vehicles", "20", "--autos", "3")
    assert seeded.returncode == 0, seeded.stderr
    store = open_store(data_dir)
    try:
        [rid] = store.conn.execute(
            "SELECT id FROM records WHERE kind = 'auto_infracao' ORDER BY journal_seq LIMIT 1"
        ).fetchone()
        for _ in range(2):
            services.render_record(store=store, record_id=rid, layout="a4", copy="1")
        for _ in range(3):
            services.log_print(store=store, session=SUPERVISOR, record_id=rid, copy="1")
        store.set_meta("hq_url", "https://sede.exemplo.gov.br")
        store.set_meta("hq_device_token", "tok-" + "ab" * 20)
        now = utc_now()
        with store.atomic():  # what the sync client writes when HQ answers "accepted"
            store.conn.execute(
                "UPDATE outbox SET attempts = attempts + 1, last_attempt_at = ?, "
                "ack_status = 'accepted', last_error = NULL, acked_at = ? "
                "WHERE record_id = ?", [now, now, rid])
        assert verify_store(store).problems == []
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return data_dir


def _raw_sql(*statements: str) -> Callable[[Path], None]:
    def alter(data_dir: Path) -> None:
        conn = connect_data_dir(data_dir)
        try:
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger'"
            ).fetchall():
                conn.execute(f"DROP TRIGGER {name}")
            for statement in statements:
                conn.execute(statement)
        finally:
            conn.close()
    return alter


def _zero_bytes(data_dir: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        path = data_dir / f"{DB_NAME}{suffix}"
        if suffix:
            path.unlink(missing_ok=True)
        else:
            path.write_bytes(b"")


def _deleted(data_dir: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        (data_dir / f"{DB_NAME}{suffix}").unlink(missing_ok=True)


def _blobs(data_dir: Path) -> list[Path]:
    return sorted(p for p in (data_dir / "blobs").glob("*/*") if p.is_file())


def _every_blob_deleted(data_dir: Path) -> None:
    for path in _blobs(data_dir):
        path.unlink()


def _one_png_altered(data_dir: Path) -> None:
    [path, *_] = [p for p in _blobs(data_dir) if p.suffix == ".png"]
    data = bytearray(path.read_bytes())
    data[-20] ^= 0xFF
    path.write_bytes(bytes(data))


def _fake_seal_function(data_dir: Path) -> None:
    """The tamperer writes through the triggers with a seal function of their own."""
    conn = connect_data_dir(data_dir)
    try:
        seals.register(conn, b"\x00" * 32)
        conn.execute("UPDATE ref_inspectors SET role = 'supervisor' WHERE matricula = '1001'")
    finally:
        conn.close()


OTHER_HASH = "(SELECT password_hash FROM ref_inspectors WHERE matricula = '1004')"
CASES = [
    pytest.param(_zero_bytes, ["exists but this database pins no device key",
                               "blob files exist but the database holds no record"],
                 id="database emptied to 0 bytes, key and files kept"),
    pytest.param(_deleted, ["exists but this database pins no device key"],
                 id="database deleted and re-created"),
    pytest.param(_raw_sql("UPDATE outbox SET acked_at = '2026-12-01T10:00:00+00:00', "
                          "ack_status = 'accepted' WHERE acked_at IS NULL"),
                 ["acknowledged but never sent", "outbox", "seal mismatch"],
                 id="outbox acked_at set on records never sent"),
    pytest.param(_raw_sql("DELETE FROM app_meta WHERE key IN ('hq_url', 'hq_device_token')"),
                 ["acknowledged by HQ but this device was never enrolled",
                  "app_meta hq_url: row removed outside the app"],
                 id="enrolment removed behind an acknowledged record"),
    pytest.param(_every_blob_deleted, ["is missing from the blob folder"],
                 id="every blob file deleted"),
    pytest.param(_one_png_altered, ["does not match its SHA-256 (altered)"],
                 id="a signature image altered"),
    pytest.param(_raw_sql("DELETE FROM print_log WHERE id = (SELECT max(id) FROM print_log)"),
                 ["were written by the app (rows removed"],
                 id="newest print_log row deleted"),
    pytest.param(_raw_sql("DELETE FROM print_log WHERE reprint_number = 1"),
                 ["reprint numbers [1] missing", "were written by the app (rows removed"],
                 id="a middle print_log row deleted"),
    pytest.param(_raw_sql("DELETE FROM documents WHERE id = (SELECT max(id) FROM documents)"),
                 ["documents: ", "rows removed outside the app"],
                 id="newest documents row deleted"),
    pytest.param(_raw_sql("UPDATE ref_inspectors SET role = 'supervisor' "
                          "WHERE matricula = '1001'"),
                 ["ref_inspectors I1001: row changed outside the app (seal mismatch)"],
                 id="an inspector made supervisor"),
    pytest.param(_raw_sql(f"UPDATE ref_inspectors SET password_hash = {OTHER_HASH} "
                          "WHERE matricula = '1001'"),
                 ["ref_inspectors I1001: row changed outside the app (seal mismatch)"],
                 id="a password hash swapped"),
    pytest.param(_raw_sql("UPDATE app_meta SET value = 'https://sede.falsa.example' "
                          "WHERE key = 'hq_url'"),
                 ["app_meta hq_url: row changed outside the app (seal mismatch)"],
                 id="hq_url changed"),
    pytest.param(_raw_sql("INSERT INTO ref_inspectors (id, matricula, name, role, "
                          f"password_hash, updated_at) VALUES ('I9999', '9999', 'Intruso', "
                          f"'supervisor', {OTHER_HASH}, '2026-12-01')"),
                 ["ref_inspectors I9999: row not written by the app (no seal)"],
                 id="a supervisor added"),
    pytest.param(_fake_seal_function,
                 ["ref_inspectors I1001: row changed outside the app (seal mismatch)"],
                 id="an edit through the triggers with a seal function of another key"),
]


@pytest.mark.parametrize(("alter", "says"), CASES)
def test_store_verify_reports_each_alteration_and_exits_1(base, tmp_path, alter, says):
    data_dir = tmp_path / "data"
    shutil.copytree(base, data_dir)
    clean = inspector(data_dir, "store", "verify")
    assert (clean.returncode, clean.stdout.startswith("store ok")) == (0, True), clean.stdout
    alter(data_dir)
    result = inspector(data_dir, "store", "verify")
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].startswith("store has ")
    problems = [line.strip() for line in lines[1:]]
    for text in says:
        assert any(text in line for line in problems), (text, problems)


def test_an_open_inspection_with_a_photo_and_no_sealed_record_is_not_a_recreated_store(tmp_path):
    from PIL import Image

    from inspector_app import demo

    store = open_store(tmp_path / "data")
    try:
        demo.seed_registry(store, vehicles=10, seed=1)
        agent = services.Session(matricula="1001", name="João Batista Ferreira",
                                 role="inspector")
        inspection_id = services.start_inspection(
            store=store, session=agent, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal de Brazlândia", plate="ABC1D23")
        photo = tmp_path / "foto.jpg"
        Image.new("RGB", (64, 48), (120, 30, 30)).save(photo)
        services.attach_photo(store=store, inspection_id=inspection_id, source=photo)
        assert any(p.is_file() for p in (store.blob_dir).glob("*/*"))
        assert verify_store(store).problems == []
    finally:
        store.close()
