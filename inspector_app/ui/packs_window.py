"""The window that lists the regulation packs found in ``forms/``, with their problems.

Opened from the settings screen ("Configurações" → "Detalhes dos pacotes…"), whose "Sobre"
section shows the same packs' versions and content hashes.

Caveat: it only shows what it is given; loading packs is ``inspector_app.packs.list_packs``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMainWindow,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

WINDOW_TITLE = "Fiscalização – Pacotes de regulamentação"
COLUMNS = ("Pacote", "Versão", "Título", "Situação", "Órgão", "Hash", "Problemas")
STATUS_LABELS = {"in_force": "em vigor", "historical": "histórico"}
HASH_CHARS = 12
# Large enough to read at arm's length and to hit with a finger on a touch screen.
BASE_POINT_SIZE = 12
TOUCH_TARGET_PX = 44


class PackListing(Protocol):
    """What the window needs from each entry of ``inspector_app.packs.list_packs()``."""

    @property
    def id(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def status(self) -> str:
        """``"in_force"`` or ``"historical"``."""
        ...

    @property
    def organ(self) -> str: ...
    @property
    def content_hash(self) -> str: ...
    @property
    def problems(self) -> Sequence[str]:
        """Empty when the pack loaded cleanly."""
        ...


def describe_status(status: str) -> str:
    """Portuguese label for a pack status; an unknown status is shown as it is."""
    return STATUS_LABELS.get(status, status)


def summarise_listings(listings: Sequence[PackListing]) -> str:
    """Status-bar text: how many packs loaded and how many have problems."""
    total = len(listings)
    broken = sum(1 for listing in listings if listing.problems)
    if total == 0:
        return "Nenhum pacote de regulamentação encontrado."
    loaded = "1 pacote carregado" if total == 1 else f"{total} pacotes carregados"
    if broken == 0:
        return f"{loaded}; nenhum com problemas."
    return f"{loaded}; {broken} com problemas."


class PacksWindow(QMainWindow):
    """Main window listing regulation packs: id, version, title, status, organ, hash, problems."""

    def __init__(self, listings: Sequence[PackListing], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.listings = list(listings)
        self.setWindowTitle(WINDOW_TITLE)
        font = self.font()
        font.setPointSize(BASE_POINT_SIZE)
        self.setFont(font)

        heading = QLabel("Pacotes de regulamentação carregados de <code>forms/</code>")
        heading.setTextFormat(Qt.TextFormat.RichText)

        self.table = QTableWidget(len(self.listings), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(True)
        # Arrows move between rows; Tab leaves the table for the buttons.
        self.table.setTabKeyNavigation(False)
        rows = self.table.verticalHeader()
        rows.setVisible(False)
        rows.setMinimumSectionSize(TOUCH_TARGET_PX)
        # Row heights follow the wrapped text as columns are resized.
        rows.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self._fill_table()
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(COLUMNS.index("Título"), QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(COLUMNS.index("Problemas"), QHeaderView.ResizeMode.Stretch)

        self.close_button = QPushButton("&Fechar")
        self.close_button.setMinimumSize(TOUCH_TARGET_PX * 3, TOUCH_TARGET_PX)
        self.close_button.setAutoDefault(True)
        self.close_button.clicked.connect(self.close)
        # Ctrl+Q and Esc (keyPressEvent) close too, so the window works without a mouse.
        QShortcut(QKeySequence("Ctrl+Q"), self).activated.connect(self.close)

        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)

        layout = QVBoxLayout()
        layout.addWidget(heading)
        layout.addWidget(self.table, 1)
        layout.addLayout(buttons)
        central = QWidget()
        central.setLayout(layout)
        self.setCentralWidget(central)
        self.setTabOrder(self.table, self.close_button)

        self.statusBar().showMessage(summarise_listings(self.listings))
        self.resize(1100, 480)
        if self.listings:
            self.table.selectRow(0)
        self.table.setFocus()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # A shortcut would not do: the table takes Esc before window shortcuts see it.
        if event.key() == Qt.Key.Key_Escape:
            self.close()
            return
        super().keyPressEvent(event)

    def _fill_table(self) -> None:
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSize(BASE_POINT_SIZE)
        for row, listing in enumerate(self.listings):
            problems = "\n".join(listing.problems) if listing.problems else "nenhum"
            cells = (
                listing.id,
                str(listing.version),
                listing.title,
                describe_status(listing.status),
                listing.organ,
                listing.content_hash[:HASH_CHARS],
                problems,
            )
            items = [QTableWidgetItem(text) for text in cells]
            hash_item = items[COLUMNS.index("Hash")]
            hash_item.setFont(mono)
            hash_item.setToolTip(listing.content_hash)
            if listing.problems:
                problems_item = items[COLUMNS.index("Problemas")]
                problems_item.setToolTip(problems)
                problems_item.setForeground(Qt.GlobalColor.darkRed)
            for column, item in enumerate(items):
                self.table.setItem(row, column, item)

    def cell_text(self, row: int, column: str) -> str:
        """Text shown in ``row`` under the header ``column`` (for tests and accessibility)."""
        item = self.table.item(row, COLUMNS.index(column))
        return item.text() if item is not None else ""
