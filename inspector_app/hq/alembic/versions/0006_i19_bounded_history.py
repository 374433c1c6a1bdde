"""HQ bounded by the law's windows, not by history (issue 19).

* ``history_facts``: HQ's narrow copy of every history row, indexed by holder and date, so
  a standing reads only the rows inside the widest window (``standing._window_histories``);
  filled here from the live history rows.
* ``pull_compactions``: the compaction points of the pull log (``inspector-hq compact``).
* ``records``: the plate-only index becomes (plate, day), what the duplicate check reads.
* ``changes``: the device index only covers the device-only changes.

Revision ID: 0006_i19
Revises: 0006_i15b
Create Date: 2026-12-02
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision: str = "0006_i19"
down_revision: str | None = "0006_i15b"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "history_facts",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("holder_key", sa.String(200), nullable=False),
        sa.Column("date", sa.String(10), nullable=False),
        sa.Column("status", sa.String(40)),
        sa.Column("row", sa.Text(), nullable=False),
        sa.Column("rule_id", sa.String(80)),
        sa.PrimaryKeyConstraint("key", name="pk_history_facts"),
    )
    op.create_index("ix_history_facts_holder_key_date", "history_facts",
                    ["holder_key", "date"])
    op.create_index("ix_history_facts_holder_key_rule_id", "history_facts",
                    ["holder_key", "rule_id"])
    op.create_table(
        "pull_compactions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                  autoincrement=True, nullable=False),
        sa.Column("floor_seq", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("removed", sa.BigInteger(), nullable=False),
        sa.Column("expired", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_pull_compactions"),
    )
    with op.batch_alter_table("devices") as batch:
        batch.add_column(sa.Column("pull_compaction", sa.BigInteger(), nullable=False,
                                   server_default="0"))
    op.drop_index("ix_records_plate_key", table_name="records")
    op.create_index("ix_records_plate_key_occurred_on", "records", ["plate_key", "occurred_on"])
    op.drop_index("ix_changes_device_id", table_name="changes")
    op.create_index("ix_changes_device_id", "changes", ["device_id"],
                    postgresql_where=sa.text("device_id IS NOT NULL"),
                    sqlite_where=sa.text("device_id IS NOT NULL"))
    conn = op.get_bind()
    facts = []
    for key, text, holder_key in conn.execute(sa.text(
            "SELECT key, row, holder_key FROM reference_rows "
            "WHERE table_name = 'history' AND deleted = :no"), {"no": False}).all():
        row = json.loads(text)
        if holder_key and isinstance(row.get("date"), str):
            rule = row.get("rule_id")
            facts.append({"k": key, "h": holder_key, "d": row["date"][:10],
                          "s": row.get("status"), "r": text,
                          "u": str(rule)[:80] if rule is not None else None})
        if len(facts) >= 5000:
            _insert(conn, facts)
            facts = []
    _insert(conn, facts)


def _insert(conn: sa.Connection, facts: list[dict[str, object]]) -> None:
    if facts:
        conn.execute(sa.text("INSERT INTO history_facts (key, holder_key, date, status, row, "
                             "rule_id) VALUES (:k, :h, :d, :s, :r, :u)"), facts)


def downgrade() -> None:
    op.drop_index("ix_changes_device_id", table_name="changes")
    op.create_index("ix_changes_device_id", "changes", ["device_id"])
    op.drop_index("ix_records_plate_key_occurred_on", table_name="records")
    op.create_index("ix_records_plate_key", "records", ["plate_key"])
    op.drop_table("pull_compactions")
    op.drop_index("ix_history_facts_holder_key_rule_id", table_name="history_facts")
    with op.batch_alter_table("devices") as batch:
        batch.drop_column("pull_compaction")
    op.drop_index("ix_history_facts_holder_key_date", table_name="history_facts")
    op.drop_table("history_facts")
