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
    box.clear_button.setText("Limpar assinatura do rece&bedor")
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
        self.signature.clear_button.setText("Limpar assinatura da testemun&ha")
        layout = QVBoxLayout(self)
        layout.addWidget(self.person)
        layout.addWidget(self.signature)

    def value(self) -> dict[str, Any] | None:
        if self.person.is_blank() and self.signature.pad.is_empty():
            return None
        return {**self.person.value(), "signature": signature_of(self.signature)}


def _document_text(value: str) -> str:
    from inspector_app.domain.identity import IdentityError, format_cnpj, format_cpf

    raw = "".join(c for c in value if c.isalnum()).upper()
    try:
        if len(raw) == 11 and raw.isdigit():
            return f"CPF {format_cpf(raw)}"
        if len(raw) == 14:
            return f"CNPJ {format_cnpj(raw)}"
    except IdentityError:
        pass
    return value or "—"


def review_html(review: dict[str, Any]) -> str:
    """The review the driver reads before signing (``services.review_inspection``):
    autuado, driver, each infraction with article and description, totals, measures."""
    from html import escape

    from inspector_app.ui.widgets import money_br

    autuado = review.get("autuado") or {}
    driver = review.get("driver") or {}
    vehicle = review.get("vehicle") or {}
    rows = [
        ("Autuado", f"{autuado.get('name') or 'NÃO IDENTIFICADO'} – "
                    f"{_document_text(str(autuado.get('document') or ''))}"),
        ("Veículo", f"{vehicle.get('plate') or '—'}"
                    + (f" – {vehicle['make_model']}" if vehicle.get("make_model") else "")),
        ("Condutor", "ausente" if driver.get("absent") else
         f"{driver.get('name') or 'não identificado'}"
         + (f" – {_document_text(str(driver['cpf']))}" if driver.get("cpf") else "")),
    ]
    html = "<table>" + "".join(
        f"<tr><td style='padding-right:12px'><b>{escape(k)}</b></td><td>{escape(v)}</td></tr>"
        for k, v in rows) + "</table>"
    infractions = review.get("infractions") or []
    if infractions:
        items = "".join(
            f"<li><b>{escape(str(i.get('article')))}</b> – {escape(str(i.get('description')))}: "
            f"{escape(str(i.get('penalty')))}, {money_br(i.get('fine_brl'))}, "
            f"{i.get('points')} ponto(s)</li>" for i in infractions)
        html += f"<p><b>Infrações ({len(infractions)})</b></p><ul>{items}</ul>"
    else:
        html += "<p><b>Nenhuma infração.</b></p>"
    totals = review.get("totals") or {}
    if infractions:
        fine = money_br(totals.get("fine_brl")) if totals.get("fine_brl") else "—"
        extra = " (parcial: há infração sem valor estimado)" if totals.get(
            "fine_incomplete") else ""
        html += (f"<p><b>Total estimado:</b> {fine}{extra} · <b>Pontos:</b> "
                 f"{totals.get('points', 0)}</p>")
    measures = review.get("measures") or {}
    if measures.get("retain"):
        grounds = "".join(f"<li>{escape(g)}</li>" for g in measures.get("grounds") or [])
        html += (f"<p><b>Medida administrativa:</b> retenção do veículo em "
                 f"{escape(str(measures.get('place') or '—'))}</p><ul>{grounds}</ul>")
    elif measures.get("withdrawal"):
        grounds = "".join(f"<li>{escape(g)}</li>" for g in measures["withdrawal"])
        html += f"<p><b>Medida administrativa:</b> retirada de circulação</p><ul>{grounds}</ul>"
    else:
        html += "<p><b>Medida administrativa:</b> nenhuma.</p>"
    if review.get("narrative"):
        html += f"<p><b>Narrativa do agente:</b> {escape(str(review['narrative']))}</p>"
    return html


class AutuadoForm(QGroupBox):
    """Shown at the seal step when sealing found the autuado or the vehicle identification
    missing (``services.identify_autuado``): the fields at fault, the focus on the first."""

    FIELDS = (("make_model", "Marca/modelo (CRLV):", "ex.: Mercedes-Benz OF-1721"),
              ("renavam", "RENAVAM:", "11 dígitos, como no CRLV"),
              ("holder_name", "Autuado (nome ou razão social):", "como no CRLV ou no cadastro"),
              ("holder_document", "CPF/CNPJ do autuado:", "CPF ou CNPJ"))

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Autuado e identificação do veículo", parent)
        self.edits: dict[str, QLineEdit] = {}
        form = QFormLayout(self)
        for key, text, hint in self.FIELDS:
            edit = QLineEdit()
            edit.setPlaceholderText(hint)
            edit.setAccessibleName(text.rstrip(":"))
            label = QLabel(text)
            label.setBuddy(edit)
            form.addRow(label, edit)
            self.edits[key] = edit
        self.hide()

    def ask(self, vehicle: dict[str, Any], fields: list[str]) -> None:
        """Show the form with what the inspection has, the focus on the first field at
        fault (in the form's order)."""
        for key, edit in self.edits.items():
            if not edit.text().strip():
                edit.setText(str(vehicle.get(key) or ""))
        self.show()
        wrong = {f.split(".")[-1] for f in fields}
        first = next((k for k in self.edits if k in wrong), None)
        if first is not None:
            self.edits[first].setFocus()

    def value(self) -> dict[str, str] | None:
        if not self.isVisible():
            return None
        return {key: edit.text().strip() for key, edit in self.edits.items()}
