"""HQ console, Painel and Administração (issue 15 part C).

* ``record_rules``: the rules of each auto (hq/record_facts.py), so the Painel counts
  autos by rule from an index (by órgão, agent and place it counts ``auto_index``, 0006_i15a);
  an index on ``records (kind, created_at)`` finds the termos de retenção (vehicles held);
  ``auto_index (kind, occurred_at, organ | agent_matricula | place)`` make the counts by
  órgão, agent and place index-only scans.
* ``devices`` gains ``last_contact_at`` and the pending count the device reported on its
  last pull (``pending_reported`` / ``pending_reported_at``; NULL for an older device).
* ``suspected_duplicates`` gains its resolution by a supervisor (distinct / duplicate, the
  reason, who and when).
* ``registry_imports``: every registry file uploaded in the console, with its row errors
  (the CSV the administrator downloads).

Rows stored before this revision are filled from their payloads here (batches of 1000).

Revision ID: 0006_i15c
Revises: 0006_i15a
Create Date: 2026-12-02
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0006_i15c"
down_revision: str | None = "0006_i15a"
branch_labels: str | None = None
depends_on: str | None = None

SeqInteger = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_index("ix_records_kind_created_at", "records", ["kind", "created_at"])
    for name, column in (("organ", "organ"), ("agent", "agent_matricula"), ("place", "place")):
        op.create_index(f"ix_auto_index_kind_{name}", "auto_index",
                        ["kind", "occurred_at", column])
    op.create_table(
        "record_rules",
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("rule_id", sa.String(80), nullable=False),
        sa.Column("occurred_on", sa.String(10)),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"],
                                name=op.f("fk_record_rules_record_id_records")),
        sa.PrimaryKeyConstraint("record_id", "rule_id", name=op.f("pk_record_rules")),
    )
    op.create_index("ix_record_rules_occurred_on_rule", "record_rules",
                    ["occurred_on", "rule_id"])
    with op.batch_alter_table("devices") as batch:
        batch.add_column(sa.Column("last_contact_at", sa.String(40)))
        batch.add_column(sa.Column("pending_reported", sa.Integer()))
        batch.add_column(sa.Column("pending_reported_at", sa.String(40)))
    with op.batch_alter_table("suspected_duplicates") as batch:
        batch.add_column(sa.Column("resolution", sa.String(20)))
        batch.add_column(sa.Column("resolution_reason", sa.Text()))
        batch.add_column(sa.Column("resolved_by", sa.String(80)))
        batch.add_column(sa.Column("resolved_at", sa.String(40)))
    op.create_index("ix_suspected_duplicates_resolution", "suspected_duplicates",
                    ["resolution", "id"])
    op.create_table(
        "registry_imports",
        sa.Column("id", SeqInteger, autoincrement=True, nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("staff_login", sa.String(80), nullable=False),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("published", sa.Integer(), nullable=False),
        sa.Column("unchanged", sa.Integer(), nullable=False),
        sa.Column("error_count", sa.Integer(), nullable=False),
        sa.Column("warning_count", sa.Integer(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=False),
        sa.Column("problems_csv", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registry_imports")),
    )
    _backfill()


def _backfill() -> None:
    """The rules of the autos already held (the same reading ingest makes,
    ``hq/record_facts.py``)."""
    from inspector_app.hq.record_facts import rule_rows

    conn = op.get_bind()
    records = sa.table("records", sa.column("id"), sa.column("kind"), sa.column("payload"))
    rules = sa.table("record_rules", sa.column("record_id"), sa.column("rule_id"),
                     sa.column("occurred_on"))
    last = ""
    while True:
        batch = conn.execute(sa.select(records.c.id, records.c.payload)
                             .where(records.c.id > last, records.c.kind == "auto_infracao")
                             .order_by(records.c.id)
                             .limit(1000)).all()
        if not batch:
            return
        last = batch[-1].id
        new_rules: list[dict[str, Any]] = []
        for row in batch:
            try:
                envelope = json.loads(row.payload)
            except ValueError:
                continue
            if isinstance(envelope, dict):
                new_rules += rule_rows(envelope, row.id)
        if new_rules:
            conn.execute(sa.insert(rules), new_rules)


def downgrade() -> None:
    op.drop_table("registry_imports")
    op.drop_index("ix_suspected_duplicates_resolution", "suspected_duplicates")
    with op.batch_alter_table("suspected_duplicates") as batch:
        for name in ("resolved_at", "resolved_by", "resolution_reason", "resolution"):
            batch.drop_column(name)
    with op.batch_alter_table("devices") as batch:
        for name in ("pending_reported_at", "pending_reported", "last_contact_at"):
            batch.drop_column(name)
    op.drop_table("record_rules")
    op.drop_index("ix_records_kind_created_at", "records")
    for name in ("organ", "agent", "place"):
        op.drop_index(f"ix_auto_index_kind_{name}", "auto_index")
