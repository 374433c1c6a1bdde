"""Issue 14, finding 7: the device's files are this user's alone and the personal data in
them is encrypted at rest (SQLCipher, key in ``inspector.db.key`` beside the database).

Real stores made by the real CLI in a subprocess; the files are read back as bytes.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from test_store_cli import inspector

from inspector_app.store.db import (
    DB_KEY_NAME,
    DB_NAME,
    StoreError,
    connect_data_dir,
    open_store,
)
from inspector_app.store.verify import verify_store

TOKEN = "tok-" + "9f3c1e7a5b" * 4
pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")


def _seed(data_dir: Path) -> None:
    result = inspector(data_dir, "demo", "seed", "--vehicles", "20", "--autos", "3")
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    store = open_store(data_dir)
    try:
        store.set_meta("hq_device_token", TOKEN)
    finally:
        store.close()


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("at-rest") / "data"
    _seed(data_dir)
    return data_dir


def _secrets(data_dir: Path) -> list[bytes]:
    """CPFs, CNHs, password hashes and the HQ token, as they would lie in a plaintext file."""
    conn = connect_data_dir(data_dir, readonly=True)
    try:
        values = [r[0] for r in conn.execute(
            "SELECT cpf FROM ref_drivers UNION ALL SELECT cnh FROM ref_drivers "
            "UNION ALL SELECT cpf FROM ref_permit_holders WHERE cpf IS NOT NULL "
            "UNION ALL SELECT password_hash FROM ref_inspectors")]
    finally:
        conn.close()
    assert len(values) > 20
    return [v.encode() for v in values if v] + [TOKEN.encode()]


def _every_file(data_dir: Path) -> list[Path]:
    return [Path(root) / f for root, _dirs, files in os.walk(data_dir) for f in files]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_data_folder_is_0700_and_every_file_in_it_0600(seeded):
    store = open_store(seeded)  # the -wal and -shm exist while a connection is open
    try:
        files = _every_file(seeded)
        names = {f.name for f in files}
        assert {DB_NAME, f"{DB_NAME}-wal", f"{DB_NAME}-shm", DB_KEY_NAME,
                "device_key.pem"} <= names
        assert any(f.suffix == ".pdf" or f.suffix == ".png" for f in files)  # blobs too
        assert {str(f): oct(_mode(f)) for f in files if _mode(f) != 0o600} == {}
        folders = [seeded] + [Path(root) / d for root, dirs, _ in os.walk(seeded) for d in dirs]
        assert {str(d): oct(_mode(d)) for d in folders if _mode(d) != 0o700} == {}
    finally:
        store.close()


def test_wide_permissions_are_repaired_at_start_with_a_log_line_and_no_alert(
    seeded, tmp_path, caplog
):
    data_dir = tmp_path / "data"
    shutil.copytree(seeded, data_dir)
    os.chmod(data_dir, 0o755)
    for root, dirs, files in os.walk(data_dir):
        for d in dirs:
            os.chmod(Path(root) / d, 0o755)
        for f in files:
            os.chmod(Path(root) / f, 0o644)
    with caplog.at_level(logging.WARNING, logger="inspector_app.store.db"):
        store = open_store(data_dir)
    try:
        assert store.alerts == []  # nothing for the inspector to do
        assert store.readonly is False
    finally:
        store.close()
    [line] = [r.getMessage() for r in caplog.records if "permissions" in r.getMessage()]
    assert "narrowed to this user" in line
    assert _mode(data_dir) == 0o700
    assert [f for f in _every_file(data_dir) if _mode(f) != 0o600] == []


def test_no_cpf_cnh_password_hash_or_token_lies_in_clear_in_any_file(seeded):
    secrets = _secrets(seeded)
    store = open_store(seeded)
    try:
        store.set_meta("probe", "x")  # the -wal holds a fresh page
        leaks = {
            f.name: [s.decode() for s in secrets if s in f.read_bytes()]
            for f in _every_file(seeded)
        }
    finally:
        store.close()
    assert {name: found for name, found in leaks.items() if found} == {}


def test_the_database_cannot_be_opened_without_its_key(seeded, tmp_path):
    data_dir = tmp_path / "data"
    shutil.copytree(seeded, data_dir)
    # The standard library, as another program would open it, sees no database.
    plain = sqlite3.connect(str(data_dir / DB_NAME))
    with pytest.raises(sqlite3.DatabaseError, match="file is not a database"):
        plain.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    plain.close()
    # Another key: refused, nothing changed.
    before = (data_dir / DB_NAME).read_bytes()
    (data_dir / DB_KEY_NAME).write_text("ab" * 32 + "\n")
    with pytest.raises(StoreError) as err:
        open_store(data_dir)
    assert err.value.message_pt == "Não foi possível abrir o banco de dados."
    # No key at all: refused with its own message, and no new empty store is made.
    (data_dir / DB_KEY_NAME).unlink()
    with pytest.raises(StoreError) as err:
        open_store(data_dir)
    assert "chave" in err.value.message_pt
    assert not (data_dir / DB_KEY_NAME).exists()
    assert (data_dir / DB_NAME).read_bytes() == before


def test_a_plaintext_store_from_an_earlier_version_is_encrypted_in_place(seeded, tmp_path):
    """The migration path: a 0001..0004 store written in clear (and a plaintext backup
    beside it) is exported into an encrypted file at the first start, data intact."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    conn = connect_data_dir(seeded, readonly=True)
    try:  # sqlcipher_export into a key-less database: the file an older app wrote
        conn.execute("ATTACH DATABASE ? AS plain KEY ''", [str(data_dir / DB_NAME)])
        conn.execute("SELECT sqlcipher_export('plain')")
        conn.execute("DETACH DATABASE plain")
        counts = {t: conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                  for t in ("records", "journal", "ref_drivers", "app_meta")}
    finally:
        conn.close()
    for name in ("device_key.pem", "blobs"):
        src = seeded / name
        if src.is_dir():
            shutil.copytree(src, data_dir / name)
        else:
            (data_dir / name).write_bytes(src.read_bytes())
    _as_before_0005(data_dir / DB_NAME)
    (data_dir / "backups").mkdir()
    (data_dir / "backups" / "inspector-old.db").write_bytes((data_dir / DB_NAME).read_bytes())
    secrets = _secrets_plain(data_dir / DB_NAME)
    assert any(s in (data_dir / DB_NAME).read_bytes() for s in secrets)  # in clear before

    store = open_store(data_dir)
    try:
        assert {t: store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                for t in counts} == counts
        assert store.meta("hq_device_token") == TOKEN
        assert verify_store(store).problems == []
    finally:
        store.close()
    assert (data_dir / DB_KEY_NAME).exists()
    for path in (data_dir / DB_NAME, data_dir / "backups" / "inspector-old.db"):
        data = path.read_bytes()
        assert not data.startswith(b"SQLite format 3\x00"), path
        assert [s for s in secrets if s in data] == [], path
    assert not (data_dir / f"{DB_NAME}.encrypting").exists()


def _as_before_0005(path: Path) -> None:
    """The plaintext copy as an app from before encryption wrote it: no row seals yet."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' "
                                    "AND (name LIKE '%_seal_%' OR name LIKE '%_count_ins')"
                                    ).fetchall():
            conn.execute(f"DROP TRIGGER {name}")
        conn.execute("DROP TABLE row_seals")
        conn.execute("DELETE FROM app_meta WHERE key LIKE 'rows.%'")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0005_i14c_row_seals'")
    finally:
        conn.close()


def _secrets_plain(path: Path) -> list[bytes]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        values = [r[0] for r in conn.execute(
            "SELECT cpf FROM ref_drivers UNION ALL SELECT password_hash FROM ref_inspectors "
            "UNION ALL SELECT value FROM app_meta WHERE key = 'hq_device_token'")]
    finally:
        conn.close()
    return [v.encode() for v in values if v]
