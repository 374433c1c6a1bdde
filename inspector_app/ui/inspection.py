"""The guided inspection: one flow for periodic vistoria and roadside fiscalização.

Steps: place, vehicle, driver (the inspection is started on the store worker when leaving
this step), checklist (each answer saved as given), result (rules engine), signatures,
seal, print. Every store call runs on the store worker through ``ctx.tasks``.

Caveat: once started, place, vehicle and driver are on disk and their steps are locked;
an open inspection can be resumed from the day's work (answers are restored, signatures
are asked again). A registry update from HQ (``ctx.reference_did_change``) therefore never
changes a started inspection's vehicle or driver: it is shown as a notice instead.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.domain.fieldtext import document_display, plate_display
from inspector_app.ui import vehicle_history
from inspector_app.ui.checklist import ChecklistPage, photo_infos
from inspector_app.ui.context import AppContext
from inspector_app.ui.desk_widgets import AutuadoForm, WitnessBox, review_html
from inspector_app.ui.dialogs import AbandonDialog
from inspector_app.ui.errors import describe_error
from inspector_app.ui.fields import Check, FieldProblems
from inspector_app.ui.location import GpsButton
from inspector_app.ui.printing import PrintPanel
from inspector_app.ui.result import ResultPage
from inspector_app.ui.screen_fit import ScrollingStack
from inspector_app.ui.signatures import SignatureBox
from inspector_app.ui.widgets import (
    INSPECTION_KIND_LABELS,
    LOCATION_LABELS,
    Banner,
    big_button,
    date_br,
    heading,
)

STEPS = ("Local", "Veículo", "Condutor", "Checklist", "Resultado", "Assinaturas", "Selar",
         "Imprimir")
LOCAL, VEHICLE, DRIVER, CHECKLIST, RESULT, SIGNATURES, SEAL, PRINT = range(len(STEPS))

Done = Callable[[], None]


@dataclass
class WizardState:
    """Everything the steps collect, handed from one step to the next."""

    pack_id: str = ""
    pack: Any = None
    kind: str = "fiscalizacao"
    location_type: str = "terminal"
    place: str = ""
    latitude: float | None = None
    longitude: float | None = None
    start_of_operation: bool = False
    plate: str = ""
    vehicle_view: Any = None
    looked_up_plate: str | None = None
    manual_vehicle: dict[str, Any] = field(default_factory=dict)
    driver: dict[str, Any] = field(default_factory=dict)
    driver_view: Any = None
    looked_up_driver: tuple[str, str] | None = None
    inspection_id: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)
    unanswered: int = 0
    removed: dict[str, str] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    retain: bool = False
    retention_decided: bool = False
    retention_place: str = ""
    insecurity_justification: str = ""
    narrative: str = ""
    outcome: Any = None
    review: Any = None  # services.review_inspection: what the driver reviewed and signs
    sealed: Any = None  # services.SealResult

    def summary(self) -> str:
        plate = plate_display(self.plate) or "sem placa"
        flag = "" if self.vehicle_view is not None else " (não cadastrado)"
        return (f"{INSPECTION_KIND_LABELS[self.kind]} · {self.pack_id} · {plate}{flag} · "
                f"{LOCATION_LABELS.get(self.location_type, self.location_type)}: {self.place}")


COORDINATE_EXAMPLES = {"Latitude": "-15,7801", "Longitude": "-47,9292"}  # Brasília


def _coordinate(text: str, name: str, limit: float) -> float | None:
    """A decimal-degree coordinate typed with comma or point; None when left empty."""
    text = text.strip().replace(",", ".")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        example = COORDINATE_EXAMPLES.get(name, "-15,7801")
        raise ValueError(f"{name} inválida: use graus decimais, por exemplo {example}.") \
            from None
    if not -limit <= value <= limit:
        raise ValueError(f"{name} fora do intervalo -{limit:g} a {limit:g}.")
    return value


def _form_label(text: str, buddy: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(buddy)
    return label


# --- step 1: place --------------------------------------------------------------------------------


class PlaceStep(QWidget):
    def __init__(self, state: WizardState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.pack = QComboBox()
        self.pack.setAccessibleName("Pacote de regulamentação")
        # A long pack title must not widen the window past a 1024 px screen: the combo
        # elides, its list shows the whole titles.
        self.pack.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.pack.setMinimumContentsLength(24)
        self.fiscalizacao = QRadioButton("&Fiscalização")
        self.vistoria = QRadioButton("V&istoria periódica")
        self.fiscalizacao.setChecked(True)
        kinds = QButtonGroup(self)
        kinds.addButton(self.fiscalizacao)
        kinds.addButton(self.vistoria)
        self.vistoria.toggled.connect(self._kind_changed)
        self.location = QComboBox()
        for key, label in LOCATION_LABELS.items():
            self.location.addItem(label, key)
        self.place = QLineEdit()
        self.place.setPlaceholderText("Endereço ou referência (ex.: Terminal Rural de Planaltina)")
        self.latitude = QLineEdit()
        self.latitude.setPlaceholderText(f"opcional, ex.: {COORDINATE_EXAMPLES['Latitude']}")
        self.longitude = QLineEdit()
        self.longitude.setPlaceholderText(f"opcional, ex.: {COORDINATE_EXAMPLES['Longitude']}")
        self.gps = GpsButton()
        self.gps.position_found.connect(self._gps_found)
        self.gps.position_failed.connect(self._gps_failed)
        self.gps_note = QLabel("")
        self.gps_note.setWordWrap(True)
        self.start_of_operation = QCheckBox("Início da operação do dia (art. 37, V)")
        self.start_of_operation.setToolTip(
            "Marque quando o veículo é fiscalizado antes de iniciar a operação: alguns "
            "fundamentos de retenção só valem nesse momento.")
        kind_row = QHBoxLayout()
        kind_row.addWidget(self.fiscalizacao)
        kind_row.addWidget(self.vistoria)
        kind_row.addStretch(1)
        coords = QHBoxLayout()
        coords.addWidget(self.latitude)
        coords.addWidget(_form_label("Lon&gitude:", self.longitude))
        coords.addWidget(self.longitude)
        coords.addWidget(self.gps)
        form = QFormLayout(self)
        form.addRow(_form_label("&Pacote:", self.pack), self.pack)
        form.addRow(QLabel("Tipo:"), kind_row)
        form.addRow(_form_label("Tipo de &local:", self.location), self.location)
        form.addRow(_form_label("Local (&endereço):", self.place), self.place)
        form.addRow(_form_label("La&titude:", self.latitude), coords)
        form.addRow(QLabel(""), self.gps_note)
        form.setRowVisible(self.gps_note, False)
        self._form = form
        form.addRow(QLabel(""), self.start_of_operation)
        self.pack.currentIndexChanged.connect(lambda _i: self._pack_changed())

    def set_packs(self, listings: list[Any], preselected: str | None = None,
                  start_questions: dict[str, str | None] | None = None) -> None:
        """The packs of the inspector's órgão (``services.packs_for_session``), the
        preselected one chosen; the start-of-operation question only for a pack that has
        a ground depending on it."""
        self._start_questions = dict(start_questions or {})
        self.pack.clear()
        for listing in listings:
            if listing.problems:
                continue
            status = "" if listing.status == "in_force" else " (histórico)"
            self.pack.addItem(f"{listing.id} – {listing.title}{status}", listing.id)
        index = self.pack.findData(preselected) if preselected else -1
        if index >= 0:
            self.pack.setCurrentIndex(index)
        self._pack_changed()

    def _pack_changed(self) -> None:
        questions = getattr(self, "_start_questions", None)
        if questions is None:
            return
        label = questions.get(self.pack.currentData())
        self.start_of_operation.setVisible(label is not None)
        if label is None:
            self.start_of_operation.setChecked(False)
        else:
            self.start_of_operation.setText(label)

    def _kind_changed(self, vistoria: bool) -> None:
        key = "patio_vistoria" if vistoria else "terminal"
        self.location.setCurrentIndex(self.location.findData(key))

    def _gps_found(self, latitude: float, longitude: float, accuracy: object) -> None:
        self.latitude.setText(f"{latitude:.6f}".replace(".", ","))
        self.longitude.setText(f"{longitude:.6f}".replace(".", ","))
        precision = f" (precisão de cerca de {accuracy:.0f} m)" \
            if isinstance(accuracy, float) else ""
        self.gps_note.setText(f"Posição preenchida pelo GPS{precision}.")
        self.gps_note.setStyleSheet("color:#1e7b34;")
        self._form.setRowVisible(self.gps_note, True)

    def _gps_failed(self, message: str) -> None:
        self.gps_note.setText(message)
        self.gps_note.setStyleSheet("color:#b3261e;")
        self._form.setRowVisible(self.gps_note, True)

    def problems(self) -> list[tuple[QWidget, str, Check | None]]:
        """Every error of this step at once: (field, message, re-check)."""

        def place() -> str | None:
            if self.place.text().strip():
                return None
            return "Informe o local da inspeção (endereço ou referência)."

        def coordinate(edit: QLineEdit, name: str, limit: float) -> Check:
            def check() -> str | None:
                try:
                    _coordinate(edit.text(), name, limit)
                except ValueError as exc:
                    return str(exc)
                return None
            return check

        found: list[tuple[QWidget, str, Check | None]] = []
        if self.pack.currentData() is None:
            found.append((self.pack, "Nenhum pacote de regulamentação disponível: verifique "
                                     "a pasta forms/.", None))
        checks: list[tuple[QWidget, Check]] = [
            (self.place, place),
            (self.latitude, coordinate(self.latitude, "Latitude", 90)),
            (self.longitude, coordinate(self.longitude, "Longitude", 180))]
        for widget, check in checks:
            message = check()
            if message:
                found.append((widget, message, check))
        return found

    def collect(self) -> str | None:
        """Store the step in the state; the first problem's message when there is one
        (``problems()`` has them all)."""
        problems = self.problems()
        if problems:
            problems[0][0].setFocus()
            return problems[0][1]
        state = self.state
        place = self.place.text().strip()
        latitude = _coordinate(self.latitude.text(), "Latitude", 90)
        longitude = _coordinate(self.longitude.text(), "Longitude", 180)
        state.pack_id = self.pack.currentData()
        state.kind = "vistoria" if self.vistoria.isChecked() else "fiscalizacao"
        state.location_type = self.location.currentData()
        state.place = place
        state.latitude, state.longitude = latitude, longitude
        state.start_of_operation = self.start_of_operation.isChecked()
        return None


# --- step 2: vehicle ------------------------------------------------------------------------------


def describe_vehicle(view: Any, pack_id: str) -> str:
    """The registry card of a vehicle, as rich text."""
    today = dt.date.today()
    holder, line = view.holder, view.line
    rows = [("Placa", f"{view.plate_display}"), ("Modelo", view.make_model or "—")]
    if holder is not None:
        document = document_display(holder.document) or "—"
        rows.append(("Permissionário", f"{holder.name} ({document})"))
        until = f", válida até {date_br(holder.permit_valid_until)}" \
            if holder.permit_valid_until else ""
        rows.append(("Permissão", f"{holder.permit_number} – {holder.permit_status_pt}{until}"))
    else:
        rows.append(("Permissionário", "não informado no cadastro"))
    rows.append(("Linha", line.label() if line else "—"))
    if view.chassis_year:
        body = f" · carroceria {view.body_year}" if view.body_year else ""
        rows.append(("Ano / idade", f"chassi {view.chassis_year}{body} · "
                                    f"{today.year - view.chassis_year} anos"))
    rows.append(("Lugares / portas", f"{view.seats or '—'} lugares · {view.doors or '—'} portas"))
    policy = f"{view.insurance_policy} – " if view.insurance_policy else ""
    rows.append(("Seguro", f"{policy}válido até {date_br(view.insurance_valid_until)}"))
    valid = f" (válida até {date_br(view.vistoria_valid_until)})" \
        if view.vistoria_valid_until else ""
    rows.append(("Última vistoria", f"{date_br(view.last_vistoria)}{valid}"))
    html = "<table>" + "".join(f"<tr><td style='padding-right:12px'><b>{escape(k)}</b></td>"
                               f"<td>{escape(str(v))}</td></tr>" for k, v in rows) + "</table>"
    if view.standing is not None:  # HQ's figures for the holder, labelled with their date
        color = "#b3261e" if view.standing.cassacao_proposed else "#5f6368"
        html += f"<p style='color:{color}'>{escape(view.standing.text_pt())}</p>"
    warnings = list(view.warnings)
    if view.pack_id != pack_id:
        warnings.append(f"Veículo cadastrado no pacote {view.pack_id}, que não está "
                        f"disponível neste dispositivo; a inspeção usa {pack_id}.")
    if warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in warnings)
        return (html + "<p style='color:#b3261e'><b>Avisos do cadastro:</b></p>"
                f"<ul style='color:#b3261e'>{items}</ul>")
    return html + "<p style='color:#1e7b34'>Sem avisos no cadastro.</p>"


class VehicleStep(QWidget):
    vehicle_did_load = Signal(object)  # the registry's VehicleView
    lookup_started = Signal()  # the inspector asked for a lookup (typed plate)

    def __init__(self, ctx: AppContext, state: WizardState, banner: Banner,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.state = state
        self.banner = banner
        self.plate = QLineEdit()
        self.plate.setPlaceholderText("ABC-1234 ou ABC1D23")
        self.plate.setMaxLength(9)
        self.plate.setAccessibleName("Placa")
        self.lookup_button = big_button("&Consultar placa")
        self.lookup_button.clicked.connect(lambda: self.lookup())
        self.plate.returnPressed.connect(lambda: self.lookup())
        self.card = QLabel("Digite a placa e toque em Consultar.")
        self.card.setWordWrap(True)
        self.card.setTextFormat(Qt.TextFormat.RichText)
        # Earlier inspections and records of this plate here, HQ's history once synced.
        self.history = QLabel("")
        self.history.setWordWrap(True)
        self.history.setTextFormat(Qt.TextFormat.RichText)
        self.history.setAccessibleName("Histórico do veículo")
        self.history.hide()
        self.manual = QGroupBox("Veículo não cadastrado – dados do CRLV (ficará sinalizado)")
        self.make_model = QLineEdit()
        self.chassis_year = QSpinBox()
        self.body_year = QSpinBox()
        for spin in (self.chassis_year, self.body_year):
            spin.setRange(0, dt.date.today().year + 1)
            spin.setSpecialValueText("não informado")
        self.seats = QSpinBox()
        self.seats.setRange(0, 120)
        self.seats.setSpecialValueText("não informado")
        self.doors = QSpinBox()
        self.doors.setRange(0, 6)
        self.doors.setSpecialValueText("não informado")
        self.renavam = QLineEdit()
        self.renavam.setPlaceholderText("11 dígitos, como no CRLV")
        # The autuado of an unregistered vehicle: the owner named on the CRLV.
        self.holder_name = QLineEdit()
        self.holder_name.setPlaceholderText("Nome ou razão social, como no CRLV")
        self.holder_document = QLineEdit()
        self.holder_document.setPlaceholderText("CPF ou CNPJ do proprietário")
        form = QFormLayout(self.manual)
        form.addRow(_form_label("&Marca/modelo:", self.make_model), self.make_model)
        form.addRow(_form_label("Ano do c&hassi:", self.chassis_year), self.chassis_year)
        form.addRow(_form_label("Ano da carroc&eria:", self.body_year), self.body_year)
        form.addRow(_form_label("L&ugares:", self.seats), self.seats)
        form.addRow(_form_label("P&ortas:", self.doors), self.doors)
        form.addRow(_form_label("RE&NAVAM:", self.renavam), self.renavam)
        form.addRow(_form_label("Proprietário (autua&do):", self.holder_name), self.holder_name)
        form.addRow(_form_label("CPF/CNP&J do proprietário:", self.holder_document),
                    self.holder_document)
        self.manual.hide()
        row = QHBoxLayout()
        row.addWidget(_form_label("&Placa:", self.plate))
        row.addWidget(self.plate, 1)
        row.addWidget(self.lookup_button)
        layout = QVBoxLayout(self)
        layout.addLayout(row)
        layout.addWidget(self.card)
        layout.addWidget(self.manual)
        layout.addWidget(self.history)
        layout.addStretch(1)

    def lookup(self, then: Done | None = None) -> None:
        text = self.plate.text().strip()
        if not text:
            self.banner.error("Digite a placa (ABC-1234 ou ABC1D23).")
            self.plate.setFocus()
            return
        from inspector_app.store import reference

        self.lookup_started.emit()
        self.lookup_button.setEnabled(False)
        self.card.setText("Consultando o cadastro…")

        def found(data: tuple[Any, Any]) -> None:
            view, history = data
            self.lookup_button.setEnabled(True)
            shown = plate_display(text)  # one form on screen: ABC-1234 or ABC1D23
            if self.plate.text().strip() == text:
                self.plate.setText(shown)
            self.state.looked_up_plate = shown
            self.banner.clear_message()
            self.show_view(view)
            self.history.setText(vehicle_history.to_html(history))
            self.history.setVisible(history is not None)
            if view is not None and then is not None:
                then()

        def failed(exc: BaseException) -> None:
            self.lookup_button.setEnabled(True)
            self.card.setText("")
            self.banner.error(describe_error(exc))
            self.plate.setFocus()
            self.plate.selectAll()

        def job(store: Any) -> tuple[Any, Any]:
            view = reference.find_vehicle(store, text)
            return view, vehicle_history.load(store, text, view=view)

        self.history.hide()
        self.ctx.tasks.run_store(job, found, failed, owner=self)

    def show_view(self, view: Any) -> None:
        """Show a lookup's answer (the registry's vehicle, or None: not registered); the
        plate and the CRLV fields keep what was typed."""
        self.state.vehicle_view = view
        if view is None:
            self.card.setText(
                "<p style='color:#b3261e'><b>Veículo não cadastrado</b> no órgão gestor. "
                "Confira a placa; se estiver certa, preencha os dados do CRLV abaixo. "
                "A inspeção ficará marcada como de veículo não cadastrado.</p>")
            self.manual.show()
            return
        self.manual.hide()
        self.vehicle_did_load.emit(view)  # may switch the pack to the vehicle's
        self.card.setText(describe_vehicle(view, self.state.pack_id))

    def advance(self, done: Done) -> None:
        text = self.plate.text().strip()
        if self.state.looked_up_plate != text:
            self.lookup(then=lambda: self._finish(done))
            return
        self._finish(done)

    def _finish(self, done: Done) -> None:
        state = self.state
        state.plate = self.plate.text().strip()
        manual: dict[str, Any] = {}
        if state.vehicle_view is None:
            for key, spin in (("chassis_year", self.chassis_year), ("body_year", self.body_year),
                              ("seats", self.seats), ("doors", self.doors)):
                if spin.value():
                    manual[key] = spin.value()
            edits = self.identity_fields()
            for key, edit in edits.items():
                if edit.text().strip():
                    manual[key] = edit.text().strip()
            # No auto without an identified autuado and vehicle: every problem at once,
            # the focus on the first field at fault.
            problems = services.unregistered_vehicle_problems(vehicle=manual)
            if problems:
                self.banner.error("\n".join(message for _field, message in problems))
                wrong = {field.split(".")[-1] for field, _message in problems}
                first = next(key for key in edits if key in wrong)  # in the form's order
                edits[first].setFocus()
                return
        state.manual_vehicle = manual
        done()

    def identity_fields(self) -> dict[str, QLineEdit]:
        return {"make_model": self.make_model, "renavam": self.renavam,
                "holder_name": self.holder_name, "holder_document": self.holder_document}


# --- step 3: driver -------------------------------------------------------------------------------


def describe_driver(view: Any) -> str:
    rows = [("Nome", view.name), ("CPF", document_display(view.cpf) or "—"),
            ("CNH", view.cnh or "—"),
            ("Categoria / validade", f"{view.cnh_category or '—'} · "
                                     f"{date_br(view.cnh_valid_until)}"),
            ("Cadastro", "cadastrado" if view.registered else "NÃO cadastrado"),
            ("Vínculo", view.holder.name if view.holder else "—")]
    html = "".join(f"<tr><td style='padding-right:12px'><b>{escape(k)}</b></td>"
                   f"<td>{escape(str(v))}</td></tr>" for k, v in rows)
    if view.warnings:
        items = "".join(f"<li>{escape(w)}</li>" for w in view.warnings)
        return f"<table>{html}</table><ul style='color:#b3261e'>{items}</ul>"
    return f"<table>{html}</table>"


DRIVER_HINT = ("Informe o CPF ou a CNH do condutor e tecle Enter (ou toque em Consultar). "
               "Se o condutor estiver ausente ou sem documento, marque \"Condutor não "
               "identificado\".")


class WhichIsTrue:
    """Ask which of two contradicting facts is true; the index of the chosen option (or
    -1 when the question is closed). Tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None, title: str, text: str,
            options: tuple[str, ...]) -> int:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(parent)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle(title)
        box.setText(text)
        buttons = [box.addButton(o, QMessageBox.ButtonRole.AcceptRole) for o in options]
        box.setDefaultButton(buttons[-1])  # keeping what was typed loses nothing
        box.exec()
        clicked = box.clickedButton()
        return buttons.index(clicked) if clicked in buttons else -1


class DriverStep(QWidget):
    lookup_started = Signal()  # the inspector asked for a lookup (typed CPF/CNH)

    def __init__(self, ctx: AppContext, state: WizardState, banner: Banner,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.state = state
        self.banner = banner
        self.cpf = QLineEdit()
        self.cpf.setPlaceholderText("000.000.000-00")
        self.cnh = QLineEdit()
        self.cnh.setPlaceholderText("11 dígitos")
        self.lookup_button = big_button("Consultar con&dutor")
        self.lookup_button.clicked.connect(lambda: self.lookup())
        self.cpf.returnPressed.connect(lambda: self.lookup())
        self.cnh.returnPressed.connect(lambda: self.lookup())
        self.absent = QCheckBox("Condutor não identificado (ausente ou sem documento)")
        self.absent.toggled.connect(self._absent_changed)
        self.card = QLabel(DRIVER_HINT)
        self.card.setWordWrap(True)
        self.card.setTextFormat(Qt.TextFormat.RichText)
        self.manual = QGroupBox("Condutor não cadastrado")
        self.name = QLineEdit()
        form = QFormLayout(self.manual)
        form.addRow(_form_label("No&me:", self.name), self.name)
        self.manual.hide()
        fields = QFormLayout()
        fields.addRow(_form_label("C&PF:", self.cpf), self.cpf)
        fields.addRow(_form_label("C&NH:", self.cnh), self.cnh)
        layout = QVBoxLayout(self)
        layout.addLayout(fields)
        row = QHBoxLayout()
        row.addWidget(self.lookup_button)
        row.addWidget(self.absent)
        row.addStretch(1)
        layout.addLayout(row)
        layout.addWidget(self.card)
        layout.addWidget(self.manual)
        layout.addStretch(1)

    def _key(self) -> tuple[str, str]:
        """CPF and CNH as typed, without the CPF's punctuation (shown after a lookup)."""
        cpf = self.cpf.text().strip()
        if cpf and all(c.isdigit() or c in ".- " for c in cpf):
            cpf = "".join(c for c in cpf if c.isdigit())
        return (cpf, self.cnh.text().strip())

    def named(self) -> str:
        """Who the fields name ("" when nothing was typed or looked up)."""
        view = self.state.driver_view
        if view is not None and self.state.looked_up_driver == self._key():
            return f"{view.name} (CPF {document_display(view.cpf)})"
        cpf, cnh = self._key()
        name = self.name.text().strip()
        parts = [name] if name else []
        if cpf:
            parts.append(f"CPF {document_display(cpf)}")
        if cnh:
            parts.append(f"CNH {cnh}")
        return " – ".join(parts)

    def _absent_changed(self, absent: bool) -> None:
        named = self.named()
        if absent and named:
            choice = WhichIsTrue.ask(
                self, "Condutor identificado ou ausente?",
                f"Você informou o condutor {named}, e marcou que o condutor não foi "
                "identificado. Qual das duas é verdade?",
                ("O condutor não foi identificado: descartar o CPF/CNH informado",
                 f"O condutor é {named}: manter"))
            if choice != 0:
                self.absent.blockSignals(True)
                self.absent.setChecked(False)
                self.absent.blockSignals(False)
                self.cpf.setFocus()
                return
            for edit in (self.cpf, self.cnh, self.name):
                edit.clear()
            self.state.looked_up_driver = None
            self.state.driver_view = None
            self.manual.hide()
            self.card.setText(DRIVER_HINT)
        for widget in (self.cpf, self.cnh, self.lookup_button, self.manual):
            widget.setEnabled(not absent)

    def lookup(self, then: Done | None = None) -> None:
        cpf, cnh = self._key()
        if self.absent.isChecked():
            return
        if not cpf and not cnh:
            self.banner.error("Informe o CPF ou a CNH do condutor, ou marque \"Condutor não "
                              "identificado\".")
            self.cpf.setFocus()
            return
        from inspector_app.store import reference

        self.lookup_started.emit()
        self.lookup_button.setEnabled(False)

        def found(view: Any) -> None:
            self.lookup_button.setEnabled(True)
            self.state.looked_up_driver = (cpf, cnh)
            if cpf and self._key()[0] == cpf:
                self.cpf.setText(document_display(cpf))  # 000.000.000-00 on screen
            self.banner.clear_message()
            self.show_view(view)
            if view is None:
                self.name.setFocus()
                return
            if then is not None:
                then()

        def failed(exc: BaseException) -> None:
            self.lookup_button.setEnabled(True)
            self.banner.error(describe_error(exc))
            field = getattr(exc, "field", "")
            edit = self.cnh if "cnh" in str(field) or (cnh and not cpf) else self.cpf
            edit.setFocus()
            edit.selectAll()

        self.ctx.tasks.run_store(
            lambda store: reference.find_driver(store, cpf=cpf or None, cnh=cnh or None),
            found, failed, owner=self)

    def show_view(self, view: Any) -> None:
        """Show a lookup's answer (the registry's driver, or None); typed fields are kept."""
        self.state.driver_view = view
        if view is None:
            self.card.setText("<p style='color:#b3261e'><b>Condutor não cadastrado.</b> "
                              "Informe o nome; o auto registrará o condutor como não "
                              "cadastrado.</p>")
            self.manual.show()
            return
        self.manual.hide()
        self.card.setText(describe_driver(view))

    def recheck_key(self) -> tuple[str, str] | None:
        """The CPF/CNH last looked up, None when none was or the driver is marked absent."""
        return None if self.absent.isChecked() else self.state.looked_up_driver

    def advance(self, done: Done) -> None:
        if self.absent.isChecked():
            self.state.driver = {}
            done()
            return
        if self.state.looked_up_driver != self._key():
            self.lookup(then=lambda: self._finish(done))
            return
        self._finish(done)

    def _finish(self, done: Done) -> None:
        view = self.state.driver_view
        cpf, cnh = self._key()
        if view is not None:
            driver = dict(view.case_driver())
        else:
            if not self.name.text().strip():
                self.banner.error("Informe o nome do condutor não cadastrado.")
                self.name.setFocus()
                return
            driver = {"name": self.name.text().strip(), "registered": False}
            if cpf:
                driver["cpf"] = cpf
            if cnh:
                driver["cnh"] = cnh
        self.state.driver = driver
        done()


# --- steps 6 and 7: signatures, seal --------------------------------------------------------------


class SignaturesStep(QWidget):
    """The driver reviews what will be sealed (autuado, driver, each infraction with its
    description, totals, measures) and then signs; the review's digest goes with the seal,
    which refuses any other content."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.review_box = QGroupBox("Revisão pelo condutor antes de assinar")
        self.review = QLabel("")
        self.review.setWordWrap(True)
        self.review.setTextFormat(Qt.TextFormat.RichText)
        self.review.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        review_hint = QLabel("Leia com o condutor: é exatamente isto que será selado.")
        review_hint.setWordWrap(True)
        review_hint.setStyleSheet("color:#5f6368;")
        review_layout = QVBoxLayout(self.review_box)
        review_layout.addWidget(review_hint)
        review_layout.addWidget(self.review)
        self.agent = SignatureBox("Assinatura do agente", driver=False)
        self.driver = SignatureBox("Condutor", driver=True)
        self.witness = WitnessBox()
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.addWidget(self.review_box)
        layout.addWidget(self.agent)
        layout.addWidget(self.driver)
        layout.addWidget(self.witness)
        layout.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        # The review wraps to the width it has: a sideways bar would hide the end of its
        # lines from the driver who reads them.
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)


class SealStep(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        warning = QLabel("Depois de selado, o registro não pode ser alterado: correções só "
                         "por cancelamento (supervisor) ou retificação, em novo registro.")
        warning.setWordWrap(True)
        warning.setStyleSheet("color:#5c4400;")
        self.autuado = AutuadoForm()
        layout = QVBoxLayout(self)
        layout.addWidget(self.summary)
        layout.addWidget(self.autuado)
        layout.addWidget(warning)
        layout.addStretch(1)


class PrintStep(QWidget):
    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.sealed = QLabel("")
        self.sealed.setWordWrap(True)
        self.sealed.setTextFormat(Qt.TextFormat.RichText)
        self.warnings = Banner()
        self.panel = PrintPanel(ctx)
        layout = QVBoxLayout(self)
        layout.addWidget(self.sealed)
        layout.addWidget(self.warnings)
        layout.addWidget(self.panel, 1)


# --- registry changes under an open inspection ----------------------------------------------------

Notice = tuple[str, bool]  # (Portuguese text, serious: the vehicle or driver may not operate)
_PERMIT_BLOCKED = frozenset({"suspended", "revoked", "expired"})


def _vehicle_facts(value: Any) -> dict[str, Any] | None:
    """What a registry notice compares, from a lookup's VehicleView or from the snapshot a
    started inspection saved (``services._facts_of``); None when not registered."""
    if value is None:
        return None
    if isinstance(value, dict):
        if not value.get("registered"):
            return None
        line = (f"{value['line_code']} – {value.get('line_name') or ''}"
                if value.get("line_code") else None)
        return {"holder_id": value.get("holder_id"), "holder_name": value.get("holder_name"),
                "permit_number": value.get("permit_number"),
                "permit_status": value.get("permit_status"), "line": line}
    holder, line = value.holder, value.line
    return {"holder_id": holder.id if holder else None,
            "holder_name": holder.name if holder else None,
            "permit_number": holder.permit_number if holder else None,
            "permit_status": holder.permit_status if holder else None,
            "line": line.label() if line else None}


def vehicle_notices(plate: str, before: Any, after: Any) -> list[Notice]:
    """What changed in the registry for this vehicle, in Portuguese (empty: nothing)."""
    from inspector_app.store.reference import PERMIT_STATUSES

    old, new = _vehicle_facts(before), _vehicle_facts(after)
    if old is None and new is None:
        return []
    if new is None:
        return [(f"O veículo {plate} não consta mais no cadastro.", True)]
    out: list[Notice] = []
    if old is None:
        out.append((f"O veículo {plate} agora consta no cadastro.", False))
        old = {key: None for key in new}
    if (new["holder_id"], new["holder_name"]) != (old["holder_id"], old["holder_name"]):
        out.append((f"Permissionário agora: {new['holder_name'] or 'não informado'}.",
                    new["holder_id"] is None))
    if (new["permit_status"], new["permit_number"]) != (old["permit_status"],
                                                         old["permit_number"]) \
            and new["permit_number"] is not None:
        status = str(new["permit_status"])
        label = PERMIT_STATUSES.get(status, status)
        if status in _PERMIT_BLOCKED:
            out.append((f"Permissão {new['permit_number']} agora {label}: o veículo não está "
                        "autorizado a operar.", True))
        else:
            out.append((f"Permissão {new['permit_number']} agora {label}.", False))
    if new["line"] != old["line"]:
        out.append((f"Linha agora: {new['line'] or 'não informada'}.", False))
    return out


def _driver_facts(value: Any) -> tuple[bool, str] | None:
    """(registered with the organ, name) from a DriverView or a started inspection's driver;
    None when the registry does not have the driver."""
    if value is None:
        return None
    if isinstance(value, dict):
        return (True, str(value.get("name") or "")) if value.get("registered") else None
    return bool(value.registered), str(value.name)


def driver_notices(before: Any, after: Any) -> list[Notice]:
    old, new = _driver_facts(before), _driver_facts(after)
    if new is None:
        if old is None:
            return []
        return [(f"O condutor {old[1]} não consta mais no cadastro.", True)]
    registered, name = new
    if old is None or old[0] != registered:
        if registered:
            return [(f"O condutor {name} agora consta no cadastro.", False)]
        return [(f"O condutor {name} agora consta como não cadastrado junto ao órgão gestor.",
                 True)]
    return []


# --- the wizard -----------------------------------------------------------------------------------


class InspectionWizard(QWidget):
    """Step by step from place to print; each step validates before the next one."""

    did_finish = Signal()
    inspection_did_seal = Signal(object)  # services.SealResult

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.state = WizardState()
        self.step = 0
        self.steps_label = QLabel("")
        self.steps_label.setTextFormat(Qt.TextFormat.RichText)
        self.steps_label.setWordWrap(True)
        self.title = heading("")
        self.banner = Banner()
        self.problems = FieldProblems(self.banner)
        # What a registry update changed under this inspection; stays across steps.
        self.registry_notice = Banner()
        self._registry_lines: list[Notice] = []
        self._result_recalculated = False

        self.place_step = PlaceStep(self.state)
        self.vehicle_step = VehicleStep(ctx, self.state, self.banner)
        self.driver_step = DriverStep(ctx, self.state, self.banner)
        self.checklist = ChecklistPage(ctx)
        self.result = ResultPage(ctx, self.state)
        self.signatures = SignaturesStep()
        self.seal_step = SealStep()
        self.print_step = PrintStep(ctx)
        self.vehicle_step.vehicle_did_load.connect(self._vehicle_loaded)
        absent_radio = self.signatures.driver.absent_radio
        if absent_radio is not None:
            absent_radio.toggled.connect(self._driver_absent_at_signing)
        # A lookup the inspector asks for shows the registry as it is now: an older notice
        # about the earlier answer no longer applies.
        self.vehicle_step.lookup_started.connect(self._clear_registry_notice)
        self.driver_step.lookup_started.connect(self._clear_registry_notice)
        ctx.reference_did_change.connect(self.reference_changed)
        self.stack = ScrollingStack()  # steps scroll; the footer's buttons stay in view
        for page in (self.place_step, self.vehicle_step, self.driver_step, self.checklist,
                     self.result, self.signatures, self.seal_step, self.print_step):
            own_scroll = page in (self.checklist, self.result, self.signatures)
            self.stack.addWidget(page, scroll=not own_scroll)

        self.back_button = big_button("&Voltar")
        self.back_button.clicked.connect(self.back)
        self.abandon_button = big_button("Encerrar sem aut&o…")
        self.abandon_button.clicked.connect(self.abandon)
        self.next_button = big_button("&Avançar", primary=True)
        self.next_button.clicked.connect(self.next)
        footer = QHBoxLayout()
        footer.addWidget(self.back_button)
        footer.addWidget(self.abandon_button)
        footer.addStretch(1)
        footer.addWidget(self.next_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.steps_label)
        layout.addWidget(self.title)
        layout.addWidget(self.registry_notice)
        layout.addWidget(self.banner)
        layout.addWidget(self.stack, 1)
        layout.addLayout(footer)
        self._busy = False
        self._focus_before: QWidget | None = None
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self._go(LOCAL)

    # --- starting ---------------------------------------------------------------------------------

    def start_new(self) -> None:
        """Load the packs (store worker) for a new inspection."""
        self._set_busy(True)
        session = self.ctx.session

        def loaded(offer: Any) -> None:
            self._set_busy(False)
            self.place_step.set_packs(list(offer.listings), offer.preselected,
                                      dict(offer.start_of_operation))
            self.place_step.place.setFocus()

        self.ctx.tasks.run_store(lambda _store: services.packs_for_session(session=session),
                                 loaded, self._failed, owner=self)

    def resume(self, inspection_id: str) -> None:
        """Reopen an open inspection at the checklist with every saved answer."""
        from inspector_app.packs import get_pack
        from inspector_app.store import inspections as repo

        def load(store: Any) -> tuple[Any, Any, dict[str, Any], dict[str, Any]]:
            insp = repo.get_inspection(store, inspection_id)
            return (insp, get_pack(insp.pack_id), repo.current_answers(store, inspection_id),
                    photo_infos(store, inspection_id))

        def loaded(data: tuple[Any, Any, dict[str, Any], dict[str, Any]]) -> None:
            insp, pack, answers, photos = data
            self._set_busy(False)
            state = self.state
            state.inspection_id = insp.id
            state.pack_id, state.pack, state.kind = insp.pack_id, pack, insp.kind
            state.location_type, state.place = insp.location_type, insp.place
            state.latitude, state.longitude = insp.latitude, insp.longitude
            state.plate = insp.plate or ""
            state.vehicle_view = insp.vehicle if insp.vehicle.get("registered") else None
            state.driver, state.facts = dict(insp.driver), dict(insp.facts)
            state.start_of_operation = insp.start_of_operation
            self.checklist.build(pack, insp.id, state.summary())
            self.checklist.restore(answers, photos)
            self._go(CHECKLIST)
            self.banner.show_message(
                f"Inspeção retomada: {len(answers)} resposta(s) já salvas foram restauradas.",
                "info")
            self.checklist.focus_first_unanswered()

        self._set_busy(True)
        self.ctx.tasks.run_store(load, loaded, self._failed, owner=self)

    # --- navigation -------------------------------------------------------------------------------

    def _go(self, step: int) -> None:
        self.step = step
        self.stack.setCurrentIndex(step)
        self.title.setText(f"Passo {step + 1} de {len(STEPS)} – {STEPS[step]}")
        marks = []
        for index, name in enumerate(STEPS):
            if index == step:
                marks.append(f"<b><u>{index + 1}. {name}</u></b>")
            elif index < step:
                marks.append(f"<span style='color:#1e7b34'>{index + 1}. {name} ✓</span>")
            else:
                marks.append(f"<span style='color:#5f6368'>{index + 1}. {name}</span>")
        self.steps_label.setText(" › ".join(marks))
        started = self.state.inspection_id is not None
        sealed = self.state.sealed is not None
        self.back_button.setEnabled(step in (VEHICLE, DRIVER, RESULT, SIGNATURES, SEAL))
        self.back_button.setToolTip(
            "Local, veículo e condutor já estão gravados nesta inspeção; para mudá-los, "
            "encerre-a sem auto e comece outra." if step == CHECKLIST else "")
        self.back_button.setVisible(step != PRINT)
        self.abandon_button.setVisible(started and not sealed)
        self.next_button.setText({DRIVER: "&Iniciar inspeção", SEAL: "&Selar",
                                  PRINT: "&Concluir"}.get(step, "&Avançar"))
        if step not in (CHECKLIST, RESULT):
            self.banner.clear_message()
        self.problems.clear()

    def back(self) -> None:
        if self._busy:
            return
        target = {VEHICLE: LOCAL, DRIVER: VEHICLE, RESULT: CHECKLIST, SIGNATURES: RESULT,
                  SEAL: SIGNATURES}.get(self.step)
        if target is not None:
            self._go(target)
            if target == CHECKLIST:
                self.checklist.focus_first_unanswered()

    def next(self) -> None:
        if self._busy:
            return
        self.banner.clear_message()
        handler = {
            LOCAL: self._next_from_place, VEHICLE: self._next_from_vehicle,
            DRIVER: self._next_from_driver, CHECKLIST: self._next_from_checklist,
            RESULT: self._next_from_result, SIGNATURES: self._next_from_signatures,
            SEAL: self._next_from_seal, PRINT: self._finish,
        }[self.step]
        handler()

    def _next_from_place(self) -> None:
        if self.problems.report(self.place_step.problems()):
            return
        self.place_step.collect()
        self._go(VEHICLE)
        self.vehicle_step.plate.setFocus()

    def _next_from_vehicle(self) -> None:
        self.vehicle_step.advance(lambda: (self._go(DRIVER), self.driver_step.cpf.setFocus()))

    def _driver_absent_at_signing(self, absent: bool) -> None:
        """"Condutor ausente" for a driver the inspection identified: ask which is true."""
        driver = self.state.driver
        if not absent or not driver:
            return
        named = str(driver.get("name") or "")
        if driver.get("cpf"):
            named += f" (CPF {document_display(str(driver['cpf']))})"
        choice = WhichIsTrue.ask(
            self, "Condutor presente ou ausente?",
            f"Esta inspeção identificou o condutor {named.strip()}, e foi marcado "
            "\"Condutor ausente\". Qual das duas é verdade?",
            ("O condutor saiu antes de assinar: registrar a ausência",
             "O condutor está presente: ele assina ou se recusa a assinar"))
        box = self.signatures.driver
        if choice != 0 and box.signed_radio is not None:
            box.signed_radio.setChecked(True)
            box.signed_radio.setFocus()
        elif choice == 0:
            box.note.setFocus()

    def _vehicle_loaded(self, view: Any) -> None:
        """A registered vehicle is inspected under its own service's pack."""
        if view.pack_id == self.state.pack_id:
            return
        index = self.place_step.pack.findData(view.pack_id)
        if index < 0:
            return
        previous = self.state.pack_id
        self.place_step.pack.setCurrentIndex(index)
        self.state.pack_id = view.pack_id
        self.banner.show_message(
            f"Pacote ajustado de {previous} para {view.pack_id}, o do serviço em que o "
            "veículo está cadastrado.", "info")

    def _next_from_driver(self) -> None:
        self.driver_step.advance(self._start_inspection)

    def _start_inspection(self) -> None:
        state = self.state
        session = self.ctx.session
        kwargs = {
            "session": session, "pack_id": state.pack_id, "kind": state.kind,
            "location_type": state.location_type, "place": state.place,
            "plate": state.plate or None, "vehicle": state.manual_vehicle or None,
            "driver": state.driver or None, "latitude": state.latitude,
            "longitude": state.longitude, "start_of_operation": state.start_of_operation,
        }
        from inspector_app.packs import get_pack

        def start(store: Any) -> tuple[str, Any]:
            inspection_id = services.start_inspection(store=store, **kwargs)
            return inspection_id, get_pack(state.pack_id)

        def started(data: tuple[str, Any]) -> None:
            self._set_busy(False)
            state.inspection_id, state.pack = data
            self.checklist.build(state.pack, state.inspection_id, state.summary())
            self._go(CHECKLIST)
            self.checklist.focus_first_unanswered()

        self._set_busy(True)
        self.ctx.tasks.run_store(start, started, self._failed, owner=self)

    def _next_from_checklist(self) -> None:
        if self.problems.report(self.checklist.date_problems()):
            return
        unsaved = self.checklist.unsaved()
        failed = [i for i in unsaved if self.checklist.rows[i].saved_state == "error"]
        if failed:
            self.banner.error(f"Respostas não salvas: {', '.join(failed)}. Toque na resposta "
                              "de novo para salvar antes de avançar.")
            return
        self.state.unanswered = len(self.checklist.rows) - self.checklist.answered()
        self._go(RESULT)
        # The store worker is serial: the evaluation runs after every pending answer.
        self.result.evaluate()

    def _next_from_result(self) -> None:
        if self.problems.report(self.result.problems()):
            return
        problem = self.result.collect()
        if problem:
            self.banner.error(problem)
            return
        if self._result_recalculated:  # seen and confirmed on the recalculated outcome
            self._result_recalculated = False
            self._show_registry_notice()
        self._load_review()

    def _load_review(self, notice: str = "") -> None:
        """Build what the driver reviews (store worker) and open the signature step on it."""
        state = self.state
        kwargs = {"inspection_id": state.inspection_id, "removed": dict(state.removed),
                  "added": tuple(state.added), "retain": state.retain,
                  "retention_place": state.retention_place, "narrative": state.narrative}

        def reviewed(review: Any) -> None:
            self._set_busy(False)
            state.review = review
            self.signatures.review.setText(review_html(review))
            self._go(SIGNATURES)
            if notice:
                self.signatures.driver.pad.clear()  # the driver signs the new content
                self.banner.show_message(notice, "warning")

        self._set_busy(True)
        self.ctx.tasks.run_store(
            lambda store: services.review_inspection(store=store, **kwargs), reviewed,
            self._failed, owner=self)

    def _next_from_signatures(self) -> None:
        agent, driver = self.signatures.agent, self.signatures.driver
        if agent.pad.is_empty():
            self.banner.error("Falta a assinatura do agente: assine no quadro.")
            return
        status = driver.status()
        needs_driver = bool(self.result.active_infractions())
        if status == "signed" and driver.pad.is_empty() and needs_driver:
            self.banner.error("Falta a assinatura do condutor: peça que assine no quadro, ou "
                              "marque \"Recusou-se a assinar\" ou \"Condutor ausente\" e "
                              "escreva a observação.")
            return
        inspection_id = self.state.inspection_id
        agent_strokes, agent_size = [list(s) for s in agent.pad.strokes], agent.pad.pad_size()
        driver_strokes, driver_size = [list(s) for s in driver.pad.strokes], driver.pad.pad_size()
        note = driver.note.text().strip()
        record_driver = status != "signed" or not driver.pad.is_empty()

        def save(store: Any) -> None:
            services.record_signature(store=store, inspection_id=inspection_id, role="agent",
                                      status="signed", strokes=agent_strokes, size=agent_size)
            if record_driver:
                services.record_signature(
                    store=store, inspection_id=inspection_id, role="driver", status=status,
                    strokes=driver_strokes if status == "signed" else None, size=driver_size,
                    note=note)

        def saved(_r: object) -> None:
            self._set_busy(False)
            self._fill_seal_summary(status, note)
            self._go(SEAL)
            self.next_button.setFocus()

        self._set_busy(True)
        self.ctx.tasks.run_store(save, saved, self._failed, owner=self)

    def _fill_seal_summary(self, driver_status: str, note: str) -> None:
        state = self.state
        active = self.result.active_infractions()
        lines = [f"<b>{escape(state.summary())}</b>"]
        if state.kind == "vistoria":
            lines.append("Auto de vistoria: " + ("REPROVADO" if active else "APROVADO"))
        if state.review is not None:  # autuado, driver, rules with descriptions, totals
            lines.append(review_html(state.review))
        else:
            lines.extend(f"Infração {escape(i.rule_id)} – {escape(i.article)}: "
                         f"{escape(i.description)}" for i in active)
        lines.extend(f"Retirada pelo agente: {escape(r)} (motivo: {escape(why)})"
                     for r, why in state.removed.items())
        if state.retain:
            lines.append(f"Retenção do veículo em: {escape(state.retention_place)}")
        driver = {"signed": "assinou", "refused": "recusou-se a assinar",
                  "absent": "ausente"}[driver_status]
        lines.append(f"Condutor: {driver}" + (f" ({escape(note)})" if note and
                                               driver_status != "signed" else ""))
        self.seal_step.summary.setText("<br>".join(lines))

    def _next_from_seal(self) -> None:
        state = self.state
        session = self.ctx.session
        kwargs = {
            "session": session, "inspection_id": state.inspection_id,
            "narrative": state.narrative, "removed": dict(state.removed),
            "added": tuple(state.added), "retain": state.retain,
            "retention_place": state.retention_place,
            "insecurity_justification": state.insecurity_justification,
            # what the driver reviewed before signing: sealing refuses any other content
            "reviewed_digest": state.review["digest"] if state.review else None,
            "witness": self.signatures.witness.value(),
        }

        def sealed(result: Any) -> None:
            self._set_busy(False)
            state.sealed = result
            numbers = "<br>".join(
                f"{escape(_kind_label(r.kind))} n.º <b>{escape(r.display_number)}</b> – código "
                f"{escape(r.verification_code)}" for r in result.records)
            self.print_step.sealed.setText(f"<b>Selado.</b><br>{numbers}")
            if result.warnings:
                self.print_step.warnings.show_message("\n".join(result.warnings), "warning")
            self._go(PRINT)
            self.print_step.panel.show_records(
                [(r.id, r.kind, r.display_number) for r in result.records])
            self.inspection_did_seal.emit(result)
            self.ctx.records_did_change.emit()

        typed = self.seal_step.autuado.value()

        def seal(store: Any) -> Any:
            if typed is not None:  # completed after a refusal for want of an autuado
                services.identify_autuado(store=store, inspection_id=state.inspection_id,
                                          vehicle=typed)
            return services.seal_inspection(store=store, **kwargs)

        def failed(exc: BaseException) -> None:
            self._failed(exc)
            fields = [f for f, _m in getattr(exc, "problems", ())] or \
                [getattr(exc, "field", "")]
            if fields == ["review"]:  # the content changed after the driver reviewed it
                self._load_review(describe_error(exc))
                return
            if any(f.startswith("vehicle.") for f in fields):
                # No auto without an autuado: the fields at fault, the focus on the first.
                from inspector_app.store import inspections as repo

                self.ctx.tasks.run_store(
                    lambda store: repo.get_inspection(store, state.inspection_id).vehicle,
                    lambda vehicle: self.seal_step.autuado.ask(dict(vehicle), fields),
                    self._failed, owner=self)

        self._set_busy(True)
        self.ctx.tasks.run_store(seal, sealed, failed, owner=self)

    def _finish(self) -> None:
        self.did_finish.emit()

    def abandon(self) -> None:
        inspection_id = self.state.inspection_id
        if inspection_id is None or self.state.sealed is not None:
            return
        reason = AbandonDialog.ask(self)
        if reason is None:
            return

        def abandoned(_r: object) -> None:
            self._set_busy(False)
            self.ctx.records_did_change.emit()
            self.did_finish.emit()

        self._set_busy(True)
        self.ctx.tasks.run_store(
            lambda store: services.abandon_inspection(store=store, inspection_id=inspection_id,
                                                      reason=reason),
            abandoned, self._failed, owner=self)

    # --- registry updates (ctx.reference_did_change) ---------------------------------------------

    def reference_changed(self) -> None:
        """The registry changed under this inspection (a sync pulled changes).

        Before the inspection starts, the plate and the driver already looked up are looked
        up again: the cards show the registry as it is now and the inspection will start
        from it. Once started, the vehicle and driver saved with the inspection stay as they
        are (nothing is changed silently); a notice says what the registry says now, and an
        outcome already shown is evaluated again (history, parameters). Typed fields,
        answers, removals, additions and the narrative are never touched.
        """
        if self.state.sealed is not None:
            return
        if self.state.inspection_id is None:
            self._recheck_lookups()
        else:
            self._recheck_started()

    def _recheck_lookups(self) -> None:
        state = self.state
        plate, driver_key = state.looked_up_plate, self.driver_step.recheck_key()
        if plate is None and driver_key is None:
            return

        def job(store: Any) -> tuple[Any, Any]:
            from inspector_app.store import reference

            vehicle = reference.find_vehicle(store, plate) if plate else None
            driver = None
            if driver_key is not None:
                cpf, cnh = driver_key
                driver = reference.find_driver(store, cpf=cpf or None, cnh=cnh or None)
            return vehicle, driver

        def done(found: tuple[Any, Any]) -> None:
            if (state.sealed is not None or state.inspection_id is not None
                    or state.looked_up_plate != plate
                    or self.driver_step.recheck_key() != driver_key):
                self.reference_changed()  # the wizard moved on meanwhile: check what it has
                return
            vehicle, driver = found
            notices: list[Notice] = []
            if plate is not None:
                shown = vehicle.plate_display if vehicle is not None else plate_display(plate)
                notices += vehicle_notices(shown, state.vehicle_view, vehicle)
                self.vehicle_step.show_view(vehicle)
                if vehicle is None and notices and self.step > VEHICLE:
                    notices.append(("Volte ao passo Veículo para informar os dados do CRLV.",
                                    True))
            if driver_key is not None:
                notices += driver_notices(state.driver_view, driver)
                self.driver_step.show_view(driver)
            if notices:
                self._registry_lines = notices
                self._show_registry_notice()

        self.ctx.tasks.run_store(job, done, self._recheck_failed, owner=self)

    def _recheck_started(self) -> None:
        state = self.state
        inspection_id = state.inspection_id

        def job(store: Any) -> tuple[Any, Any, Any]:
            from inspector_app.store import inspections as repo
            from inspector_app.store import reference

            insp = repo.get_inspection(store, inspection_id)
            vehicle = reference.find_vehicle(store, insp.plate) if insp.plate else None
            cpf, cnh = insp.driver.get("cpf"), insp.driver.get("cnh")
            driver = None
            if cpf:
                driver = reference.find_driver(store, cpf=str(cpf))
            elif cnh:
                driver = reference.find_driver(store, cnh=str(cnh))
            return insp, vehicle, driver

        def done(found: tuple[Any, Any, Any]) -> None:
            if state.sealed is not None or state.inspection_id != inspection_id:
                return
            insp, vehicle, driver = found
            notices: list[Notice] = []
            if insp.plate:
                notices += vehicle_notices(plate_display(insp.plate), insp.vehicle, vehicle)
            if insp.driver.get("cpf") or insp.driver.get("cnh"):
                notices += driver_notices(insp.driver, driver)
            self._registry_lines = notices
            self._show_registry_notice()
            if self.step in (RESULT, SIGNATURES, SEAL) and self.result.outcome is not None:
                self.result.reevaluate(self._result_rechecked)

        self.ctx.tasks.run_store(job, done, self._recheck_failed, owner=self)

    def _result_rechecked(self, changed: bool) -> None:
        if not changed or self.state.sealed is not None:
            return
        self._result_recalculated = True
        if self.step in (SIGNATURES, SEAL) and not self._busy:
            # The agent's decisions were taken on the previous outcome: look at them again.
            self._go(RESULT)
        self._show_registry_notice()

    def _show_registry_notice(self) -> None:
        lines = [text for text, _serious in self._registry_lines]
        if self._result_recalculated:
            lines.append("O resultado foi recalculado com o cadastro atualizado (histórico e "
                         "parâmetros): confira as infrações antes de selar.")
        if not lines:
            self.registry_notice.clear_message()
            return
        if self.state.inspection_id is None:
            head = "Cadastro atualizado pela sede; a consulta foi refeita:"
            tail: list[str] = []
        else:
            head = "Cadastro atualizado pela sede durante esta inspeção:"
            tail = ["A inspeção mantém o veículo e o condutor gravados no início; confira "
                    "antes de selar."] if self._registry_lines else []
        serious = any(s for _t, s in self._registry_lines) or self._result_recalculated
        text = "\n".join([head, *(f"• {line}" for line in lines), *tail])
        self.registry_notice.show_message(text, "warning" if serious else "info")

    def _clear_registry_notice(self) -> None:
        if self.state.inspection_id is None:
            self._registry_lines = []
            self._show_registry_notice()

    def _recheck_failed(self, exc: BaseException) -> None:
        self.registry_notice.show_message(
            "Cadastro atualizado pela sede, mas a nova consulta falhou: "
            f"{describe_error(exc)}", "warning")

    # --- helpers ----------------------------------------------------------------------------------

    def _failed(self, exc: BaseException) -> None:
        self._set_busy(False)
        self.banner.error(describe_error(exc))
        widget = self.field_widget(str(getattr(exc, "field", "") or ""))
        if widget is not None and widget.isVisible() and widget.isEnabled():
            widget.setFocus(Qt.FocusReason.OtherFocusReason)

    def field_widget(self, field: str) -> QWidget | None:
        """The input a refusal names (``ServiceError.field``), when this step shows it."""
        v, d, p = self.vehicle_step, self.driver_step, self.place_step
        widgets: dict[str, QWidget] = {
            "place": p.place, "latitude": p.latitude, "longitude": p.longitude,
            "pack_id": p.pack, "location_type": p.location, "plate": v.plate,
            "vehicle.make_model": v.make_model, "vehicle.renavam": v.renavam,
            "renavam": v.renavam, "driver.cpf": d.cpf, "cpf": d.cpf, "driver.cnh": d.cnh,
            "cnh": d.cnh, "driver.name": d.name, "narrative": self.result.narrative,
            "retention_place": getattr(self.result, "retention_place", None),
            "note": self.signatures.driver.note,
        }
        return widgets.get(field) or widgets.get(field.rsplit(".", 1)[-1])

    def _set_busy(self, busy: bool) -> None:
        """While the store works the buttons are disabled; disabling the focused one hands
        focus to the next control in the window (the lock button, where a stray Enter
        locks the session), so focus is kept here and given back afterwards."""
        from PySide6.QtWidgets import QApplication

        if busy and not self._busy:
            self._focus_before = QApplication.focusWidget()
        self._busy = busy
        if busy:
            self.setFocus(Qt.FocusReason.OtherFocusReason)  # nothing outside receives Enter
        self.next_button.setEnabled(not busy)
        self.abandon_button.setEnabled(not busy)
        if not busy:
            focus = QApplication.focusWidget()
            before = self._focus_before
            self._focus_before = None
            if focus is None or focus is self or not self.isAncestorOf(focus):
                if before is not None and self.isAncestorOf(before) and before.isVisible() \
                        and before.isEnabled():
                    before.setFocus(Qt.FocusReason.OtherFocusReason)
                elif self.next_button.isVisible():
                    self.next_button.setFocus(Qt.FocusReason.OtherFocusReason)


def _kind_label(kind: str) -> str:
    from inspector_app.ui.queries import KIND_LABELS

    return KIND_LABELS.get(kind, kind)
