"""Archive printed PDFs with their record: content-addressed blob plus a ``documents`` row.

The row says which record, layout, copy and reprint the file is; the table is append-only
(migration ``0002_documents``), like every sealed table.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector_app.media.photos import store_blob
from inspector_app.store import dbapi
from inspector_app.store.db import Store, StoreError, translate_error, utc_now

PDF_SUFFIX = ".pdf"


@dataclass(frozen=True)
class ArchivedDocument:
    id: int
    record_id: str
    layout: str
    copy: str
    reprint_number: int
    pdf_sha256: str
    created_at: str


def archive_pdf(store: Store, record_id: str, layout: str, copy: str, reprint_number: int,
                pdf_bytes: bytes) -> str:
    """Store ``pdf_bytes`` under ``blob_dir`` (named by its SHA-256) and log it; returns the
    SHA-256.

    The file is written (atomically) before the row, so a row always names a file; a crash
    in between leaves at most an unreferenced blob. Raises StoreError for an unknown record.
    """
    if not pdf_bytes.startswith(b"%PDF-"):
        raise ValueError("not a PDF")
    store.require_writable()
    known = store.conn.execute("SELECT 1 FROM records WHERE id = ?", [record_id]).fetchone()
    if known is None:
        raise StoreError(f"no record {record_id}", "Registro não encontrado.")
    sha, _path = store_blob(store.blob_dir, pdf_bytes, PDF_SUFFIX)
    try:
        with store.atomic():
            store.conn.execute(
                "INSERT INTO documents(record_id, layout, copy, reprint_number, pdf_sha256, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [record_id, layout, copy, reprint_number, sha, utc_now()],
            )
    except dbapi.Error as exc:
        raise translate_error(exc) from exc
    return sha


def next_reprint_number(store: Store, record_id: str, copy: str) -> int:
    """k for the next print of this copy: 0 the first time, then 1, 2, … (the number of
    PDFs of this record and copy already archived)."""
    row = store.conn.execute(
        "SELECT COUNT(*) FROM documents WHERE record_id = ? AND copy = ?", [record_id, copy]
    ).fetchone()
    return int(row[0])


def archived_documents(store: Store, record_id: str) -> list[ArchivedDocument]:
    """Every archived PDF of ``record_id``, oldest first."""
    rows = store.conn.execute(
        "SELECT id, record_id, layout, copy, reprint_number, pdf_sha256, created_at "
        "FROM documents WHERE record_id = ? ORDER BY id", [record_id]
    ).fetchall()
    return [ArchivedDocument(int(r[0]), r[1], r[2], r[3], int(r[4]), r[5], r[6]) for r in rows]
