"""Named, append-only schema migrations (sqlite-utils ``Migrations``).

Never edit a migration that has shipped: add a new one. Each runs in a transaction together
with the record of it having been applied; ``db.open_store`` backs the file up first.

Two kinds of data, never mixed (DESIGN.md §4):

* reference data owned by HQ (``ref_*`` tables): replaced by imports and, later, sync pulls;
* field records owned by the device: ``inspections`` and ``answers`` while an inspection is
  open, then sealed ``records`` with their ``journal`` entry, ``number_usage`` and ``outbox``
  row. Triggers refuse UPDATE and DELETE of sealed rows, also from raw SQL.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("inspector")

REFERENCE_TABLES = (
    "ref_permit_holders",
    "ref_vehicles",
    "ref_drivers",
    "ref_lines",
    "ref_inspectors",
    "ref_history",
    "ref_parameters",
    "ref_pack_versions",
    "ref_standing",
)

_SCHEMA_0001 = [
    # --- device state ----------------------------------------------------------------------
    """CREATE TABLE app_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)""",
    # --- reference data (HQ-owned; replaced wholesale per row by imports / sync) ------------
    """CREATE TABLE ref_permit_holders (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL CHECK (kind IN ('pf', 'pj')),
        name TEXT NOT NULL, cpf TEXT, cnpj TEXT, permit_number TEXT NOT NULL,
        permit_status TEXT NOT NULL, permit_valid_until TEXT, pack_id TEXT NOT NULL,
        city TEXT, updated_at TEXT NOT NULL)""",
    """CREATE TABLE ref_lines (
        id TEXT PRIMARY KEY, code TEXT NOT NULL, name TEXT NOT NULL, pack_id TEXT NOT NULL,
        route TEXT, updated_at TEXT NOT NULL)""",
    """CREATE TABLE ref_vehicles (
        id TEXT PRIMARY KEY, plate TEXT NOT NULL, plate_key TEXT NOT NULL,
        renavam TEXT, chassis TEXT, make_model TEXT, species TEXT, fleet_number TEXT,
        chassis_year INTEGER, body_year INTEGER, seats INTEGER, doors INTEGER,
        category TEXT, uf TEXT, holder_id TEXT REFERENCES ref_permit_holders(id),
        line_id TEXT REFERENCES ref_lines(id), insurance_policy TEXT,
        insurance_valid_until TEXT, last_vistoria TEXT, pack_id TEXT NOT NULL,
        updated_at TEXT NOT NULL)""",
    "CREATE UNIQUE INDEX idx_ref_vehicles_plate_key ON ref_vehicles(plate_key)",
    "CREATE INDEX idx_ref_vehicles_holder ON ref_vehicles(holder_id)",
    """CREATE TABLE ref_drivers (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, cpf TEXT NOT NULL, cnh TEXT,
        cnh_category TEXT, cnh_valid_until TEXT, holder_id TEXT REFERENCES
        ref_permit_holders(id), role TEXT NOT NULL DEFAULT 'motorista',
        registered INTEGER NOT NULL DEFAULT 1, updated_at TEXT NOT NULL)""",
    "CREATE INDEX idx_ref_drivers_cpf ON ref_drivers(cpf)",
    "CREATE INDEX idx_ref_drivers_cnh ON ref_drivers(cnh)",
    """CREATE TABLE ref_inspectors (
        id TEXT PRIMARY KEY, matricula TEXT NOT NULL UNIQUE, name TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('inspector', 'retention_desk', 'supervisor')),
        password_hash TEXT NOT NULL, organ TEXT, active INTEGER NOT NULL DEFAULT 1,
        updated_at TEXT NOT NULL)""",
    """CREATE TABLE ref_history (
        id TEXT PRIMARY KEY, holder_id TEXT, plate_key TEXT, rule_id TEXT NOT NULL,
        date TEXT NOT NULL, status TEXT NOT NULL CHECK (status IN ('upheld', 'pending',
        'cancelled')), points INTEGER, auto_number TEXT, updated_at TEXT NOT NULL)""",
    "CREATE INDEX idx_ref_history_holder ON ref_history(holder_id, date)",
    "CREATE INDEX idx_ref_history_plate ON ref_history(plate_key, date)",
    """CREATE TABLE ref_parameters (
        pack_id TEXT NOT NULL, name TEXT NOT NULL, value_json TEXT NOT NULL,
        updated_at TEXT NOT NULL, PRIMARY KEY (pack_id, name))""",
    """CREATE TABLE ref_pack_versions (
        pack_id TEXT NOT NULL, version TEXT NOT NULL, content_hash TEXT NOT NULL,
        published_at TEXT, PRIMARY KEY (pack_id, version))""",
    # --- numbering (talonário): ranges assigned by HQ, or a demo range ----------------------
    """CREATE TABLE number_ranges (
        id TEXT PRIMARY KEY, series TEXT NOT NULL, first INTEGER NOT NULL,
        last INTEGER NOT NULL, source TEXT NOT NULL CHECK (source IN ('hq', 'demo')),
        assigned_at TEXT NOT NULL, CHECK (first >= 1 AND last >= first))""",
    """CREATE TABLE number_usage (
        series TEXT NOT NULL, number INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('issued', 'voided')),
        record_id TEXT NOT NULL, at TEXT NOT NULL, PRIMARY KEY (series, number))""",
    # --- open inspections: every answer is written as it is given ----------------------------
    """CREATE TABLE inspections (
        id TEXT PRIMARY KEY, pack_id TEXT NOT NULL, pack_version TEXT NOT NULL,
        pack_hash TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN ('vistoria',
        'fiscalizacao')), matricula TEXT NOT NULL, started_at TEXT NOT NULL,
        occurred_at TEXT NOT NULL, location_type TEXT NOT NULL, place TEXT NOT NULL,
        latitude REAL, longitude REAL, vehicle_id TEXT, plate TEXT, plate_key TEXT,
        vehicle_json TEXT NOT NULL, driver_json TEXT NOT NULL, facts_json TEXT NOT NULL,
        start_of_operation INTEGER NOT NULL DEFAULT 0,
        manifest_insecurity INTEGER NOT NULL DEFAULT 0,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'sealed',
        'abandoned')), sealed_at TEXT)""",
    "CREATE INDEX idx_inspections_status ON inspections(status, started_at)",
    """CREATE TABLE answers (
        id INTEGER PRIMARY KEY, inspection_id TEXT NOT NULL REFERENCES inspections(id),
        item_id TEXT NOT NULL, result TEXT NOT NULL CHECK (result IN ('ok', 'fail', 'na')),
        rules_json TEXT NOT NULL DEFAULT '[]', note TEXT NOT NULL DEFAULT '',
        value_json TEXT NOT NULL DEFAULT 'null', answered_at TEXT NOT NULL)""",
    "CREATE INDEX idx_answers_inspection ON answers(inspection_id, item_id, id)",
    """CREATE TABLE photos (
        id INTEGER PRIMARY KEY, inspection_id TEXT NOT NULL REFERENCES inspections(id),
        item_id TEXT, original_sha256 TEXT NOT NULL, working_sha256 TEXT NOT NULL,
        thumb_sha256 TEXT NOT NULL, original_name TEXT NOT NULL, width INTEGER NOT NULL,
        height INTEGER NOT NULL, taken_at TEXT, added_at TEXT NOT NULL)""",
    """CREATE TABLE signatures (
        id INTEGER PRIMARY KEY, inspection_id TEXT NOT NULL REFERENCES inspections(id),
        role TEXT NOT NULL CHECK (role IN ('agent', 'driver')),
        status TEXT NOT NULL CHECK (status IN ('signed', 'refused', 'absent')),
        png_sha256 TEXT, note TEXT NOT NULL DEFAULT '', signed_at TEXT NOT NULL)""",
    # --- sealed field records: the legal documents --------------------------------------------
    """CREATE TABLE records (
        id TEXT PRIMARY KEY, kind TEXT NOT NULL, series TEXT, number INTEGER,
        inspection_id TEXT, refers_to TEXT REFERENCES records(id), plate_key TEXT,
        holder_id TEXT, occurred_on TEXT, created_at TEXT NOT NULL,
        payload TEXT NOT NULL, sha256 TEXT NOT NULL, signature TEXT NOT NULL,
        key_id TEXT NOT NULL, journal_seq INTEGER NOT NULL UNIQUE,
        verification_code TEXT NOT NULL UNIQUE, UNIQUE (series, number))""",
    "CREATE INDEX idx_records_plate ON records(plate_key, occurred_on)",
    "CREATE INDEX idx_records_refers ON records(refers_to)",
    "CREATE INDEX idx_records_kind ON records(kind, created_at)",
    """CREATE TABLE journal (
        seq INTEGER PRIMARY KEY, record_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL,
        record_sha256 TEXT NOT NULL, prev_hash TEXT NOT NULL, entry_hash TEXT NOT NULL,
        created_at TEXT NOT NULL)""",
    """CREATE TABLE outbox (
        record_id TEXT PRIMARY KEY REFERENCES records(id), kind TEXT NOT NULL,
        enqueued_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT, last_attempt_at TEXT, acked_at TEXT, ack_status TEXT)""",
    """CREATE TABLE print_log (
        id INTEGER PRIMARY KEY, record_id TEXT NOT NULL REFERENCES records(id),
        copy TEXT NOT NULL, layout TEXT NOT NULL, reprint_number INTEGER NOT NULL,
        matricula TEXT NOT NULL, printed_at TEXT NOT NULL, printer TEXT)""",
    # --- offline login state (device-local, mutable) -------------------------------------------
    """CREATE TABLE login_state (
        matricula TEXT PRIMARY KEY, failures INTEGER NOT NULL DEFAULT 0, locked_until TEXT,
        last_success_at TEXT, last_online_auth_at TEXT, highest_clock_seen TEXT)""",
]

# Sealed rows never change. RAISE(ABORT) keeps the surrounding transaction usable.
_IMMUTABLE = ("records", "journal", "number_usage", "answers", "photos", "signatures",
              "print_log")
_TRIGGERS_0001 = [
    *(
        f"""CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only: sealed rows cannot change'); END"""
        for table in _IMMUTABLE
    ),
    *(
        f"""CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only: sealed rows cannot be deleted'); END"""
        for table in _IMMUTABLE
    ),
    # An inspection can change only while open; once sealed it is frozen.
    """CREATE TRIGGER inspections_sealed_no_update BEFORE UPDATE ON inspections
    WHEN OLD.status <> 'open'
    BEGIN SELECT RAISE(ABORT, 'inspection is sealed: it cannot change'); END""",
    """CREATE TRIGGER inspections_no_delete BEFORE DELETE ON inspections
    BEGIN SELECT RAISE(ABORT, 'inspections are never deleted'); END""",
    # No answer, photo or signature may be added to a sealed inspection.
    *(
        f"""CREATE TRIGGER {table}_open_only BEFORE INSERT ON {table}
        WHEN (SELECT status FROM inspections WHERE id = NEW.inspection_id) <> 'open'
        BEGIN SELECT RAISE(ABORT, 'inspection is sealed: nothing can be added'); END"""
        for table in ("answers", "photos", "signatures")
    ),
    # The outbox may record attempts and acknowledgements but not rewrite what it holds,
    # and a record leaves it only after HQ acknowledged it.
    """CREATE TRIGGER outbox_fixed_columns BEFORE UPDATE OF record_id, kind, enqueued_at
    ON outbox BEGIN SELECT RAISE(ABORT, 'outbox entries cannot be rewritten'); END""",
    """CREATE TRIGGER outbox_no_delete_unacked BEFORE DELETE ON outbox
    WHEN OLD.acked_at IS NULL
    BEGIN SELECT RAISE(ABORT, 'a record leaves the outbox only after HQ acknowledged it'); END""",
    """CREATE TRIGGER number_ranges_no_change BEFORE UPDATE ON number_ranges
    BEGIN SELECT RAISE(ABORT, 'number ranges cannot change'); END""",
    """CREATE TRIGGER number_ranges_no_delete BEFORE DELETE ON number_ranges
    BEGIN SELECT RAISE(ABORT, 'number ranges cannot be deleted'); END""",
]


@migrations(name="0001_initial")
def m0001_initial(db: Database) -> None:
    for statement in _SCHEMA_0001 + _TRIGGERS_0001:
        db.execute(statement)


_SCHEMA_0002 = [
    # PDFs as printed (content-addressed in the blob folder): which record, layout, copy and
    # reprint each file is. Archived with the record, never rewritten.
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY, record_id TEXT NOT NULL REFERENCES records(id),
        layout TEXT, copy TEXT, reprint_number INTEGER, pdf_sha256 TEXT NOT NULL,
        created_at TEXT NOT NULL)""",
    "CREATE INDEX idx_documents_record ON documents(record_id, id)",
    """CREATE TRIGGER documents_no_update BEFORE UPDATE ON documents
    BEGIN SELECT RAISE(ABORT, 'documents is append-only: sealed rows cannot change'); END""",
    """CREATE TRIGGER documents_no_delete BEFORE DELETE ON documents
    BEGIN SELECT RAISE(ABORT, 'documents is append-only: sealed rows cannot be deleted'); END""",
]


@migrations(name="0002_documents")
def m0002_documents(db: Database) -> None:
    for statement in _SCHEMA_0002:
        db.execute(statement)


_SCHEMA_0003 = [
    # Blobs HQ has confirmed holding (HEAD 200 or PUT 2xx): not asked about again. Cleared
    # for a blob HQ later reports missing.
    """CREATE TABLE sync_blobs (sha256 TEXT PRIMARY KEY, confirmed_at TEXT NOT NULL)""",
    # One row per sync run, for the status bar and the sync screen (last success, errors).
    """CREATE TABLE sync_runs (
        id INTEGER PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT,
        online INTEGER NOT NULL DEFAULT 0, pushed INTEGER NOT NULL DEFAULT 0,
        accepted INTEGER NOT NULL DEFAULT 0, duplicate INTEGER NOT NULL DEFAULT 0,
        conflict INTEGER NOT NULL DEFAULT 0, rejected INTEGER NOT NULL DEFAULT 0,
        missing_blobs INTEGER NOT NULL DEFAULT 0, unknown INTEGER NOT NULL DEFAULT 0,
        blobs_uploaded INTEGER NOT NULL DEFAULT 0, pulled INTEGER NOT NULL DEFAULT 0,
        error TEXT)""",
    "CREATE INDEX idx_outbox_pending ON outbox(acked_at, ack_status)",
]


@migrations(name="0003_sync")
def m0003_sync(db: Database) -> None:
    for statement in _SCHEMA_0003:
        db.execute(statement)


_SCHEMA_0004 = [
    # HQ's standing of each permit holder (key: holder id, or "plate:<plate_key>" for autos
    # without a holder), recomputed at HQ from every device's autos and pulled like the
    # other reference tables (hq/standing.py): points per window, reincidence per rule and
    # the art. 39, I cassação proposal, all as of ``as_of``. Shown beside the device's own
    # computation; the rules engine does not read it.
    """CREATE TABLE ref_standing (
        id TEXT PRIMARY KEY, pack_id TEXT, as_of TEXT NOT NULL, points_json TEXT NOT NULL,
        reincidence_json TEXT NOT NULL, cassacao_proposed INTEGER NOT NULL,
        cassacao_json TEXT, windows_json TEXT NOT NULL)""",
    # Earlier versions skipped the ``standing`` changes in the pull log and moved the cursor
    # past them: pull the log again from the start (every change is an idempotent upsert or
    # tombstone, applied in order, so the end state is the same as a new device's).
    "UPDATE app_meta SET value = '0' WHERE key = 'sync_pull_cursor'",
]


@migrations(name="0004_standing")
def m0004_standing(db: Database) -> None:
    for statement in _SCHEMA_0004:
        db.execute(statement)


_SCHEMA_0005_I14A = [
    # Pull-log changes this device could not apply (a value SQLite cannot hold, a row
    # missing its key, ...): kept with the reason for a person, and the pull cursor moves
    # past them so one bad change never wedges every later one (sync/client.apply_page).
    """CREATE TABLE sync_pull_quarantine (
        seq INTEGER PRIMARY KEY, table_name TEXT NOT NULL, key TEXT NOT NULL,
        op TEXT NOT NULL, row_json TEXT NOT NULL, reason TEXT NOT NULL,
        quarantined_at TEXT NOT NULL)""",
]


@migrations(name="0005_i14a_pull_quarantine")
def m0005_i14a_pull_quarantine(db: Database) -> None:
    for statement in _SCHEMA_0005_I14A:
        db.execute(statement)


# Each órgão keeps its own number series (issue 11): a range may be tied to one jurisdiction
# (the pack's ``jurisdiction``, e.g. "DF", "JF"); NULL serves any (HQ ranges as received).
_SCHEMA_0005_I11B = [
    "ALTER TABLE number_ranges ADD COLUMN jurisdiction TEXT",
]


@migrations(name="0005_i11b_range_jurisdiction")
def m0005_i11b_range_jurisdiction(db: Database) -> None:
    for statement in _SCHEMA_0005_I11B:
        db.execute(statement)


_SCHEMA_I11C_PHOTO_REMOVALS = [
    # A photo taken by mistake can be taken out of an open inspection: the photo row stays
    # (photos are append-only), a removal row says it no longer belongs to the inspection
    # and sealing leaves it out. Once the inspection is sealed nothing can be removed.
    """CREATE TABLE photo_removals (
        id INTEGER PRIMARY KEY, photo_id INTEGER NOT NULL UNIQUE REFERENCES photos(id),
        inspection_id TEXT NOT NULL REFERENCES inspections(id), removed_at TEXT NOT NULL)""",
    """CREATE TRIGGER photo_removals_open_only BEFORE INSERT ON photo_removals
    WHEN (SELECT status FROM inspections WHERE id = NEW.inspection_id) <> 'open'
      OR (SELECT inspection_id FROM photos WHERE id = NEW.photo_id) IS NOT NEW.inspection_id
    BEGIN SELECT RAISE(ABORT, 'inspection is sealed: its photos cannot be removed'); END""",
    """CREATE TRIGGER photo_removals_no_update BEFORE UPDATE ON photo_removals
    BEGIN SELECT RAISE(ABORT, 'photo_removals is append-only'); END""",
    """CREATE TRIGGER photo_removals_no_delete BEFORE DELETE ON photo_removals
    BEGIN SELECT RAISE(ABORT, 'photo_removals is append-only'); END""",
]


@migrations(name="0005_i11c_photo_removals")
def m0005_i11c_photo_removals(db: Database) -> None:
    for statement in _SCHEMA_I11C_PHOTO_REMOVALS:
        db.execute(statement)


_SCHEMA_0005 = [
    # Ban on a new permission after losing one (Decreto 15.154/1993 arts. 12 §ú, 39 §ú,
    # 16 §2), known at HQ: the reason and the date of the act; the card shows it while it
    # lasts (domain/bans.py).
    "ALTER TABLE ref_permit_holders ADD COLUMN ban_reason TEXT",
    "ALTER TABLE ref_permit_holders ADD COLUMN ban_from TEXT",
]


@migrations(name="0005_i13_holder_bans")
def m0005_i13_holder_bans(db: Database) -> None:
    for statement in _SCHEMA_0005:
        db.execute(statement)


_SCHEMA_0005_I12 = [
    # Outputs that did not reach paper (printer error, paper out, cover open, a print cut
    # off): logged as such and offered again, never counted in print_log (documents.outputs).
    """CREATE TABLE output_failures (
        id INTEGER PRIMARY KEY, record_id TEXT NOT NULL REFERENCES records(id),
        copy TEXT NOT NULL, layout TEXT NOT NULL, reprint_number INTEGER NOT NULL,
        matricula TEXT NOT NULL, failed_at TEXT NOT NULL, channel TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('failed', 'partial')), detail TEXT)""",
    "CREATE INDEX idx_output_failures_record ON output_failures(record_id, id)",
    """CREATE TRIGGER output_failures_no_update BEFORE UPDATE ON output_failures
    BEGIN SELECT RAISE(ABORT, 'output_failures is append-only'); END""",
    """CREATE TRIGGER output_failures_no_delete BEFORE DELETE ON output_failures
    BEGIN SELECT RAISE(ABORT, 'output_failures is append-only'); END""",
]


@migrations(name="0005_i12_output_failures")
def m0005_i12_output_failures(db: Database) -> None:
    for statement in _SCHEMA_0005_I12:
        db.execute(statement)


# HQ's standing says what is definitive (upheld autos) and what rests on autos still pending
# judgement (issue 15): the points of pending autos per window, the reincidence counting them
# too, and the authority's decision on a cassação proposal (open a process / archive it).
_SCHEMA_0005_I15B = [
    "ALTER TABLE ref_standing ADD COLUMN pending_points_json TEXT",
    "ALTER TABLE ref_standing ADD COLUMN provisional_reincidence_json TEXT",
    "ALTER TABLE ref_standing ADD COLUMN cassacao_decision_json TEXT",
]


@migrations(name="0005_i15b_standing_pending")
def m0005_i15b_standing_pending(db: Database) -> None:
    for statement in _SCHEMA_0005_I15B:
        db.execute(statement)
    if db["row_seals"].exists():  # a store sealed before this migration: cover the new columns
        from inspector_app.store import seals
        for statement in seals.install_statements(db.conn, "ref_standing"):
            db.execute(statement)


_SCHEMA_0005_I17A = [
    # Issue 17 (stores of 10^5–10^6 sealed records): today's records by time, a termo's
    # releases and cancellations by one covering probe, the number accounting by index.
    # Indexes only: no sealed row changes, no trigger is touched.
    "CREATE INDEX IF NOT EXISTS idx_records_created ON records(created_at)",
    # Covering: the held-vehicle walk and count never read a record's row (10 KB, several
    # encrypted pages) until the page of the screen is decoded.
    "CREATE INDEX IF NOT EXISTS idx_records_kind_created_id ON records(kind, created_at, id)",
    "CREATE INDEX IF NOT EXISTS idx_records_refers_kind ON records(refers_to, kind)",
    "CREATE INDEX IF NOT EXISTS idx_number_usage_status ON number_usage(series, status, number)",
]


@migrations(name="0005_i17a_scale_indexes")
def m0005_i17a_scale_indexes(db: Database) -> None:
    for statement in _SCHEMA_0005_I17A:
        db.execute(statement)


@migrations(name="0005_i14c_row_seals")
def m0005_i14c_row_seals(db: Database) -> None:
    """Seals of the rows that change in place and counters of the append-only tables
    (``store/seals.py``); the present rows are sealed as they are."""
    from inspector_app.store import seals

    db.execute("""CREATE TABLE row_seals (tbl TEXT NOT NULL, pk TEXT NOT NULL,
        mac TEXT NOT NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID""")
    # Counters first: their rows in app_meta are then sealed with the rest of app_meta.
    for table in seals.COUNTED_TABLES:
        for statement in seals.counter_statements(table):
            db.execute(statement)
    for table in seals.SEALED_TABLES:
        for statement in seals.install_statements(db.conn, table):
            db.execute(statement)


KNOWN_MIGRATIONS = tuple(m.name for m in migrations._migrations)
