"""The checklist step: the pack's items by section, each answer saved as it is given.

On a focused item, C answers "conforme", N "não conforme" and A "não se aplica", then focus
moves to the next item (and on to the next section); arrows move between items. Every
answer, note, value and photo goes to the store worker at once (``record_answer``,
``attach_photo``), so a crash in the middle of the checklist loses nothing.

Photos come from a file ("Foto…") or, when QtMultimedia finds one, a camera ("Câmera…",
``ui.camera``): the capture is saved to a temporary file, imported like a chosen file and
then deleted. Without a camera the button is disabled with the reason as its tooltip.
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.domain.fieldtext import DateTextError, match_items
from inspector_app.ui.errors import describe_error
from inspector_app.ui.fields import DateField
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner

log = logging.getLogger(__name__)

NO_CAMERA = "Nenhuma câmera encontrada"
NO_MULTIMEDIA = ("Câmera indisponível: o suporte a multimídia do Qt não carregou (no "
                 "Debian/Ubuntu, instale o pacote libpulse0). Use \"Foto…\" para escolher "
                 "um arquivo.")
RESULTS = {"ok": "Conforme", "fail": "Não conforme", "na": "Não se aplica"}
KEYS = {Qt.Key.Key_C: "ok", Qt.Key.Key_N: "fail", Qt.Key.Key_A: "na"}
_CHECKED_STYLE = {
    "ok": "QPushButton:checked { background:#1e7b34; color:white; border:2px solid #202124; }",
    "fail": "QPushButton:checked { background:#b3261e; color:white; border:2px solid #202124; }",
    "na": "QPushButton:checked { background:#5f6368; color:white; border:2px solid #202124; }",
}


@dataclass(frozen=True)
class PhotoInfo:
    """A photo of an item as the checklist shows it: its thumbnail and its working copy."""

    id: int
    thumb: Path
    full: Path
    name: str


def photo_infos(store: Any, inspection_id: str) -> dict[str, list[PhotoInfo]]:
    """The inspection's photos (removed ones left out) by item, on the store worker."""
    from inspector_app.media.photos import blob_path
    from inspector_app.store import inspections as repo

    out: dict[str, list[PhotoInfo]] = {}
    for photo in repo.photos(store, inspection_id):
        if photo.item_id:
            out.setdefault(photo.item_id, []).append(PhotoInfo(
                photo.id, blob_path(store.blob_dir, photo.thumb_sha256, ".jpg"),
                blob_path(store.blob_dir, photo.working_sha256, ".jpg"), photo.original_name))
    return out


class PhotoViewer:
    """The photo at full size, with "Remover foto" while the inspection is open; returns
    "remove" when the inspector removes it. Tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None, photo: PhotoInfo, title: str) -> str | None:
        from PySide6.QtGui import QPixmap
        from PySide6.QtWidgets import QDialog, QMessageBox

        dialog = QDialog(parent)
        dialog.setWindowTitle(title)
        screen = (parent.screen() if parent is not None else None)
        area = screen.availableGeometry() if screen is not None else None
        width = min(1000, area.width() - 80) if area is not None else 900
        height = min(700, area.height() - 160) if area is not None else 600
        image = QLabel()
        image.setAlignment(Qt.AlignmentFlag.AlignCenter)
        pixmap = QPixmap(str(photo.full))
        if pixmap.isNull():
            image.setText(f"Não foi possível abrir a foto {photo.name}.")
        else:
            image.setPixmap(pixmap.scaled(width, height, Qt.AspectRatioMode.KeepAspectRatio,
                                          Qt.TransformationMode.SmoothTransformation))
        caption = QLabel(photo.name)
        remove = QPushButton("&Remover foto")
        close = QPushButton("&Fechar")
        for button in (remove, close):
            button.setMinimumHeight(TOUCH_TARGET_PX)
        chosen: list[str] = []

        def removing() -> None:
            answer = QMessageBox.question(
                dialog, "Remover foto",
                "Remover esta foto da inspeção? Ela não constará do registro selado.",
                QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                QMessageBox.StandardButton.No)
            if answer == QMessageBox.StandardButton.Yes:
                chosen.append("remove")
                dialog.accept()

        remove.clicked.connect(removing)
        close.clicked.connect(dialog.reject)
        close.setDefault(True)
        row = QHBoxLayout()
        row.addWidget(caption, 1)
        row.addWidget(remove)
        row.addWidget(close)
        layout = QVBoxLayout(dialog)
        layout.addWidget(image, 1)
        layout.addLayout(row)
        dialog.exec()
        return chosen[0] if chosen else None


class ConfirmMarking:
    """Confirm "marcar os restantes como conforme"; Enter confirms. Tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None, count: int, where: str) -> bool:
        from PySide6.QtWidgets import QMessageBox

        box = QMessageBox(parent)
        box.setIcon(QMessageBox.Icon.Question)
        box.setWindowTitle("Marcar como conforme")
        box.setText(f"Marcar {count} item(ns) ainda sem resposta {where} como conforme?\n"
                    "Confirme que todos foram verificados.")
        yes = box.addButton("Sim, marcar como conforme", QMessageBox.ButtonRole.AcceptRole)
        box.addButton("Cancelar", QMessageBox.ButtonRole.RejectRole)
        box.setDefaultButton(yes)
        box.exec()
        return box.clickedButton() is yes


class PhotoChooser:
    """Pick a photo file for a checklist item; tests replace :meth:`ask`."""

    @classmethod
    def ask(cls, parent: QWidget | None) -> Path | None:
        name, _filter = QFileDialog.getOpenFileName(
            parent, "Escolher foto", "", "Fotos (*.jpg *.jpeg *.png *.webp)"
        )
        return Path(name) if name else None


def find_camera() -> tuple[Any | None, str]:
    """The camera to use (a ``QCameraDevice``), or None and the tooltip that says why."""
    try:
        from inspector_app.ui import camera
    except ImportError as exc:
        log.warning("QtMultimedia is not available: %s", exc)
        return None, NO_MULTIMEDIA
    device = camera.default_camera()
    return (device, "") if device is not None else (None, NO_CAMERA)


class ItemRow(QFrame):
    """One checklist item: label, criterion, the three answers, value, note and photos."""

    answer_changed = Signal(object)  # self: save the answer (result, note, rules, value)
    photo_requested = Signal(object)  # self
    camera_requested = Signal(object)  # self
    next_requested = Signal(object, int)  # self, +1 / -1
    date_refused = Signal(object, str)  # self, Portuguese message
    photo_open_requested = Signal(object, int)  # self, photo id
    photo_remove_requested = Signal(object, int)  # self, photo id

    def __init__(self, item: Any, rules: dict[str, Any], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self.setObjectName("itemRow")
        # Never squeezed below what it needs (wrapped messages would be clipped).
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName(f"Item {item.id}: {item.label}")
        self.result: str | None = None
        self.photos: list[PhotoInfo] = []
        self.photo_buttons: list[QPushButton] = []
        self.saved_state = ""

        title = QLabel(f"<b>{item.label}</b> <span style='color:#5f6368'>({item.id})</span>")
        title.setWordWrap(True)
        title.setTextFormat(Qt.TextFormat.RichText)
        criterion = QLabel(item.criterion or item.informative or "")
        criterion.setWordWrap(True)
        criterion.setStyleSheet("color:#3c4043;")
        criterion.setVisible(bool(criterion.text()))

        self.buttons: dict[str, QPushButton] = {}
        group = QButtonGroup(self)
        group.setExclusive(True)
        answers = QHBoxLayout()
        for result, label in RESULTS.items():
            key = {"ok": "C", "fail": "N", "na": "A"}[result]
            button = QPushButton(f"{label} ({key})")
            button.setCheckable(True)
            button.setMinimumHeight(TOUCH_TARGET_PX)
            # Keyboard users answer with C / N / A on the row; the buttons are for touch.
            button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
            button.setStyleSheet(_CHECKED_STYLE[result])
            button.clicked.connect(lambda _c=False, r=result: self.answer(r))
            group.addButton(button)
            self.buttons[result] = button
            answers.addWidget(button)
        answers.addStretch(1)

        self.value_edit: QWidget | None = None
        if item.kind == "count":
            spin = QSpinBox()
            spin.setRange(0, 999)
            spin.setAccessibleName("Quantidade")
            spin.valueChanged.connect(self._detail_changed)
            self.value_edit = spin
            answers.insertWidget(3, QLabel("Quantidade:"))
            answers.insertWidget(4, spin)
        elif item.kind == "date":
            # Empty until the inspector types it: never a silent "today" nobody entered.
            what = item.value_label or "Data constatada no documento"
            date = DateField(what)
            date.value_changed.connect(self._detail_changed)
            date.edit.editingFinished.connect(self._date_checked)
            self.value_edit = date
            self.date_label = QLabel(f"{what}:")
            self.date_label.setBuddy(date.edit)
            self.date_row = QHBoxLayout()
            self.date_row.addWidget(self.date_label)
            self.date_row.addWidget(date)
            self.date_row.addStretch(1)

        self.rules_combo = QComboBox()
        self.rules_combo.setAccessibleName("Infração")
        default = ", ".join(item.fail) or "—"
        self.rules_combo.addItem(f"Padrão: {default}", ())
        for rule_id in item.fail_options:
            rule = rules.get(rule_id)
            text = f"{rule_id} – {rule.article}" if rule else rule_id
            self.rules_combo.addItem(text, (rule_id,))
        self.rules_combo.currentIndexChanged.connect(self._detail_changed)
        self.rules_combo.hide()

        self.note = QLineEdit()
        self.note.setPlaceholderText("Observação (opcional)")
        self.note.setAccessibleName("Observação")
        self.note.editingFinished.connect(self._note_done)
        self._saved_note = ""
        self.photo_button = QPushButton("Foto…")
        self.photo_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.photo_button.clicked.connect(lambda: self.photo_requested.emit(self))
        self.camera_button = QPushButton("Câmera…")
        self.camera_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.camera_button.clicked.connect(lambda: self.camera_requested.emit(self))
        self.photo_label = QLabel("")
        self.thumbs = QHBoxLayout()
        self.thumbs.setContentsMargins(0, 0, 0, 0)
        self.state_label = QLabel("")
        self.state_label.setWordWrap(True)

        details = QHBoxLayout()
        details.addWidget(self.note, 1)
        details.addWidget(self.photo_button)
        details.addWidget(self.camera_button)
        details.addWidget(self.photo_label)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.addWidget(title)
        layout.addWidget(criterion)
        layout.addLayout(answers)
        if isinstance(self.value_edit, DateField):
            layout.addLayout(self.date_row)
        layout.addWidget(self.rules_combo)
        layout.addLayout(details)
        layout.addLayout(self.thumbs)
        layout.addWidget(self.state_label)
        if "photo" in item.evidence:
            self.photo_button.setToolTip("Este item pede foto como evidência.")

    # --- answering --------------------------------------------------------------------------------

    def answer(self, result: str) -> None:
        """Answer the item (by key or button) and ask for it to be saved."""
        self.show_answer(result)
        self.answer_changed.emit(self)

    def show_answer(self, result: str | None, *, note: str = "", rules: tuple[str, ...] = (),
                    value: object = None) -> None:
        """Set what the row shows without saving (restoring saved answers)."""
        self.result = result
        for key, button in self.buttons.items():
            button.setChecked(key == result)
        self.rules_combo.setVisible(result == "fail" and self.rules_combo.count() > 1)
        if note:
            self.note.setText(note)
            self._saved_note = note
        if rules:
            index = self.rules_combo.findData(tuple(rules))
            if index >= 0:
                self.rules_combo.blockSignals(True)
                self.rules_combo.setCurrentIndex(index)
                self.rules_combo.blockSignals(False)
        if value is not None and self.value_edit is not None:
            self.value_edit.blockSignals(True)
            if isinstance(self.value_edit, QSpinBox) and isinstance(value, int):
                self.value_edit.setValue(value)
            elif isinstance(self.value_edit, DateField) and isinstance(value, str):
                self.value_edit.set_iso(value)
            self.value_edit.blockSignals(False)

    def payload(self) -> dict[str, Any]:
        """Keyword arguments for ``services.record_answer`` (besides store and ids)."""
        rules = self.rules_combo.currentData() if self.result == "fail" else ()
        value: object = None
        if isinstance(self.value_edit, QSpinBox):
            value = self.value_edit.value()
        elif isinstance(self.value_edit, DateField):
            try:
                value = self.value_edit.iso()
            except DateTextError:
                value = None  # refused on screen (date_error); an impossible date is not saved
        return {"result": self.result, "note": self.note.text().strip(),
                "rules": tuple(rules or ()), "value": value}

    def set_saved_state(self, state: str, message: str = "") -> None:
        """``saving``, ``saved`` or ``error`` (with the message and what to do)."""
        self.saved_state = state
        if state == "saving":
            self.state_label.setText("Salvando…")
            self.state_label.setStyleSheet("color:#5f6368;")
        elif state == "saved":
            self.state_label.setText("✓ Salvo")
            self.state_label.setStyleSheet("color:#1e7b34;")
        else:
            self.state_label.setText(f"Não salvo: {message} Toque na resposta de novo.")
            self.state_label.setStyleSheet("color:#b3261e; font-weight:bold;")

    def set_camera(self, available: bool, why_not: str) -> None:
        self.camera_button.setEnabled(available)
        self.camera_button.setToolTip("Tirar foto com a câmera" if available else why_not)

    def add_photo(self, photo: PhotoInfo) -> None:
        self.photos.append(photo)
        self._show_photos()

    def drop_photo(self, photo_id: int) -> None:
        self.photos = [p for p in self.photos if p.id != photo_id]
        self._show_photos()

    def _show_photos(self) -> None:
        from PySide6.QtGui import QIcon, QPixmap

        for button in self.photo_buttons:
            self.thumbs.removeWidget(button)
            button.deleteLater()
        self.photo_buttons = []
        while self.thumbs.count():  # the stretch
            self.thumbs.takeAt(0)
        for n, photo in enumerate(self.photos, 1):
            button = QPushButton()
            button.setIcon(QIcon(QPixmap(str(photo.thumb))))
            button.setIconSize(QSize(72, 72))
            button.setFixedSize(84, 84)
            button.setToolTip(f"Foto {n}: {photo.name} – toque para ver em tamanho real ou "
                              "remover")
            button.setAccessibleName(f"Foto {n} do item {self.item.id}")
            button.clicked.connect(
                lambda _c=False, pid=photo.id: self.photo_open_requested.emit(self, pid))
            self.thumbs.addWidget(button)
            self.photo_buttons.append(button)
        self.thumbs.addStretch(1)
        count = len(self.photos)
        self.photo_label.setText("" if not count else "1 foto" if count == 1
                                 else f"{count} fotos")

    def date_error(self) -> str:
        """The message of an impossible or malformed date typed on this item ("" if none)."""
        return self.value_edit.error() if isinstance(self.value_edit, DateField) else ""

    def _date_checked(self) -> None:
        message = self.date_error()
        if message:
            reason = message.split(": ", 1)[-1]  # the field is named beside it already
            self.state_label.setText(f"Data não aceita. {reason}")
            self.state_label.setStyleSheet("color:#b3261e; font-weight:bold;")
            self.date_refused.emit(self, message)
        elif self.saved_state == "saved":
            self.set_saved_state("saved")
        elif not self.saved_state:
            self.state_label.setText("")

    def _detail_changed(self, *_args: object) -> None:
        if self.result is not None:
            self.answer_changed.emit(self)

    def _note_done(self) -> None:
        text = self.note.text().strip()
        if text != self._saved_note:
            self._saved_note = text
            self._detail_changed()

    # --- keyboard ---------------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = Qt.Key(event.key())
        plain = not (event.modifiers() & (Qt.KeyboardModifier.ControlModifier
                                          | Qt.KeyboardModifier.AltModifier))
        if key in KEYS and plain:
            self.answer(KEYS[key])
            self.next_requested.emit(self, 1)
            return
        if key == Qt.Key.Key_Down:
            self.next_requested.emit(self, 1)
            return
        if key == Qt.Key.Key_Up:
            self.next_requested.emit(self, -1)
            return
        super().keyPressEvent(event)


class ChecklistPage(QWidget):
    """Sections on the left, the section's items on the right, progress on top."""

    progress_changed = Signal(int, int)

    def __init__(self, ctx: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.inspection_id: str | None = None
        self.pack: Any = None
        self.rows: dict[str, ItemRow] = {}
        self._section_rows: list[list[ItemRow]] = []
        self.section_buttons: list[QPushButton] = []
        self.camera: Any = None  # QCameraDevice found when the checklist was built
        self.summary = QLabel("")
        self.summary.setWordWrap(True)
        self.progress = QProgressBar()
        self.progress.setFormat("%v de %m itens respondidos")
        self.progress.setMinimumHeight(28)
        self.counts = QLabel("")
        self.banner = Banner()
        self.all_ok_button = QPushButton("&Marcar todos os restantes como conforme")
        self.all_ok_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.all_ok_button.setToolTip("Responde \"Conforme\" a todos os itens ainda sem "
                                      "resposta, em todas as seções (pede confirmação).")
        self.all_ok_button.clicked.connect(lambda: self.mark_remaining_ok(None))
        self.search = QLineEdit()
        self.search.setPlaceholderText("Ir para item: código ou palavras (Ctrl+F)")
        self.search.setAccessibleName("Ir para item")
        self.search.setClearButtonEnabled(True)
        self.search.returnPressed.connect(self.jump_next)
        self.search.textChanged.connect(self._search_changed)
        self.search_label = QLabel("")
        self.search_label.setWordWrap(True)
        search_title = QLabel("Ir &para:")
        search_title.setBuddy(self.search)
        QShortcut(QKeySequence.StandardKey.Find, self, self._focus_search,
                  context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self._matches: list[str] = []
        self._match_index = -1
        self.sections = QListWidget()
        self.sections.setFixedWidth(300)
        self.sections.setWordWrap(True)
        self.sections.setAccessibleName("Seções")
        self.sections.currentRowChanged.connect(self._show_section)
        self.stack = QStackedWidget()
        top = QVBoxLayout()
        top.addWidget(self.summary)
        bar = QHBoxLayout()
        bar.addWidget(self.progress, 1)
        bar.addWidget(self.counts)
        top.addLayout(bar)
        tools = QHBoxLayout()
        tools.addWidget(search_title)
        tools.addWidget(self.search, 1)
        tools.addWidget(self.all_ok_button)
        top.addLayout(tools)
        top.addWidget(self.search_label)
        top.addWidget(self.banner)
        body = QHBoxLayout()
        body.addWidget(self.sections)
        body.addWidget(self.stack, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(top)
        layout.addLayout(body, 1)

    def build(self, pack: Any, inspection_id: str, summary: str) -> None:
        """Lay out the pack's checklist for ``inspection_id`` (all items unanswered)."""
        self.pack = pack
        self.inspection_id = inspection_id
        self.summary.setText(summary)
        self.rows.clear()
        self._section_rows = []
        self.section_buttons = []
        self.search.clear()
        self.sections.clear()
        while self.stack.count():
            widget = self.stack.widget(0)
            self.stack.removeWidget(widget)
            widget.deleteLater()
        self.camera, why_not = find_camera()
        for section in pack.sections:
            items = [i for i in pack.items.values() if i.section == section.id]
            if not items:
                continue
            page = QWidget()
            column = QVBoxLayout(page)
            section_ok = QPushButton("Restantes desta &seção como conforme")
            section_ok.setMinimumHeight(TOUCH_TARGET_PX)
            section_ok.setToolTip(f"Responde \"Conforme\" aos itens ainda sem resposta da "
                                  f"seção {section.label}.")
            index = len(self._section_rows)
            section_ok.clicked.connect(lambda _c=False, i=index: self.mark_remaining_ok(i))
            head = QHBoxLayout()
            head.addStretch(1)
            head.addWidget(section_ok)
            column.addLayout(head)
            self.section_buttons.append(section_ok)
            rows = []
            for item in items:
                row = ItemRow(item, pack.rules)
                row.answer_changed.connect(self._save)
                row.photo_requested.connect(self._attach_photo)
                row.camera_requested.connect(self._take_photo)
                row.set_camera(self.camera is not None, why_not)
                row.next_requested.connect(self._move)
                row.photo_open_requested.connect(self._open_photo)
                row.date_refused.connect(self._date_refused)
                column.addWidget(row)
                self.rows[item.id] = row
                rows.append(row)
            column.addStretch(1)
            scroll = QScrollArea()
            scroll.setWidgetResizable(True)
            scroll.setWidget(page)
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            self.stack.addWidget(scroll)
            self._section_rows.append(rows)
            entry = QListWidgetItem(section.label)
            entry.setData(Qt.ItemDataRole.UserRole, section.id)
            entry.setSizeHint(QSize(0, TOUCH_TARGET_PX + 8))
            self.sections.addItem(entry)
        self.progress.setRange(0, len(self.rows))
        self.sections.setCurrentRow(0)
        self._update_progress()

    def restore(self, answers: dict[str, Any], photos: dict[str, list[PhotoInfo]]) -> None:
        """Show answers already saved (an inspection reopened after a crash or a lock)."""
        for item_id, answer in answers.items():
            row = self.rows.get(item_id)
            if row is not None:
                row.show_answer(answer.result, note=answer.note, rules=answer.rules,
                                value=answer.value)
                row.set_saved_state("saved")
        for item_id, infos in photos.items():
            row = self.rows.get(item_id)
            for info in infos if row else []:
                row.add_photo(info)
        self._update_progress()

    def focus_first_unanswered(self) -> None:
        for index, rows in enumerate(self._section_rows):
            for row in rows:
                if row.result is None:
                    self.sections.setCurrentRow(index)
                    row.setFocus()
                    return
        if self._section_rows:
            self.sections.setCurrentRow(0)
            self._section_rows[0][0].setFocus()

    def answered(self) -> int:
        return sum(1 for r in self.rows.values() if r.result is not None)

    def unsaved(self) -> list[str]:
        return [i for i, r in self.rows.items() if r.result is not None
                and r.saved_state != "saved"]

    # --- internals --------------------------------------------------------------------------------

    def _show_section(self, index: int) -> None:
        if 0 <= index < self.stack.count():
            self.stack.setCurrentIndex(index)

    def _move(self, row: ItemRow, step: int) -> None:
        flat = [r for rows in self._section_rows for r in rows]
        position = flat.index(row) + step
        if not 0 <= position < len(flat):
            return
        target = flat[position]
        for index, rows in enumerate(self._section_rows):
            if target in rows:
                self.sections.setCurrentRow(index)
        target.setFocus()
        scroll = self.stack.currentWidget()
        if isinstance(scroll, QScrollArea):
            scroll.ensureWidgetVisible(target)

    def _save(self, row: ItemRow) -> None:
        payload = row.payload()
        inspection_id = self.inspection_id
        item_id = row.item.id
        row.set_saved_state("saving")
        self._update_progress()
        self.ctx.tasks.run_store(
            lambda store: services.record_answer(store=store, inspection_id=inspection_id,
                                                 item_id=item_id, **payload),
            lambda _r: self._saved(row), lambda exc: self._not_saved(row, exc), owner=row,
        )

    def _saved(self, row: ItemRow) -> None:
        row.set_saved_state("saved")
        self._update_progress()

    def _not_saved(self, row: ItemRow, exc: BaseException) -> None:
        row.set_saved_state("error", describe_error(exc))
        self.banner.error(f"Item {row.item.id}: {describe_error(exc)}")

    def _attach_photo(self, row: ItemRow) -> None:
        source = PhotoChooser.ask(self)
        if source is None:
            return
        self._import_photo(row, source)

    def _take_photo(self, row: ItemRow) -> None:
        """Capture with the camera into a temporary folder, then import the file."""
        if self.camera is None:
            return
        from inspector_app.ui.camera import CameraDialog

        folder = Path(tempfile.mkdtemp(prefix="inspector-camera-"))
        photo = CameraDialog.ask(self, self.camera, folder, row.item.id)
        if photo is None:
            shutil.rmtree(folder, ignore_errors=True)
            return
        self.attach_captured(row, photo)

    def attach_captured(self, row: ItemRow, photo: Path) -> None:
        """Import a photo the camera saved to a temporary file, then delete the file (and its
        folder when empty). On failure the file stays and the message says where it is."""
        self._import_photo(row, photo, captured=True)

    def _import_photo(self, row: ItemRow, source: Path, *, captured: bool = False) -> None:
        inspection_id = self.inspection_id
        item_id = row.item.id

        def job(store: Any) -> PhotoInfo:
            photo_id = services.attach_photo(store=store, inspection_id=inspection_id,
                                             source=source, item_id=item_id)
            info = next(p for p in photo_infos(store, inspection_id).get(item_id, [])
                        if p.id == photo_id)
            if captured:
                # The store keeps the original byte for byte; the temporary copy can go.
                # A folder that is not empty (or a file that will not go) is left behind.
                with contextlib.suppress(OSError):
                    source.unlink(missing_ok=True)
                    source.parent.rmdir()
            return info

        def failed(exc: BaseException) -> None:
            kept = f" A foto tirada continua em {source}." if captured and source.exists() \
                else ""
            self._photo_failed(row, exc, kept)

        row.photo_label.setText("Importando foto…")
        self.ctx.tasks.run_store(job, row.add_photo, failed, owner=row)

    def _open_photo(self, row: ItemRow, photo_id: int) -> None:
        photo = next((p for p in row.photos if p.id == photo_id), None)
        if photo is None:
            return
        if PhotoViewer.ask(self, photo, f"Foto do item {row.item.id}") == "remove":
            self.remove_photo(row, photo_id)

    def remove_photo(self, row: ItemRow, photo_id: int) -> None:
        """Take a photo out of the open inspection (store worker), then off the item."""
        inspection_id = self.inspection_id

        def failed(exc: BaseException) -> None:
            self.banner.error(f"Foto do item {row.item.id} não removida: {describe_error(exc)}")

        def removed(_r: object) -> None:
            row.drop_photo(photo_id)
            self.banner.show_message(f"Foto removida do item {row.item.id}.", "info")

        self.ctx.tasks.run_store(
            lambda store: services.remove_photo(store=store, inspection_id=inspection_id,
                                                photo_id=photo_id),
            removed, failed, owner=row)

    def _photo_failed(self, row: ItemRow, exc: BaseException, kept: str = "") -> None:
        row._show_photos()
        self.banner.error(f"Foto do item {row.item.id} não importada: {describe_error(exc)}"
                          f"{kept}")

    # --- marking the rest, jumping to an item -------------------------------------------------

    def remaining(self, section: int | None = None) -> list[ItemRow]:
        """Unanswered rows (of one section, or all) that "conforme" can answer: count items
        need their number typed, so they are left for the inspector."""
        groups = self._section_rows if section is None else [self._section_rows[section]]
        return [r for rows in groups for r in rows
                if r.result is None and r.item.kind != "count"]

    def mark_remaining_ok(self, section: int | None) -> int:
        """Answer "conforme" to the remaining items after a confirmation; how many."""
        rows = self.remaining(section)
        skipped = [r for rs in (self._section_rows if section is None
                                else [self._section_rows[section]])
                   for r in rs if r.result is None and r.item.kind == "count"]
        if not rows:
            self.banner.show_message("Não há itens sem resposta para marcar como conforme"
                                     + (" (itens de quantidade pedem o número)." if skipped
                                        else "."), "info")
            return 0
        if section is None:
            where = "de todas as seções"
        else:
            where = f"da seção \"{str(self.sections.item(section).text()).split('  (')[0]}\""
        if not ConfirmMarking.ask(self, len(rows), where):
            return 0
        for row in rows:
            row.answer("ok")
        note = (f" {len(skipped)} item(ns) de quantidade continuam sem resposta."
                if skipped else "")
        self.banner.show_message(f"{len(rows)} item(ns) marcados como conforme.{note}", "ok")
        self.focus_first_unanswered()
        return len(rows)

    def _focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def _search_changed(self, text: str) -> None:
        self._matches = match_items(text, ((i, f"{r.item.label} {r.item.criterion}")
                                           for i, r in self.rows.items()))
        self._match_index = -1
        if not text.strip():
            self.search_label.setText("")
        elif not self._matches:
            self.search_label.setText("Nenhum item encontrado.")
        else:
            first = self.rows[self._matches[0]].item
            more = f" (e mais {len(self._matches) - 1}; Enter mostra o próximo)" \
                if len(self._matches) > 1 else ""
            self.search_label.setText(f"Enter: {first.id} – {first.label}{more}")

    def jump_next(self) -> str | None:
        """Go to the next item matching the search box; its id (None: no match)."""
        if not self._matches:
            return None
        self._match_index = (self._match_index + 1) % len(self._matches)
        item_id = self._matches[self._match_index]
        self.jump_to(item_id)
        row = self.rows[item_id]
        self.search_label.setText(f"{self._match_index + 1} de {len(self._matches)}: "
                                  f"{row.item.id} – {row.item.label}")
        return item_id

    def jump_to(self, item_id: str) -> None:
        row = self.rows[item_id]
        for index, rows in enumerate(self._section_rows):
            if row in rows:
                self.sections.setCurrentRow(index)
        row.setFocus(Qt.FocusReason.OtherFocusReason)
        scroll = self.stack.currentWidget()
        if isinstance(scroll, QScrollArea):
            scroll.ensureWidgetVisible(row)

    def _date_refused(self, row: ItemRow, message: str) -> None:
        self.banner.error(f"Item {row.item.id}: {message}")

    def date_problems(self) -> list[tuple[QWidget, str, Any]]:
        """(field, message, re-check) of every date typed wrong, for FieldProblems."""
        out: list[tuple[QWidget, str, Any]] = []
        for row in self.rows.values():
            message = row.date_error()
            if message and isinstance(row.value_edit, QWidget):
                out.append((row.value_edit, f"Item {row.item.id}: {message}",
                            lambda r=row: (f"Item {r.item.id}: {r.date_error()}"
                                           if r.date_error() else None)))
        return out

    def _update_progress(self) -> None:
        answered = self.answered()
        failed = sum(1 for r in self.rows.values() if r.result == "fail")
        self.progress.setValue(answered)
        self.counts.setText(f"{failed} não conforme(s)")
        for index, rows in enumerate(self._section_rows):
            done = sum(1 for r in rows if r.result is not None)
            entry = self.sections.item(index)
            base = str(entry.text()).split("  (")[0]
            entry.setText(f"{base}  ({done}/{len(rows)})")
        self.progress_changed.emit(answered, len(self.rows))
