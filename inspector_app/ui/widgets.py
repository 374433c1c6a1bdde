"""Small pieces every screen uses: the message banner, big buttons, Portuguese formatting.

Caveat: sizes assume a touch screen: every control is at least ``TOUCH_TARGET_PX`` tall.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHeaderView,
    QLabel,
    QPushButton,
    QSizePolicy,
    QTableView,
    QTableWidget,
    QWidget,
)

from inspector_app.ui.packs_window import BASE_POINT_SIZE, TOUCH_TARGET_PX

__all__ = [
    "BASE_POINT_SIZE",
    "TOUCH_TARGET_PX",
    "Banner",
    "big_button",
    "date_br",
    "datetime_br",
    "held_for",
    "money_br",
]

# Applied to the main window: large targets for fingers, visible keyboard focus.
# Caveat: no ``min-width`` on buttons: a style-sheet minimum is an explicit minimum size,
# which lets a layout squeeze a button below its text ("forme" for "Não conforme").
STYLE_SHEET = f"""
QPushButton, QLineEdit, QComboBox, QSpinBox, QDateEdit, QDoubleSpinBox {{
    min-height: {TOUCH_TARGET_PX - 8}px;
    padding: 3px 10px;
}}
QPushButton:focus, QLineEdit:focus, QComboBox:focus, QFrame#itemRow:focus {{
    outline: none;
    border: 2px solid #1f5fbf;
}}
QCheckBox, QRadioButton {{ min-height: {TOUCH_TARGET_PX}px; spacing: 10px; }}
QCheckBox::indicator, QRadioButton::indicator {{ width: 24px; height: 24px; }}
QTableWidget::item, QListWidget::item {{ min-height: {TOUCH_TARGET_PX}px; padding: 4px; }}
QFrame#itemRow {{ border: 1px solid #c8ccd2; border-radius: 6px; background: #ffffff; }}
QGroupBox {{ font-weight: bold; }}
QLabel#heading {{ font-size: {BASE_POINT_SIZE + 4}pt; font-weight: bold; }}
QLabel#demoBadge {{
    background: #b3261e; color: white; font-weight: bold; padding: 4px 12px;
    border-radius: 4px;
}}
"""

_BANNER_STYLES = {
    "error": "background:#fde7e9; color:#7a1020; border:1px solid #e3a1aa;",
    "warning": "background:#fff4ce; color:#5c4400; border:1px solid #e8d08a;",
    "info": "background:#e6f1fb; color:#0b3a66; border:1px solid #a9c8e8;",
    "ok": "background:#e7f5e9; color:#16451f; border:1px solid #9fd3a8;",
}


class Banner(QLabel):
    """An inline message (error, warning, info, ok) that wraps and never blocks."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.level = ""
        self.hide()

    def show_message(self, text: str, level: str = "info") -> None:
        self.level = level
        self.setText(text)
        style = _BANNER_STYLES[level]
        self.setStyleSheet(f"QLabel {{ {style} padding: 8px; border-radius: 4px; }}")
        self.setAccessibleName({"error": "Erro", "warning": "Aviso"}.get(level, "Mensagem"))
        self.show()

    def error(self, text: str) -> None:
        self.show_message(text, "error")

    def clear_message(self) -> None:
        self.level = ""
        self.setText("")
        self.hide()


def big_button(text: str, *, primary: bool = False, tooltip: str = "") -> QPushButton:
    """A push button at least one touch target tall (``&`` in ``text`` is the mnemonic)."""
    button = QPushButton(text)
    button.setMinimumHeight(TOUCH_TARGET_PX)
    button.setAutoDefault(True)
    if primary:
        button.setDefault(True)
        font = button.font()
        font.setBold(True)
        button.setFont(font)
    if tooltip:
        button.setToolTip(tooltip)
    return button


def heading(text: str) -> QLabel:
    label = QLabel(text)
    label.setObjectName("heading")
    label.setWordWrap(True)
    return label


def list_view(model: Any, *stretch: int, wrap: bool = False) -> QTableView:
    """``list_table``'s look for a model (``PagedTableModel``): rows are asked for as the
    list scrolls, never all at once."""
    table = QTableView()
    table.setModel(model)
    _list_look(table, stretch, wrap)
    if wrap:
        # Rows measured once, when they arrive: ResizeToContents would measure every row
        # loaded so far at each layout pass (thousands of data() calls per page).
        table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        model.rowsInserted.connect(lambda _parent, first, last: [
            table.resizeRowToContents(row) for row in range(first, last + 1)])
    return table


def _list_look(table: QTableView, stretch: tuple[int, ...], wrap: bool) -> None:
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setTabKeyNavigation(False)
    rows = table.verticalHeader()
    rows.setVisible(False)
    if wrap:
        table.setWordWrap(True)
        rows.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        rows.setMinimumSectionSize(TOUCH_TARGET_PX)
    else:
        rows.setDefaultSectionSize(TOUCH_TARGET_PX)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    for column in stretch:
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Stretch)


def list_table(columns: tuple[str, ...], *stretch: int, wrap: bool = False) -> QTableWidget:
    """A read-only table of whole-row choices with touch-sized rows; ``stretch`` columns
    take the spare width. ``wrap``: long text wraps and rows grow to fit it."""
    table = QTableWidget(0, len(columns))
    table.setHorizontalHeaderLabels(list(columns))
    _list_look(table, stretch, wrap)
    return table


def separator() -> QFrame:
    line = QFrame()
    line.setFrameShape(QFrame.Shape.HLine)
    line.setFrameShadow(QFrame.Shadow.Sunken)
    return line


def date_br(value: dt.date | str | None) -> str:
    """``2026-05-04`` → ``04/05/2026``; empty or None → ``—``."""
    if not value:
        return "—"
    if isinstance(value, str):
        try:
            value = dt.date.fromisoformat(value[:10])
        except ValueError:
            return value
    return value.strftime("%d/%m/%Y")


def datetime_br(value: str | None) -> str:
    """An ISO timestamp in the device's local time: ``04/05/2026 13:05``."""
    if not value:
        return "—"
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%d/%m/%Y %H:%M")


def money_br(value: Decimal | str | None) -> str:
    """``Decimal("1234.5")`` → ``R$ 1.234,50``; None → ``—``."""
    if value is None or value == "":
        return "—"
    amount = Decimal(value)
    text = f"{amount:,.2f}"
    return "R$ " + text.replace(",", "_").replace(".", ",").replace("_", ".")


def held_for(since: str, now: dt.datetime | None = None) -> str:
    """How long since an ISO timestamp, in Portuguese: ``2 d 3 h``, ``3 h 05 min``, ``12 min``."""
    try:
        start = dt.datetime.fromisoformat(since)
    except ValueError:
        return "—"
    if start.tzinfo is None:
        start = start.replace(tzinfo=dt.UTC)
    moment = now or dt.datetime.now(dt.UTC)
    minutes = max(0, int((moment - start).total_seconds() // 60))
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    if hours:
        return f"{hours} h {mins:02d} min"
    return f"{mins} min"


LOCATION_LABELS = {
    "terminal": "Terminal",
    "ponto_controle": "Ponto de controle",
    "via_publica": "Via pública",
    "patio_vistoria": "Pátio de vistoria",
}
INSPECTION_KIND_LABELS = {"vistoria": "Vistoria", "fiscalizacao": "Fiscalização"}
ROLE_LABELS = {
    "inspector": "fiscal",
    "retention_desk": "balcão de retenção",
    "supervisor": "supervisor(a)",
}
PENALTY_LABELS = {"multa": "Multa", "advertencia": "Advertência"}
