"""Cancelled stays cancelled (issue 11): every page of any print of a cancelled record says
CANCELADO with the cancelling record's number and date; read back with pdftotext per page."""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import pytest
from pypdf import PdfReader

from inspector_app import services
from inspector_app.documents import render_document
from inspector_app.documents.formatting import datetime_br

pytestmark = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                reason="pdftotext (poppler-utils) is not installed")


def page_texts(pdf: bytes, tmp_path: Path) -> list[str]:
    source = tmp_path / "doc.pdf"
    source.write_bytes(pdf)
    pages = len(PdfReader(io.BytesIO(pdf)).pages)
    out = []
    for page in range(1, pages + 1):
        done = subprocess.run(["pdftotext", "-layout", "-f", str(page), "-l", str(page),
                               str(source), "-"], check=True, capture_output=True, timeout=60)
        out.append(" ".join(done.stdout.decode("utf-8").split()))
    return out


@pytest.mark.parametrize("layout", ["a4", "80mm"])
@pytest.mark.parametrize("name", ["auto_infracao", "auto_vistoria_reprovado", "termo_retencao",
                                  "termo_liberacao"])
def test_every_page_of_a_cancelled_record_is_marked_with_the_cancelling_record(
        kit, tmp_path, name, layout):
    record = kit.records[name]
    mark = {"number": "DEMO-TEST-000777", "created_at": "2026-11-30T13:05:00+00:00"}
    pdf = render_document(record, blob_dir=kit.store.blob_dir, layout=layout,
                          reprint_number=2, cancellation=mark)
    texts = page_texts(pdf, tmp_path)
    # The time in the órgão's legal zone; the offset is printed once per document (issue 12).
    line = "CANCELADO pelo registro n.º DEMO-TEST-000777 em 30/11/2026 10:05"
    for number, text in enumerate(texts, 1):
        assert line in text, f"page {number} of {len(texts)} not marked: {text[:300]}"
    if name == "auto_infracao" and layout == "a4":
        assert len(texts) >= 2  # the mark is on later pages too, not only the first


def test_a_record_that_stands_is_not_marked(kit, tmp_path):
    pdf = render_document(kit.records["auto_infracao"], blob_dir=kit.store.blob_dir)
    assert all("CANCELADO" not in t for t in page_texts(pdf, tmp_path))


def test_the_services_print_of_the_cancelled_jf_auto_is_marked_on_every_page(kit, tmp_path):
    auto = kit.records["auto_infracao_jf"]
    cancel = kit.records["cancelamento"]
    found = services.cancellation_of(store=kit.store, record_id=auto.id)
    assert found is not None and found.number == cancel.display_number
    doc = services.render_record(store=kit.store, record_id=auto.id, reprint_number=1,
                                 sign=False)
    line = (f"CANCELADO pelo registro n.º {cancel.display_number} em "
            f"{datetime_br(cancel.created_at)}")
    texts = page_texts(doc.pdf, tmp_path)
    assert texts and all(line in t for t in texts)
