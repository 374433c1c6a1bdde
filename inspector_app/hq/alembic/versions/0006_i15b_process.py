"""The process after the auto and the cassação decisions (issue 15, part B).

Revision ID: 0006_i15b
Revises: 0006_i15c
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006_i15b"
down_revision: str | None = "0006_i15c"
branch_labels: str | None = None
depends_on: str | None = None

SeqInteger = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
APPEND_ONLY = ("process_events", "process_attachments", "cassacao_decisions")


def upgrade() -> None:
    op.create_table(
        "process_events",
        sa.Column("id", SeqInteger, autoincrement=True, nullable=False),
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("on", sa.String(10), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(80), nullable=False),
        sa.Column("actor_role", sa.String(20), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.Column("at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"],
                                name=op.f("fk_process_events_record_id_records")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_process_events")),
    )
    op.create_index(op.f("ix_process_events_record_id"), "process_events", ["record_id"])
    op.create_table(
        "process_attachments",
        sa.Column("id", SeqInteger, autoincrement=True, nullable=False),
        sa.Column("event_id", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("filename", sa.String(200), nullable=False),
        sa.Column("content_type", sa.String(100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(["event_id"], ["process_events.id"],
                                name=op.f("fk_process_attachments_event_id_process_events")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_process_attachments")),
    )
    op.create_index(op.f("ix_process_attachments_event_id"), "process_attachments",
                    ["event_id"])
    op.create_index(op.f("ix_process_attachments_sha256"), "process_attachments", ["sha256"])
    op.create_table(
        "process_state",
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("step", sa.String(20), nullable=False),
        sa.Column("next_kind", sa.String(20)),
        sa.Column("next_due", sa.String(10)),
        sa.Column("holder_key", sa.String(200)),
        sa.Column("updated_at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"],
                                name=op.f("fk_process_state_record_id_records")),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_process_state")),
    )
    op.create_index("ix_process_state_step_due", "process_state", ["step", "next_due"])
    op.create_table(
        "cassacao_decisions",
        sa.Column("id", SeqInteger, autoincrement=True, nullable=False),
        sa.Column("holder_key", sa.String(200), nullable=False),
        sa.Column("decision", sa.String(20), nullable=False),
        sa.Column("reasons", sa.Text(), nullable=False),
        sa.Column("proposal", sa.Text(), nullable=False),
        sa.Column("autos", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(80), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cassacao_decisions")),
    )
    op.create_index(op.f("ix_cassacao_decisions_holder_key"), "cassacao_decisions",
                    ["holder_key"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute("""CREATE FUNCTION refuse_change_i15b() RETURNS trigger AS $$
            BEGIN RAISE EXCEPTION '% is append-only', TG_TABLE_NAME; END $$ LANGUAGE plpgsql""")
        for table in APPEND_ONLY:
            op.execute(f"CREATE TRIGGER {table}_append_only BEFORE UPDATE OR DELETE ON {table} "
                       "FOR EACH ROW EXECUTE FUNCTION refuse_change_i15b()")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        for table in APPEND_ONLY:
            op.execute(f"DROP TRIGGER IF EXISTS {table}_append_only ON {table}")
        op.execute("DROP FUNCTION IF EXISTS refuse_change_i15b()")
    for table in ("cassacao_decisions", "process_state", "process_attachments",
                  "process_events"):
        op.drop_table(table)
