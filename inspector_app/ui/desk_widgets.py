"""Pieces of the desk's forms shared by the release dialog and the inspection wizard: a
person identified by name, CPF and document, and the optional witness (testemunha).

The GUI only collects; ``domain.desk`` (through the services) checks.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QFormLayout, QGroupBox, QLabel, QLineEdit, QVBoxLayout, QWidget

from inspector_app.ui.signatures import SignatureBox


class PersonForm(QWidget):
    """Name, CPF and the document shown (type and number)."""

    def __init__(self, who: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = QLineEdit()
        self.name.setAccessibleName(f"Nome {who}")
        self.name.setPlaceholderText("Nome completo")
        self.cpf = QLineEdit()
        self.cpf.setAccessibleName(f"CPF {who}")
        self.cpf.setPlaceholderText("000.000.000-00")
        self.cpf.setMaxLength(14)
        self.document = QLineEdit()
        self.document.setAccessibleName(f"Documento {who}")
        self.document.setPlaceholderText("Tipo e número, ex.: CNH 01234567890")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for text, edit in (("Nome:", self.name), ("CPF:", self.cpf),
                           ("Documento:", self.document)):
            label = QLabel(text)
            label.setBuddy(edit)
            form.addRow(label, edit)

    def value(self) -> dict[str, str]:
        return {"name": self.name.text().strip(), "cpf": self.cpf.text().strip(),
                "document": self.document.text().strip()}

    def is_blank(self) -> bool:
        return not any(self.value().values())

    def field(self, key: str) -> QLineEdit | None:
        return {"name": self.name, "cpf": self.cpf, "document": self.document}.get(key)


def signature_of(box: SignatureBox) -> dict[str, Any]:
    """What the services take for a signature drawn on ``box`` (or its refusal)."""
    status = box.status()
    if status != "signed":
        return {"status": status, "note": box.note.text().strip()}
    return {"status": "signed", "strokes": [list(s) for s in box.pad.strokes],
            "size": box.pad.pad_size()}


def receiver_box(title: str = "Assinatura do recebedor do veículo") -> SignatureBox:
    """The receiver signs on the pad or refuses (a note by the agent); never "absent"."""
    box = SignatureBox(title, driver=True)
    if box.absent_radio is not None:
        box.absent_radio.hide()
    if box.refused_radio is not None:
        box.refused_radio.setText("Recusou-se a a&ssinar")
    box.note_label.setText("Observação do agente sobre a recusa (obrigatória, pelo menos 10 "
                           "caracteres):")
    return box


class WitnessBox(QGroupBox):
    """An optional witness: name, CPF, document and signature; left blank, none."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Testemunha (opcional)", parent)
        self.person = PersonForm("da testemunha")
        self.signature = SignatureBox("Assinatura da testemunha", driver=False)
        layout = QVBoxLayout(self)
        layout.addWidget(self.person)
        layout.addWidget(self.signature)

    def value(self) -> dict[str, Any] | None:
        if self.person.is_blank() and self.signature.pad.is_empty():
            return None
        return {**self.person.value(), "signature": signature_of(self.signature)}
