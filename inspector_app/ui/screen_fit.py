"""Windows that fit the screens inspectors have (1024×600 rugged laptops up to desktops).

* ``ScrollingStack``: a ``QStackedWidget`` whose pages scroll, so a tall page never raises
  the window's minimum size above the screen (``currentWidget()`` still returns the page).
* ``ScreenGuard``: one application-wide event filter. Spin boxes, date edits and combo boxes
  take the mouse wheel only when they have the keyboard focus (a wheel that merely passes
  over one scrolls the page around it instead), and every dialog is kept inside the
  available area of its screen when it is shown.
* ``fit_to_screen`` / ``restore_geometry`` / ``remember_geometry``: the first window opens
  fitted to the screen; the size and position the user chose come back next time (QSettings)
  only when they still fit the screen the window is on.

Caveat: on X11 the window manager's frame (title bar, borders) is known only after the
window is mapped; ``keep_on_screen`` runs again then and shrinks the window by the real frame.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QEvent, QObject, QRect, QSize, Qt, QTimer
from PySide6.QtGui import QGuiApplication, QScreen, QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QDialog,
    QFrame,
    QScrollArea,
    QStackedWidget,
    QWidget,
)

from inspector_app.ui.packs_window import TOUCH_TARGET_PX

PREFERRED_SIZE = QSize(1280, 860)
# Title bar and borders a window manager adds, assumed until the real frame is known.
FRAME_GUESS = QSize(8, 34)
GEOMETRY_KEY = "window/geometry"
MAXIMIZED_KEY = "window/maximized"
# Widgets that change their value on the wheel; they take it only when focused.
WHEEL_GUARDED = (QAbstractSpinBox, QComboBox)
# The style rounds the label rectangle; a text this much wider still draws whole (its last
# glyph's right bearing is blank).
TEXT_SLACK_PX = 2


def available_geometry(widget: QWidget | None = None) -> QRect:
    """The usable area (without panels and docks) of the screen ``widget`` is on."""
    screen: QScreen | None = None
    if widget is not None:
        screen = widget.screen()
    if screen is None:
        screen = QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else QRect(0, 0, 1024, 600)


def frame_extra(window: QWidget) -> QSize:
    """How much larger the frame is than the client area (the guess until it is mapped)."""
    frame, inner = window.frameGeometry(), window.geometry()
    extra = QSize(frame.width() - inner.width(), frame.height() - inner.height())
    if window.isVisible() and (extra.width() > 0 or extra.height() > 0):
        return extra
    return FRAME_GUESS if window.isWindow() and not _frameless(window) else QSize(0, 0)


def _frameless(window: QWidget) -> bool:
    return bool(window.windowFlags() & Qt.WindowType.FramelessWindowHint)


def fit_to_screen(window: QWidget, preferred: QSize = PREFERRED_SIZE) -> None:
    """Size ``window`` to ``preferred`` or the available screen, whichever is smaller,
    frame included, and centre it there."""
    area = available_geometry(window)
    extra = frame_extra(window)
    width = max(window.minimumWidth(), min(preferred.width(), area.width() - extra.width()))
    height = max(window.minimumHeight(),
                 min(preferred.height(), area.height() - extra.height()))
    window.resize(width, height)
    left = area.left() + max(0, (area.width() - width - extra.width()) // 2)
    top = area.top() + max(0, (area.height() - height - extra.height()) // 2)
    window.move(left, top)


def keep_on_screen(window: QWidget) -> None:
    """Shrink and move ``window`` so that its frame lies inside the available screen."""
    if window.isMaximized() or window.isFullScreen():
        return
    area = available_geometry(window)
    extra = frame_extra(window)
    width = min(window.width(), area.width() - extra.width())
    height = min(window.height(), area.height() - extra.height())
    if (width, height) != (window.width(), window.height()):
        window.resize(max(width, window.minimumWidth()), max(height, window.minimumHeight()))
    frame = window.frameGeometry()
    left = min(max(frame.left(), area.left()), area.right() + 1 - frame.width())
    top = min(max(frame.top(), area.top()), area.bottom() + 1 - frame.height())
    if (left, top) != (frame.left(), frame.top()):
        window.move(max(left, area.left()), max(top, area.top()))


def fits(window: QWidget) -> bool:
    """Whether the window's frame lies inside the available area of its screen."""
    return available_geometry(window).contains(window.frameGeometry())


def restore_geometry(window: QWidget, settings: Any) -> bool:
    """Put back the size and position saved by ``remember_geometry`` when they fit the
    available area of the screen the window is on; False (and nothing changed) otherwise."""
    saved = settings.value(GEOMETRY_KEY)
    if not isinstance(saved, QRect) or not saved.isValid():
        return False
    if saved.width() < window.minimumWidth() or saved.height() < window.minimumHeight():
        return False
    area = available_geometry(window)
    if not area.contains(QRect(saved.topLeft(), saved.size() + frame_extra(window))):
        return False
    window.setGeometry(saved)
    if str(settings.value(MAXIMIZED_KEY, "false")).lower() == "true":
        window.setWindowState(window.windowState() | Qt.WindowState.WindowMaximized)
    return True


def remember_geometry(window: QWidget, settings: Any) -> None:
    """Save the window's client rectangle (the normal one when maximized)."""
    maximized = window.isMaximized()
    settings.setValue(GEOMETRY_KEY, window.normalGeometry() if maximized else window.geometry())
    settings.setValue(MAXIMIZED_KEY, maximized)
    settings.sync()


class PageScroll(QScrollArea):
    """A frameless scroll area around one page; the page is resized to the viewport's width
    (it scrolls sideways only when it cannot be narrower)."""

    def __init__(self, page: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setWidget(page)


def scrollable(page: QWidget) -> PageScroll:
    return PageScroll(page)


class ScrollingStack(QStackedWidget):
    """A stacked widget whose pages scroll: its minimum size is its own, never the tallest
    page's. ``addWidget(page, scroll=False)`` keeps a page that scrolls its own content
    (and keeps its buttons in view). The page methods take and return the pages, not the
    scroll areas around them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._areas: dict[int, PageScroll] = {}

    def _outer(self, page: QWidget | None) -> QWidget | None:
        if page is None:
            return None
        return self._areas.get(id(page), page)

    @staticmethod
    def _inner(outer: QWidget | None) -> QWidget | None:
        return outer.widget() if isinstance(outer, PageScroll) else outer

    def addWidget(self, page: QWidget, scroll: bool = True) -> int:  # type: ignore[override]
        if not scroll:
            return super().addWidget(page)
        area = PageScroll(page)
        self._areas[id(page)] = area
        return super().addWidget(area)

    def removeWidget(self, page: QWidget) -> None:  # type: ignore[override]
        area = self._areas.pop(id(page), None)
        if area is None:
            super().removeWidget(page)
            return
        super().removeWidget(area)
        area.takeWidget()
        area.deleteLater()

    def currentWidget(self) -> QWidget | None:  # type: ignore[override]
        return self._inner(super().currentWidget())

    def setCurrentWidget(self, page: QWidget) -> None:  # type: ignore[override]
        outer = self._outer(page)
        super().setCurrentWidget(outer if outer is not None else page)

    def widget(self, index: int) -> QWidget | None:  # type: ignore[override]
        return self._inner(super().widget(index))

    def indexOf(self, page: QWidget) -> int:  # type: ignore[override]
        return super().indexOf(self._outer(page))

    def scroll_area(self, page: QWidget) -> PageScroll | None:
        return self._areas.get(id(page))


def _scroll_target(widget: QWidget, event: QWheelEvent) -> Any:
    """The scroll bar of the nearest enclosing scroll area that can move in the wheel's
    direction, or None."""
    delta = event.angleDelta()
    horizontal = abs(delta.x()) > abs(delta.y())
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea):
            bar = parent.horizontalScrollBar() if horizontal else parent.verticalScrollBar()
            if bar is not None and bar.maximum() > bar.minimum():
                return bar
        if parent.isWindow():
            return None
        parent = parent.parentWidget()
    return None


def _owner(widget: QWidget) -> QWidget | None:
    """The guarded control ``widget`` belongs to (itself, or the spin box or combo whose
    line edit it is)."""
    current: QWidget | None = widget
    for _ in range(3):
        if current is None:
            return None
        if isinstance(current, WHEEL_GUARDED):
            return current
        current = current.parentWidget()
    return None


class ScreenGuard(QObject):
    """Application-wide: guarded controls ignore the wheel unless focused (the enclosing
    scroll area scrolls instead); dialogs are fitted inside the screen when shown."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.wheels_redirected = 0

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind == QEvent.Type.Wheel:
            return self._wheel(watched, event)  # type: ignore[arg-type]
        if kind == QEvent.Type.Polish and isinstance(watched, WHEEL_GUARDED):
            # Wheel focus would hand the focus (and then the wheel) to whatever the
            # pointer passes over; a click or Tab still focuses it.
            if watched.focusPolicy() == Qt.FocusPolicy.WheelFocus:
                watched.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        elif kind == QEvent.Type.Show and isinstance(watched, QDialog) and watched.isWindow():
            fit_dialog(watched)
        return False

    def _wheel(self, watched: QObject, event: QWheelEvent) -> bool:
        if not isinstance(watched, QWidget):
            return False
        owner = _owner(watched)
        if owner is None or owner.hasFocus() or (
                owner.focusProxy() is not None and owner.focusProxy().hasFocus()):
            return False
        if isinstance(owner, QComboBox) and owner.view().isVisible():
            return False  # its open list scrolls
        bar = _scroll_target(owner, event)
        if bar is not None:
            self.wheels_redirected += 1
            QApplication.sendEvent(bar, QWheelEvent(
                event.position(), event.globalPosition(), event.pixelDelta(),
                event.angleDelta(), event.buttons(), event.modifiers(), event.phase(),
                event.inverted()))
        event.accept()
        return True  # the value never changes under a passing wheel


def fit_dialog(dialog: QWidget) -> None:
    """Keep a dialog (frame included) inside the available screen; its minimum size is
    lowered to the screen's when it asks for more (its content must scroll)."""
    area = available_geometry(dialog.parentWidget() or dialog)
    extra = frame_extra(dialog)
    max_w, max_h = area.width() - extra.width(), area.height() - extra.height()
    if dialog.minimumWidth() > max_w or dialog.minimumHeight() > max_h:
        dialog.setMinimumSize(min(dialog.minimumWidth(), max_w),
                              min(dialog.minimumHeight(), max_h))
    if dialog.width() > max_w or dialog.height() > max_h:
        dialog.resize(min(dialog.width(), max_w), min(dialog.height(), max_h))
    frame = QRect(dialog.pos(), dialog.size() + extra)
    if not area.contains(frame):
        left = min(max(frame.left(), area.left()), area.right() + 1 - frame.width())
        top = min(max(frame.top(), area.top()), area.bottom() + 1 - frame.height())
        dialog.move(max(left, area.left()), max(top, area.top()))


_GUARD: list[ScreenGuard] = []


def install_screen_guard(app: QApplication) -> ScreenGuard:
    """Install the guard once per application (later calls return the same one)."""
    for guard in _GUARD:
        if guard.parent() is app:
            return guard
    guard = ScreenGuard(app)
    app.installEventFilter(guard)
    _GUARD.append(guard)
    return guard


def refit_later(window: QWidget, delay_ms: int = 250) -> None:
    """Once the window manager has framed the window, keep the real frame on screen."""
    QTimer.singleShot(delay_ms, window, lambda: keep_on_screen(window))


def button_text_problem(button: Any) -> str:
    """Why a button's text does not fit it ("" when it does): each line of its text (the
    ``&`` mnemonic marker removed) must fit the width the style leaves for the label."""
    from PySide6.QtWidgets import QAbstractButton, QPushButton, QStyle, QStyleOptionButton

    if not isinstance(button, QAbstractButton) or not button.text():
        return ""
    text = button.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
    metrics = button.fontMetrics()
    widest = max(metrics.horizontalAdvance(line) for line in text.split("\n"))
    if isinstance(button, QPushButton):
        # The label area is what the (style-sheet) padding and border leave; sizeHint is
        # what the button needs for its text, icon and padding.
        option = QStyleOptionButton()
        button.initStyleOption(option)
        room = button.style().subElementRect(
            QStyle.SubElement.SE_PushButtonContents, option, button).width()
        if not button.icon().isNull():
            room -= button.iconSize().width() + 4
        need = button.sizeHint().width()
        if widest > room + TEXT_SLACK_PX or need > button.width():
            return (f"{type(button).__name__} {text!r}: text needs {widest} px, has {room} px "
                    f"(button {button.width()} px, needs {need} px)")
        return ""
    room = button.contentsRect().width()
    if widest > room + TEXT_SLACK_PX:
        return f"{type(button).__name__} {text!r}: text needs {widest} px, has {room} px"
    return ""


def cap_columns(table: Any, caps: dict[int, int]) -> None:
    """Columns sized to their contents, but never wider than ``caps[column]`` px: a longer
    text wraps (the table's word wrap) and shows whole in its tooltip, so the table fits the
    screen without scrolling sideways and without silently cutting a word."""
    from PySide6.QtWidgets import QHeaderView

    header = table.horizontalHeader()

    def wanted(column: int) -> int:
        return max(table.sizeHintForColumn(column), header.sectionSizeHint(column))

    # Caps only when the columns at their full width do not fit (a wide screen keeps them).
    columns = table.model().columnCount()
    full = sum(wanted(c) for c in range(columns) if not table.isColumnHidden(c))
    roomy = full <= table.viewport().width()
    for column, cap in caps.items():
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        if not roomy and wanted(column) > cap:
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, cap)
        if not hasattr(table, "item"):
            continue  # a view over a model: the model gives the tooltip
        for row in range(table.rowCount()):
            item = table.item(row, column)
            if item is not None and not item.toolTip():
                item.setToolTip(item.text())
    rows = table.verticalHeader()
    rows.setMinimumSectionSize(max(rows.minimumSectionSize(), TOUCH_TARGET_PX))
    table.resizeRowsToContents()
