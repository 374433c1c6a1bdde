"""The web console: staff accounts, sessions, the append-only audit log, and the autos
index the Autos table searches (filled here from the records already held).

Revision ID: 0006_i15a
Revises: 0004_i14a
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006_i15a"
down_revision: str | None = "0004_i14a"
branch_labels: str | None = None
depends_on: str | None = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

_PG_REFUSE = """
CREATE OR REPLACE FUNCTION audit_log_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change();
"""


def upgrade() -> None:
    op.create_table(
        "staff",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("login", sa.String(64), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("role", sa.String(20), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("disabled_at", sa.String(40)),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_staff")),
        sa.UniqueConstraint("login", name=op.f("uq_staff_login")),
    )
    op.create_table(
        "staff_sessions",
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("staff_id", SEQ, nullable=False),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("last_seen_at", sa.String(40), nullable=False),
        sa.Column("expires_at", sa.String(40), nullable=False),
        sa.Column("ended_at", sa.String(40)),
        sa.Column("address", sa.String(64)),
        sa.ForeignKeyConstraint(["staff_id"], ["staff.id"],
                                name=op.f("fk_staff_sessions_staff_id_staff")),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_staff_sessions")),
    )
    op.create_index(op.f("ix_staff_sessions_staff_id"), "staff_sessions", ["staff_id"])
    op.create_table(
        "audit_log",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.Column("staff_id", SEQ),
        sa.Column("staff_login", sa.String(64), nullable=False),
        sa.Column("action", sa.String(60), nullable=False),
        sa.Column("target", sa.String(200)),
        sa.Column("detail", sa.Text(), nullable=False),
        sa.Column("address", sa.String(64)),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_at"), "audit_log", ["at"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_PG_REFUSE)
    else:  # SQLite (a trial HQ): no rewriting; the test kit empties tables between tests
        op.execute("CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log "
                   "BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END")
    op.create_table(
        "auto_index",
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("series", sa.String(40)),
        sa.Column("number", sa.BigInteger()),
        sa.Column("verification_code", sa.String(32), nullable=False),
        sa.Column("plate_key", sa.String(16)),
        sa.Column("plate", sa.String(16)),
        sa.Column("holder_name", sa.String(200)),
        sa.Column("holder_search", sa.String(200)),
        sa.Column("holder_document", sa.String(20)),
        sa.Column("agent_matricula", sa.String(40)),
        sa.Column("agent_name", sa.String(200)),
        sa.Column("rule_ids", sa.String(400)),
        sa.Column("organ", sa.String(80)),
        sa.Column("occurred_at", sa.String(40), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("received_at", sa.String(40), nullable=False),
        sa.Column("place", sa.String(200)),
        sa.Column("latitude", sa.String(20)),
        sa.Column("longitude", sa.String(20)),
        sa.ForeignKeyConstraint(["record_id"], ["records.id"],
                                name=op.f("fk_auto_index_record_id_records")),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_auto_index")),
    )
    for name, cols in (("ix_auto_index_occurred", ["occurred_at", "record_id"]),
                       ("ix_auto_index_plate", ["plate_key", "occurred_at"]),
                       ("ix_auto_index_agent", ["agent_matricula", "occurred_at"]),
                       ("ix_auto_index_status", ["status", "occurred_at"]),
                       ("ix_auto_index_number", ["series", "number"]),
                       ("ix_auto_index_code", ["verification_code"])):
        op.create_index(name, "auto_index", cols)
    from inspector_app.hq.autos_index import rebuild

    rebuild(op.get_bind())


def downgrade() -> None:
    op.drop_table("auto_index")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS audit_log_append_only ON audit_log")
        op.execute("DROP FUNCTION IF EXISTS audit_log_refuse_change()")
    op.drop_table("audit_log")
    op.drop_table("staff_sessions")
    op.drop_table("staff")
