"""Small modal questions, each behind an ``ask()`` classmethod that tests replace.

Caveat: ``ask`` runs a nested event loop (``exec``); keep them short and never open one
from a worker callback that other callbacks wait on.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from inspector_app.services import MIN_REASON
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner


class ReasonDialog(QDialog):
    """Ask for a written reason of at least ``MIN_REASON`` characters."""

    TITLE = "Motivo"
    PROMPT = "Informe o motivo:"

    def __init__(self, parent: QWidget | None, prompt: str) -> None:
        super().__init__(parent)
        self.setWindowTitle(self.TITLE)
        self.setMinimumWidth(520)
        label = QLabel(prompt)
        label.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setTabChangesFocus(True)
        self.text.setMinimumHeight(TOUCH_TARGET_PX * 2)
        label.setBuddy(self.text)
        self.banner = Banner()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Confirmar")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("&Voltar")
        buttons.accepted.connect(self._check)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(label)
        layout.addWidget(self.text)
        layout.addWidget(self.banner)
        layout.addWidget(buttons)

    def reason(self) -> str:
        return self.text.toPlainText().strip()

    def _check(self) -> None:
        if len(self.reason()) < MIN_REASON:
            self.banner.error(f"Escreva o motivo com pelo menos {MIN_REASON} caracteres.")
            return
        self.accept()

    @classmethod
    def ask(cls, parent: QWidget | None, prompt: str | None = None) -> str | None:
        dialog = cls(parent, prompt or cls.PROMPT)
        accepted = dialog.exec() == QDialog.DialogCode.Accepted
        return dialog.reason() if accepted else None


class RemoveInfractionDialog(ReasonDialog):
    TITLE = "Retirar infração proposta"
    PROMPT = "Por que esta infração não se aplica? O motivo fica registrado no auto."


class CancelAutoDialog(ReasonDialog):
    """The reason and, since cancelling is a signing act, the supervisor's password asked
    again at that moment (checked by ``services.cancel_auto``)."""

    TITLE = "Cancelar auto"
    PROMPT = ("Motivo do cancelamento (fica registrado; o auto original permanece arquivado, "
              "sem alteração):")

    def __init__(self, parent: QWidget | None, prompt: str) -> None:
        super().__init__(parent, prompt)
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setAccessibleName("Senha do supervisor")
        self.password.setMinimumHeight(TOUCH_TARGET_PX)
        label = QLabel("Confirme com a sua &senha (o cancelamento é assinado por você):")
        label.setWordWrap(True)
        label.setBuddy(self.password)
        layout = self.layout()
        index = layout.indexOf(self.banner)
        layout.insertWidget(index, label)
        layout.insertWidget(index + 1, self.password)

    def _check(self) -> None:
        if len(self.reason()) < MIN_REASON:
            self.banner.error(f"Escreva o motivo com pelo menos {MIN_REASON} caracteres.")
            self.text.setFocus()
            return
        if not self.password.text():
            self.banner.error("Digite a sua senha para confirmar o cancelamento.")
            self.password.setFocus()
            return
        self.accept()

    @classmethod
    def ask_with_password(cls, parent: QWidget | None) -> tuple[str, str] | None:
        """(reason, password), or None when the supervisor went back."""
        dialog = cls(parent, cls.PROMPT)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return dialog.reason(), dialog.password.text()


class AbandonDialog(ReasonDialog):
    TITLE = "Abandonar inspeção"
    PROMPT = ("Motivo do abandono (a inspeção fica guardada como abandonada; nenhum auto é "
              "emitido):")


class CatalogueDialog(QDialog):
    """Choose an infraction of the pack's catalogue to add by hand."""

    def __init__(self, parent: QWidget | None, pack: Any, exclude: set[str]) -> None:
        super().__init__(parent)
        self.setWindowTitle("Adicionar infração do catálogo")
        self.resize(760, 560)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filtrar por artigo ou descrição")
        self.list = QListWidget()
        self.list.setWordWrap(True)
        for rule in pack.rules.values():
            if not rule.selectable or rule.status != "in_force" or rule.id in exclude:
                continue
            item = QListWidgetItem(f"{rule.article} – {rule.description}  ({rule.id})")
            item.setData(Qt.ItemDataRole.UserRole, rule.id)
            item.setSizeHint(QSize(0, TOUCH_TARGET_PX + 12))
            self.list.addItem(item)
        self.filter.textChanged.connect(self._filter)
        self.list.itemActivated.connect(lambda _i: self.accept())
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Adicionar")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("&Voltar")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(buttons)
        if self.list.count():
            self.list.setCurrentRow(0)

    def _filter(self, text: str) -> None:
        needle = text.strip().casefold()
        for row in range(self.list.count()):
            item = self.list.item(row)
            item.setHidden(bool(needle) and needle not in item.text().casefold())

    def chosen(self) -> str | None:
        item = self.list.currentItem()
        return None if item is None or item.isHidden() else item.data(Qt.ItemDataRole.UserRole)

    @classmethod
    def ask(cls, parent: QWidget | None, pack: Any, exclude: set[str]) -> str | None:
        dialog = cls(parent, pack, exclude)
        return dialog.chosen() if dialog.exec() == QDialog.DialogCode.Accepted else None
