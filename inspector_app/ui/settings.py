"""The settings screen ("Configurações") and what the app says about itself ("Sobre").

Settings: the data folder (shown, opened with the system file manager), the HQ address,
the default print layout and printer, and the minutes of inactivity before the session
locks; saved to the device's QSettings file (``context.save_settings``) and applied at
once (``ctx.settings_did_change``). "Sobre": app and Qt versions, the regulation packs
with their versions and content hashes, the device id and device key id, the store path,
where the registry came from and when it last changed, the number ranges and what is left
of them — read on the store worker, and again when a sync changes the registry
(``ctx.reference_did_change``).

Caveat: the printer list comes from ``QPrinterInfo`` on the GUI thread when the screen is
shown (as the system print dialog does); a printer that was saved and is gone stays listed
as "não encontrada" and printing falls back to the system's default.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import PySide6
from PySide6.QtCore import Qt, QUrl, Signal, qVersion
from PySide6.QtGui import QDesktopServices, QFontDatabase
from PySide6.QtPrintSupport import QPrinterInfo
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector_app import __version__
from inspector_app.ui import queries
from inspector_app.ui.context import IDLE_LOCK_RANGE, AppContext, save_settings
from inspector_app.ui.errors import UiError, describe_error
from inspector_app.ui.packs_window import describe_status
from inspector_app.ui.printing import LAYOUT_LABELS
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner, big_button, datetime_br, heading

SYSTEM_PRINTER = "Padrão do sistema"
NOT_YET = "ainda não gerado (é criado ao selar o primeiro registro)"
PACK_COLUMNS = ("Pacote", "Versão", "Situação", "Hash do conteúdo (SHA-256)")


def validate_hq_url(text: str) -> str:
    """The HQ address as saved (no trailing slash); "" when left empty. Raises UiError."""
    url = text.strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or " " in url:
        raise UiError("Endereço da sede inválido: use o endereço completo, começando por "
                      "https:// (ex.: https://sede.exemplo.gov.br). Peça-o à sede se não o "
                      "tiver.")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise UiError("Endereço da sede inválido: a porta depois de \":\" deve ser um número "
                      "entre 1 e 65535.") from None
    if parts.query or parts.fragment:
        raise UiError("Endereço da sede inválido: informe só o endereço, sem \"?\" nem "
                      "\"#\" (ex.: https://sede.exemplo.gov.br).")
    return url.rstrip("/")


@dataclass(frozen=True)
class AboutInfo:
    device: queries.DeviceIdentity
    packs: tuple[Any, ...]  # packs.PackListing
    ranges: tuple[queries.NumberRangeLine, ...] = ()


def load_about(store: Any) -> AboutInfo:
    """Device identity, the regulation packs and the number ranges (store worker)."""
    from inspector_app.packs import list_packs

    return AboutInfo(queries.device_identity(store), tuple(list_packs()),
                     tuple(queries.number_ranges(store)))


REGISTRY_SOURCES = {"hq": "recebidos da sede", "import": "importados de arquivo",
                    "demo": "demonstração"}


def describe_registry(device: queries.DeviceIdentity) -> str:
    """The "Cadastro" line: enrolment, where the registry came from and when it changed."""
    if device.enrolled_hq_url:
        text = f"cadastrado na sede {device.enrolled_hq_url}"
    elif device.registry_source == "demo":
        text = "DEMONSTRAÇÃO (cadastro fictício, sem valor legal)"
    else:
        text = "não cadastrado na sede"
    if device.registry_updated_at:
        source = REGISTRY_SOURCES.get(device.registry_source or "", "")
        text += (f" · dados de referência {source + ', ' if source else ''}atualizados em "
                 f"{datetime_br(device.registry_updated_at)}")
    return text


def describe_ranges(ranges: tuple[queries.NumberRangeLine, ...]) -> str:
    """The "Numeração" line: each usable range and the numbers left in it."""
    if not ranges:
        return "nenhuma faixa recebida (a de demonstração é criada ao selar o primeiro registro)"
    lines = []
    for r in ranges:
        demo = " (demonstração)" if r.source == "demo" else ""
        lines.append(f"série {r.series}{demo}: {r.first}–{r.last}, restam {r.remaining} "
                     f"número(s)")
    return "\n".join(lines)


def _label(text: str, buddy: QWidget) -> QLabel:
    label = QLabel(text)
    label.setBuddy(buddy)
    # As tall as the field, so the text sits level with what is typed in it.
    label.setMinimumHeight(TOUCH_TARGET_PX)
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    return label


def _value_label() -> QLabel:
    label = QLabel("…")
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                  | Qt.TextInteractionFlag.TextSelectableByKeyboard)
    return label


class SettingsPage(QWidget):
    """Device settings on top, "Sobre" (versions, packs, device) below."""

    packs_requested = Signal()  # open the packs window (details and problems)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.about: AboutInfo | None = None
        self._opened = False  # refresh() ran once: "Sobre" is on screen
        self.banner = Banner()
        ctx.reference_did_change.connect(self.reference_changed)

        self.data_dir = QLineEdit()
        self.data_dir.setReadOnly(True)
        self.data_dir.setAccessibleName("Pasta de dados")
        self.open_folder_button = big_button("Abrir &pasta")
        self.open_folder_button.clicked.connect(self.open_data_folder)
        self.hq_url = QLineEdit()
        self.hq_url.setPlaceholderText("https://sede.exemplo.gov.br")
        self.hq_url.setAccessibleName("Endereço da sede")
        self.layout_combo = QComboBox()
        for key, label in LAYOUT_LABELS.items():
            self.layout_combo.addItem(label, key)
        self.printer_combo = QComboBox()
        self.printer_combo.setAccessibleName("Impressora padrão")
        self.idle_minutes = QSpinBox()
        self.idle_minutes.setRange(*IDLE_LOCK_RANGE)
        self.idle_minutes.setSuffix(" min")
        self.idle_minutes.setAccessibleName("Bloqueio por inatividade")
        self.save_button = big_button("&Salvar configurações", primary=True)
        self.save_button.clicked.connect(self.save)
        self.revert_button = big_button("Desfa&zer alterações")
        self.revert_button.clicked.connect(self.load_fields)

        folder_row = QHBoxLayout()
        folder_row.addWidget(self.data_dir, 1)
        folder_row.addWidget(self.open_folder_button)
        self.layout_combo.setMaximumWidth(320)
        self.idle_minutes.setMaximumWidth(160)
        form = QFormLayout()
        form.addRow(_label("Pasta de dados:", self.data_dir), folder_row)
        form.addRow(_label("Endereço da s&ede:", self.hq_url), self.hq_url)
        form.addRow(_label("&Formato de impressão padrão:", self.layout_combo),
                    self.layout_combo)
        form.addRow(_label("Impressora pa&drão:", self.printer_combo), self.printer_combo)
        form.addRow(_label("Bloquear após ina&tividade de:", self.idle_minutes),
                    self.idle_minutes)
        buttons = QHBoxLayout()
        buttons.addWidget(self.save_button)
        buttons.addWidget(self.revert_button)
        buttons.addStretch(1)
        device_box = QGroupBox("Este dispositivo")
        device_layout = QVBoxLayout(device_box)
        device_layout.addLayout(form)
        device_layout.addLayout(buttons)

        self.app_version = _value_label()
        self.app_version.setText(
            f"Fiscalização de transporte público {__version__} · Python "
            f"{sys.version.split()[0]} · Qt {qVersion()} (PySide6 {PySide6.__version__})")
        self.device_id = _value_label()
        self.device_key_id = _value_label()
        self.store_path = _value_label()
        self.registry = _value_label()
        self.numbering = _value_label()
        self.packs = QTableWidget(0, len(PACK_COLUMNS))
        self.packs.setHorizontalHeaderLabels(list(PACK_COLUMNS))
        self.packs.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.packs.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.packs.setTabKeyNavigation(False)
        self.packs.verticalHeader().setVisible(False)
        self.packs.verticalHeader().setDefaultSectionSize(TOUCH_TARGET_PX)
        self.packs.setAccessibleName("Pacotes de regulamentação")
        header = self.packs.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(len(PACK_COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.packs_button = big_button("Detal&hes dos pacotes…")
        self.packs_button.clicked.connect(self.packs_requested)
        about_form = QFormLayout()
        about_form.addRow("Aplicativo:", self.app_version)
        about_form.addRow("Identificador do dispositivo:", self.device_id)
        about_form.addRow("Chave do dispositivo (id):", self.device_key_id)
        about_form.addRow("Banco de dados:", self.store_path)
        about_form.addRow("Cadastro:", self.registry)
        about_form.addRow("Numeração:", self.numbering)
        about_box = QGroupBox("Sobre")
        about_layout = QVBoxLayout(about_box)
        about_layout.addLayout(about_form)
        about_layout.addWidget(QLabel("Pacotes de regulamentação:"))
        about_layout.addWidget(self.packs)
        packs_row = QHBoxLayout()
        packs_row.addWidget(self.packs_button)
        packs_row.addStretch(1)
        about_layout.addLayout(packs_row)

        content = QWidget()
        column = QVBoxLayout(content)
        column.addWidget(heading("Configurações"))
        column.addWidget(self.banner)
        column.addWidget(device_box)
        column.addWidget(about_box)
        column.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(scroll)

    # --- showing ----------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Fill the fields from the saved settings and read "Sobre" on the store worker."""
        self._opened = True
        self.banner.clear_message()
        self.load_fields()
        self.ctx.tasks.run_store(load_about, self._show_about,
                                 lambda exc: self.banner.error(describe_error(exc)), owner=self)

    def reference_changed(self) -> None:
        """The registry or the number ranges changed: read "Sobre" again. The settings
        fields are not reloaded, so anything typed and not yet saved stays."""
        if not self._opened:
            return  # never shown: the first visit reads everything
        self.ctx.tasks.run_store(load_about, self._show_about,
                                 lambda exc: self.banner.error(describe_error(exc)), owner=self)

    def load_fields(self) -> None:
        settings = self.ctx.settings
        self.hq_url.setText(settings.hq_url)
        self.layout_combo.setCurrentIndex(max(0, self.layout_combo.findData(settings.layout)))
        self._fill_printers(settings.printer)
        self.idle_minutes.setValue(round(settings.idle_lock_minutes))
        if self.about is not None:
            self.data_dir.setText(self.about.device.data_dir)

    def _fill_printers(self, chosen: str) -> None:
        self.printer_combo.clear()
        self.printer_combo.addItem(SYSTEM_PRINTER, "")
        default = QPrinterInfo.defaultPrinterName()
        for name in QPrinterInfo.availablePrinterNames():
            self.printer_combo.addItem(f"{name} (padrão do sistema)" if name == default else name,
                                       name)
        if chosen and self.printer_combo.findData(chosen) < 0:
            self.printer_combo.addItem(f"{chosen} (não encontrada)", chosen)
        self.printer_combo.setCurrentIndex(max(0, self.printer_combo.findData(chosen)))

    def _show_about(self, info: AboutInfo) -> None:
        self.about = info
        device = info.device
        self.data_dir.setText(device.data_dir)
        self.data_dir.setCursorPosition(0)
        self.device_id.setText(device.device_id or NOT_YET)
        self.device_key_id.setText(device.device_key_id or NOT_YET)
        self.store_path.setText(device.store_path)
        self.registry.setText(describe_registry(device))
        self.numbering.setText(describe_ranges(info.ranges))
        mono = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        mono.setPointSize(self.font().pointSize())
        self.packs.setRowCount(len(info.packs))
        for row, listing in enumerate(info.packs):
            status = "com problemas" if listing.problems else describe_status(listing.status)
            cells = (listing.id, str(listing.version), status, listing.content_hash)
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if column == len(cells) - 1:
                    item.setFont(mono)
                    item.setToolTip(text)
                if listing.problems:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.packs.setItem(row, column, item)
        self.packs.setFixedHeight(self.packs.horizontalHeader().height() + 6
                                  + TOUCH_TARGET_PX * max(1, len(info.packs)))

    # --- actions ----------------------------------------------------------------------------------

    def open_data_folder(self) -> None:
        """Show the data folder in the system's file manager."""
        folder = self.data_dir.text()
        if not folder:
            return
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(folder)):
            self.banner.error(f"Não foi possível abrir a pasta {folder} neste computador. "
                              "Copie o caminho acima e abra-o no gerenciador de arquivos.")

    def save(self) -> None:
        """Validate and save; the new values apply at once (lock timer, printing)."""
        try:
            hq_url = validate_hq_url(self.hq_url.text())
        except UiError as exc:
            self.banner.error(exc.message_pt)
            self.hq_url.setFocus()
            return
        settings = replace(self.ctx.settings, hq_url=hq_url,
                           layout=self.layout_combo.currentData(),
                           printer=self.printer_combo.currentData() or "",
                           idle_lock_minutes=float(self.idle_minutes.value()))
        try:
            save_settings(settings)
        except OSError as exc:
            self.banner.error(describe_error(exc))
            return
        self.ctx.settings = settings
        self.hq_url.setText(hq_url)
        self.ctx.settings_did_change.emit()
        self.banner.show_message("Configurações salvas.", "ok")
