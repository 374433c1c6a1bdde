"""The signature pad (mouse, touch, pen) and the signatures step of the inspection.

The pad only collects strokes (lists of points in pad pixels); turning them into the
signature PNG is ``services.record_signature`` (``media.signatures``), on the store worker.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPainterPath, QPen, QTabletEvent
from PySide6.QtWidgets import (
    QButtonGroup,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from inspector_app.ui.widgets import big_button

PAD_SIZE = (600, 200)
INK = QColor(16, 32, 96)

Stroke = list[tuple[float, float]]


class SignaturePad(QWidget):
    """A white box to sign in; ``strokes`` are the pen paths in pad pixels."""

    strokes_changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFixedSize(*PAD_SIZE)
        self.setAttribute(Qt.WidgetAttribute.WA_AcceptTouchEvents, True)
        self.setAttribute(Qt.WidgetAttribute.WA_StaticContents, True)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setAccessibleName("Quadro de assinatura")
        self.strokes: list[Stroke] = []
        self._drawing = False

    # --- data -------------------------------------------------------------------------------------

    def is_empty(self) -> bool:
        return not any(self.strokes)

    def clear(self) -> None:
        self.strokes = []
        self._drawing = False
        self.update()
        self.strokes_changed.emit()

    def set_strokes(self, strokes: list[Stroke]) -> None:
        """Replace the drawing (e.g. a signature restored after a crash)."""
        self.strokes = [list(s) for s in strokes]
        self.update()
        self.strokes_changed.emit()

    def pad_size(self) -> tuple[int, int]:
        return (self.width(), self.height())

    # --- input ------------------------------------------------------------------------------------

    def _begin(self, point: QPointF) -> None:
        self._drawing = True
        self.strokes.append([(point.x(), point.y())])
        self.update()

    def _extend(self, point: QPointF) -> None:
        if self._drawing and self.strokes:
            self.strokes[-1].append((point.x(), point.y()))
            self.update()

    def _end(self) -> None:
        if self._drawing:
            self._drawing = False
            self.strokes_changed.emit()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._begin(event.position())

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        self._extend(event.position())

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if event.button() == Qt.MouseButton.LeftButton:
            self._extend(event.position())
            self._end()

    def tabletEvent(self, event: QTabletEvent) -> None:
        kind = event.type()
        if kind == QEvent.Type.TabletPress:
            self._begin(event.position())
        elif kind == QEvent.Type.TabletMove:
            self._extend(event.position())
        elif kind == QEvent.Type.TabletRelease:
            self._end()
        event.accept()

    def event(self, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.TouchBegin, QEvent.Type.TouchUpdate, QEvent.Type.TouchEnd):
            points = event.points()  # type: ignore[attr-defined]
            if points:
                where = points[0].position()
                if kind == QEvent.Type.TouchBegin:
                    self._begin(where)
                elif kind == QEvent.Type.TouchUpdate:
                    self._extend(where)
                else:
                    self._extend(where)
                    self._end()
            event.accept()
            return True
        return super().event(event)

    # --- drawing ----------------------------------------------------------------------------------

    def paintEvent(self, _event: object) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.fillRect(self.rect(), QColor("white"))
        painter.setPen(QPen(QColor("#c8ccd2"), 1))
        painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
        baseline = int(self.height() * 0.75)
        painter.setPen(QPen(QColor("#9aa0a8"), 1, Qt.PenStyle.DashLine))
        painter.drawLine(20, baseline, self.width() - 20, baseline)
        if self.is_empty():
            painter.setPen(QColor("#9aa0a8"))
            painter.drawText(self.rect().adjusted(0, 0, 0, -self.height() // 3),
                             Qt.AlignmentFlag.AlignCenter, "Assine aqui")
        pen = QPen(INK, 3, Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap,
                   Qt.PenJoinStyle.RoundJoin)
        painter.setPen(pen)
        for stroke in self.strokes:
            if len(stroke) == 1:
                painter.drawPoint(QPointF(*stroke[0]))
                continue
            path = QPainterPath(QPointF(*stroke[0]))
            for x, y in stroke[1:]:
                path.lineTo(x, y)
            painter.drawPath(path)
        painter.end()


class SignatureBox(QGroupBox):
    """One signer: the pad and a "Limpar" button; for the driver also refused / absent."""

    def __init__(self, title: str, *, driver: bool, parent: QWidget | None = None) -> None:
        super().__init__(title, parent)
        self.driver = driver
        self.pad = SignaturePad()
        self.clear_button = big_button("&Limpar assinatura" if not driver else "Li&mpar")
        self.clear_button.clicked.connect(self.pad.clear)
        layout = QVBoxLayout(self)
        self.signed_radio = self.refused_radio = self.absent_radio = None
        self.note = QLineEdit()
        if driver:
            self.signed_radio = QRadioButton("Assina no quadro")
            self.refused_radio = QRadioButton("R&ecusou-se a assinar")
            self.absent_radio = QRadioButton("Condutor a&usente")
            self.signed_radio.setChecked(True)
            group = QButtonGroup(self)
            row = QHBoxLayout()
            for radio in (self.signed_radio, self.refused_radio, self.absent_radio):
                group.addButton(radio)
                row.addWidget(radio)
                radio.toggled.connect(self._sync)
            row.addStretch(1)
            layout.addLayout(row)
        pad_row = QHBoxLayout()
        pad_row.addWidget(self.pad)
        pad_row.addWidget(self.clear_button, 0, Qt.AlignmentFlag.AlignBottom)
        pad_row.addStretch(1)
        layout.addLayout(pad_row)
        if driver:
            self.note_label = QLabel("Observação do agente sobre a recusa ou ausência "
                                     "(obrigatória, pelo menos 10 caracteres):")
            self.note_label.setWordWrap(True)
            self.note_label.setBuddy(self.note)
            layout.addWidget(self.note_label)
            layout.addWidget(self.note)
            self._sync()

    def status(self) -> str:
        if not self.driver or (self.signed_radio and self.signed_radio.isChecked()):
            return "signed"
        if self.refused_radio and self.refused_radio.isChecked():
            return "refused"
        return "absent"

    def _sync(self) -> None:
        signing = self.status() == "signed"
        self.pad.setEnabled(signing)
        self.clear_button.setEnabled(signing)
        self.note.setEnabled(not signing)
        self.note_label.setEnabled(not signing)
