"""The retention desk: vehicles held here, and their release under art. 38.

Release conditions (Decreto 15.154/1993 art. 38): I fault corrected and the items checked
again, II sent to a workshop, III payment of fines and costs (a warning only: release never
depends on payment), and for an over-age vehicle (art. 37, III) a termo de compromisso.
``services.release_vehicle`` decides; the dialog only collects.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QDate, QSize, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDateEdit,
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.domain.fieldtext import plate_display
from inspector_app.ui.context import AppContext
from inspector_app.ui.desk_widgets import PersonForm, WitnessBox, receiver_box, signature_of
from inspector_app.ui.errors import describe_error
from inspector_app.ui.paged import PagedTableModel
from inspector_app.ui.printing import PrintPanel
from inspector_app.ui.screen_fit import cap_columns
from inspector_app.ui.signatures import SignatureBox
from inspector_app.ui.widgets import (
    TOUCH_TARGET_PX,
    Banner,
    big_button,
    datetime_br,
    heading,
    held_for,
    list_view,
)

COLUMNS = ("Termo n.º", "Placa", "Local da retenção", "Fundamentos", "Retido em",
           "Tempo retido")


@dataclass(frozen=True)
class HeldVehicle:
    record_id: str
    number: str
    plate: str
    place: str
    grounds: tuple[str, ...]
    grounds_text: str
    retained_at: str
    # (key, label) of every fault that grounded the retention (``services.release_faults``)
    failed_items: tuple[tuple[str, str], ...]

    @property
    def over_age(self) -> bool:
        return any(g.endswith(".37.III") for g in self.grounds)


def load_held(store: Any, after: tuple[str, str] | None = None,
              limit: int | None = None) -> list[HeldVehicle]:
    """Vehicles held, oldest first, with ground citations and the failed items (store
    worker); a page of ``limit`` after the key ``(retained_at, record_id)``."""
    out = []
    for held in services.vehicles_held(store=store, after=after, limit=limit):
        record = services.find_record(store=store, number=held["record_id"])
        body = record.envelope["body"]
        retention = body.get("retention") or {}
        cited = {d["id"]: f"{d['citation']} – {d['description']}"
                 for d in [*retention.get("details", []), *retention.get("possible_grounds", [])]}
        answers = body.get("answers")
        refers_to = record.envelope.get("refers_to")
        if answers is None and refers_to:
            auto = services.find_record(store=store, number=refers_to)
            answers = auto.envelope["body"].get("answers", {})
        del answers  # the faults to check again come from the rule (art. 38, I)
        failed = tuple((f.key, f.label) for f in services.release_faults(
            store=store, retention_id=held["record_id"]))
        grounds = tuple(held["grounds"])
        out.append(HeldVehicle(
            record_id=held["record_id"], number=held["number"],
            plate=plate_display(held["plate"]) or "—",
            place=held["place"] or "—", grounds=grounds,
            grounds_text="\n".join(cited.get(g, g) for g in grounds),
            retained_at=held["retained_at"], failed_items=failed,
        ))
    return out


def _held_cells(h: HeldVehicle) -> tuple[str, ...]:
    now = dt.datetime.now(dt.UTC)
    return (h.number, h.plate, h.place, h.grounds_text, datetime_br(h.retained_at),
            held_for(h.retained_at, now))


class ReleaseDialog(QDialog):
    """The art. 38 conditions for one held vehicle; seals the termo de liberação."""

    vehicle_did_release = Signal(object)  # services.SealResult

    def __init__(self, ctx: AppContext, held: HeldVehicle, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.held = held
        self.setWindowTitle(f"Liberação do veículo {held.plate}")
        # As wide as the signature pads ask (the receiver's, the agent's, the witness's),
        # cut to the screen by the screen guard: no sideways scrolling at 1024 px.
        self.resize(1000, 680)
        intro = QLabel(f"<b>Termo de retenção {held.number}</b> – placa <b>{held.plate}</b>, "
                       f"retido em {datetime_br(held.retained_at)} "
                       f"({held_for(held.retained_at)}).<br>Fundamentos:<br>"
                       + held.grounds_text.replace("\n", "<br>"))
        intro.setWordWrap(True)
        intro.setTextFormat(Qt.TextFormat.RichText)

        self.fault_fixed = QCheckBox("&Falta sanada e verificada no local (art. 38, I)")
        self.items = QListWidget()
        self.items.setAccessibleName("Itens verificados novamente")
        for item_id, label in held.failed_items:
            entry = QListWidgetItem(label)
            entry.setData(Qt.ItemDataRole.UserRole, item_id)
            entry.setFlags(entry.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            entry.setCheckState(Qt.CheckState.Unchecked)
            entry.setSizeHint(QSize(0, TOUCH_TARGET_PX))
            self.items.addItem(entry)
        self.items.setMaximumHeight(TOUCH_TARGET_PX * 4)
        fixed_box = QGroupBox("Falta sanada")
        fixed_layout = QVBoxLayout(fixed_box)
        fixed_layout.addWidget(self.fault_fixed)
        fixed_layout.addWidget(QLabel("Marque cada falta que fundamentou a retenção, verificada "
                                      "novamente e corrigida (todas são exigidas):"))
        fixed_layout.addWidget(self.items)

        self.to_workshop = QCheckBox("Encaminhado a &oficina (art. 38, II)")
        self.workshop = QLineEdit()
        self.workshop.setPlaceholderText("Nome e endereço da oficina")
        self.workshop_deadline = QDateEdit(QDate.currentDate().addDays(7))
        self.workshop_deadline.setCalendarPopup(True)
        self.workshop_deadline.setDisplayFormat("dd/MM/yyyy")
        workshop_box = QGroupBox("Oficina")
        workshop_form = QFormLayout(workshop_box)
        workshop_form.addRow(self.to_workshop)
        workshop_form.addRow("Oficina:", self.workshop)
        workshop_form.addRow("Prazo para o reparo:", self.workshop_deadline)
        self.to_workshop.toggled.connect(self._sync)
        self.fault_fixed.toggled.connect(self._sync)

        self.payment = QLineEdit()
        self.payment.setPlaceholderText("opcional")
        payment_note = QLabel("Pagamento de multas e despesas (art. 38, III): apenas aviso – a "
                              "liberação não depende de pagamento (SV 21; STJ Súm. 510).")
        payment_note.setWordWrap(True)
        payment_note.setStyleSheet("color:#5f6368;")
        self.compromisso = QCheckBox("Termo de &compromisso assinado pelo permissionário: não "
                                     "voltará a operar o veículo (art. 38, parágrafo único)")
        self.compromisso.setVisible(held.over_age)
        self.note = QLineEdit()
        self.note.setPlaceholderText("Observação (opcional)")
        # Who receives the vehicle, their signature or refusal, the agent's signature and an
        # optional witness: all sealed with the termo de liberação.
        self.receiver = PersonForm("do recebedor do veículo")
        receiver_group = QGroupBox("Recebedor do veículo")
        QVBoxLayout(receiver_group).addWidget(self.receiver)
        self.receiver_signature = receiver_box()
        self.agent_signature = SignatureBox("Assinatura do agente que libera o veículo",
                                            driver=False)
        self.agent_signature.clear_button.setText("Limpar assinatura do a&gente")
        self.witness = WitnessBox()
        self.banner = Banner()
        self.release_button = big_button("&Liberar veículo", primary=True)
        self.release_button.clicked.connect(self.release)
        self.cancel_button = big_button("&Voltar")
        self.cancel_button.clicked.connect(self.reject)

        content = QWidget()
        column = QVBoxLayout(content)
        column.addWidget(intro)
        column.addWidget(fixed_box)
        column.addWidget(workshop_box)
        form = QFormLayout()
        form.addRow("Referência do &pagamento:", self.payment)
        column.addLayout(form)
        column.addWidget(payment_note)
        column.addWidget(self.compromisso)
        form2 = QFormLayout()
        form2.addRow("Observa&ção:", self.note)
        column.addLayout(form2)
        column.addWidget(receiver_group)
        column.addWidget(self.receiver_signature)
        column.addWidget(self.agent_signature)
        column.addWidget(self.witness)
        column.addStretch(1)
        self.scroll_content = content
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(content)
        buttons = QHBoxLayout()
        buttons.addWidget(self.cancel_button)
        buttons.addStretch(1)
        buttons.addWidget(self.release_button)
        layout = QVBoxLayout(self)
        layout.addWidget(scroll, 1)
        layout.addWidget(self.banner)
        layout.addLayout(buttons)
        self._sync()

    def _sync(self) -> None:
        self.items.setEnabled(self.fault_fixed.isChecked())
        self.workshop.setEnabled(self.to_workshop.isChecked())
        self.workshop_deadline.setEnabled(self.to_workshop.isChecked())

    def _focus_field(self, field: str) -> None:
        """The focus goes to the field at fault (never to a button a stray Enter presses)."""
        part = field.split(".")
        target: QWidget | None = None
        if part[0] == "receiver" and len(part) > 1:
            target = self.receiver.field(part[1])
        elif part[0] == "witness" and len(part) > 1:
            target = self.witness.person.field(part[1])
        target = target or {
            "rechecked_items": self.items, "receiver_signature": self.receiver_signature.pad,
            "agent_signature": self.agent_signature.pad, "compromisso": self.compromisso,
            "conditions": self.fault_fixed,
        }.get(part[0])
        if target is not None:
            target.setFocus()

    def rechecked(self) -> list[str]:
        return [self.items.item(i).data(Qt.ItemDataRole.UserRole)
                for i in range(self.items.count())
                if self.items.item(i).checkState() == Qt.CheckState.Checked]

    def release(self) -> None:
        if self.to_workshop.isChecked() and not self.workshop.text().strip():
            self.banner.error("Informe a oficina para onde o veículo vai (art. 38, II).")
            self.workshop.setFocus()
            return
        kwargs = {
            "session": self.ctx.session, "retention_id": self.held.record_id,
            "fault_fixed": self.fault_fixed.isChecked(),
            "rechecked_items": self.rechecked() if self.fault_fixed.isChecked() else [],
            "workshop": self.workshop.text().strip() if self.to_workshop.isChecked() else "",
            "workshop_deadline": (self.workshop_deadline.date().toString("yyyy-MM-dd")
                                  if self.to_workshop.isChecked() else None),
            "payment_reference": self.payment.text().strip(),
            "compromisso_signed": self.compromisso.isChecked(),
            "note": self.note.text().strip(),
            "receiver": self.receiver.value(),
            "receiver_signature": signature_of(self.receiver_signature),
            "agent_signature": signature_of(self.agent_signature),
            "witness": self.witness.value(),
        }
        self.release_button.setEnabled(False)
        self.banner.clear_message()

        def failed(exc: BaseException) -> None:
            self.release_button.setEnabled(True)
            self.banner.error(describe_error(exc))
            self._focus_field(getattr(exc, "field", ""))

        def released(result: Any) -> None:
            self.vehicle_did_release.emit(result)
            self.accept()

        self.ctx.tasks.run_store(
            lambda store: services.release_vehicle(store=store, **kwargs), released, failed,
            owner=self)


class RetentionDesk(QWidget):
    """Vehicles held at this post, how long and why; release and print the termo."""

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.release_dialog: ReleaseDialog | None = None
        # Paged (issue 17): a post may hold thousands; rows arrive 20 at a time as the
        # list scrolls, loaded on the store worker (rows wrap: each page is measured).
        self.model = PagedTableModel(ctx.tasks, COLUMNS, load_held, _held_cells,
                                     lambda h: (h.retained_at, h.record_id), self, page=20)
        self.model.page_did_load.connect(self._page_loaded)
        self.model.load_did_fail.connect(self._failed)
        self.table = list_view(self.model, 3, wrap=True)
        self.table.selectionModel().selectionChanged.connect(lambda *_a: self._sync())
        self.table.activated.connect(lambda _i: self.open_release())
        self.empty = QLabel("Nenhum veículo retido neste posto.")
        self.release_button = big_button("&Liberar…", primary=True)
        self.release_button.clicked.connect(self.open_release)
        self.refresh_button = big_button("A&tualizar")
        self.refresh_button.clicked.connect(self.refresh)
        self.banner = Banner()
        self.warnings = Banner()
        self.panel = PrintPanel(ctx)
        self.panel.hide()
        buttons = QHBoxLayout()
        buttons.addWidget(self.release_button)
        buttons.addWidget(self.refresh_button)
        buttons.addStretch(1)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(heading("Balcão de retenção – veículos retidos"))
        top_layout.addWidget(self.table, 1)
        top_layout.addWidget(self.empty)
        top_layout.addLayout(buttons)
        top_layout.addWidget(self.banner)
        top_layout.addWidget(self.warnings)
        splitter = QSplitter(Qt.Orientation.Vertical)
        splitter.addWidget(top)
        splitter.addWidget(self.panel)
        splitter.setChildrenCollapsible(False)
        layout = QVBoxLayout(self)
        layout.addWidget(splitter)
        self._sync()

    @property
    def held(self) -> list[HeldVehicle]:
        """The held vehicles loaded so far (the pages the list has shown)."""
        return self.model.rows

    def refresh(self) -> None:
        self.model.reload()

    def _page_loaded(self) -> None:
        held = self.model.rows
        if len(held) <= self.model.page:
            # The place and the number wrap: the grounds keep room to be read at 1024 px
            # (sized from the first page; later pages keep the widths).
            cap_columns(self.table, {0: 150, 2: 170})
        self.empty.setVisible(not held)
        self.table.setVisible(bool(held))
        if held and not self.table.selectionModel().selectedRows():
            self.table.selectRow(0)
        self._sync()

    def _failed(self, exc: BaseException) -> None:
        self.banner.error(describe_error(exc))

    def _sync(self) -> None:
        selected = bool(self.table.selectionModel().selectedRows())
        allowed = self.ctx.can("release_vehicle")
        self.release_button.setEnabled(selected and allowed)
        self.release_button.setToolTip(
            "" if allowed else "Somente o balcão de retenção ou a supervisão libera veículos.")

    def open_release(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or not self.ctx.can("release_vehicle"):
            return
        held = self.held[rows[0].row()]
        dialog = ReleaseDialog(self.ctx, held, self)
        dialog.vehicle_did_release.connect(self._released)
        self.release_dialog = dialog
        dialog.open()

    def _released(self, result: Any) -> None:
        numbers = ", ".join(r.display_number for r in result.records)
        self.banner.show_message(f"Veículo liberado. Documentos selados: {numbers}.", "ok")
        if result.warnings:
            self.warnings.show_message("\n".join(result.warnings), "warning")
        else:
            self.warnings.clear_message()
        self.panel.show()
        self.panel.show_records([(r.id, r.kind, r.display_number) for r in result.records])
        self.ctx.records_did_change.emit()
        self.refresh()
