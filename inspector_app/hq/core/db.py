"""The database engine (SQLite or PostgreSQL) and the Alembic migrations that build it.

SQLite: WAL, ``synchronous=FULL``, foreign keys on, a busy timeout, and every transaction
started with ``BEGIN IMMEDIATE`` so that two pushes never deadlock upgrading a read lock
(and savepoints work: pysqlite's own transaction handling is switched off, as the
SQLAlchemy docs recommend). SQL parameters are hidden from error messages, so a failed
statement never puts a payload (with CPF or CNH in it) into a log.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

ALEMBIC_DIR = Path(__file__).resolve().parent.parent / "alembic"
POOL_SIZE, POOL_OVERFLOW = 10, 30


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def make_engine(database_url: str) -> Engine:
    """An engine for ``database_url``; a SQLite file's folder is created when missing."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        # A request takes a connection for its token, then one for its work, from up to 40
        # request threads (Starlette's pool): SQLAlchemy's default 5 + 10 made concurrent
        # pushes queue for a connection (``make bench``: HQ ingest, 20 devices).
        return create_engine(url, hide_parameters=True, pool_pre_ping=True,
                             pool_size=POOL_SIZE, max_overflow=POOL_OVERFLOW)
    if url.database and url.database != ":memory:":
        Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url, hide_parameters=True, connect_args={"check_same_thread": False, "timeout": 30}
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.execute("PRAGMA busy_timeout = 30000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def alembic_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    # env.py runs on this engine instead of building its own from a URL.
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine) -> None:
    """``alembic upgrade head`` on ``engine``."""
    command.upgrade(alembic_config(engine), "head")


def head_revision() -> str | None:
    return ScriptDirectory.from_config(_script_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def is_up_to_date(engine: Engine) -> bool:
    return current_revision(engine) == head_revision()


def _script_config() -> Config:
    config = Config()
    config.set_main_option("script_location", str(ALEMBIC_DIR))
    return config
