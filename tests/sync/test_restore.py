"""Backup and restore of HQ, end to end, following docs/hq-operations.md §4 (issue 14,
finding 3): back up, sync more, restore the backup, sync; HQ holds every record again,
``inspector-hq report`` is exact, and a change made at HQ after the restore (an agent
disabled) reaches the device.

On PostgreSQL with the documented commands (pg_dump / pg_restore, rsync of the blob
folder); on SQLite by copying the database file with SQLite's backup API."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from hqkit import MAX_BLOB_BYTES, RunningHQ, database_url
from synckit import outbox, seal_autos, void_numbers

from inspector_app.hq.core.config import Settings
from inspector_app.hq.inspectors import add_inspector, disable_inspector
from inspector_app.sync import client as sync

AGENT = "7001"


def libpq(url: str) -> str:
    return url.replace("+psycopg", "")


def backup(hq: RunningHQ, folder: Path) -> None:
    """Section 4's nightly backup: the database first, then the blob folder."""
    folder.mkdir()
    url = hq.settings.database_url
    if hq.backend == "postgresql":
        subprocess.run(["pg_dump", "--format=custom", f"--file={folder / 'hq.dump'}",
                        libpq(url)], check=True, timeout=120)
    else:
        with closing(sqlite3.connect(url.removeprefix("sqlite:///"))) as source, \
                closing(sqlite3.connect(folder / "hq.db")) as target:
            source.backup(target)
    subprocess.run(["rsync", "-a", f"{hq.settings.blob_dir}/", f"{folder / 'blobs'}/"],
                   check=True, timeout=120)


def restore(settings: Settings, backend: str, folder: Path) -> None:
    """Section 4's restore on a fresh server: an empty database, pg_restore, the blobs."""
    url = settings.database_url
    if backend == "postgresql":
        import psycopg

        name = url.rsplit("/", 1)[1]
        admin_url = libpq(url).rsplit("/", 1)[0] + "/postgres"
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}"')
        subprocess.run(["pg_restore", "--no-owner", f"--dbname={libpq(url)}",
                        str(folder / "hq.dump")], check=True, timeout=120)
    else:
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(folder / "hq.db", path)
    shutil.rmtree(settings.blob_dir)
    subprocess.run(["rsync", "-a", f"{folder / 'blobs'}/", f"{settings.blob_dir}/"],
                   check=True, timeout=120)


def hq_cli(settings: Settings, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "inspector_app.hq.cli", *args,
         "--database-url", settings.database_url],
        capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout


def held(hq: RunningHQ) -> dict[str, str]:
    from sqlalchemy import text

    with hq.engine.connect() as conn:
        return dict(conn.execute(text("SELECT id, sha256 FROM records")).all())


@pytest.mark.parametrize("backend", ["postgresql", "sqlite"])
def test_restore_from_backup_then_sync_brings_every_record_back(backend, tmp_path,
                                                               make_store):
    with database_url(backend, tmp_path) as url:
        settings = Settings(database_url=url, blob_dir=tmp_path / "blobs",
                            max_blob_bytes=MAX_BLOB_BYTES)
        hq = RunningHQ(settings, backend).start()
        try:
            add_inspector(hq.engine, matricula=AGENT, name="Agente Restaurada",
                          role="inspector", password="senha-forte-1")
            store = make_store()
            sync.enrol(store, hq_url=hq.url, code=hq.enrol_code(series="AI", range_size=500))
            seal_autos(store, 2)
            void_numbers(store, 2)
            assert sync.sync_once(store).ok
            before_backup = len(held(hq))

            backup(hq, tmp_path / "backup")

            seal_autos(store, 3, seed=2)
            void_numbers(store, 2)  # voided numbers publish nothing: only the count tells
            summary = sync.sync_once(store)
            assert summary.ok and summary.pending == 0
            device = dict(store.conn.execute("SELECT id, sha256 FROM records").fetchall())
            assert len(device) > before_backup and held(hq) == device
            assert store.conn.execute("SELECT active FROM ref_inspectors WHERE matricula = ?",
                                      [AGENT]).fetchone()[0] == 1
        finally:
            hq.stop()

        restore(settings, backend, tmp_path / "backup")
        hq_cli(settings, "init")
        # hq-operations.md §8: the list of files restored with the database made equal to
        # the restored files (here the same copy: nothing to add or remove).
        assert "0 acrescentados à lista da sede; 0 retirados" in hq_cli(
            settings, "blobs", "reindex", "--blob-dir", str(settings.blob_dir))
        hq = RunningHQ(settings, backend).start()
        try:
            assert len(held(hq)) == before_backup  # the backup lost the later records
            assert disable_inspector(hq.engine, matricula=AGENT)  # a change after restore
            store.set_meta(sync.META_HQ_URL, hq.url)  # same server, a new test port

            summary = sync.sync_once(store)
            assert summary.ok, summary.error
            assert summary.resynced
            assert held(hq) == device  # every record at HQ again, with the device's hash
            assert all(acked for acked, *_ in outbox(store).values())
            assert store.conn.execute("SELECT active FROM ref_inspectors WHERE matricula = ?",
                                      [AGENT]).fetchone()[0] == 0

            report = hq_cli(settings, "report")
            voided = 4
            assert f"emitidos {len(device) - voided}, anulados {voided}, faltando 0" in report

            again = sync.sync_once(store)  # settled: nothing more to send or reset
            assert again.ok and not again.resynced and again.pushed == 0
        finally:
            with contextlib.suppress(Exception):
                hq.stop()
