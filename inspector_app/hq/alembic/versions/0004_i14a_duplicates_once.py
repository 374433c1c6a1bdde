"""Suspected duplicates: one flag per auto (issue 14, finding 6).

HQ used to write one row per pair of matching autos and per shared rule, so devices
pushing many autos for one plate and day made millions of rows. HQ now flags each auto once
(``standing._flag_duplicates``); here the extra rows an HQ already holds are removed
(keeping each auto's first flag) and ``record_id`` becomes unique.

Revision ID: 0004_i14a
Revises: 0005_i14b_blob_uploads
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004_i14a"
down_revision: str | None = "0005_i14b_blob_uploads"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.get_bind().execute(sa.text(
        "DELETE FROM suspected_duplicates WHERE id NOT IN "
        "(SELECT MIN(id) FROM suspected_duplicates GROUP BY record_id)"))
    op.drop_index("ix_suspected_duplicates_record_id", table_name="suspected_duplicates")
    op.create_index("ix_suspected_duplicates_record_id", "suspected_duplicates", ["record_id"],
                    unique=True)


def downgrade() -> None:
    op.drop_index("ix_suspected_duplicates_record_id", table_name="suspected_duplicates")
    op.create_index("ix_suspected_duplicates_record_id", "suspected_duplicates", ["record_id"])
