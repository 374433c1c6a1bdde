"""Initial HQ schema: devices, enrolment codes, number ranges, records and receipts,
reference rows and the pull log.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None

SEQ = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "devices",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("public_key", sa.String(64), nullable=False),
        sa.Column("key_id", sa.String(16), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False),
        sa.Column("enrolled_at", sa.String(40), nullable=False),
        sa.Column("enrolled_from", sa.String(64), nullable=True),
        sa.Column("revoked_at", sa.String(40), nullable=True),
        sa.Column("last_seen_at", sa.String(40), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_devices")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_devices_token_hash")),
    )
    op.create_index(op.f("ix_devices_key_id"), "devices", ["key_id"])

    op.create_table(
        "enrolment_codes",
        sa.Column("code_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.String(40), nullable=False),
        sa.Column("expires_at", sa.String(40), nullable=False),
        sa.Column("series", sa.String(40), nullable=False),
        sa.Column("range_size", sa.Integer(), nullable=False),
        sa.Column("used_at", sa.String(40), nullable=True),
        sa.Column("device_id", sa.String(36), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_enrolment_codes_device_id_devices")
        ),
        sa.PrimaryKeyConstraint("code_hash", name=op.f("pk_enrolment_codes")),
    )

    op.create_table(
        "number_ranges",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("series", sa.String(40), nullable=False),
        sa.Column("first", sa.BigInteger(), nullable=False),
        sa.Column("last", sa.BigInteger(), nullable=False),
        sa.Column("allocated_at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_number_ranges_device_id_devices")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_number_ranges")),
    )
    op.create_index(op.f("ix_number_ranges_device_id"), "number_ranges", ["device_id"])
    op.create_index("ix_number_ranges_series_first", "number_ranges", ["series", "first"])

    op.create_table(
        "records",
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("series", sa.String(40), nullable=True),
        sa.Column("number", sa.BigInteger(), nullable=True),
        sa.Column("created_at", sa.String(64), nullable=False),
        sa.Column("received_at", sa.String(40), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("signature", sa.Text(), nullable=False),
        sa.Column("verification_code", sa.String(32), nullable=False),
        sa.Column("refers_to", sa.String(36), nullable=True),
        sa.Column("plate_key", sa.String(16), nullable=True),
        sa.Column("occurred_on", sa.String(10), nullable=True),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_records_device_id_devices")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_records")),
        sa.UniqueConstraint("series", "number", name="uq_records_series_number"),
        sa.UniqueConstraint("verification_code", name=op.f("uq_records_verification_code")),
    )
    op.create_index(op.f("ix_records_device_id"), "records", ["device_id"])
    op.create_index(op.f("ix_records_plate_key"), "records", ["plate_key"])
    op.create_index(op.f("ix_records_refers_to"), "records", ["refers_to"])

    op.create_table(
        "record_blobs",
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"], ["records.id"], name=op.f("fk_record_blobs_record_id_records")
        ),
        sa.PrimaryKeyConstraint("record_id", "sha256", name=op.f("pk_record_blobs")),
    )

    op.create_table(
        "receipts",
        sa.Column("id", SEQ, autoincrement=True, nullable=False),
        sa.Column("record_id", sa.String(36), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_receipts_device_id_devices")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_receipts")),
    )
    op.create_index(op.f("ix_receipts_record_id"), "receipts", ["record_id"])

    op.create_table(
        "reference_rows",
        sa.Column("table_name", sa.String(40), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("row", sa.Text(), nullable=False),
        sa.Column("deleted", sa.Boolean(), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("table_name", "key", name=op.f("pk_reference_rows")),
    )

    op.create_table(
        "changes",
        sa.Column("seq", SEQ, autoincrement=True, nullable=False),
        sa.Column("table_name", sa.String(40), nullable=False),
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("op", sa.String(10), nullable=False),
        sa.Column("row", sa.Text(), nullable=False),
        sa.Column("device_id", sa.String(36), nullable=True),
        sa.Column("at", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_changes_device_id_devices")
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_changes")),
    )
    op.create_index(op.f("ix_changes_device_id"), "changes", ["device_id"])


def downgrade() -> None:
    for table in ("changes", "reference_rows", "receipts", "record_blobs", "records",
                  "number_ranges", "enrolment_codes", "devices"):
        op.drop_table(table)
