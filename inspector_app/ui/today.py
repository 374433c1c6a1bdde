"""The day's work: alerts, inspections still open, documents issued today on this device."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.domain.fieldtext import plate_display
from inspector_app.ui import queries
from inspector_app.ui.context import AppContext
from inspector_app.ui.errors import describe_error
from inspector_app.ui.widgets import (
    INSPECTION_KIND_LABELS,
    TOUCH_TARGET_PX,
    Banner,
    big_button,
    date_br,
    datetime_br,
    heading,
    list_table,
)

RECORD_COLUMNS = ("Hora", "Documento", "Número", "Placa", "Local", "Situação")
OPEN_COLUMNS = ("Início", "Tipo", "Pacote", "Placa", "Local")


@dataclass(frozen=True)
class OpenInspection:
    id: str
    started_at: str
    kind: str
    pack_id: str
    plate: str
    place: str


@dataclass(frozen=True)
class DaySnapshot:
    alerts: tuple[tuple[str, str], ...]  # (level, text)
    open_inspections: tuple[OpenInspection, ...]
    records: tuple[queries.RecordSummary, ...]
    pending: int
    held: int


def load_day(store: Any, matricula: str) -> DaySnapshot:
    """Everything the day's-work page shows (store worker)."""
    from inspector_app.store import inspections as repo
    from inspector_app.store import numbering

    alerts: list[tuple[str, str]] = [("error", text) for text in store.alerts]
    if store.readonly and not store.alerts:
        alerts.append(("error", "Banco de dados somente para leitura: nada pode ser gravado. "
                                "Chame o suporte."))
    low = numbering.low_numbers_warning(store)
    if low:
        alerts.append(("warning", low))
    held = services.held_count(store=store)
    if held:
        alerts.append(("info", f"{held} veículo(s) retido(s) aguardando liberação – veja "
                               "o balcão de retenção."))
    pending = queries.pending_sync_count(store)
    if pending:
        alerts.append(("info", f"{pending} registro(s) selado(s) aguardando envio à sede. Eles "
                               "estão guardados neste dispositivo e são enviados assim que a "
                               "sede estiver acessível (veja Sincronização)."))
    mine = [OpenInspection(i.id, i.started_at, i.kind, i.pack_id, plate_display(i.plate) or "—",
                           i.place)
            for i in repo.open_inspections(store) if i.matricula == matricula]
    return DaySnapshot(tuple(alerts), tuple(mine), tuple(queries.records_of_today(store)),
                       pending, held)


class TodayPage(QWidget):
    """Alerts first, then open inspections (to resume) and today's documents."""

    new_inspection_requested = Signal()
    resume_requested = Signal(str)  # inspection id
    snapshot_did_load = Signal(object)  # DaySnapshot (the status bar uses it)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.snapshot: DaySnapshot | None = None
        self.title = heading("Hoje")
        self.alerts_box = QVBoxLayout()
        self.new_button = big_button("&Nova inspeção", primary=True)
        self.new_button.clicked.connect(self.new_inspection_requested)
        self.refresh_button = big_button("A&tualizar")
        self.refresh_button.clicked.connect(self.refresh)
        self.open_table = list_table(OPEN_COLUMNS, 4)
        self.open_table.setMaximumHeight(TOUCH_TARGET_PX * 4)
        self.open_table.itemActivated.connect(lambda _i: self.resume_selected())
        self.resume_button = big_button("&Continuar inspeção")
        self.resume_button.clicked.connect(self.resume_selected)
        self.open_label = QLabel("Inspeções em andamento")
        self.records_table = list_table(RECORD_COLUMNS, 4)
        self.records_empty = QLabel("Nenhum documento emitido hoje neste dispositivo.")
        self.error = Banner()
        # Alerts show the number ranges left: a sync that brought a range reloads the page.
        ctx.reference_did_change.connect(self.refresh)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.refresh_button)
        top.addWidget(self.new_button)
        open_row = QHBoxLayout()
        open_row.addWidget(self.open_label, 1)
        open_row.addWidget(self.resume_button)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.error)
        layout.addLayout(self.alerts_box)
        layout.addLayout(open_row)
        layout.addWidget(self.open_table)
        layout.addWidget(QLabel("Documentos emitidos hoje"))
        layout.addWidget(self.records_table, 1)
        layout.addWidget(self.records_empty)

    def refresh(self) -> None:
        session = self.ctx.session
        if session is None:
            return
        self.title.setText(f"Hoje – {date_br(dt.date.today())}")
        allowed = self.ctx.can("start_inspection")
        self.new_button.setEnabled(allowed)
        self.new_button.setToolTip("" if allowed else
                                   "Seu perfil não inicia inspeções.")
        matricula = session.matricula
        self.ctx.tasks.run_store(lambda store: load_day(store, matricula), self._show,
                                 lambda exc: self.error.error(describe_error(exc)), owner=self)

    def _show(self, snapshot: DaySnapshot) -> None:
        chosen = self._selected_open()
        self.snapshot = snapshot
        self.error.clear_message()
        while self.alerts_box.count():
            widget = self.alerts_box.takeAt(0).widget()
            if widget is not None:
                widget.deleteLater()
        for level, text in snapshot.alerts:
            # Into the layout before it is shown: a parentless widget shown becomes a window.
            banner = Banner(self)
            self.alerts_box.addWidget(banner)
            banner.show_message(text, level)
        self.open_table.setRowCount(len(snapshot.open_inspections))
        for row, insp in enumerate(snapshot.open_inspections):
            cells = (datetime_br(insp.started_at), INSPECTION_KIND_LABELS.get(insp.kind, insp.kind),
                     insp.pack_id, insp.plate, insp.place)
            for column, text in enumerate(cells):
                self.open_table.setItem(row, column, QTableWidgetItem(text))
        has_open = bool(snapshot.open_inspections)
        for widget in (self.open_table, self.open_label, self.resume_button):
            widget.setVisible(has_open)
        if has_open:
            ids = [i.id for i in snapshot.open_inspections]
            self.open_table.selectRow(ids.index(chosen) if chosen in ids else 0)
        self.resume_button.setEnabled(has_open and self.ctx.can("start_inspection"))
        self.records_table.setRowCount(len(snapshot.records))
        for row, rec in enumerate(snapshot.records):
            time = datetime_br(rec.created_at)[-5:]
            cells = (time, rec.kind_label, rec.number, rec.plate or "—", rec.place or "—",
                     "CANCELADO" if rec.cancelled else "válido")
            for column, text in enumerate(cells):
                self.records_table.setItem(row, column, QTableWidgetItem(text))
        self.records_table.setVisible(bool(snapshot.records))
        self.records_empty.setVisible(not snapshot.records)
        self.snapshot_did_load.emit(snapshot)

    def _selected_open(self) -> str | None:
        """The id of the open inspection chosen in the table (kept across reloads)."""
        rows = self.open_table.selectionModel().selectedRows()
        if self.snapshot is None or not rows:
            return None
        index = rows[0].row()
        opened = self.snapshot.open_inspections
        return opened[index].id if index < len(opened) else None

    def resume_selected(self) -> None:
        if self.snapshot is None or not self.ctx.can("start_inspection"):
            return
        chosen = self._selected_open()
        if chosen is not None:
            self.resume_requested.emit(chosen)
