"""Suspected duplicates: same plate, rule and day in autos from two devices.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "suspected_duplicates",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("plate_key", sa.String(16), nullable=False),
        sa.Column("rule_id", sa.String(80), nullable=False),
        sa.Column("occurred_on", sa.String(10), nullable=False),
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("other_record_id", sa.String(36), nullable=False),
        sa.Column("other_device_id", sa.String(36), nullable=False),
        sa.Column("flagged_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_suspected_duplicates")),
    )
    op.create_index(op.f("ix_suspected_duplicates_record_id"), "suspected_duplicates",
                    ["record_id"])


def downgrade() -> None:
    op.drop_table("suspected_duplicates")
