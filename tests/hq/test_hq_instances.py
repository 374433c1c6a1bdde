"""HQ as several instances on one PostgreSQL database: nothing an instance needs is kept in
its own process."""

from __future__ import annotations

import subprocess
import sys

from hqkit import database_url
from sqlalchemy import text

from inspector_app.hq.core.db import head_revision, make_engine


def test_two_inits_at_once_migrate_the_database_once(tmp_path):
    """Two instances upgraded together both run `inspector-hq init` (two processes): the
    migration lock makes the second wait and find the schema at head (without it, both
    create the tables and one fails)."""
    with database_url("postgresql", tmp_path) as url:
        inits = [subprocess.Popen(
            [sys.executable, "-m", "inspector_app.hq.cli", "init", "--database-url", url,
             "--data-dir", str(tmp_path / f"instance{i}")],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        outputs = [p.communicate(timeout=120) for p in inits]
        assert [p.returncode for p in inits] == [0, 0], [err for _, err in outputs]
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                versions = conn.execute(text("SELECT version_num FROM alembic_version")).all()
        finally:
            engine.dispose()
        assert versions == [(head_revision(),)]
