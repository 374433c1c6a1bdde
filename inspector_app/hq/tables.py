"""The HQ schema as SQLAlchemy Core tables; Alembic's migrations build exactly this.

Times HQ sets are ISO 8601 UTC strings (``at`` columns), so SQLite and PostgreSQL store and
compare them the same way. A record's ``created_at`` is the device's, copied from the signed
envelope.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)

# One naming convention so Alembic migrations name constraints the same on both databases.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(column_0_label)s",
        "uq": "uq_%(table_name)s_%(column_0_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# SQLite only auto-increments an INTEGER PRIMARY KEY; PostgreSQL gets a 64-bit identity.
SeqInteger = BigInteger().with_variant(Integer(), "sqlite")

devices = Table(
    "devices",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(200), nullable=False),
    Column("public_key", String(64), nullable=False),
    Column("key_id", String(16), nullable=False, index=True),
    # SHA-256 of the bearer token: the token itself is never stored.
    Column("token_hash", String(64), nullable=False, unique=True),
    Column("enrolled_at", String(40), nullable=False),
    Column("enrolled_from", String(64)),
    Column("revoked_at", String(40)),
    Column("last_seen_at", String(40)),
    # The latest pull-log compaction this device pulled after (pull_compactions.id): a
    # cursor behind that compaction's floor is then its own snapshot in progress, not a
    # cursor from before it (Alembic 0006_i19).
    Column("pull_compaction", BigInteger, nullable=False, server_default="0"),
)

enrolment_codes = Table(
    "enrolment_codes",
    metadata,
    Column("code_hash", String(64), primary_key=True),
    Column("created_at", String(40), nullable=False),
    Column("expires_at", String(40), nullable=False),
    Column("series", String(40), nullable=False),
    Column("range_size", Integer, nullable=False),
    Column("used_at", String(40)),
    Column("device_id", String(36), ForeignKey("devices.id")),
)

number_ranges = Table(
    "number_ranges",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("device_id", String(36), ForeignKey("devices.id"), nullable=False, index=True),
    Column("series", String(40), nullable=False),
    Column("first", BigInteger, nullable=False),
    Column("last", BigInteger, nullable=False),
    Column("allocated_at", String(40), nullable=False),
    Index("ix_number_ranges_series_first", "series", "first"),
)

records = Table(
    "records",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("device_id", String(36), ForeignKey("devices.id"), nullable=False, index=True),
    Column("kind", String(40), nullable=False),
    Column("series", String(40)),
    Column("number", BigInteger),
    Column("created_at", String(64), nullable=False),
    Column("received_at", String(40), nullable=False),
    Column("payload", Text, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("signature", Text, nullable=False),
    Column("verification_code", String(32), nullable=False, unique=True),
    Column("refers_to", String(36), index=True),
    Column("plate_key", String(16)),
    Column("occurred_on", String(10)),
    UniqueConstraint("series", "number", name="uq_records_series_number"),
    # The duplicate check reads one (plate, day): an index range, however many autos the
    # plate has had on other days (Alembic 0006_i19; it replaced the plate-only index).
    Index("ix_records_plate_key_occurred_on", "plate_key", "occurred_on"),
)

record_blobs = Table(
    "record_blobs",
    metadata,
    Column("record_id", String(36), ForeignKey("records.id"), primary_key=True),
    Column("sha256", String(64), primary_key=True),
)

# Every answer HQ gave to a pushed record, written in the transaction that stored it.
receipts = Table(
    "receipts",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("record_id", String(36), nullable=False, index=True),
    Column("device_id", String(36), ForeignKey("devices.id"), nullable=False),
    Column("status", String(20), nullable=False),
    Column("reason", Text),
    Column("sha256", String(64), nullable=False),
    Column("at", String(40), nullable=False),
)

# Current reference data (HQ-owned), one JSON row per (table, key). ``holder_key`` is set on
# ``history`` rows (the permit holder's id, else ``plate:<plate_key>``) so a holder's
# history is an index lookup when HQ recomputes the standing.
reference_rows = Table(
    "reference_rows",
    metadata,
    Column("table_name", String(40), primary_key=True),
    Column("key", String(200), primary_key=True),
    Column("row", Text, nullable=False),
    Column("deleted", Boolean, nullable=False, default=False),
    Column("seq", BigInteger, nullable=False),
    Column("holder_key", String(200)),
    Index("ix_reference_rows_holder_key", "table_name", "holder_key"),
)

# The pull log: every upsert and tombstone in server order. ``device_id`` set means the
# change is for that device only (its number ranges).
changes = Table(
    "changes",
    metadata,
    Column("seq", SeqInteger, primary_key=True, autoincrement=True),
    Column("table_name", String(40), nullable=False),
    Column("key", String(200), nullable=False),
    Column("op", String(10), nullable=False),
    Column("row", Text, nullable=False),
    Column("device_id", String(36), ForeignKey("devices.id")),
    Column("at", String(40), nullable=False),
    # Only the few device-only changes are indexed by device (Alembic 0006_i19): every
    # published change used to add an entry to this index for nothing.
    Index("ix_changes_device_id", "device_id", postgresql_where=text("device_id IS NOT NULL"),
          sqlite_where=text("device_id IS NOT NULL")),
)

# The pull log's compaction points (``inspector-hq compact``, hq/compaction.py): changes up
# to ``floor_seq`` were compacted (superseded upserts and tombstones removed), so a device
# whose cursor is behind the latest floor gets a snapshot before the log.
pull_compactions = Table(
    "pull_compactions",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("floor_seq", BigInteger, nullable=False),
    Column("at", String(40), nullable=False),
    Column("removed", BigInteger, nullable=False),
    Column("expired", BigInteger, nullable=False),
)

# HQ's own copy of every ``history`` row, narrow and indexed by holder and date, for the
# standing (hq/standing.py): a standing reads only the rows inside the widest window of
# the law, found by an index range, however long the holder's history. A row expired from
# the devices' copies (a tombstone in the pull log, hq/compaction.py) stays here: it is
# still a fact of the holder's history at HQ. ``row`` is the published row's JSON.
history_facts = Table(
    "history_facts",
    metadata,
    Column("key", String(200), primary_key=True),
    Column("holder_key", String(200), nullable=False),
    Column("date", String(10), nullable=False),
    Column("status", String(40)),
    Column("row", Text, nullable=False),
    Index("ix_history_facts_holder_key_date", "holder_key", "date"),
)

# The same plate with the same rule on the same day in autos from two different devices:
# flagged for a human to look at (``inspector-hq report``), never merged or rejected.
suspected_duplicates = Table(
    "suspected_duplicates",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("plate_key", String(16), nullable=False),
    Column("rule_id", String(80), nullable=False),
    Column("occurred_on", String(10), nullable=False),
    # One flag per auto (Alembic 0004_i14a): against the earliest matching auto received.
    Column("record_id", String(36), nullable=False, index=True, unique=True),
    Column("device_id", String(36), nullable=False),
    Column("other_record_id", String(36), nullable=False),
    Column("other_device_id", String(36), nullable=False),
    Column("flagged_at", String(40), nullable=False),
)

# Rate-limited events (a failed enrolment, a public verification) per client address, kept
# for the limit's window: counted in the database so every worker process and every HQ
# instance on the same database sees the same count (hq/ratelimit.py).
rate_events = Table(
    "rate_events",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("bucket", String(20), nullable=False),
    Column("address", String(64), nullable=False),
    Column("at", String(40), nullable=False),
    Index("ix_rate_events_bucket_address_at", "bucket", "address", "at"),
    Index("ix_rate_events_at", "at"),
)

# Who uploaded each file first, and its size: a device's files that no record references
# yet count against its quota (``blob_quota_bytes`` / ``blob_quota_files``), so one
# credential cannot fill HQ's disk with files nothing uses (hq/blob_quota.py).
blob_uploads = Table(
    "blob_uploads",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("device_id", String(36), ForeignKey("devices.id"), nullable=False, index=True),
    Column("size", BigInteger, nullable=False),
    Column("at", String(40), nullable=False),
)
