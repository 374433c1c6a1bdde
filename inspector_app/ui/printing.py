"""The print step: render a sealed record to PDF, archive it, preview it, print it.

Rendering and archiving run on the store worker (``documents`` is imported lazily, so the
window still works when it is missing); the preview (QtPdf) and the printer (QPrinter) run
on the GUI thread. A print is logged only after the printer took it, so a failed print
loses nothing and counts nothing: the record is sealed and its PDF is on disk.

The layout (A4 or 80 mm) and the printer start at the defaults chosen on the settings
screen (``ctx.settings``); each new set of documents starts again from those defaults.

Caveat: ``QPdfView`` spins at 100 % CPU in a fit mode unless both scroll-bar policies are
set explicitly (DESIGN.md §9).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QMarginsF, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QPageLayout, QPageSize, QPainter
from PySide6.QtPdf import QPdfDocument
from PySide6.QtPdfWidgets import QPdfView
from PySide6.QtPrintSupport import QPrintDialog, QPrinter, QPrinterInfo
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.ui import queries
from inspector_app.ui.context import AppContext
from inspector_app.ui.errors import UiError, describe_error
from inspector_app.ui.user_folders import in_documents, portuguese_labels
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner, big_button

NO_DOCUMENTS = (
    "A geração de PDF não está disponível nesta instalação (módulo de documentos ausente). "
    "Os registros estão selados e guardados: imprima-os depois pelo Histórico "
    "(reimpressão), quando o módulo estiver instalado."
)
PRINT_FAILED = (
    "A impressão falhou: {detail}. Nada se perdeu: o documento está selado e o PDF foi "
    "guardado com o registro. Verifique se a impressora está ligada, com papel e conectada, "
    "e toque em Imprimir de novo; ou use Salvar PDF e imprima em outro equipamento."
)
COPY_LABELS = {"1": "1ª via – autuado", "2": "2ª via – órgão"}
LAYOUT_LABELS = {"a4": "A4", "80mm": "Bobina 80 mm"}
RENDER_DPI = 200  # enough for print; higher only costs time


def documents_module() -> Any | None:
    """``inspector_app.documents`` or None when it cannot be imported."""
    try:
        from inspector_app import documents
    except ImportError:
        return None
    return documents


@dataclass(frozen=True)
class PreparedDocument:
    """One rendered copy of a sealed record, archived and ready to preview or print."""

    record_id: str
    kind: str
    number: str
    copy: str
    layout: str
    reprint_number: int
    pdf: bytes
    path: Path | None
    printed: bool = False
    output: Any = None  # documents.outputs.Output: what log_output counts

    @property
    def label(self) -> str:
        text = f"{queries.KIND_LABELS.get(self.kind, self.kind)} {self.number} – " \
               f"{COPY_LABELS[self.copy]}"
        if self.reprint_number:
            text += f" – Reimpressão n.º {self.reprint_number}"
        return text


def prepare_document(store: Any, record_id: str, *, copy: str, layout: str,
                     demo: bool) -> PreparedDocument:
    """Render the next output of ``record_id`` (store worker only); nothing is counted
    until it is printed or saved (documents.outputs: one counter for every output)."""
    docs = documents_module()
    if docs is None:
        raise UiError(NO_DOCUMENTS)
    from inspector_app.documents import outputs

    record = services.find_record(store=store, number=record_id)
    # A cancelled record prints only marked CANCELADO (every page, with the cancelling
    # record's number and date): documents.outputs marks every output of every channel.
    out = outputs.prepare_output(store, record.id, copy=copy, layout=layout, demo=demo)
    # The document as issued is archived at once (not counted); a reprint once delivered.
    path = archive_document(store, record.id, layout, copy, 0, out.pdf) \
        if out.reprint_number == 0 else None
    return PreparedDocument(record.id, record.kind, record.display_number, copy, layout,
                            out.reprint_number, out.pdf, path, output=out)


def archive_document(store: Any, record_id: str, layout: str, copy: str, k: int,
                     pdf: bytes) -> Path:
    """Archive the PDF with its record unless this very print is archived already."""
    docs = documents_module()
    if docs is None:
        raise UiError(NO_DOCUMENTS)
    from inspector_app.media.photos import blob_path

    digest = hashlib.sha256(pdf).hexdigest()
    # The same bytes only: a copy printed after a cancellation differs (it is marked).
    same = [d for d in docs.archived_documents(store, record_id)
            if (d.layout, d.copy, d.reprint_number) == (layout, copy, k)
            and d.pdf_sha256 == digest]
    sha = same[0].pdf_sha256 if same else docs.archive_pdf(store, record_id, layout, copy, k,
                                                             pdf)
    return Path(blob_path(store.blob_dir, sha, ".pdf"))


def log_and_archive(store: Any, session: Any, doc: PreparedDocument,
                    printer: str | None, *, channel: str = "printer") -> PreparedDocument:
    """After a successful print (or save): count it and archive the PDF delivered."""
    from inspector_app.documents import outputs
    from inspector_app.media.photos import blob_path

    matricula = session.matricula if session is not None else "desconhecido"
    done = outputs.log_output(store, doc.output, matricula=matricula, channel=channel,
                              target=printer)
    path = Path(blob_path(store.blob_dir, done.pdf_sha256, ".pdf"))
    return replace(doc, path=path, printed=True, output=done)


def log_print_failure(store: Any, session: Any, doc: PreparedDocument, detail: str) -> None:
    """A print that did not reach paper: logged as failed, not counted, offered again."""
    from inspector_app.documents import outputs

    matricula = session.matricula if session is not None else "desconhecido"
    outputs.log_failure(store, doc.output, matricula=matricula, channel="printer",
                        detail=detail)


def apply_page_layout(printer: QPrinter, layout: str, document: QPdfDocument | None = None
                      ) -> None:
    """Page size, orientation and margins on the QPrinter from the document's layout, so
    the system dialog cannot fall back to the printer's default (US Letter): A4 portrait
    with no extra margins (the PDF has its own), or the roll's width × the PDF's height."""
    printer.setPageOrientation(QPageLayout.Orientation.Portrait)
    if layout == "a4":
        printer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4),
                                          QPageLayout.Orientation.Portrait,
                                          QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Millimeter))
        return
    if document is not None and document.pageCount():
        points = document.pagePointSize(0)
        printer.setPageSize(QPageSize(points, QPageSize.Unit.Point, "bobina térmica"))
    printer.setPageMargins(QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Millimeter)


def copies_for(kind: str) -> tuple[str, ...]:
    """The copies a kind is printed in: the auto de infração goes to both sides."""
    return ("1", "2") if kind == "auto_infracao" else ("1",)


def apply_default_printer(printer: QPrinter, name: str) -> bool:
    """Point ``printer`` at the printer chosen in the settings when it is installed here;
    otherwise (or when ``name`` is empty) the system's default stays. True when applied."""
    if not name or name not in QPrinterInfo.availablePrinterNames():
        return False
    printer.setPrinterName(name)
    return True


class PrintChooser:
    """The system print dialog; tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, printer: QPrinter, parent: QWidget | None) -> bool:
        dialog = QPrintDialog(printer, parent)
        dialog.setWindowTitle("Imprimir")
        return dialog.exec() == QPrintDialog.DialogCode.Accepted


class SavePdfChooser:
    """Where to save a copy of the PDF; tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None, suggested: str) -> Path | None:
        # Starts in the user's documents folder (never the current directory).
        dialog = QFileDialog(parent, "Salvar PDF", in_documents(suggested), "PDF (*.pdf)")
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("pdf")
        dialog.selectFile(in_documents(suggested))
        portuguese_labels(dialog)
        if dialog.exec() != QFileDialog.DialogCode.Accepted or not dialog.selectedFiles():
            return None
        return Path(dialog.selectedFiles()[0])


def print_pdf(document: QPdfDocument, printer: QPrinter) -> None:
    """Paint every page of ``document`` on ``printer``; raises UiError when it cannot."""
    count = document.pageCount()
    if count < 1:
        raise UiError(PRINT_FAILED.format(detail="o PDF não tem páginas"))
    painter = QPainter()
    if not painter.begin(printer):
        raise UiError(PRINT_FAILED.format(detail="a impressora não aceitou o trabalho"))
    try:
        for page in range(count):
            if page and not printer.newPage():
                raise UiError(PRINT_FAILED.format(detail="a impressora recusou a página "
                                                         f"{page + 1}"))
            points = document.pagePointSize(page)
            size = QSize(max(1, round(points.width() * RENDER_DPI / 72)),
                         max(1, round(points.height() * RENDER_DPI / 72)))
            image = document.render(page, size)
            if image.isNull():
                raise UiError(PRINT_FAILED.format(detail=f"a página {page + 1} não pôde ser "
                                                         "desenhada"))
            target = QRectF(painter.viewport())
            scale = min(target.width() / size.width(), target.height() / size.height())
            width, height = size.width() * scale, size.height() * scale
            painter.drawImage(QRectF(target.x(), target.y(), width, height), image)
    finally:
        painter.end()


class PrintPanel(QWidget):
    """Documents of one act: pick one, see its preview, print it or save the PDF."""

    document_did_print = Signal(object)  # PreparedDocument (logged)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.current: PreparedDocument | None = None
        self.list = QListWidget()
        self.list.setWordWrap(True)
        self.list.currentRowChanged.connect(self._chosen)
        self.layout_combo = QComboBox()
        for key, label in LAYOUT_LABELS.items():
            self.layout_combo.addItem(label, key)
        self.layout_combo.setCurrentIndex(max(0, self.layout_combo.findData(ctx.settings.layout)))
        self.layout_combo.currentIndexChanged.connect(
            lambda _i: self._chosen(self.list.currentRow()))
        layout_label = QLabel("&Formato:")
        layout_label.setBuddy(self.layout_combo)
        self.print_button = big_button("&Imprimir…", primary=True)
        self.print_button.clicked.connect(self.print_current)
        self.save_button = big_button("Sal&var PDF…")
        self.save_button.clicked.connect(self.save_current)
        self.status = QLabel("")
        self.status.setWordWrap(True)
        # Room for three wrapped lines: a splitter does not ask a wrapped label its height,
        # and on a short screen the list below would draw over it.
        self.status.setMinimumHeight(self.status.fontMetrics().lineSpacing() * 3 + 4)
        self.banner = Banner()

        self.document = QPdfDocument(self)
        self._buffer: QBuffer | None = None
        self.view = QPdfView(self)
        # Both policies explicitly, or QPdfView spins the CPU in FitToWidth (DESIGN.md §9).
        self.view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.view.setPageMode(QPdfView.PageMode.MultiPage)
        self.view.setZoomMode(QPdfView.ZoomMode.FitToWidth)
        self.view.setDocument(self.document)
        self.view.setMinimumHeight(160)  # the preview scrolls; 1024×600 screens have little

        left_box = QWidget()
        left_box.setMinimumWidth(270)
        left_box.setMaximumWidth(380)
        left = QVBoxLayout(left_box)
        left.setContentsMargins(0, 0, 0, 0)
        # The actions first, side by side: in view on a short screen whatever the list holds.
        actions = QHBoxLayout()
        actions.addWidget(self.print_button)
        actions.addWidget(self.save_button)
        left.addLayout(actions)
        form = QHBoxLayout()
        form.addWidget(layout_label)
        form.addWidget(self.layout_combo, 1)
        left.addLayout(form)
        left.addWidget(self.status)
        left.addWidget(QLabel("Documentos:"))
        left.addWidget(self.list, 1)
        right = QVBoxLayout()
        right.addWidget(self.banner)
        right.addWidget(self.view, 1)
        outer = QHBoxLayout(self)
        outer.addWidget(left_box, 2)
        outer.addLayout(right, 3)
        self._entries: list[tuple[str, str, str, str]] = []  # record id, kind, number, copy
        self._set_busy(True)

    # --- choosing ---------------------------------------------------------------------------------

    def show_records(self, records: list[tuple[str, str, str]], *, then: Any = None) -> None:
        """``records``: (id, kind, display number); one entry per copy to print.

        The first copy is prepared (rendered, archived, previewed); ``then()`` runs after.
        """
        self.list.blockSignals(True)
        self.list.clear()
        self._entries = []
        self.layout_combo.blockSignals(True)
        self.layout_combo.setCurrentIndex(
            max(0, self.layout_combo.findData(self.ctx.settings.layout)))
        self.layout_combo.blockSignals(False)
        for record_id, kind, number in records:
            for copy in copies_for(kind):
                self._entries.append((record_id, kind, number, copy))
                item = QListWidgetItem(f"{queries.KIND_LABELS.get(kind, kind)} {number}\n"
                                       f"{COPY_LABELS[copy]}")
                item.setSizeHint(QSize(0, TOUCH_TARGET_PX + 16))
                self.list.addItem(item)
        self.list.setCurrentRow(0 if self._entries else -1)
        self.list.blockSignals(False)
        if self._entries:
            record_id, _kind, _number, copy = self._entries[0]
            self._prepare(record_id, copy, then)
        else:
            self._set_busy(True)

    def clear(self) -> None:
        """Show no document (nothing chosen)."""
        self.show_records([])
        self.current = None
        self.document.close()
        self.status.setText("")
        self.status.setToolTip("")
        self.banner.clear_message()

    def _chosen(self, row: int) -> None:
        if not 0 <= row < len(self._entries):
            return
        record_id, _kind, _number, copy = self._entries[row]
        self._prepare(record_id, copy)

    def _prepare(self, record_id: str, copy: str, then: Any = None) -> None:
        layout = self.layout_combo.currentData()
        demo = self.ctx.demo
        self._set_busy(True)
        self.status.setText("Gerando o PDF…")
        self.ctx.tasks.run_store(
            lambda store: prepare_document(store, record_id, copy=copy, layout=layout,
                                           demo=demo),
            lambda doc: self._prepared(doc, then), self._failed, owner=self,
        )

    def _prepared(self, doc: PreparedDocument, then: Any) -> None:
        self.current = doc
        self.banner.clear_message()
        self._buffer = QBuffer(self)
        self._buffer.setData(QByteArray(doc.pdf))
        self._buffer.open(QIODevice.OpenModeFlag.ReadOnly)
        self.document.load(self._buffer)
        self._show_status(doc)
        self._set_busy(False)
        if then is not None:
            then()

    def _failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        self.print_button.setEnabled(False)
        self.save_button.setEnabled(False)
        self.status.setText("")
        self.banner.error(describe_error(exc))

    def _set_busy(self, busy: bool) -> None:
        self.print_button.setEnabled(not busy)
        self.save_button.setEnabled(not busy)

    # --- printing ---------------------------------------------------------------------------------

    def print_current(self) -> None:
        doc = self.current
        if doc is None:
            return
        if doc.printed:
            # This copy went to the printer already: the next print is a reprint (2ª VIA).
            self._prepare(doc.record_id, doc.copy, then=self.print_current)
            return
        printer = QPrinter(QPrinter.PrinterMode.HighResolution)
        apply_default_printer(printer, self.ctx.settings.printer)
        printer.setDocName(doc.label)
        apply_page_layout(printer, doc.layout, self.document)
        if not PrintChooser.ask(printer, self):
            self.status.setText("Impressão cancelada; nada foi registrado.")
            return
        try:
            print_pdf(self.document, printer)
        except UiError as exc:
            self.banner.error(exc.message_pt)
            session, detail = self.ctx.session, exc.message_pt
            self.ctx.tasks.run_store(
                lambda store: log_print_failure(store, session, doc, detail),
                lambda _r: None, lambda _e: None, owner=self)
            return
        session = self.ctx.session
        name = printer.printerName() or None
        self._set_busy(True)
        self.ctx.tasks.run_store(
            lambda store: log_and_archive(store, session, doc, name),
            self._logged, self._failed_log, owner=self,
        )

    def _logged(self, doc: PreparedDocument) -> None:
        self.current = doc
        self._set_busy(False)
        self.banner.show_message(f"Impresso: {doc.label}.", "ok")
        self._show_status(doc)
        self.document_did_print.emit(doc)

    def _show_status(self, doc: PreparedDocument) -> None:
        saved = " PDF guardado com o registro." if doc.path else ""
        self.status.setText(f"{doc.label}.{saved}")
        self.status.setToolTip(str(doc.path or ""))

    def _failed_log(self, exc: BaseException) -> None:
        self._set_busy(False)
        self.banner.error(f"O documento foi impresso, mas o registro da impressão falhou: "
                          f"{describe_error(exc)}")

    def save_current(self) -> None:
        doc = self.current
        if doc is None:
            return
        if doc.printed:
            # This output was delivered already: the saved file is the next output.
            self._prepare(doc.record_id, doc.copy, then=self.save_current)
            return
        target = SavePdfChooser.ask(self, f"{doc.number}-via{doc.copy}.pdf")
        if target is None:
            return
        session = self.ctx.session

        def save(store: Any) -> PreparedDocument:
            target.write_bytes(doc.pdf)  # written first: a failed write counts nothing
            return log_and_archive(store, session, doc, str(target), channel="pdf")

        def saved(done: PreparedDocument) -> None:
            self.current = done
            self._show_status(done)
            self.banner.show_message(f"PDF salvo em {target}.", "ok")
            self.document_did_print.emit(done)

        self.ctx.tasks.run_store(
            save, saved, lambda exc: self.banner.error(describe_error(exc)), owner=self,
        )
