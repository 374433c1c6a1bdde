"""Opening the store: data folder, pragmas, migrations with a backup, integrity at start.

Caveat: the connection runs in autocommit mode (``isolation_level=None``); every write that
must be all-or-nothing goes through ``Store.atomic()`` (BEGIN IMMEDIATE … COMMIT), and with
``synchronous=FULL`` a committed transaction survives a crash or a power cut.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import secrets
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import platformdirs
from sqlite_utils import Database

from inspector_app.fileio import fsync_folder
from inspector_app.security.keys import write_new_file
from inspector_app.store import dbapi, seals
from inspector_app.store.migrations import KNOWN_MIGRATIONS, migrations

DB_NAME = "inspector.db"
DB_KEY_NAME = "inspector.db.key"
APP_NAME = "inspector-fiscalizacao"
DIR_MODE, FILE_MODE = 0o700, 0o600
_PLAINTEXT_HEADER = b"SQLite format 3\x00"

log = logging.getLogger(__name__)


class StoreError(Exception):
    """A store problem with a Portuguese message for the GUI (``message_pt``)."""

    def __init__(self, message: str, message_pt: str | None = None) -> None:
        super().__init__(message)
        self.message_pt = message_pt or message


class StoreVersionError(StoreError):
    """The database was written by a newer version of the app."""


class StoreReadOnlyError(StoreError):
    """The store was opened read-only (integrity problem) and refuses writes."""


class StoreOpenError(StoreError):
    """The database cannot be opened: damaged, truncated, not a database, or no key."""


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
    def conn(self) -> dbapi.Connection:
        return cast(dbapi.Connection, self.db.conn)

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
        except dbapi.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise translate_error(exc) from exc

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM app_meta WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        try:
            self.conn.execute(
                "INSERT INTO app_meta(key, value) VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [key, value],
            )
        except dbapi.Error as exc:  # disk full, I/O error, read-only file
            raise translate_error(exc) from exc

    def close(self) -> None:
        self.db.close()


def translate_error(exc: BaseException) -> StoreError:
    """SQLite errors as store errors with a message an inspector can act on."""
    text = str(exc)
    if isinstance(exc, dbapi.OperationalError) and "disk I/O error" in text:
        return StoreError(
            f"disk I/O error: {text}",
            "Erro de gravação no disco (E/S). Nada foi gravado pela metade: verifique o "
            "armazenamento do dispositivo e tente de novo; se persistir, chame o suporte.",
        )
    if isinstance(exc, dbapi.OperationalError) and "full" in text:
        return StoreFullError(
            f"database or disk is full: {text}",
            "Sem espaço para gravar (disco cheio). Nada foi gravado pela metade: libere "
            "espaço no dispositivo e tente de novo.",
        )
    if "append-only" in text or "sealed" in text or "never deleted" in text or (
        "outbox" in text
    ):
        return StoreError(text, "Registro selado não pode ser alterado nem apagado.")
    if isinstance(exc, dbapi.OperationalError) and "readonly" in text:
        return StoreReadOnlyError(text, "O banco de dados está em modo somente leitura.")
    return StoreError(text, f"Erro ao gravar no banco de dados: {text}")


def _secure_mode(path: Path, wanted: int) -> bool:
    """Narrow ``path``'s permissions to ``wanted``; True when they were wider."""
    try:
        st = path.lstat()
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(st.st_mode) or stat.S_IMODE(st.st_mode) & ~wanted == 0:
        return False
    os.chmod(path, stat.S_IMODE(st.st_mode) & wanted)
    return True


def secure_data_dir(base: Path) -> int:
    """The data folder and everything in it readable by this user only (0700 / 0600).

    Returns how many entries were repaired (logged, not shown: there is nothing the
    inspector must do). POSIX only: on Windows the per-user application-data folder's ACL
    is what keeps other users out.
    """
    if os.name != "posix":
        return 0
    repaired = int(_secure_mode(base, DIR_MODE))
    for root, dirs, files in os.walk(base):
        folder = Path(root)
        repaired += sum(_secure_mode(folder / d, DIR_MODE) for d in dirs)
        repaired += sum(_secure_mode(folder / f, FILE_MODE) for f in files)
    if repaired:
        log.warning("data folder %s: permissions narrowed to this user on %d entries",
                    base, repaired)
    return repaired


def _create_private(path: Path) -> None:
    """Create an empty file 0600 (SQLite gives its -wal and -shm the database's mode)."""
    if os.name == "posix" and not path.exists():
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        os.close(fd)


def _key_pragma(key: bytes) -> str:
    return f"PRAGMA key = \"x'{key.hex()}'\""


def _is_plaintext(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(16) == _PLAINTEXT_HEADER
    except FileNotFoundError:
        return False


def _read_key(key_file: Path) -> bytes:
    try:
        text = key_file.read_text(encoding="ascii").strip()
        key = bytes.fromhex(text)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise StoreOpenError(
            f"{key_file}: unreadable database key ({exc})",
            "A chave do banco de dados deste dispositivo está ilegível. Nada foi alterado; "
            "chame o suporte.",
        ) from exc
    if len(key) != 32:
        raise StoreOpenError(
            f"{key_file}: database key must be 32 bytes, found {len(key)}",
            "A chave do banco de dados deste dispositivo está danificada. Nada foi "
            "alterado; chame o suporte.",
        )
    return key


def database_key(base: Path, *, create: bool = True) -> bytes:
    """The random 256-bit key of the store in ``base`` (``inspector.db.key``, 0600),
    created with the store. An encrypted database without its key cannot be opened."""
    key_file = base / DB_KEY_NAME
    if key_file.exists():
        return _read_key(key_file)
    path = base / DB_NAME
    if path.exists() and path.stat().st_size > 0 and not _is_plaintext(path):
        raise StoreOpenError(
            f"{path} is encrypted but its key {key_file} is missing",
            "O banco de dados deste dispositivo está cifrado e a chave dele não está na "
            "pasta de dados. Nada foi alterado; chame o suporte.",
        )
    if not create:
        raise StoreError(f"{key_file}: no database key", "Chave do banco de dados ausente.")
    key = secrets.token_bytes(32)
    if not write_new_file(key_file, key.hex().encode("ascii") + b"\n", mode=FILE_MODE):
        return _read_key(key_file)  # another process created it first
    return key


def raw_connect(path: Path, key: bytes | None, *, readonly: bool = False,
                isolation_level: str | None = None) -> dbapi.Connection:
    """A bare SQLCipher connection to ``path`` (no pragmas besides the key): support tools,
    tests that play a tamperer. ``key=None`` opens a plaintext file."""
    if readonly:
        conn = dbapi.connect(f"file:{path}?mode=ro", uri=True,
                             isolation_level=isolation_level, check_same_thread=False)
    else:
        conn = dbapi.connect(str(path), isolation_level=isolation_level,
                             check_same_thread=False)
    conn.execute("PRAGMA cipher_log_level = NONE")  # errors are raised, not printed
    if key is not None:
        conn.execute(_key_pragma(key))
    return conn


def _unreadable(path: Path, exc: BaseException) -> StoreError:
    return StoreOpenError(
        f"{path}: cannot open the database ({exc}): damaged, truncated, not a database, "
        "or not this store's key",
        "Não foi possível abrir o banco de dados.",
    )


def _connect(path: Path, key: bytes, *, readonly: bool) -> dbapi.Connection:
    try:
        conn = raw_connect(path, key, readonly=readonly)
    except dbapi.Error as exc:
        raise _unreadable(path, exc) from exc
    try:
        # The first read decrypts page 1: a wrong key or a damaged header fails here.
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        conn.execute("PRAGMA busy_timeout = 5000")
        if not readonly:
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
    except dbapi.Error as exc:
        conn.close()
        raise _unreadable(path, exc) from exc
    seals.register(conn, key)
    return conn


def _table_counts(conn: dbapi.Connection, schema: str) -> dict[str, int]:
    names = [r[0] for r in conn.execute(
        f"SELECT name FROM {schema}.sqlite_master WHERE type = 'table' "
        "AND name NOT LIKE 'sqlite_%'")]
    return {n: conn.execute(f'SELECT COUNT(*) FROM {schema}."{n}"').fetchone()[0]
            for n in names}


def encrypt_plaintext(path: Path, key: bytes) -> None:
    """Rewrite a plaintext SQLite file as an encrypted one (``sqlcipher_export``).

    The encrypted copy is written beside it, checked (integrity and every table's row
    count) and renamed over the original: a crash leaves the plaintext file as it was and
    the next start tries again.
    """
    tmp = path.with_name(path.name + ".encrypting")
    for leftover in (tmp, Path(f"{tmp}-wal"), Path(f"{tmp}-shm"), Path(f"{tmp}-journal")):
        leftover.unlink(missing_ok=True)
    _create_private(tmp)
    try:
        plain = raw_connect(path, None)
    except dbapi.Error as exc:
        raise _unreadable(path, exc) from exc
    seals.register(plain, key)  # the copy's seal triggers, if any, keep working
    try:
        plain.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        version = plain.execute("PRAGMA user_version").fetchone()[0]
        plain.execute(f"ATTACH DATABASE ? AS encrypted KEY \"x'{key.hex()}'\"", [str(tmp)])
        plain.execute("SELECT sqlcipher_export('encrypted')")
        plain.execute(f"PRAGMA encrypted.user_version = {int(version)}")
        expected = _table_counts(plain, "main")
        found = _table_counts(plain, "encrypted")
        plain.execute("DETACH DATABASE encrypted")
        # Back to rollback journal so that closing leaves no -wal or -shm behind.
        plain.execute("PRAGMA journal_mode = DELETE")
    except dbapi.Error as exc:
        tmp.unlink(missing_ok=True)
        error = translate_error(exc)
        raise (error if isinstance(error, StoreFullError) else _unreadable(path, exc)) from exc
    finally:
        plain.close()
    check = raw_connect(tmp, key)
    try:
        ok = check.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    finally:
        check.close()
    if not ok or expected != found:
        tmp.unlink(missing_ok=True)
        raise StoreError(f"{path}: encrypted copy does not match the original; left as is",
                         "Não foi possível cifrar o banco de dados; nada foi alterado.")
    os.replace(tmp, path)
    for side in ("-wal", "-shm", "-journal"):
        Path(f"{path}{side}").unlink(missing_ok=True)
    fsync_folder(path.parent)


def _encrypt_legacy(base: Path, path: Path, key: bytes) -> None:
    """A store (and its backups) written before encryption: encrypt in place, once."""
    targets = [p for p in [path, *sorted((base / "backups").glob("*.db"))]
               if _is_plaintext(p)]
    for target in targets:
        encrypt_plaintext(target, key)
    if targets:
        log.warning("store %s: %d plaintext database file(s) encrypted at rest", base,
                    len(targets))


def _backup(conn: dbapi.Connection, data_dir: Path, before: str, key: bytes) -> Path:
    folder = data_dir / "backups"
    folder.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    target = folder / f"inspector-{stamp}-before-{before}.db"
    _create_private(target)
    dest = raw_connect(target, key)
    try:
        conn.backup(dest)
    finally:
        dest.close()
    return target


def _applied(conn: dbapi.Connection) -> list[str]:
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


def _integrity_problems(conn: dbapi.Connection) -> list[str]:
    """``quick_check`` lines, or SQLCipher's page authentication failures (a page altered
    on disk fails its HMAC before SQLite can look at it)."""
    try:
        result = [str(r[0]) for r in conn.execute("PRAGMA quick_check").fetchall()]
    except dbapi.Error as exc:
        result = [str(exc)]
    if result == ["ok"]:
        return []
    try:
        cipher = [str(r[0]) for r in conn.execute("PRAGMA cipher_integrity_check")]
    except dbapi.Error:
        cipher = []
    # One result row can hold a whole b-tree's problems, one per line.
    lines = [line for row in cipher + result for line in row.splitlines()
             if line.strip() and not line.startswith("***")]
    return lines or ["quick_check failed"]


def open_store(data_dir: Path | None = None, *, check: bool = True) -> Store:
    """Open (creating and migrating when needed) the store in ``data_dir``.

    The folder and its files are narrowed to this user (0700 / 0600) first; a plaintext
    database from an earlier version is encrypted in place. Refuses a database written by
    a newer app (:class:`StoreVersionError`), and one that cannot be decrypted or read
    (:class:`StoreError`). When ``quick_check`` fails the store opens read-only and
    ``alerts`` says so.
    """
    base = Path(data_dir) if data_dir is not None else default_data_dir()
    if os.name == "posix":
        # Everything this process creates from now on (blobs, key, -wal/-shm, backups,
        # exported PDFs) is this user's alone: the files hold personal data.
        os.umask(0o077)
    base.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    secure_data_dir(base)
    path = base / DB_NAME
    key = database_key(base)
    if _is_plaintext(path):
        _encrypt_legacy(base, path, key)
    elif path.exists() and path.stat().st_size == 0 and (base / "device_key.pem").exists():
        log.warning("store %s: the database file is empty but the device key remains", base)
    _create_private(path)
    conn = _connect(path, key, readonly=False)
    try:
        applied = _applied(conn)
    except dbapi.Error as exc:
        conn.close()
        raise _unreadable(path, exc) from exc
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
        lines = _integrity_problems(conn)
        if lines:
            conn.close()
            conn = _connect(path, key, readonly=True)
            readonly = True
            alerts.append(
                "Falha na verificação de integridade do banco de dados; aberto somente para "
                f"leitura. Detalhe: {'; '.join(lines[:3])}"
            )
    # sqlite-utils takes any DB-API connection object; its annotation names sqlite3's.
    db = Database(cast(sqlite3.Connection, conn))
    store = Store(db=db, data_dir=base, path=path, readonly=readonly, alerts=alerts)
    if not readonly:
        try:
            pending = migrations.pending(db)
            if pending:
                if applied:
                    _backup(conn, base, pending[0].name, key)
                migrations.apply(db)
                if store.meta("created_at") is None:
                    store.set_meta("created_at", utc_now())
        except dbapi.Error as exc:
            store.close()
            raise translate_error(exc) from exc
    return store


def connect_data_dir(data_dir: Path, *, readonly: bool = False) -> dbapi.Connection:
    """A bare connection (autocommit, no triggers disabled, foreign keys off) to the store
    in ``data_dir`` with its key: for support tools and tests that play a tamperer."""
    base = Path(data_dir)
    return raw_connect(base / DB_NAME, database_key(base, create=False), readonly=readonly)
