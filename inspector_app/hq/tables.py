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
    # Every push or pull (Alembic 0006_i15c), and the records the device said on its last
    # pull it still had to send (NULL: an older device that does not say).
    Column("last_contact_at", String(40)),
    Column("pending_reported", Integer),
    Column("pending_reported_at", String(40)),
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
    # The termos de retenção still open (the Painel's vehicles held); Alembic 0006_i15c.
    Index("ix_records_kind_created_at", "kind", "created_at"),
    # The duplicate check reads one (plate, day): an index range, however many autos the
    # plate has had on other days (Alembic 0006_i19; it replaced the plate-only index).
    Index("ix_records_plate_key_occurred_on", "plate_key", "occurred_on"),
)

# The rules of each auto de infração, once each: the Painel's count by rule (its órgão,
# agent and place it counts from ``auto_index``). Alembic 0006_i15c.
record_rules = Table(
    "record_rules",
    metadata,
    Column("record_id", String(36), ForeignKey("records.id"), primary_key=True),
    Column("rule_id", String(80), primary_key=True),
    Column("occurred_on", String(10)),
    Index("ix_record_rules_occurred_on_rule", "occurred_on", "rule_id"),
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
    # The rule, for the facts that count without a time window (art. 39 II: drunkenness,
    # gap G16): read whatever their date, never expired from the devices.
    Column("rule_id", String(80)),
    Index("ix_history_facts_holder_key_date", "holder_key", "date"),
    Index("ix_history_facts_holder_key_rule_id", "holder_key", "rule_id"),
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
    # A supervisor's decision in the console (Alembic 0006_i15c): ``distinct`` or
    # ``duplicate``, with the reason; NULL while nobody looked.
    Column("resolution", String(20)),
    Column("resolution_reason", Text),
    Column("resolved_by", String(80)),
    Column("resolved_at", String(40)),
    Index("ix_suspected_duplicates_resolution", "resolution", "id"),
)

# Registry files uploaded in the console: what each published and its row errors (the CSV
# the administrator downloads from the result page).
registry_imports = Table(
    "registry_imports",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("at", String(40), nullable=False),
    Column("staff_login", String(80), nullable=False),
    Column("filename", String(200), nullable=False),
    Column("size", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    Column("published", Integer, nullable=False),
    Column("unchanged", Integer, nullable=False),
    Column("error_count", Integer, nullable=False),
    Column("warning_count", Integer, nullable=False),
    Column("summary", Text, nullable=False),
    Column("problems_csv", Text, nullable=False),
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

# Every file HQ has, written once the store made it visible (hq/blob_index.py): answers
# "which of these files are missing?" with one query instead of one object-store request per
# file. ``size`` is NULL only for rows filled by the migration from records of files whose
# size HQ did not note.
blob_index = Table(
    "blob_index",
    metadata,
    Column("sha256", String(64), primary_key=True),
    Column("size", BigInteger, nullable=True),
    Column("stored_at", String(40), nullable=False),
)

# The process after an auto (issue 15, hq/process.py; rules in domain/process.py): every
# act the console records is a new row, never changed nor deleted (PostgreSQL triggers
# refuse it). ``on`` is the act's legal date; ``data`` its fields as JSON; ``actor`` the
# staff login, with the role and address it acted from.
process_events = Table(
    "process_events",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("record_id", String(36), ForeignKey("records.id"), nullable=False, index=True),
    Column("kind", String(20), nullable=False),
    Column("on", String(10), nullable=False),
    Column("data", Text, nullable=False),
    Column("actor", String(80), nullable=False),
    Column("actor_role", String(20), nullable=False),
    Column("address", String(64)),
    Column("at", String(40), nullable=False),
)

# Files sent with a defence or an appeal: the bytes in the BlobStore (named by SHA-256),
# the name and type the clerk uploaded them with here.
process_attachments = Table(
    "process_attachments",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("event_id", BigInteger, ForeignKey("process_events.id"), nullable=False, index=True),
    Column("sha256", String(64), nullable=False, index=True),
    Column("filename", String(200), nullable=False),
    Column("content_type", String(100), nullable=False),
    Column("size", BigInteger, nullable=False),
)

# Where each auto's process stands (derived from process_events in the same transaction,
# for the queues): the step, the nearest deadline and its kind.
process_state = Table(
    "process_state",
    metadata,
    Column("record_id", String(36), ForeignKey("records.id"), primary_key=True),
    Column("step", String(20), nullable=False),
    Column("next_kind", String(20)),
    Column("next_due", String(10)),
    Column("holder_key", String(200)),
    Column("updated_at", String(40), nullable=False),
    Index("ix_process_state_step_due", "step", "next_due"),
)

# The authority's decisions on cassação proposals (Decreto 15.154/1993, art. 39): open a
# cassação process or archive the proposal, with the reasons and the standing it rested
# on. Append-only; the latest per holder is published in its ``standing`` row.
cassacao_decisions = Table(
    "cassacao_decisions",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("holder_key", String(200), nullable=False, index=True),
    Column("decision", String(20), nullable=False),
    Column("reasons", Text, nullable=False),
    Column("proposal", Text, nullable=False),
    Column("autos", Text, nullable=False),
    Column("actor", String(80), nullable=False),
    Column("at", String(40), nullable=False),
)

# --- the web console (inspector_app/hq/console/, Alembic 0006_i15a) ------------------------

# HQ staff who log in to the console (not agents, not devices): argon2id password hashes.
staff = Table(
    "staff",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("login", String(64), nullable=False, unique=True),
    Column("name", String(200), nullable=False),
    Column("role", String(20), nullable=False),
    Column("password_hash", Text, nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("disabled_at", String(40)),
)

# Console sessions, in the database so every HQ instance and worker sees them. The cookie
# holds a random token; only its SHA-256 is stored.
staff_sessions = Table(
    "staff_sessions",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("staff_id", SeqInteger, ForeignKey("staff.id"), nullable=False, index=True),
    Column("csrf_token", String(64), nullable=False),
    Column("created_at", String(40), nullable=False),
    Column("last_seen_at", String(40), nullable=False),
    Column("expires_at", String(40), nullable=False),
    Column("ended_at", String(40)),
    Column("address", String(64)),
)

# Every state-changing console action, append-only (a PostgreSQL trigger refuses UPDATE
# and DELETE): who, when, what, on what, from where.
audit_log = Table(
    "audit_log",
    metadata,
    Column("id", SeqInteger, primary_key=True, autoincrement=True),
    Column("at", String(40), nullable=False, index=True),
    Column("staff_id", SeqInteger),
    Column("staff_login", String(64), nullable=False),
    Column("action", String(60), nullable=False),
    Column("target", String(200)),
    Column("detail", Text, nullable=False),
    Column("address", String(64)),
)

# One row per auto (infração, vistoria) HQ holds: the fields the console's table filters
# and sorts on, read from the signed payload at ingest (hq/autos_index.py). Derived data:
# the payload in ``records`` stays the truth.
auto_index = Table(
    "auto_index",
    metadata,
    Column("record_id", String(36), ForeignKey("records.id"), primary_key=True),
    Column("kind", String(40), nullable=False),
    Column("device_id", String(36), nullable=False),
    Column("series", String(40)),
    Column("number", BigInteger),
    Column("verification_code", String(32), nullable=False),
    Column("plate_key", String(16)),
    Column("plate", String(16)),
    Column("holder_name", String(200)),
    Column("holder_search", String(200)),
    Column("holder_document", String(20)),
    Column("agent_matricula", String(40)),
    Column("agent_name", String(200)),
    Column("rule_ids", String(400)),
    Column("organ", String(80)),
    Column("occurred_at", String(40), nullable=False),
    Column("status", String(20), nullable=False),
    Column("received_at", String(40), nullable=False),
    Column("place", String(200)),
    Column("latitude", String(20)),
    Column("longitude", String(20)),
    Index("ix_auto_index_occurred", "occurred_at", "record_id"),
    Index("ix_auto_index_plate", "plate_key", "occurred_at"),
    Index("ix_auto_index_agent", "agent_matricula", "occurred_at"),
    Index("ix_auto_index_status", "status", "occurred_at"),
    Index("ix_auto_index_number", "series", "number"),
    Index("ix_auto_index_code", "verification_code"),
)

# The Painel's counts of a day or a month by órgão, agent and place read these indexes
# alone (index-only scans on PostgreSQL); Alembic 0006_i15c.
Index("ix_auto_index_kind_organ", auto_index.c.kind, auto_index.c.occurred_at,
      auto_index.c.organ)
Index("ix_auto_index_kind_agent", auto_index.c.kind, auto_index.c.occurred_at,
      auto_index.c.agent_matricula)
Index("ix_auto_index_kind_place", auto_index.c.kind, auto_index.c.occurred_at,
      auto_index.c.place)
