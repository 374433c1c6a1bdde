"""Who uploaded each file: the per-device quota on files no record references.

Files stored before this revision have no row: they count against nobody.

Revision ID: 0005_i14b_blob_uploads
Revises: 0004_i14b_rate_events
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005_i14b_blob_uploads"
down_revision: str | None = "0004_i14b_rate_events"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "blob_uploads",
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(["device_id"], ["devices.id"],
                                name=op.f("fk_blob_uploads_device_id_devices")),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blob_uploads")),
    )
    op.create_index(op.f("ix_blob_uploads_device_id"), "blob_uploads", ["device_id"])


def downgrade() -> None:
    op.drop_table("blob_uploads")
