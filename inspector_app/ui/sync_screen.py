"""Sync with HQ in the GUI: the worker's bridge to the GUI thread, the "Sincronização"
screen and the enrolment dialog.

The :class:`~inspector_app.sync.worker.SyncWorker` runs on its own thread and calls
``on_status`` from there; :class:`SyncBridge` turns that call into a Qt signal so the
status bar and the screen only change on the GUI thread. Every read of the outbox goes
through ``sync.client`` on the store worker; enrolment runs on the network worker.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector_app.ui.context import AppContext
from inspector_app.ui.errors import describe_error
from inspector_app.ui.user_folders import pictures_folder
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner, datetime_br

KIND_LABELS = {"auto_infracao": "Auto de infração", "termo_retencao": "Termo de retenção",
               "termo_liberacao": "Termo de liberação", "void": "Numeração inutilizada"}
CODE_PATTERN = re.compile(r"[A-Za-z0-9 -]{4,64}")  # as HQ's EnrolRequest accepts it
STATUS_LABELS = {"conflict": "conflito", "rejected": "recusado"}


def format_time(value: str | None) -> str:
    return datetime_br(value) if value else "—"


class SyncBridge(QObject):
    """Hands the worker's status (from its thread) to the GUI thread."""

    status_changed = Signal(object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.status: Any = None
        self.worker: Any = None
        self.status_changed.connect(self._remember, Qt.ConnectionType.QueuedConnection)

    def publish(self, status: Any) -> None:
        """Called from the worker thread: only emits (Qt queues it to the GUI thread)."""
        self.status_changed.emit(status)

    def _remember(self, status: Any) -> None:
        self.status = status

    @property
    def running(self) -> bool:
        return self.worker is not None

    def start(self, open_store: Any) -> None:
        if self.worker is not None:
            return
        from inspector_app.sync.worker import SyncWorker

        self.worker = SyncWorker(open_store, on_status=self.publish).start()

    def wake(self) -> None:
        if self.worker is not None:
            self.worker.wake()

    def stop(self) -> None:
        worker, self.worker = self.worker, None
        if worker is not None:
            worker.stop(timeout=15.0)


class QrPhotoChooser:
    """Pick the photo of HQ's enrolment QR code; tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None) -> Path | None:
        name, _filter = QFileDialog.getOpenFileName(
            parent, "Foto do código QR de cadastro", str(pictures_folder()),
            "Fotos (*.jpg *.jpeg *.png *.webp *.bmp)")
        return Path(name) if name else None


class EnrolDialog(QDialog):
    """Asks the HQ address and the one-time code, then enrols on the network worker."""

    did_enrol = Signal(object)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.result_value: Any = None
        self.setWindowTitle("Cadastrar na sede")
        self.url = QLineEdit(ctx.settings.hq_url)
        self.url.setPlaceholderText("https://sede.exemplo.gov.br")
        self.url.setAccessibleName("Endereço da sede")
        self.code = QLineEdit()
        self.code.setPlaceholderText("código de uso único fornecido pela sede")
        self.code.setAccessibleName("Código de cadastro")
        self.photo_button = QPushButton("Ler de uma &foto…")
        self.photo_button.setToolTip("Escolha uma foto do código QR mostrado no console da "
                                     "sede: o endereço e o código são preenchidos.")
        self.photo_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.photo_button.clicked.connect(self.read_photo)
        self.banner = Banner()
        self.ok_button = QPushButton("&Cadastrar")
        self.ok_button.setDefault(True)
        self.cancel_button = QPushButton("Cancelar")
        self.buttons = QHBoxLayout()
        self.buttons.addStretch(1)
        self.buttons.addWidget(self.ok_button)
        self.buttons.addWidget(self.cancel_button)
        for button in (self.ok_button, self.cancel_button):
            button.setMinimumHeight(TOUCH_TARGET_PX)
        self.ok_button.clicked.connect(self.submit)
        self.cancel_button.clicked.connect(self.reject)
        form = QFormLayout()
        form.addRow("Endereço da sede:", self.url)
        form.addRow("Código de cadastro:", self.code)
        form.addRow("", self.photo_button)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.banner)
        layout.addLayout(self.buttons)

    def read_photo(self) -> None:
        """Fill the address and the code from a photo of HQ's enrolment QR code."""
        path = QrPhotoChooser.ask(self)
        if path is None:
            return
        from inspector_app.media.qr_read import QrReadError, read_enrolment_qr

        try:
            url, code = read_enrolment_qr(path)
        except QrReadError as exc:
            self.banner.error(str(exc))
            return
        self.url.setText(url)
        self.code.setText(code)
        self.banner.show_message("Endereço e código lidos da foto: confira e toque em "
                                 "Cadastrar.")
        self.ok_button.setFocus()

    def submit(self) -> None:
        url, code = self.url.text().strip(), self.code.text().strip()
        if not url:
            self.banner.error("Informe o endereço da sede.")
            self.url.setFocus()
            return
        if not code:
            self.banner.error("Informe o código de cadastro fornecido pela sede.")
            self.code.setFocus()
            return
        if not CODE_PATTERN.fullmatch(code):
            self.banner.error("Código de cadastro inválido: use de 4 a 64 letras, números, "
                              "espaços ou hífens, como recebido da sede.")
            self.code.setFocus()
            return
        if not url.startswith(("http://", "https://")):
            self.banner.error("O endereço da sede deve começar com https:// (ou http://).")
            self.url.setFocus()
            return
        self.banner.show_message("Cadastrando na sede…")
        self.ok_button.setEnabled(False)
        data_dir = self.ctx.data_dir

        def job() -> Any:
            from inspector_app.store import open_store
            from inspector_app.sync.client import enrol

            store = open_store(data_dir)
            try:
                return enrol(store, hq_url=url, code=code)
            finally:
                store.close()

        self.ctx.tasks.run_network(job, self._enrolled, self._failed, owner=self)

    def _enrolled(self, result: Any) -> None:
        self.result_value = result
        self.did_enrol.emit(result)
        self.accept()

    def _failed(self, exc: BaseException) -> None:
        self.ok_button.setEnabled(True)
        self.banner.error(describe_error(exc))


class SyncPage(QWidget):
    """Status, "Sincronizar agora", and the records HQ quarantined (with "Reenviar")."""

    enrol_requested = Signal()

    def __init__(self, ctx: AppContext, bridge: SyncBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.bridge = bridge
        self.banner = Banner()
        self.status_label = QLabel("Sincronização ainda não iniciada.")
        self.status_label.setWordWrap(True)
        self.sync_button = QPushButton("&Sincronizar agora")
        self.sync_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.sync_button.clicked.connect(self.sync_now)
        self.enrol_button = QPushButton("&Cadastrar na sede…")
        self.enrol_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.enrol_button.clicked.connect(self.enrol_requested)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Tipo", "Número", "Motivo", ""])
        self.table.horizontalHeader().setStretchLastSection(False)
        self.table.horizontalHeader().setSectionResizeMode(2, self.table.horizontalHeader()
                                                           .ResizeMode.Stretch)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.records: list[Any] = []
        self.requeue_buttons: list[QPushButton] = []
        buttons = QHBoxLayout()
        buttons.addWidget(self.sync_button)
        buttons.addWidget(self.enrol_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        title = QLabel("Sincronização com a sede")
        title.setStyleSheet("font-weight:bold; font-size:14pt;")
        layout.addWidget(title)
        layout.addWidget(self.status_label)
        layout.addLayout(buttons)
        layout.addWidget(self.banner)
        layout.addWidget(QLabel("Registros em quarentena (recusados ou em conflito na sede):"))
        layout.addWidget(self.table, 1)
        bridge.status_changed.connect(self.show_status)
        self._update_buttons()

    def _update_buttons(self) -> None:
        self.sync_button.setEnabled(self.bridge.running)
        self.enrol_button.setVisible(not self.bridge.running)

    def sync_now(self) -> None:
        self.banner.clear_message()
        self.bridge.wake()

    def show_status(self, status: Any) -> None:
        self._update_buttons()
        if status is None:
            return
        online = {True: "on-line", False: "off-line", None: "verificando…"}[status.online]
        lines = [f"Sede: {online}", f"Pendentes de envio: {status.pending}",
                 f"Em quarentena: {status.quarantined}",
                 f"Última sincronização: {format_time(status.last_success)}"]
        if status.running:
            lines.append("Sincronizando…")
        if status.last_error:
            lines.append(f"Último erro: {status.last_error}")
        self.status_label.setText("\n".join(lines))
        if not status.running and status.quarantined != len(self.records):
            self.refresh()

    def refresh(self) -> None:
        """Reload status (from the store) and the quarantined records."""
        self._update_buttons()

        def read(store: Any) -> dict[str, Any]:
            from inspector_app.sync import client

            return {"records": client.quarantined(store), "pending": client.pending_count(store),
                    "last": client.last_successful_sync(store),
                    "enrolled": bool(store.meta(client.META_HQ_URL))}

        self.ctx.tasks.run_store(read, self._loaded,
                                 lambda exc: self.banner.error(describe_error(exc)), owner=self)

    def _loaded(self, info: dict[str, Any]) -> None:
        if self.bridge.status is None:
            state = "cadastrado na sede" if info["enrolled"] else "não cadastrado na sede"
            self.status_label.setText(
                f"Dispositivo {state}.\nPendentes de envio: {info['pending']}\n"
                f"Última sincronização: {format_time(info['last'])}")
        self.records = list(info["records"])
        self.requeue_buttons = []
        self.table.setRowCount(len(self.records))
        for row, record in enumerate(self.records):
            reason = record.reason_pt or STATUS_LABELS.get(record.status, record.status)
            status = STATUS_LABELS.get(record.status, record.status)
            self.table.setItem(row, 0, QTableWidgetItem(KIND_LABELS.get(record.kind,
                                                                        record.kind)))
            self.table.setItem(row, 1, QTableWidgetItem(record.number))
            item = QTableWidgetItem(f"{status}: {reason}")
            item.setToolTip(record.reason or "")  # HQ's full answer, for support
            self.table.setItem(row, 2, item)
            button = QPushButton("Reenviar")
            button.setToolTip("Enviar de novo na próxima sincronização")
            button.clicked.connect(lambda _c=False, rid=record.record_id: self.requeue(rid))
            self.table.setCellWidget(row, 3, button)
            self.requeue_buttons.append(button)

    def requeue(self, record_id: str) -> None:
        def job(store: Any) -> int:
            from inspector_app.sync.client import requeue

            return requeue(store, [record_id])

        def done(_count: int) -> None:
            self.bridge.wake()
            self.refresh()

        self.ctx.tasks.run_store(job, done, lambda exc: self.banner.error(describe_error(exc)),
                                 owner=self)
