"""Layout rules for the screens inspectors have (1024×600 and up), offscreen.

One test per rule: the window's minimum size never exceeds a 1024×600 screen's available
area, after every page (Histórico included); no button's text is cut on any page at
1024×600; the wheel over an unfocused date edit changes nothing and scrolls the page; a
dialog larger than the screen is fitted into it; the window's geometry comes back only
when it fits; the save dialog starts in the documents folder; the signature pad draws by
touch. The real-window walk (``test_real_window_day.py``) proves the same in X.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QDate, QPoint, QPointF, QRect, QSize, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QAbstractButton,
    QApplication,
    QDialog,
    QLabel,
    QLineEdit,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from inspector_app.ui import screen_fit
from inspector_app.ui.screen_fit import button_text_problem, install_screen_guard
from tests.ui.uikit import click, login, seal_auto_offline, start_inspection, wait_idle

SMALL = QSize(1024, 600)
CLIENT = QSize(1024, 600 - screen_fit.FRAME_GUESS.height())  # under a window manager's title


@pytest.fixture
def guard(qapp):
    return install_screen_guard(qapp)


def visit_everything(qtbot, shell, demo_facts, seen):
    """Every page of the main area and every step of an inspection; ``seen(name)`` after
    each one."""
    login(qtbot, shell, "1001")
    for key in ("today", "retention", "history", "settings", "sync"):
        shell.main.go(key)
        wait_idle(qtbot, shell)
        seen(key)
    history = shell.main.history
    history.query.setText(demo_facts.df_plate)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    seen("history-found")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal",
                              location="terminal", plate=demo_facts.df_plate,
                              driver_cpf=demo_facts.df_driver_cpf)
    seen("checklist")
    for index in range(wizard.checklist.sections.count()):
        wizard.checklist.sections.setCurrentRow(index)
        seen(f"checklist-section-{index}")
    rows = wizard.checklist.rows
    rows["DF-SEG-02"].answer("fail")
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    seen("result")


def test_the_minimum_size_fits_a_1024x600_screen_after_every_page(qtbot, make_shell, data_dir,
                                                                    demo_facts):
    shell = make_shell(data_dir)
    sizes = {}

    def seen(name):
        QApplication.processEvents()
        sizes[name] = shell.minimumSizeHint().expandedTo(shell.minimumSize())

    seen("start")
    visit_everything(qtbot, shell, demo_facts, seen)
    too_big = {name: size.toTuple() for name, size in sizes.items()
               if size.width() > SMALL.width() or size.height() > CLIENT.height()}
    assert too_big == {}
    # Histórico does not raise it afterwards (it used to grow from 713 to 897 px).
    assert sizes["result"].height() <= sizes["start"].height() + 60


def test_no_button_text_is_cut_on_any_page_at_1024x600(qtbot, make_shell, data_dir,
                                                        demo_facts):
    shell = make_shell(data_dir)
    shell.resize(CLIENT)
    problems = {}

    def seen(name):
        QApplication.processEvents()
        for button in shell.findChildren(QAbstractButton):
            if button.isVisible() and not button.visibleRegion().isEmpty():
                problem = button_text_problem(button)
                if problem:
                    problems.setdefault(name, []).append(problem)
                if button.height() < 44 and button.metaObject().className() == "QPushButton":
                    problems.setdefault(name, []).append(
                        f"{button.text()!r} is {button.height()} px tall")

    visit_everything(qtbot, shell, demo_facts, seen)
    assert problems == {}


def test_a_date_item_keeps_its_three_answers_whole_at_1024(qtbot, make_shell, data_dir,
                                                           demo_facts):
    shell = make_shell(data_dir)
    shell.resize(CLIENT)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal",
                              location="terminal", plate=demo_facts.df_plate,
                              driver_cpf=demo_facts.df_driver_cpf)
    from inspector_app.ui.fields import DateField

    dated = [row for row in wizard.checklist.rows.values()
             if isinstance(row.value_edit, DateField)]
    assert dated, "the DF_STPCR checklist has a date item"
    row = dated[0]
    section = next(i for i, rows in enumerate(wizard.checklist._section_rows) if row in rows)
    wizard.checklist.sections.setCurrentRow(section)
    QApplication.processEvents()
    assert row.isVisible()
    for button in row.buttons.values():
        assert button_text_problem(button) == "", button_text_problem(button)


def wheel(widget, steps=-3):
    """A mouse-wheel turn over the middle of ``widget`` (negative: towards the user)."""
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton,
                        Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)
    QApplication.processEvents()


def test_the_wheel_over_an_unfocused_repair_deadline_scrolls_the_dialog_not_the_date(
        qtbot, guard, make_shell, data_dir, demo_facts):
    seal_auto_offline(data_dir, demo_facts.df_plate, retain=True)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1003")
    shell.main.go("retention")
    wait_idle(qtbot, shell)
    desk = shell.main.retention
    click(qtbot, desk.release_button)
    dialog = desk.release_dialog
    dialog.resize(700, 360)  # short enough to scroll
    dialog.to_workshop.setChecked(True)
    dialog.release_button.setFocus()
    QApplication.processEvents()
    edit = dialog.workshop_deadline
    scroll = next(a for a in dialog.findChildren(QScrollArea) if a.isAncestorOf(edit))
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(0)
    expected = QDate.currentDate().addDays(7)
    assert edit.date() == expected and not edit.hasFocus()
    assert edit.focusPolicy() == Qt.FocusPolicy.StrongFocus  # no focus by the wheel

    wheel(edit)
    assert edit.date() == expected, "the wheel changed Prazo para o reparo"
    assert bar.value() > 0, "the dialog did not scroll"

    # Focused (clicked or tabbed into), the field takes the wheel as before.
    edit.setFocus()
    QApplication.processEvents()
    wheel(edit, steps=1)
    assert edit.date() != expected


def test_unfocused_spin_boxes_and_combos_ignore_the_wheel_too(qtbot, guard):
    from PySide6.QtWidgets import QComboBox, QSpinBox

    page = QWidget()
    column = QVBoxLayout(page)
    spin, combo = QSpinBox(), QComboBox()
    combo.addItems(["A4", "Bobina 80 mm"])
    spin.setValue(5)
    typing = QLineEdit()
    column.addWidget(typing)
    column.addWidget(spin)
    column.addWidget(combo)
    column.addSpacing(2000)
    area = QScrollArea()
    area.setWidgetResizable(True)
    area.setWidget(page)
    area.resize(300, 200)
    qtbot.addWidget(area)
    area.show()
    typing.setFocus()
    QApplication.processEvents()
    wheel(spin)
    wheel(combo)
    assert (spin.value(), combo.currentIndex()) == (5, 0)
    assert area.verticalScrollBar().value() > 0


def test_a_dialog_taller_than_the_screen_is_fitted_into_it(qtbot, guard):
    dialog = QDialog()
    qtbot.addWidget(dialog)
    area = screen_fit.available_geometry(dialog)
    dialog.resize(area.width() + 300, area.height() + 300)
    dialog.show()
    QApplication.processEvents()
    frame = QRect(dialog.pos(), dialog.size() + screen_fit.frame_extra(dialog))
    assert area.contains(frame), (frame, area)


def test_the_window_opens_fitted_and_comes_back_where_the_user_left_it(
        qtbot, make_shell, data_dir, monkeypatch):
    from inspector_app.ui.context import open_qsettings

    area = QRect(0, 0, 1024, 600)  # a 1024×600 rugged laptop, whatever offscreen offers
    monkeypatch.setattr(screen_fit, "available_geometry", lambda _widget=None: area)
    shell = make_shell(data_dir)
    shell.hide()
    shell.place_on_screen()
    assert shell.size() == QSize(1024, 600) - screen_fit.FRAME_GUESS
    assert area.contains(QRect(shell.pos(), shell.size() + screen_fit.FRAME_GUESS))

    shell.setGeometry(20, 40, 900, 500)  # the user's choice
    screen_fit.remember_geometry(shell, open_qsettings())
    again = make_shell(data_dir)
    again.hide()
    again.place_on_screen()
    assert again.size() == QSize(900, 500)

    # Saved on a larger screen: not restored, fitted instead.
    too_big = make_shell(data_dir)
    too_big.setGeometry(0, 0, 1600, 1000)
    screen_fit.remember_geometry(too_big, open_qsettings())
    third = make_shell(data_dir)
    third.hide()
    third.place_on_screen()
    assert third.size() == QSize(1024, 600) - screen_fit.FRAME_GUESS


def test_the_save_dialog_starts_in_the_documents_folder(qtbot):
    from PySide6.QtCore import QStandardPaths, QTimer
    from PySide6.QtWidgets import QFileDialog

    from inspector_app.ui import printing

    QStandardPaths.setTestModeEnabled(True)
    try:
        documents = Path(QStandardPaths.writableLocation(
            QStandardPaths.StandardLocation.DocumentsLocation))
        seen = {}

        def answer():
            dialog = next(w for w in QApplication.topLevelWidgets()
                          if isinstance(w, QFileDialog) and w.isVisible())
            seen["folder"] = Path(dialog.directory().absolutePath())
            seen["labels"] = {w.text() for w in dialog.findChildren(QLabel)}
            seen["file"] = dialog.selectedFiles()
            dialog.reject()

        QTimer.singleShot(200, answer)
        assert printing.SavePdfChooser.ask(None, "DEMO/2026/000001-via1.pdf") is None
        assert seen["folder"].resolve() == documents.resolve()
        assert seen["file"] == [str(documents / "DEMO-2026-000001-via1.pdf")]
        assert Path.cwd().resolve() != documents.resolve()
        assert {"Examinar:", "Tipo de arquivo:", "Nome do arquivo:"} <= seen["labels"]
        assert not {"Look in:", "Files of type:"} & seen["labels"]
    finally:
        QStandardPaths.setTestModeEnabled(False)


def test_a_finger_signs_on_the_pad(qtbot):
    from PySide6.QtGui import QPointingDevice

    from inspector_app.ui.signatures import SignaturePad

    pad = SignaturePad()
    qtbot.addWidget(pad)
    pad.show()
    QApplication.processEvents()
    finger = QTest.createTouchDevice(QPointingDevice.DeviceType.TouchScreen)
    QTest.touchEvent(pad, finger).press(0, QPoint(40, 100))
    for x in range(60, 400, 40):
        QTest.touchEvent(pad, finger).move(0, QPoint(x, 90 + x % 30))
    QTest.touchEvent(pad, finger).release(0, QPoint(420, 100))
    QApplication.processEvents()
    assert not pad.is_empty()
    assert len(pad.strokes) == 1 and len(pad.strokes[0]) >= 8
