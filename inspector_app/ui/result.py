"""The result step: what the rules engine says about the answers, and the agent's calls.

Shows infractions (article, penalty, estimated fine, points, reincidence), retention and
whether it may happen here (art. 37 §único), cassação, deadlines as dates and every presumed
rule. Points, reincidence and cassação are the device's computation (the history received
from HQ plus this inspection); HQ's own standing of the holder, when the device has it, is
shown beside them, labelled with its date.

The agent may remove a proposed infraction only with a reason, add one from the catalogue,
record manifest insecurity, decide the retention and write the narrative; the engine runs
again (on the store worker) after each change.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.ui.dialogs import CatalogueDialog, RemoveInfractionDialog
from inspector_app.ui.errors import describe_error
from inspector_app.ui.widgets import (
    PENALTY_LABELS,
    TOUCH_TARGET_PX,
    Banner,
    big_button,
    date_br,
    heading,
    money_br,
)

# Two-line headers keep the narrow columns narrow: the table fits 1024 px without
# scrolling sideways (the description column takes the rest and wraps).
COLUMNS = ("Regra", "Artigo", "Descrição", "Penalidade", "Multa\nestimada", "Pontos",
           "Reinci-\ndência", "")
WIDE_TABLE_PX = 900
_FOLDED_COLUMNS = (3, 5, 6)  # shown in the fine's cell when the table is narrow


def presumed_texts(outcome: Any) -> list[str]:
    """The presumed rules that change this outcome, in the words the auto prints them
    (legal Portuguese; the parameters' keys stay in the record and at HQ)."""
    try:
        from inspector_app.documents.sections import presumed_sentences
    except ImportError:  # documents module absent: the engine's own notes
        return list(dict.fromkeys(a.text for a in outcome.assumptions))
    return presumed_sentences(outcome.as_json(), outcome.pack)


UNIT_LABELS = {"business_days": "dias úteis", "calendar_days": "dias corridos",
               "months": "meses"}
DEVICE_SOURCE = ("Pontos, reincidência e alerta de cassação acima: cálculo deste dispositivo, "
                 "com o histórico do cadastro neste dispositivo (recebido da sede na última "
                 "sincronização) e esta inspeção.")
NO_HQ_STANDING = ("Situação na sede: não recebida neste dispositivo para este permissionário "
                  "ou placa.")
TRIGGER_LABELS = {
    "ciencia_auto": "da ciência do auto",
    "ciencia_penalidade": "da ciência da penalidade",
    "ciencia_cassacao": "da ciência da cassação",
    "notificacao_multa": "da notificação da multa",
    "fim_prazo_pagamento": "do fim do prazo de pagamento",
}


def _label(text: str = "", *, rich: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    return label


class ResultPage(QWidget):
    """The engine's outcome and the agent's decisions before signatures."""

    outcome_did_change = Signal(object)

    def __init__(self, ctx: Any, state: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.state = state
        self.outcome: Any = None
        self.hq_standing: Any = None  # reference.StandingView, or None when HQ sent none

        self.verdict = heading("")
        self.unanswered = _label()
        self.banner = Banner()

        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setWordWrap(True)
        self.table.setTabKeyNavigation(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.verticalHeader().setMinimumSectionSize(TOUCH_TARGET_PX)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)  # wraps
        header.resizeSection(1, 96)
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(len(COLUMNS) - 1, 110)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.add_button = big_button("Adicionar &infração do catálogo…")
        self.add_button.clicked.connect(self.add_from_catalogue)
        self.totals = _label()
        self.fine_note = _label()
        self.fine_note.setStyleSheet("color:#5f6368;")

        self.retention_box = QGroupBox("Retenção do veículo")
        self.retention_grounds = _label(rich=True)
        self.retention_banner = Banner()
        self.insecurity_check = QCheckBox("Registrar insegurança &manifesta "
                                          "(art. 37, parágrafo único)")
        self.insecurity_text = QLineEdit()
        self.insecurity_text.setPlaceholderText("Justificativa da insegurança manifesta "
                                                "(obrigatória)")
        self.insecurity_apply = big_button("Aplicar &justificativa")
        self.insecurity_apply.clicked.connect(self.apply_insecurity)
        self.retain_check = QCheckBox("R&eter o veículo")
        self.retention_place = QLineEdit()
        self.retention_place.setPlaceholderText("Onde o veículo fica retido (ex.: pátio do "
                                                "terminal)")
        place_label = QLabel("Local da re&tenção:")
        place_label.setBuddy(self.retention_place)
        self.retain_check.toggled.connect(self.retention_place.setEnabled)
        # Once the agent ticks or unticks it, re-evaluations no longer reset the choice.
        self.retain_check.clicked.connect(lambda _c: setattr(state, "retention_decided", True))
        box = QVBoxLayout(self.retention_box)
        box.addWidget(self.retention_grounds)
        box.addWidget(self.retention_banner)
        insecurity = QHBoxLayout()
        insecurity.addWidget(self.insecurity_text, 1)
        insecurity.addWidget(self.insecurity_apply)
        box.addWidget(self.insecurity_check)
        box.addLayout(insecurity)
        box.addWidget(self.retain_check)
        place_row = QHBoxLayout()
        place_row.addWidget(place_label)
        place_row.addWidget(self.retention_place, 1)
        box.addLayout(place_row)

        self.withdrawal = _label()
        self.cassacao = Banner()
        self.standing = Banner()
        self.vistoria = _label()
        self.deadlines = _label(rich=True)
        self.warnings = Banner()
        self.presumed = _label(rich=True)
        self.presumed.setStyleSheet("color:#5c4400;")
        self.narrative = QPlainTextEdit()
        self.narrative.setTabChangesFocus(True)
        self.narrative.setPlaceholderText("Descreva os fatos constatados (obrigatório quando "
                                          "há infração).")
        self.narrative.setMinimumHeight(TOUCH_TARGET_PX * 2)
        narrative_label = QLabel("&Narrativa do agente:")
        narrative_label.setBuddy(self.narrative)

        content = QWidget()
        column = QVBoxLayout(content)
        column.addWidget(self.verdict)
        column.addWidget(self.unanswered)
        column.addWidget(self.banner)
        column.addWidget(self.table)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.totals, 1)
        column.addLayout(row)
        column.addWidget(self.fine_note)
        column.addWidget(self.retention_box)
        column.addWidget(self.withdrawal)
        column.addWidget(self.cassacao)
        column.addWidget(self.standing)
        column.addWidget(self.vistoria)
        column.addWidget(_label("<b>Prazos</b>", rich=True))
        column.addWidget(self.deadlines)
        column.addWidget(self.warnings)
        column.addWidget(self.presumed)
        column.addWidget(narrative_label)
        column.addWidget(self.narrative)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(content)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(scroll)
        self.insecurity_check.toggled.connect(self._sync_insecurity)
        self._sync_insecurity()

    # --- evaluation -------------------------------------------------------------------------------

    def evaluate(self) -> None:
        inspection_id = self.state.inspection_id
        added = tuple(self.state.added)
        self.banner.show_message("Avaliando pelas regras do pacote…", "info")

        def work(store: Any) -> tuple[Any, Any]:
            outcome = services.evaluate_inspection(store=store, inspection_id=inspection_id,
                                                   added=added)
            return outcome, services.hq_standing(store=store, inspection_id=inspection_id)

        def done(result: tuple[Any, Any]) -> None:
            self.hq_standing = result[1]
            self.show_outcome(result[0])

        self.ctx.tasks.run_store(work, done, lambda exc: self.banner.error(describe_error(exc)),
                                 owner=self)

    def reevaluate(self, then: Callable[[bool], None]) -> None:
        """Evaluate again because the registry changed (history, parameters), keeping the
        agent's removals, additions, retention choice and narrative; ``then(changed)`` runs
        after, saying whether the outcome differs from the one shown."""
        inspection_id = self.state.inspection_id
        added = tuple(self.state.added)
        before = self.outcome

        def done(outcome: Any) -> None:
            changed = outcome != before
            if changed:
                self.show_outcome(outcome)
            then(changed)

        self.ctx.tasks.run_store(
            lambda store: services.evaluate_inspection(store=store, inspection_id=inspection_id,
                                                       added=added),
            done, lambda exc: self.banner.error(describe_error(exc)), owner=self,
        )

    def active_infractions(self) -> list[Any]:
        if self.outcome is None:
            return []
        return [i for i in self.outcome.infractions if i.rule_id not in self.state.removed]

    def show_outcome(self, outcome: Any) -> None:
        self.outcome = outcome
        self.banner.clear_message()
        self._fill_infractions()
        self._fill_retention()
        self._fill_rest()
        self.outcome_did_change.emit(outcome)

    def _fill_infractions(self) -> None:
        outcome = self.outcome
        state = self.state
        self.table.setRowCount(len(outcome.infractions))
        for row, inf in enumerate(outcome.infractions):
            removed = inf.rule_id in state.removed
            description = inf.description
            if removed:
                description = f"RETIRADA – motivo: {state.removed[inf.rule_id]}\n{description}"
            if inf.rule_id in state.added:
                description = f"(incluída pelo agente) {description}"
            cells = (inf.rule_id, inf.article, description,
                     PENALTY_LABELS.get(inf.penalty, inf.penalty.replace("_", " ")),
                     money_br(inf.fine_brl), str(inf.points),
                     "sim" if inf.reincidence else "não")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if removed:
                    font = QFont(item.font())
                    font.setStrikeOut(column != 2)
                    item.setFont(font)
                    item.setForeground(Qt.GlobalColor.darkGray)
                self.table.setItem(row, column, item)
            if removed:
                button = QPushButton("Restaurar")
                button.clicked.connect(lambda _c=False, r=inf.rule_id: self.restore(r))
            elif inf.rule_id in state.added:
                button = QPushButton("Excluir")
                button.clicked.connect(lambda _c=False, r=inf.rule_id: self.drop_added(r))
            else:
                button = QPushButton("Retirar…")
                button.clicked.connect(lambda _c=False, r=inf.rule_id: self.remove(r))
            button.setMinimumHeight(TOUCH_TARGET_PX)
            button.setAccessibleName(f"{button.text()} {inf.rule_id}")
            self.table.setCellWidget(row, len(COLUMNS) - 1, button)
        active = self.active_infractions()
        fine = sum((i.fine_brl for i in active if i.fine_brl is not None), start=0)
        points = sum(i.points for i in active)
        self.totals.setText(f"Infrações: {len(active)} · Multa estimada: "
                            f"{money_br(fine) if active else '—'} · Pontos: {points}")
        references = sorted({i.fine_reference for i in active if i.fine_reference})
        self.fine_note.setText("\n".join(references))
        self.fine_note.setVisible(bool(references))
        if self.state.kind == "vistoria":
            self.verdict.setText("Vistoria REPROVADA" if active else "Vistoria APROVADA")
        elif active:
            self.verdict.setText(f"{len(active)} infração(ões) proposta(s)")
        else:
            self.verdict.setText("Nenhuma infração")
        self.table.setVisible(bool(outcome.infractions))
        self._fit_table()

    def _fit_table(self) -> None:
        """The table as tall as its rows: the page scrolls, not the table. Narrower than
        ``WIDE_TABLE_PX`` (a 1024 px screen), penalty, points and reincidence move into the
        fine's cell, so the description keeps room to be read and "Retirar…" is reached
        without scrolling sideways."""
        narrow = self.table.viewport().width() < WIDE_TABLE_PX
        for column in _FOLDED_COLUMNS:
            self.table.setColumnHidden(column, narrow)
        self.table.horizontalHeaderItem(4).setText("Penalidade" if narrow else COLUMNS[4])
        for row in range(self.table.rowCount()):
            cells = [self.table.item(row, c) for c in (3, 4, 5, 6)]
            if any(c is None for c in cells):
                continue
            penalty, fine, points, reincidence = cells
            fine.setText(f"{penalty.text()}\n{fine.toolTip()}\n{points.text()} ponto(s)"
                         f"\nreincidência: {reincidence.text()}" if narrow else fine.toolTip())
        self.table.resizeRowsToContents()
        rows = sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        frame = 2 * self.table.frameWidth()
        self.table.setFixedHeight(self.table.horizontalHeader().height() + rows + frame + 2)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        if self.outcome is not None:
            self._fit_table()

    def _fill_retention(self) -> None:
        retention = self.outcome.retention
        grounds = list(retention.grounds)
        possible = list(retention.possible_grounds)
        lines = []
        for g in grounds:
            lines.append(f"<b>Obrigatória</b> – {escape(g.citation)}: {escape(g.description)}")
        for g in possible:
            lines.append(f"Possível – {escape(g.citation)}: {escape(g.description)}")
        if not lines:
            lines.append("Nenhum fundamento de retenção.")
        self.retention_grounds.setText("<br>".join(lines))
        has_grounds = bool(grounds or possible)
        self.retention_box.setVisible(self.outcome.withdrawal is None)
        if retention.allowed_here is False:
            self.retention_banner.error(retention.reason)
        elif has_grounds:
            self.retention_banner.show_message(retention.reason, "info")
        else:
            self.retention_banner.clear_message()
        outside = retention.location_type not in ("terminal", "ponto_controle")
        show_insecurity = has_grounds and outside
        self.insecurity_check.setVisible(show_insecurity)
        self.insecurity_text.setVisible(show_insecurity)
        self.insecurity_apply.setVisible(show_insecurity)
        allowed = has_grounds and retention.allowed_here is True
        self.retain_check.setEnabled(allowed)
        if not allowed:
            self.retain_check.setChecked(False)
        elif not self.state.retention_decided:
            self.retain_check.setChecked(retention.required)
        self.retention_place.setEnabled(self.retain_check.isChecked())
        if not self.retention_place.text():
            self.retention_place.setText(self.state.place)

    def _fill_rest(self) -> None:
        outcome = self.outcome
        if outcome.withdrawal is not None:
            w = outcome.withdrawal
            self.withdrawal.setText(f"Retirada de circulação: {w.reason}")
            self.withdrawal.show()
        else:
            self.withdrawal.hide()
        cassacao = outcome.cassacao
        if cassacao.proposed:
            details = "; ".join(g.detail for g in cassacao.grounds)
            self.cassacao.error(f"ALERTA DE CASSAÇÃO ({cassacao.kind}): {details}. "
                                f"{cassacao.note}")
        else:
            self.cassacao.clear_message()
        self._fill_standing()
        vistoria = outcome.vistoria
        if self.state.kind == "vistoria" or vistoria.valid is False:
            if vistoria.valid is None:
                text = "Vistoria anterior: sem registro."
            else:
                text = (f"Última vistoria: {date_br(vistoria.last)}; válida até "
                        f"{date_br(vistoria.valid_until)} "
                        f"({'em dia' if vistoria.valid else 'VENCIDA'}).")
            self.vistoria.setText(text)
            self.vistoria.show()
        else:
            self.vistoria.hide()
        rows = []
        for d in outcome.deadlines:
            rows.append(f"<b>{escape(d.label)}</b>: até <b>{date_br(d.due)}</b> "
                        f"({d.days} {UNIT_LABELS.get(d.unit, d.unit)} – {escape(d.body)}; "
                        f"{escape(d.basis)})")
        for d in outcome.later_deadlines:
            rows.append(f"{escape(d.label)}: {d.days} {UNIT_LABELS.get(d.unit, d.unit)} "
                        f"contados {TRIGGER_LABELS.get(d.trigger, d.trigger)} "
                        f"({escape(d.basis)})")
        self.deadlines.setText("<br>".join(rows) if rows else "Nenhum prazo.")
        warnings = list(outcome.warnings)
        if warnings:
            self.warnings.show_message("\n".join(warnings), "warning")
        else:
            self.warnings.clear_message()
        texts = presumed_texts(outcome)
        if texts:
            items = "".join(f"<li>{escape(t)}</li>" for t in texts)
            self.presumed.setText(f"<b>Regra presumida aplicada</b> (o regulamento é omisso; "
                                  f"o auto informa):<ul>{items}</ul>")
            self.presumed.show()
        else:
            self.presumed.hide()
        unanswered = self.state.unanswered
        self.unanswered.setText(
            f"{unanswered} item(ns) do checklist sem resposta: as verificações pelo cadastro "
            "do veículo valem para eles." if unanswered else "")
        self.unanswered.setVisible(bool(unanswered))

    def _fill_standing(self) -> None:
        """Which source each figure comes from: this device's computation, HQ's standing."""
        standing = self.hq_standing
        lines = [DEVICE_SOURCE]
        if standing is None:
            lines.append(NO_HQ_STANDING)
        else:
            lines.append(standing.text_pt())
        level = "warning" if standing is not None and standing.cassacao_proposed else "info"
        self.standing.show_message("\n".join(lines), level)

    # --- agent's calls ----------------------------------------------------------------------------

    def remove(self, rule_id: str) -> None:
        reason = RemoveInfractionDialog.ask(self)
        if reason is None:
            return
        self.state.removed[rule_id] = reason
        self.show_outcome(self.outcome)

    def restore(self, rule_id: str) -> None:
        self.state.removed.pop(rule_id, None)
        self.show_outcome(self.outcome)

    def drop_added(self, rule_id: str) -> None:
        if rule_id in self.state.added:
            self.state.added.remove(rule_id)
        self.evaluate()

    def add_from_catalogue(self) -> None:
        shown = {i.rule_id for i in self.outcome.infractions} if self.outcome else set()
        rule_id = CatalogueDialog.ask(self, self.state.pack, shown)
        if rule_id is None:
            return
        self.state.added.append(rule_id)
        self.evaluate()

    def _sync_insecurity(self) -> None:
        on = self.insecurity_check.isChecked()
        self.insecurity_text.setEnabled(on)
        self.insecurity_apply.setEnabled(True)

    def apply_insecurity(self) -> None:
        """Record (or withdraw) manifest insecurity on the inspection, then re-evaluate."""
        on = self.insecurity_check.isChecked()
        text = self.insecurity_text.text().strip()
        if on and len(text) < services.MIN_REASON:
            self.retention_banner.error(
                "Descreva a insegurança manifesta (pelo menos "
                f"{services.MIN_REASON} caracteres) e toque em Aplicar justificativa.")
            return
        facts = {k: v for k, v in self.state.facts.items() if k != "insecurity_justification"}
        if on:
            facts["insecurity_justification"] = text
        inspection_id = self.state.inspection_id

        def update(store: Any) -> None:
            services.update_inspection(store=store, inspection_id=inspection_id, facts=facts,
                                       manifest_insecurity=on)

        def done(_r: object) -> None:
            self.state.facts = facts
            self.state.insecurity_justification = text if on else ""
            self.evaluate()

        self.ctx.tasks.run_store(update, done,
                                 lambda exc: self.retention_banner.error(describe_error(exc)),
                                 owner=self)

    def problems(self) -> list[tuple[QWidget, str, Any]]:
        """Every missing field of this step at once (field, message, re-check); the
        outcome-level refusals stay with :meth:`collect`."""
        if self.outcome is None:
            return []
        out: list[tuple[QWidget, str, Any]] = []

        def narrative() -> str | None:
            if self.active_infractions() and not self.narrative.toPlainText().strip():
                return ("Descreva os fatos na narrativa do agente (obrigatória quando há "
                        "infração).")
            return None

        def place() -> str | None:
            retain = self.retain_check.isEnabled() and self.retain_check.isChecked()
            if retain and not self.retention_place.text().strip():
                return "Informe onde o veículo fica retido."
            return None

        for widget, check in ((self.narrative, narrative), (self.retention_place, place)):
            message = check()
            if message:
                out.append((widget, message, check))
        return out

    def collect(self) -> str | None:
        """Copy the agent's decisions into the wizard state; a message when incomplete."""
        if self.outcome is None:
            return "Aguarde a avaliação das regras."
        state = self.state
        active = self.active_infractions()
        narrative = self.narrative.toPlainText().strip()
        if state.kind == "fiscalizacao" and not active:
            return ("Fiscalização sem infrações não gera auto. Para encerrar, use "
                    "\"Encerrar sem auto…\" e informe o motivo.")
        if active and not narrative:
            self.narrative.setFocus()
            return "Descreva os fatos na narrativa do agente (obrigatória quando há infração)."
        retain = self.retain_check.isEnabled() and self.retain_check.isChecked()
        if retain and not self.retention_place.text().strip():
            self.retention_place.setFocus()
            return "Informe onde o veículo fica retido."
        state.narrative = narrative
        state.retain = retain
        state.retention_place = self.retention_place.text().strip() if retain else ""
        state.outcome = self.outcome
        return None
