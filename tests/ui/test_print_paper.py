"""The system-printer path keeps the layout's paper: A4 is A4 (not the printer's Letter),
the roll is its printable width; a print that fails is logged as failed, never counted."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from pypdf import PdfReader
from PySide6.QtCore import QBuffer, QByteArray, QIODevice
from PySide6.QtGui import QPageSize
from PySide6.QtPdf import QPdfDocument
from PySide6.QtPrintSupport import QPrinter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "documents"))
from recordkit import build_kit

from inspector_app.documents import outputs
from inspector_app.ui import printing

A4_POINTS = (595.28, 841.89)


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    base = tmp_path_factory.mktemp("paper")
    (base / "photos").mkdir()
    built = build_kit(base / "store", base / "photos")
    yield built
    built.store.close()


def _load(pdf: bytes, parent) -> QPdfDocument:
    document = QPdfDocument(parent)
    buffer = QBuffer(parent)
    buffer.setData(QByteArray(pdf))
    buffer.open(QIODevice.OpenModeFlag.ReadOnly)
    document.load(buffer)
    document._buffer = buffer  # kept alive with the document
    return document


def _print_to_file(document: QPdfDocument, layout: str, target: Path) -> PdfReader:
    printer = QPrinter(QPrinter.PrinterMode.HighResolution)
    # What a system whose default paper is US Letter starts the dialog with.
    printer.setPageSize(QPageSize(QPageSize.PageSizeId.Letter))
    printing.apply_page_layout(printer, layout, document)
    printer.setOutputFormat(QPrinter.OutputFormat.PdfFormat)
    printer.setOutputFileName(str(target))
    printing.print_pdf(document, printer)
    return PdfReader(io.BytesIO(target.read_bytes()))


@pytest.mark.parametrize("layout", ["a4", "80mm"])
def test_the_print_path_keeps_the_layouts_paper(qapp, kit, tmp_path, layout):
    out = outputs.prepare_output(kit.store, kit.records["auto_infracao"].id, copy="1",
                                 layout=layout)
    document = _load(out.pdf, qapp)
    source = PdfReader(io.BytesIO(out.pdf)).pages[0].mediabox
    reader = _print_to_file(document, layout, tmp_path / "printed.pdf")
    assert len(reader.pages) == document.pageCount()
    for page in reader.pages:
        box = page.mediabox
        if layout == "a4":
            assert (float(box.width), float(box.height)) == pytest.approx(A4_POINTS, abs=1)
        else:
            assert float(box.width) == pytest.approx(float(source.width), abs=1)
            assert float(box.height) == pytest.approx(float(source.height), abs=2)


def test_a_failed_print_is_logged_as_failed_and_not_counted(qapp, kit, monkeypatch):
    record = kit.records["auto_infracao_ausente"]
    doc = printing.prepare_document(kit.store, record.id, copy="1", layout="a4", demo=False)
    assert doc.reprint_number == 0
    printing.log_print_failure(kit.store, None, doc, "a impressora está sem papel")
    assert outputs.output_count(kit.store, record.id, "1") == 0
    assert outputs.failures(kit.store, record.id)[0]["status"] == "failed"
    again = printing.prepare_document(kit.store, record.id, copy="1", layout="a4", demo=False)
    assert again.reprint_number == 0  # offered again as the first print
    done = printing.log_and_archive(kit.store, None, again, "Térmica")
    assert done.printed and outputs.output_count(kit.store, record.id, "1") == 1
    # The stale preparation cannot be counted a second time.
    with pytest.raises(outputs.OutputError):
        printing.log_and_archive(kit.store, None, again, "Térmica")
