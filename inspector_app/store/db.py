"""Opening the store: data folder, pragmas, migrations with a backup, integrity at start.

Caveat: the connection runs in autocommit mode (``isolation_level=None``); every write that
must be all-or-nothing goes through ``Store.atomic()`` (BEGIN IMMEDIATE … COMMIT), and with
``synchronous=FULL`` a committed transaction survives a crash or a power cut.
"""

from __future__ import annotations

import datetime as dt
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs
from sqlite_utils import Database

from inspector_app.store.migrations import KNOWN_MIGRATIONS, migrations

DB_NAME = "inspector.db"
APP_NAME = "inspector-fiscalizacao"


class StoreError(Exception):
    """A store problem with a Portuguese message for the GUI (``message_pt``)."""

    def __init__(self, message: str, message_pt: str | None = None) -> None:
        super().__init__(message)
        self.message_pt = message_pt or message


class StoreVersionError(StoreError):
    """The database was written by a newer version of the app."""


class StoreReadOnlyError(StoreError):
    """The store was opened read-only (integrity problem) and refuses writes."""


class StoreFullError(StoreError):
    """The disk (or the database's page limit) is full; nothing was written."""


def default_data_dir() -> Path:
    """``INSPECTOR_DATA_DIR`` or the platform's user data folder."""
    override = os.environ.get("INSPECTOR_DATA_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


@dataclass
class Store:
    """An open store. ``alerts`` are Portuguese messages the window must show."""

    db: Database
    data_dir: Path
    path: Path
    readonly: bool = False
    alerts: list[str] = field(default_factory=list)

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    @property
    def blob_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def key_path(self) -> Path:
        return self.data_dir / "device_key.pem"

    def require_writable(self) -> None:
        if self.readonly:
            raise StoreReadOnlyError(
                "store is read-only after a failed integrity check",
                "O banco de dados está em modo somente leitura (falha na verificação de "
                "integridade). Nada pode ser gravado; chame o suporte.",
            )

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        """One write transaction (``BEGIN IMMEDIATE``): all of it is saved or none of it."""
        self.require_writable()
        conn = self.conn
        if conn.in_transaction:
            raise StoreError("nested write transaction")
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise translate_error(exc) from exc

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM app_meta WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO app_meta(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [key, value],
        )

    def close(self) -> None:
        self.db.close()


def translate_error(exc: sqlite3.Error) -> StoreError:
    """SQLite errors as store errors with a message an inspector can act on."""
    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and "disk I/O error" in text:
        return StoreError(
            f"disk I/O error: {text}",
            "Erro de gravação no disco (E/S). Nada foi gravado pela metade: verifique o "
            "armazenamento do dispositivo e tente de novo; se persistir, chame o suporte.",
        )
    if isinstance(exc, sqlite3.OperationalError) and "full" in text:
        return StoreFullError(
            f"database or disk is full: {text}",
            "Sem espaço para gravar (disco cheio). Nada foi gravado pela metade: libere "
            "espaço no dispositivo e tente de novo.",
        )
    if "append-only" in text or "sealed" in text or "never deleted" in text or (
        "outbox" in text
    ):
        return StoreError(text, "Registro selado não pode ser alterado nem apagado.")
    if isinstance(exc, sqlite3.OperationalError) and "readonly" in text:
        return StoreReadOnlyError(text, "O banco de dados está em modo somente leitura.")
    return StoreError(text, f"Erro ao gravar no banco de dados: {text}")


def _connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(
            f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
        )
    else:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 5000")
    if not readonly:
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _backup(conn: sqlite3.Connection, data_dir: Path, before: str) -> Path:
    folder = data_dir / "backups"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"inspector-{stamp}-before-{before}.db"
    dest = sqlite3.connect(str(target))
    try:
        conn.backup(dest)
    finally:
        dest.close()
    return target


def _applied(conn: sqlite3.Connection) -> list[str]:
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_sqlite_migrations'"
    ).fetchone()
    if not exists:
        return []
    rows = conn.execute(
        "SELECT name FROM _sqlite_migrations WHERE migration_set = ? ORDER BY id",
        [migrations.name],
    ).fetchall()
    return [str(r[0]) for r in rows]


def open_store(data_dir: Path | None = None, *, check: bool = True) -> Store:
    """Open (creating and migrating when needed) the store in ``data_dir``.

    Refuses a database written by a newer app (:class:`StoreVersionError`). When
    ``quick_check`` fails the store opens read-only and ``alerts`` says so.
    """
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    base.mkdir(parents=True, exist_ok=True)
    path = base / DB_NAME
    conn = _connect(path, readonly=False)
    applied = _applied(conn)
    unknown = [name for name in applied if name not in KNOWN_MIGRATIONS]
    if unknown:
        conn.close()
        raise StoreVersionError(
            f"{path} was written by a newer version of the app (unknown migrations: "
            f"{', '.join(unknown)}); update the app",
            "Este banco de dados foi gravado por uma versão mais nova do aplicativo. "
            "Atualize o aplicativo; nada foi alterado.",
        )
    alerts: list[str] = []
    readonly = False
    if check and applied:
        result = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
        if result != ["ok"]:
            conn.close()
            conn = _connect(path, readonly=True)
            readonly = True
            # One result row can hold a whole b-tree's problems, one per line.
            lines = [line for row in result for line in row.splitlines()
                     if line.strip() and not line.startswith("***")]
            alerts.append(
                "Falha na verificação de integridade do banco de dados; aberto somente para "
                f"leitura. Detalhe: {'; '.join(lines[:3])}"
            )
    db = Database(conn)
    store = Store(db=db, data_dir=base, path=path, readonly=readonly, alerts=alerts)
    if not readonly:
        pending = migrations.pending(db)
        if pending:
            if applied:
                _backup(conn, base, pending[0].name)
            migrations.apply(db)
            if store.meta("created_at") is None:
                store.set_meta("created_at", utc_now())
    return store
