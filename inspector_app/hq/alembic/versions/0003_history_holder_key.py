"""History rows indexed by permit holder: ``reference_rows.holder_key``.

HQ recomputes a holder's standing after each auto; finding the holder's history scanned
every history row's JSON. The column (set on ``history`` rows only) and its index make it
a lookup; existing history rows are filled in here.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    op.add_column("reference_rows", sa.Column("holder_key", sa.String(200), nullable=True))
    op.create_index("ix_reference_rows_holder_key", "reference_rows",
                    ["table_name", "holder_key"])
    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT key, row FROM reference_rows WHERE table_name = 'history'")).all()
    for key, text in rows:
        row = json.loads(text)
        holder, plate = row.get("holder_id"), row.get("plate_key")
        holder_key = str(holder) if holder else (f"plate:{plate}" if plate else None)
        if holder_key is not None:
            conn.execute(sa.text("UPDATE reference_rows SET holder_key = :h "
                                 "WHERE table_name = 'history' AND key = :k"),
                         {"h": holder_key, "k": key})


def downgrade() -> None:
    op.drop_index("ix_reference_rows_holder_key", table_name="reference_rows")
    op.drop_column("reference_rows", "holder_key")
