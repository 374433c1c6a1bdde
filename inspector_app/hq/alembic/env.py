"""Alembic environment: migrates the engine HQ hands over (``config.attributes["engine"]``),
or, from the ``alembic`` command line, the ``DATABASE_URL`` / ``sqlalchemy.url`` given."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Engine, text

from inspector_app.hq.core.db import make_engine
from inspector_app.hq.tables import metadata

target_metadata = metadata
# pg_advisory_xact_lock key held while migrating (any constant HQ uses for nothing else).
MIGRATION_LOCK = 0x1A5EC7


def _engine() -> Engine:
    given = context.config.attributes.get("engine")
    if isinstance(given, Engine):
        return given
    url = os.environ.get("DATABASE_URL") or context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("set DATABASE_URL (or sqlalchemy.url) to run migrations")
    return make_engine(url)


def run_migrations_online() -> None:
    with _engine().connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            if connection.dialect.name == "postgresql":
                # Two `inspector-hq init` at once (two instances upgraded together): the
                # second waits here, then finds the schema at head and does nothing.
                connection.execute(text("SELECT pg_advisory_xact_lock(:key)"),
                                   {"key": MIGRATION_LOCK})
            context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (SQL script) migrations are not supported")
run_migrations_online()
