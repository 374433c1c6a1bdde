"""Archiving printed PDFs with their record: content-addressed file, append-only row."""

from __future__ import annotations

import hashlib

import pytest

from inspector_app.documents import archive_pdf, archived_documents, next_reprint_number
from inspector_app.media.photos import blob_path
from inspector_app.store import dbapi
from inspector_app.store.db import StoreError, open_store


def test_the_pdf_is_stored_by_its_sha256_and_logged_with_layout_copy_and_reprint(kit, rendered):
    record = kit.records["termo_compromisso"]
    pdf = rendered("termo_compromisso", "80mm", copy="2", reprint_number=1)
    sha = archive_pdf(kit.store, record.id, "80mm", "2", 1, pdf)
    assert sha == hashlib.sha256(pdf).hexdigest()
    assert blob_path(kit.store.blob_dir, sha, ".pdf").read_bytes() == pdf
    [row] = [d for d in archived_documents(kit.store, record.id) if d.pdf_sha256 == sha]
    assert (row.record_id, row.layout, row.copy, row.reprint_number) == (record.id, "80mm", "2", 1)
    assert row.created_at


def test_archiving_the_same_bytes_twice_keeps_one_file_and_two_rows(kit, rendered):
    record = kit.records["cancelamento"]
    pdf = rendered("cancelamento")
    before = len(archived_documents(kit.store, record.id))
    first = archive_pdf(kit.store, record.id, "a4", "1", 0, pdf)
    second = archive_pdf(kit.store, record.id, "a4", "1", 0, pdf)
    assert first == second
    assert len(archived_documents(kit.store, record.id)) == before + 2
    assert len(list(blob_path(kit.store.blob_dir, first, ".pdf").parent.glob(f"{first}*"))) == 1


def test_reprints_are_counted_per_record_and_copy(kit, rendered):
    record = kit.records["auto_vistoria_aprovado"]
    assert next_reprint_number(kit.store, record.id, "1") == 0
    archive_pdf(kit.store, record.id, "a4", "1", 0, rendered("auto_vistoria_aprovado"))
    assert next_reprint_number(kit.store, record.id, "1") == 1
    assert next_reprint_number(kit.store, record.id, "2") == 0


def test_a_pdf_for_an_unknown_record_is_refused(kit, rendered):
    with pytest.raises(StoreError):
        archive_pdf(kit.store, "no-such-record", "a4", "1", 0, rendered("cancelamento"))


def test_bytes_that_are_not_a_pdf_are_refused(kit):
    with pytest.raises(ValueError):
        archive_pdf(kit.store, kit.records["cancelamento"].id, "a4", "1", 0, b"<html>")


@pytest.mark.parametrize("statement", [
    "UPDATE documents SET pdf_sha256 = 'x'",
    "DELETE FROM documents",
])
def test_archived_rows_cannot_change_even_from_raw_sql(kit, rendered, statement):
    record = kit.records["termo_liberacao"]
    archive_pdf(kit.store, record.id, "a4", "1", 0, rendered("termo_liberacao"))
    with pytest.raises(dbapi.IntegrityError, match="append-only"):
        kit.store.conn.execute(statement)


def test_a_new_store_has_the_documents_migration(tmp_path):
    store = open_store(tmp_path)
    try:
        names = [r[0] for r in store.conn.execute(
            "SELECT name FROM _sqlite_migrations ORDER BY id")]
        assert names[:2] == ["0001_initial", "0002_documents"]
        assert store.db["documents"].exists()
    finally:
        store.close()
