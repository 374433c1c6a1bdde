"""History and search: find a sealed record, read it, reprint it (2ª VIA), cancel it.

Search takes an auto number (``SÉRIE-000123``) or a verification code, which find one
record; or any mix of a plate in either format, a permit holder (name, CPF/CNPJ or registry
id) and the day of the fact, which must all match (``services.find_records``). Records are
read-only here: a mistake is corrected by a cancellation (supervisor, with a reason), a new
linked record, never by editing.

Caveat: a holder's name matches letter case only for unaccented letters (SQLite ``LIKE``):
"otávio" does not find "Otávio"; type the name as registered, or the CPF/CNPJ.
"""

from __future__ import annotations

import datetime as dt
from html import escape
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QGridLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.domain.fieldtext import DateTextError, plate_display
from inspector_app.domain.identity import IdentityError, parse_plate
from inspector_app.ui import queries
from inspector_app.ui.context import AppContext
from inspector_app.ui.dialogs import CancelAutoDialog
from inspector_app.ui.errors import UiError, describe_error
from inspector_app.ui.fields import DateField
from inspector_app.ui.printing import PrintPanel
from inspector_app.ui.screen_fit import cap_columns
from inspector_app.ui.widgets import (
    LOCATION_LABELS,
    Banner,
    big_button,
    date_br,
    datetime_br,
    heading,
    list_table,
    money_br,
)

COLUMNS = ("Número", "Documento", "Data", "Placa", "Permissionário", "Local", "Situação")
STATUS_COLUMN = COLUMNS.index("Situação")
NOTHING_TO_SEARCH = (
    "Digite o número do auto, o código de verificação, a placa ou o permissionário, ou "
    "marque a data do fato, e toque em Buscar."
)


SHOWN = 50  # results listed at once (the newest)


def search_records(store: Any, text: str, holder: str = "",
                   day: dt.date | None = None) -> list[queries.RecordSummary]:
    """Records matching a number or verification code (one record), or else every record
    matching all of plate (``text``), permit holder and day (store worker)."""
    text, holder = text.strip(), holder.strip()
    if not (text or holder or day):
        raise UiError(NOTHING_TO_SEARCH)
    plate = None
    if text:
        try:
            record = services.find_record(store=store, number=text)
        except services.ServiceError:
            record = None
        if record is not None:
            return [queries.summarise(store, record)]
        try:
            parse_plate(text)
        except IdentityError:
            raise UiError(
                f"Nenhum auto com o número ou código \"{text}\". Confira o número (ex.: "
                "DEMO-AB12-000123) ou o código impresso junto ao QR; para buscar por placa, "
                "use ABC-1234 ou ABC1D23."
            ) from None
        plate = text
    # One screenful and one more (issue 17): a plate inspected for years has thousands of
    # records; the newest are listed and the page says how to narrow the search.
    found = queries.find_records(store, plate=plate, holder=holder or None, day=day,
                                 limit=SHOWN + 1)
    if not found:
        criteria = []
        if plate:
            criteria.append(f"placa {plate_display(plate)}")
        if holder:
            criteria.append(f"permissionário \"{holder}\"")
        if day:
            criteria.append(f"data do fato {date_br(day)}")
        raise UiError(f"Nenhum registro emitido neste dispositivo com {', '.join(criteria)}. "
                      "Confira os dados; para o permissionário, use o nome como no cadastro, "
                      "o CPF/CNPJ ou o código (ex.: H000123).")
    return found


def load_details(store: Any, record_id: str) -> tuple[Any, Any]:
    """The record and the cancelamento that refers to it, if any (store worker)."""
    record = services.find_record(store=store, number=record_id)
    return record, services.cancellation_of(store=store, record_id=record_id)


def describe_record(record: Any, cancelled: Any) -> str:
    """A read-only summary of a sealed record, as rich text; ``cancelled`` is the
    ``services.Cancellation`` that refers to it (or a bool, for an unknown one)."""
    env = record.envelope
    body = env.get("body", {})
    kind = queries.KIND_LABELS.get(record.kind, record.kind)
    if isinstance(cancelled, services.Cancellation):
        situation = (f"CANCELADO pelo registro n.º {cancelled.number} em "
                     f"{datetime_br(cancelled.created_at)}")
    else:
        situation = "CANCELADO" if cancelled else "válido"
    rows = [("Documento", f"{kind} n.º {record.display_number}"),
            ("Selado em", datetime_br(record.created_at)),
            ("Código de verificação", record.verification_code),
            ("Situação", situation)]
    vehicle = body.get("vehicle") or {}
    if vehicle:
        holder = vehicle.get("holder_name") or "não cadastrado"
        rows.append(("Veículo", f"{plate_display(vehicle.get('plate')) or '—'} – {holder}"))
    location = body.get("location") or {}
    if location:
        rows.append(("Local", f"{LOCATION_LABELS.get(location.get('type'), '')}: "
                              f"{location.get('place', '')}"))
    agent = body.get("agent") or body.get("supervisor") or {}
    if agent:
        rows.append(("Agente", f"{agent.get('name')} (mat. {agent.get('matricula')})"))
    if body.get("result"):
        rows.append(("Resultado da vistoria", str(body["result"]).upper()))
    if body.get("reason"):
        rows.append(("Motivo", body["reason"]))
    if body.get("cancelled_number"):
        rows.append(("Documento cancelado", body["cancelled_number"]))
    html = "".join(f"<tr><td style='padding-right:12px'><b>{escape(k)}</b></td>"
                   f"<td>{escape(str(v))}</td></tr>" for k, v in rows)
    parts = [f"<table>{html}</table>"]
    if cancelled:
        parts.insert(0, "<p style='color:#b3261e;font-size:large'><b>"
                        f"{escape(situation)}</b></p>")
    infractions = (body.get("outcome") or {}).get("infractions") or []
    if infractions:
        items = "".join(
            f"<li>{escape(i['rule_id'])} – {escape(i['article'])}: {escape(i['description'])} "
            f"({escape(i['penalty'])}, {money_br(i['fine_brl'])}, {i['points']} ponto(s))</li>"
            for i in infractions)
        parts.append(f"<p><b>Infrações</b></p><ul>{items}</ul>")
    if body.get("grounds"):
        parts.append("<p><b>Fundamentos da retenção:</b> "
                     f"{escape(', '.join(body['grounds']))}</p>")
    if body.get("narrative"):
        parts.append(f"<p><b>Narrativa:</b> {escape(body['narrative'])}</p>")
    return "".join(parts)


class HistoryPage(QWidget):
    """Search, read-only view, reprint and cancellation."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.results: list[queries.RecordSummary] = []
        # The criteria of the last search run (text, holder, day): a registry update runs
        # it again, since a holder is found through the registry (name, CPF/CNPJ, id).
        self.last_search: tuple[str, str, dt.date | None] | None = None
        ctx.reference_did_change.connect(self.reference_changed)
        self.query = QLineEdit()
        self.query.setPlaceholderText("Número do auto, código de verificação ou placa")
        self.query.setAccessibleName("Buscar")
        self.query.returnPressed.connect(self.search)
        self.holder = QLineEdit()
        self.holder.setPlaceholderText("Nome, CPF/CNPJ ou código do permissionário")
        self.holder.setAccessibleName("Permissionário")
        self.holder.returnPressed.connect(self.search)
        self.use_day = QCheckBox("Da&ta do fato:")
        # Typed as dd/mm/aaaa (a QDateEdit garbles typing after a click on the month or year).
        self.day = DateField("Data do fato")
        self.day.set_value(dt.date.today())
        self.day.setEnabled(False)
        self.use_day.toggled.connect(self.day.setEnabled)
        self.day.edit.returnPressed.connect(self.search)
        self.search_button = big_button("B&uscar", primary=True)
        self.search_button.clicked.connect(self.search)
        self.table = list_table(COLUMNS, COLUMNS.index("Permissionário"), COLUMNS.index("Local"))
        self.table.itemSelectionChanged.connect(self._sync)
        self.table.itemSelectionChanged.connect(self._show_details)
        self.table.itemActivated.connect(lambda _i: self.open_selected())
        self.open_button = big_button("&Abrir")
        self.open_button.clicked.connect(self.open_selected)
        self.reprint_button = big_button("R&eimprimir (2ª via)")
        self.reprint_button.clicked.connect(self.reprint_selected)
        self.cancel_button = big_button("Ca&ncelar auto…")
        self.cancel_button.clicked.connect(self.cancel_selected)
        self.banner = Banner()
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.setMinimumWidth(220)
        self.panel = PrintPanel(ctx)

        query_label = QLabel("Número, código ou &placa:")
        query_label.setBuddy(self.query)
        holder_label = QLabel("Per&missionário:")
        holder_label.setBuddy(self.holder)
        search_row = QGridLayout()
        search_row.addWidget(query_label, 0, 0)
        search_row.addWidget(self.query, 0, 1)
        search_row.addWidget(self.use_day, 0, 2)
        search_row.addWidget(self.day, 0, 3)
        search_row.addWidget(holder_label, 1, 0)
        search_row.addWidget(self.holder, 1, 1)
        search_row.addWidget(self.search_button, 1, 2, 1, 2)
        search_row.setColumnStretch(1, 1)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button)
        buttons.addWidget(self.reprint_button)
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(heading("Histórico e busca"))
        top_layout.addLayout(search_row)
        top_layout.addWidget(self.banner)
        top_layout.addWidget(self.table, 1)
        top_layout.addLayout(buttons)
        bottom = QSplitter(Qt.Orientation.Horizontal)
        bottom.addWidget(self.details)
        bottom.addWidget(self.panel)
        bottom.setStretchFactor(1, 2)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(bottom)
        splitter.setChildrenCollapsible(False)
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([420, 420])
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self._sync()

    # --- search -----------------------------------------------------------------------------------

    def search(self) -> None:
        text, holder = self.query.text(), self.holder.text()
        day = None
        if self.use_day.isChecked():
            try:
                day = self.day.value()
            except DateTextError as exc:
                self.banner.error(exc.message)
                self.day.setFocus()
                return
            if day is None:
                self.banner.error("Informe a data do fato (dd/mm/aaaa) ou desmarque "
                                  "\"Data do fato\".")
                self.day.setFocus()
                return
        self.last_search = (text, holder, day)
        self.banner.clear_message()
        self.search_button.setEnabled(False)

        def failed(exc: BaseException) -> None:
            self.search_button.setEnabled(True)
            self._show([])
            self.details.clear()  # the previous record is not what was asked for
            self.panel.clear()
            self.banner.error(describe_error(exc))

        self.ctx.tasks.run_store(lambda store: search_records(store, text, holder, day),
                                 self._found, failed, owner=self)

    def _found(self, results: list[queries.RecordSummary]) -> None:
        self.search_button.setEnabled(True)
        if len(results) > SHOWN:
            results = results[:SHOWN]
            self.banner.show_message(
                f"Mais de {SHOWN} registros encontrados: mostrando os {SHOWN} mais recentes. "
                "Para ver os anteriores, marque a data do fato ou informe o permissionário.",
                "info")
        self._show(results)
        if results:
            self.table.selectRow(0)
            self.open_selected()

    def reference_changed(self) -> None:
        """The registry changed: run the last search again with the criteria it had (what
        is typed now is left alone), keeping the chosen record selected when it is still
        found; the record shown is cleared when it no longer matches."""
        if self.last_search is None:
            return
        text, holder, day = self.last_search
        chosen = self.selected()

        def found(results: list[queries.RecordSummary]) -> None:
            self.banner.clear_message()
            results = results[:SHOWN]
            self._show(results)
            ids = [r.id for r in results]
            if chosen is not None and chosen.id in ids:
                self.table.selectRow(ids.index(chosen.id))
            elif chosen is not None:
                self.details.clear()
                self.panel.clear()
            elif results:
                self.table.selectRow(0)
                self.open_selected()

        def failed(exc: BaseException) -> None:
            self._show([])
            if chosen is not None:
                self.details.clear()
                self.panel.clear()
            self.banner.error(describe_error(exc))

        self.ctx.tasks.run_store(lambda store: search_records(store, text, holder, day),
                                 found, failed, owner=self)

    def _show(self, results: list[queries.RecordSummary]) -> None:
        self.results = results
        self.table.setRowCount(len(results))
        for row, r in enumerate(results):
            cells = (r.number, r.kind_label, datetime_br(r.created_at), r.plate or "—",
                     r.holder or "—", r.place or "—",
                     "CANCELADO" if r.cancelled else "válido")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)  # long names and places are elided in the cell
                if r.cancelled:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(row, column, item)
        # Kind and date wrap onto two lines: holder and place keep room at 1024 px.
        cap_columns(self.table, {0: 190, 1: 100, 2: 120})
        self._sync()

    def selected(self) -> queries.RecordSummary | None:
        rows = self.table.selectionModel().selectedRows()
        return self.results[rows[0].row()] if rows else None

    def _sync(self) -> None:
        chosen = self.selected()
        self.open_button.setEnabled(chosen is not None)
        self.reprint_button.setEnabled(chosen is not None and self.ctx.can("reprint"))
        may_cancel = self.ctx.can("cancel_auto")
        self.cancel_button.setEnabled(
            chosen is not None and may_cancel and not chosen.cancelled
            and chosen.kind not in ("cancelamento", "numero_anulado"))
        self.cancel_button.setToolTip("" if may_cancel else
                                      "Somente a supervisão pode cancelar um auto.")

    # --- actions ----------------------------------------------------------------------------------

    def _show_details(self) -> None:
        """The details pane follows the selected row (read from the store, so it says
        CANCELADO, with the cancelling record, as soon as a cancellation is sealed)."""
        chosen = self.selected()
        if chosen is None:
            self.details.clear()
            return

        def loaded(found: tuple[Any, Any]) -> None:
            record, cancellation = found
            current = self.selected()
            if current is None or current.id != record.id:
                return  # another row was chosen meanwhile
            self.details.setHtml(describe_record(record, cancellation))

        self.ctx.tasks.run_store(
            lambda store: load_details(store, chosen.id), loaded,
            lambda exc: self.banner.error(describe_error(exc)), owner=self)

    def open_selected(self, *, print_after: bool = False) -> None:
        chosen = self.selected()
        if chosen is None:
            return

        def loaded(found: tuple[Any, Any]) -> None:
            record, cancellation = found
            self.details.setHtml(describe_record(record, cancellation))
            self.panel.show_records([(record.id, record.kind, record.display_number)],
                                    then=self.panel.print_current if print_after else None)

        self.ctx.tasks.run_store(
            lambda store: load_details(store, chosen.id), loaded,
            lambda exc: self.banner.error(describe_error(exc)), owner=self)

    def reprint_selected(self) -> None:
        """Open the record and print it: logged, and labelled 2ª VIA when printed before."""
        self.open_selected(print_after=True)

    def cancel_selected(self) -> None:
        chosen = self.selected()
        if chosen is None or not self.ctx.can("cancel_auto"):
            return
        answer = CancelAutoDialog.ask_with_password(self)
        if answer is None:
            return
        reason, password = answer
        session = self.ctx.session

        def cancelled(result: Any) -> None:
            record = result.records[0]
            self.banner.show_message(
                f"{chosen.kind_label} {chosen.number} cancelado pelo registro "
                f"{record.display_number}. O original continua arquivado, sem alteração.", "ok")
            self.ctx.records_did_change.emit()
            self.results = [queries.RecordSummary(**{**r.__dict__, "cancelled": True})
                            if r.id == chosen.id else r for r in self.results]
            row = next(i for i, r in enumerate(self.results) if r.id == chosen.id)
            self._show(self.results)
            self.table.selectRow(row)
            self._show_details()  # the details pane now says CANCELADO, with the notice
            self.panel.show_records([(record.id, record.kind, record.display_number)])

        def failed(exc: BaseException) -> None:
            self.banner.error(describe_error(exc))
            self.cancel_button.setFocus()

        self.ctx.tasks.run_store(
            lambda store: services.cancel_auto(store=store, session=session,
                                               record_id=chosen.id, reason=reason,
                                               password=password),
            cancelled, failed, owner=self)
