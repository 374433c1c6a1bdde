"""The list of files HQ has (``blob_index``), so that "which are missing?" is one query.

Filled from what HQ already knows: every file a device uploaded since ``blob_uploads``
exists (with its size) and every file an accepted record names (size unknown, NULL). Files
stored before either is noted are found by ``inspector-hq blobs reindex`` (an object store)
or looked up on the way (the folder).

Revision ID: 0006_i18_blob_index
Revises: 0004_i14a
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006_i18_blob_index"
down_revision: str | None = "0004_i14a"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.create_table(
        "blob_index",
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=True),
        sa.Column("stored_at", sa.String(40), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_blob_index")),
    )
    op.execute("INSERT INTO blob_index (sha256, size, stored_at) "
               "SELECT sha256, size, at FROM blob_uploads")
    op.execute("INSERT INTO blob_index (sha256, size, stored_at) "
               "SELECT rb.sha256, NULL, MIN(r.received_at) FROM record_blobs rb "
               "JOIN records r ON r.id = rb.record_id "
               "WHERE NOT EXISTS (SELECT 1 FROM blob_index b WHERE b.sha256 = rb.sha256) "
               "GROUP BY rb.sha256")


def downgrade() -> None:
    op.drop_table("blob_index")
