"""Rate-limit events in the database: counted across worker processes and instances.

Revision ID: 0004_i14b_rate_events
Revises: 0003
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004_i14b_rate_events"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rate_events",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("bucket", sa.String(20), nullable=False),
        sa.Column("address", sa.String(64), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rate_events")),
    )
    op.create_index("ix_rate_events_bucket_address_at", "rate_events",
                    ["bucket", "address", "at"])
    op.create_index("ix_rate_events_at", "rate_events", ["at"])


def downgrade() -> None:
    op.drop_table("rate_events")
