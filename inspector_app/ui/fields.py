"""Form pieces that do not mislead: a date field that refuses impossible dates, and the
errors of a step shown together, each field at fault outlined and focused, each message
gone as soon as its field is fixed.

``DateField`` is a line edit (typing after a click just works, unlike a QDateEdit's
sections) with a calendar button; it starts empty, never on a silent "today". The parsing
is ``domain.fieldtext.parse_date_br``.

``FieldProblems`` drives a ``Banner``: ``report([(widget, message, check), …])`` lists every
message at once, outlines the widgets, focuses the first one (never the window's lock
button) and watches each widget: when its content changes, ``check()`` (or, without one,
any change) decides whether its message goes. The banner hides when none is left.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QDate, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QCalendarWidget,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector_app.domain.fieldtext import (
    DateTextError,
    format_date_br,
    parse_date_br,
)
from inspector_app.ui.widgets import TOUCH_TARGET_PX, Banner

INVALID_STYLE = "border: 2px solid #b3261e;"


class DateField(QWidget):
    """A date typed as dd/mm/aaaa (or picked on a calendar); empty until someone enters one.

    ``value_changed(object)``: the new ``datetime.date`` or None, when a valid text is
    committed (Enter, leaving the field, the calendar). ``error()`` is the Portuguese
    message of an invalid text ("" when the text is empty or a real date).
    """

    value_changed = Signal(object)
    text_edited = Signal(str)

    def __init__(self, what: str = "Data", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.what = what
        self.edit = QLineEdit()
        self.edit.setPlaceholderText("dd/mm/aaaa")
        self.edit.setMaxLength(10)
        self.edit.setAccessibleName(what)
        self.edit.setToolTip(f"{what}: digite dd/mm/aaaa ou escolha no calendário.")
        self.edit.setMinimumWidth(130)
        self.edit.editingFinished.connect(self._commit)
        self.edit.textEdited.connect(self.text_edited)
        self.calendar_button = QPushButton("Calendário…")
        self.calendar_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.calendar_button.setAccessibleName(f"Calendário: {what}")
        self.calendar_button.clicked.connect(self.pick)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.edit, 1)
        layout.addWidget(self.calendar_button)
        self.setFocusProxy(self.edit)
        self._committed: dt.date | None = None

    # --- value ------------------------------------------------------------------------------------

    def error(self) -> str:
        try:
            parse_date_br(self.edit.text())
        except DateTextError as exc:
            return f"{self.what}: {exc.message}"
        return ""

    def value(self) -> dt.date | None:
        """The date typed; raises ``DateTextError`` (message names the field) when invalid."""
        try:
            return parse_date_br(self.edit.text())
        except DateTextError as exc:
            raise DateTextError(f"{self.what}: {exc.message}") from None

    def set_value(self, value: dt.date | None, *, emit: bool = False) -> None:
        self.edit.setText(format_date_br(value))
        self._committed = value
        self._mark(False)
        if emit:
            self.value_changed.emit(value)

    def set_iso(self, text: str | None) -> None:
        """Show a stored ``yyyy-mm-dd`` (restoring a saved answer) without emitting."""
        try:
            value = dt.date.fromisoformat(text[:10]) if text else None
        except ValueError:
            value = None
        self.set_value(value)

    def iso(self) -> str | None:
        value = self.value()
        return value.isoformat() if value else None

    # --- internals --------------------------------------------------------------------------------

    def _commit(self) -> None:
        try:
            value = parse_date_br(self.edit.text())
        except DateTextError:
            self._mark(True)
            return
        self._mark(False)
        if value is not None:
            self.edit.setText(format_date_br(value))  # 5/3/2026 → 05/03/2026
        if value != self._committed:
            self._committed = value
            self.value_changed.emit(value)

    def _mark(self, invalid: bool) -> None:
        self.edit.setStyleSheet(f"QLineEdit {{ {INVALID_STYLE} }}" if invalid else "")

    def pick(self) -> None:
        dialog = QDialog(self)
        dialog.setWindowTitle(self.what)
        calendar = QCalendarWidget(dialog)
        calendar.setGridVisible(True)
        try:
            current = parse_date_br(self.edit.text())
        except DateTextError:
            current = None
        if current is not None:
            calendar.setSelectedDate(QDate(current.year, current.month, current.day))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel, dialog)
        buttons.button(QDialogButtonBox.StandardButton.Ok).setText("Escolher")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).setText("Cancelar")
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        calendar.activated.connect(lambda _d: dialog.accept())
        layout = QVBoxLayout(dialog)
        layout.addWidget(calendar)
        layout.addWidget(buttons)
        if dialog.exec() == QDialog.DialogCode.Accepted:
            chosen = calendar.selectedDate()
            self.set_value(dt.date(chosen.year(), chosen.month(), chosen.day()))
            self._committed = None  # force the signal below
            self._commit()
        self.edit.setFocus()


Check = Callable[[], str | None]


@dataclass
class _Problem:
    widget: QWidget
    message: str
    check: Check | None


def _change_signal(widget: QWidget):
    if isinstance(widget, DateField):
        return widget.edit.textChanged
    if isinstance(widget, QLineEdit):
        return widget.textChanged
    if isinstance(widget, QComboBox):
        return widget.currentIndexChanged
    if isinstance(widget, QAbstractButton):
        return widget.toggled
    if isinstance(widget, QAbstractSpinBox):
        return widget.valueChanged  # type: ignore[attr-defined]
    return None


def _styled_target(widget: QWidget) -> QWidget:
    return widget.edit if isinstance(widget, DateField) else widget


class FieldProblems:
    """The errors of one step on ``banner``: all at once, cleared field by field."""

    def __init__(self, banner: Banner) -> None:
        self.banner = banner
        self.problems: list[_Problem] = []
        self._watched: dict[int, QWidget] = {}
        self._styles: dict[int, str] = {}

    def report(self, problems: list[tuple[QWidget, str, Check | None]],
               *, focus: bool = True) -> bool:
        """Show ``problems`` (replacing earlier ones); False when there are none."""
        self.clear()
        self.problems = [_Problem(w, m, c) for w, m, c in problems]
        if not self.problems:
            return False
        for problem in self.problems:
            self._watch(problem.widget)
            self._outline(problem.widget, True)
        self._show()
        if focus:
            self.focus_first()
        return True

    def focus_first(self) -> None:
        if self.problems:
            widget = self.problems[0].widget
            widget.setFocus(Qt.FocusReason.OtherFocusReason)
            if isinstance(widget, QLineEdit):
                widget.selectAll()

    def clear(self) -> None:
        for problem in self.problems:
            self._outline(problem.widget, False)
        had = bool(self.problems)
        self.problems = []
        if had and self.banner.level == "error":
            self.banner.clear_message()

    def messages(self) -> list[str]:
        return [p.message for p in self.problems]

    # --- internals --------------------------------------------------------------------------------

    def _show(self) -> None:
        if not self.problems:
            self.banner.clear_message()
            return
        if len(self.problems) == 1:
            self.banner.error(self.problems[0].message)
        else:
            self.banner.error("Corrija antes de avançar:\n"
                              + "\n".join(f"• {p.message}" for p in self.problems))

    def _watch(self, widget: QWidget) -> None:
        key = id(widget)
        if key in self._watched:
            return
        signal = _change_signal(widget)
        if signal is None:
            return
        self._watched[key] = widget
        signal.connect(lambda *_a, w=widget: self._changed(w))

    def _changed(self, widget: QWidget) -> None:
        mine = [p for p in self.problems if p.widget is widget]
        if not mine:
            return
        keep = []
        for problem in mine:
            still = problem.check() if problem.check is not None else None
            if still:
                problem.message = still
                keep.append(problem)
        self.problems = [p for p in self.problems if p.widget is not widget or p in keep]
        if not keep:
            self._outline(widget, False)
        self._show()

    def _outline(self, widget: QWidget, on: bool) -> None:
        target = _styled_target(widget)
        key = id(target)
        if on:
            self._styles.setdefault(key, target.styleSheet())
            kind = type(target).__name__
            target.setStyleSheet(f"{kind} {{ {INVALID_STYLE} }}")
        elif key in self._styles:
            target.setStyleSheet(self._styles.pop(key))
