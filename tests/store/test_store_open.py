"""Opening the store: pragmas, data folder, newer-version refusal, backup before migrating, corruption."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from sqlite_utils.migrations import Migrations

from inspector_app import demo, services
from inspector_app.store import db as store_db
from inspector_app.store import migrations as real_migrations
from inspector_app.store import reference
from inspector_app.store.db import (
    APP_NAME,
    DB_NAME,
    KNOWN_MIGRATIONS,
    StoreReadOnlyError,
    StoreVersionError,
    connect_data_dir,
    database_key,
    default_data_dir,
    open_store,
    raw_connect,
)
from inspector_app.store.sealing import RecordDraft, seal_records
from inspector_app.store.verify import verify_store
from inspector_app.sync import client as sync_client


def file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_store_with_data(data_dir: Path, *, vehicles: int = 30, seal: bool = True) -> None:
    """A closed store holding a demo registry (and one sealed record), WAL checkpointed."""
    store = open_store(data_dir)
    demo.seed_registry(store, vehicles=vehicles, seed=1)
    if seal:
        seal_records(store, [RecordDraft("auto_infracao", {"local": "Terminal de Brazlândia"},
                                         plate_key="JGE7G08", occurred_on="2026-05-04")])
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()


def migration_names(path: Path) -> list[str]:
    conn = raw_connect(path, database_key(path.parent.parent if path.parent.name == "backups"
                                          else path.parent, create=False), readonly=True)
    try:
        return [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY id")]
    finally:
        conn.close()


def test_the_connection_uses_wal_full_synchronous_and_foreign_keys(tmp_path):
    store = open_store(tmp_path / "data")
    try:
        pragma = {name: store.conn.execute(f"PRAGMA {name}").fetchone()[0]
                  for name in ("journal_mode", "synchronous", "foreign_keys")}
        assert pragma == {"journal_mode": "wal", "synchronous": 2, "foreign_keys": 1}
        assert (store.readonly, store.alerts) == (False, [])
        assert store.path == tmp_path / "data" / DB_NAME
        assert store.meta("created_at")
    finally:
        store.close()


def test_inspector_data_dir_is_the_default_data_folder_when_set(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "campo"))
    assert default_data_dir() == tmp_path / "campo"
    store = open_store()
    try:
        assert store.data_dir == tmp_path / "campo"
        assert (tmp_path / "campo" / DB_NAME).is_file()
    finally:
        store.close()


def test_without_inspector_data_dir_the_platform_user_data_folder_is_used(monkeypatch):
    monkeypatch.delenv("INSPECTOR_DATA_DIR", raising=False)
    assert default_data_dir().name == APP_NAME


def test_a_database_from_a_newer_version_is_refused_and_left_unchanged(tmp_path):
    data_dir = tmp_path / "data"
    make_store_with_data(data_dir)
    raw = connect_data_dir(data_dir)
    raw.execute(
        "INSERT INTO _sqlite_migrations(migration_set, name, applied_at) "
        "VALUES ('inspector', '0099_future', '2030-01-01 00:00:00+00:00')"
    )
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    before = file_hash(data_dir / DB_NAME)

    with pytest.raises(StoreVersionError) as err:
        open_store(data_dir)
    assert "0099_future" in str(err.value)
    assert "versão mais nova" in err.value.message_pt
    assert "nada foi alterado" in err.value.message_pt
    assert file_hash(data_dir / DB_NAME) == before
    assert not (data_dir / "backups").exists()


def test_a_pending_migration_runs_after_a_backup_of_the_database_as_it_was(
    tmp_path, monkeypatch
):
    data_dir = tmp_path / "data"
    make_store_with_data(data_dir)
    shipped = [m.name for m in real_migrations.migrations._migrations]
    newer = Migrations("inspector")
    for m in real_migrations.migrations._migrations:
        newer(name=m.name)(m.fn)

    @newer(name="9001_observacoes_de_teste")
    def m9001(db) -> None:
        db.execute("CREATE TABLE observacoes (id INTEGER PRIMARY KEY, texto TEXT NOT NULL)")

    monkeypatch.setattr(store_db, "migrations", newer)
    monkeypatch.setattr(store_db, "KNOWN_MIGRATIONS", (*shipped, "9001_observacoes_de_teste"))

    store = open_store(data_dir)
    try:
        assert migration_names(store.path) == [*shipped, "9001_observacoes_de_teste"]
        assert store.db["observacoes"].exists()
        assert store.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1
    finally:
        store.close()
    [backup] = (data_dir / "backups").iterdir()
    assert backup.name.endswith("-before-9001_observacoes_de_teste.db")
    assert migration_names(backup) == shipped
    conn = raw_connect(backup, database_key(data_dir, create=False), readonly=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "observacoes" not in tables
        assert conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1
        assert conn.execute("SELECT COUNT(*) FROM ref_vehicles").fetchone()[0] == 30
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


@pytest.mark.parametrize("cursor", [None, "57"], ids=["never-synced", "synced"])
def test_0004_standing_upgrades_a_0003_store_keeping_its_data_and_pulling_again(
    tmp_path, monkeypatch, cursor
):
    data_dir = tmp_path / "data"
    shipped = list(real_migrations.migrations._migrations)
    upto = [m.name for m in shipped].index("0003_sync") + 1
    older = Migrations("inspector")
    for m in shipped[:upto]:
        older(name=m.name)(m.fn)
    with monkeypatch.context() as patch:  # the app as it was before 0004_standing
        patch.setattr(store_db, "migrations", older)
        patch.setattr(store_db, "KNOWN_MIGRATIONS", tuple(m.name for m in shipped[:upto]))
        make_store_with_data(data_dir)
        store = open_store(data_dir)
        if cursor is not None:
            store.set_meta(sync_client.META_PULL_CURSOR, cursor)
        store.set_meta("hq_url", "http://sede.exemplo")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        store.close()
    assert migration_names(data_dir / DB_NAME)[-1] == "0003_sync"

    store = open_store(data_dir)
    try:
        assert migration_names(store.path) == list(KNOWN_MIGRATIONS)
        assert KNOWN_MIGRATIONS[upto] == "0004_standing"
        columns = [r[1] for r in store.conn.execute("PRAGMA table_info(ref_standing)")]
        assert columns == ["id", "pack_id", "as_of", "points_json", "reincidence_json",
                           "cassacao_proposed", "cassacao_json", "windows_json",
                           # 0005_i15b_standing_pending (issue 15)
                           "pending_points_json", "provisional_reincidence_json",
                           "cassacao_decision_json"]
        assert store.conn.execute("SELECT COUNT(*) FROM ref_standing").fetchone()[0] == 0
        # Data kept; the pull starts again from the beginning to fetch the skipped standing.
        assert store.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0] == 1
        assert store.conn.execute("SELECT COUNT(*) FROM ref_vehicles").fetchone()[0] == 30
        assert store.meta("hq_url") == "http://sede.exemplo"
        assert store.meta(sync_client.META_PULL_CURSOR) == (None if cursor is None else "0")
        assert verify_store(store).problems == []
    finally:
        store.close()
    [backup] = (data_dir / "backups").iterdir()
    assert backup.name.endswith("-before-0004_standing.db")


def test_a_new_store_is_created_without_a_backup_and_reopened_without_one(tmp_path):
    open_store(tmp_path / "data").close()
    open_store(tmp_path / "data").close()
    assert migration_names(tmp_path / "data" / DB_NAME) == list(KNOWN_MIGRATIONS)
    assert not (tmp_path / "data" / "backups").exists()


def corrupt_an_index_page(data_dir: Path) -> int:
    """Overwrite the cell pointers of the leaf page of ``idx_ref_vehicles_holder``.

    The schema and the migrations table stay readable, so SQLite opens the file and
    ``quick_check`` reports the damaged b-tree page. Returns the page number.
    """
    conn = connect_data_dir(data_dir)
    try:
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        page_count = int(conn.execute("PRAGMA page_count").fetchone()[0])
        [(page,)] = conn.execute(
            # One page (root and leaf) for 200 vehicles; SQLCipher's build has no dbstat.
            "SELECT rootpage FROM sqlite_master WHERE name = 'idx_ref_vehicles_holder'"
        ).fetchall()
    finally:
        conn.close()
    assert 1 < page < page_count  # a page in the middle of the file
    with open(data_dir / DB_NAME, "r+b") as f:
        f.seek((page - 1) * page_size + 100)
        f.write(b"\xff" * 300)
    return int(page)


def test_a_corrupted_store_opens_read_only_with_a_portuguese_alert_and_refuses_writes(tmp_path):
    data_dir = tmp_path / "data"
    # Never sealed: the first seal would also create the device id and key.
    make_store_with_data(data_dir, vehicles=200, seal=False)
    page = corrupt_an_index_page(data_dir)
    damaged = file_hash(data_dir / DB_NAME)

    store = open_store(data_dir)
    try:
        assert store.readonly is True
        [alert] = store.alerts
        assert alert.startswith("Falha na verificação de integridade do banco de dados; aberto "
                                "somente para leitura.")
        assert f"page {page}" in alert
        # One line with three details at most, not SQLite's whole multi-line report.
        assert "\n" not in alert and alert.count(f"page {page}") <= 3
        # Reading still works: the registry answers a plate lookup.
        [(plate,)] = store.conn.execute("SELECT plate FROM ref_vehicles WHERE id = 'V000150'")
        view = reference.find_vehicle(store, plate)
        assert view is not None and view.id == "V000150"

        session = services.Session(matricula="1001", name="João Batista Ferreira",
                                   role="inspector")
        writes = [
            lambda: store.atomic().__enter__(),
            lambda: services.start_inspection(
                store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
                location_type="terminal", place="Terminal de Brazlândia", plate="ABC1D23"),
            lambda: services.void_number(store=store, session=session,
                                         reason="Folha rasgada na impressora."),
            lambda: seal_records(store, [RecordDraft("auto_infracao", {"local": "x"})]),
        ]
        for write in writes:
            with pytest.raises(StoreReadOnlyError) as err:
                write()
            assert "somente leitura" in err.value.message_pt
        assert not verify_store(store).ok
    finally:
        store.close()
    assert file_hash(data_dir / DB_NAME) == damaged
    assert not (data_dir / "device_key.pem").exists()
