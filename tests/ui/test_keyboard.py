"""Keyboard-only use: Tab, Enter and Alt mnemonics from the login to the checklist."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QAbstractButton, QApplication, QGroupBox, QLabel
from uikit import click, login, wait_idle

from inspector_app.ui import checklist
from inspector_app.ui.inspection import CHECKLIST, DRIVER, LOCAL, VEHICLE

ALT = Qt.KeyboardModifier.AltModifier


def activate(qtbot, shell) -> None:
    """Mnemonics and window shortcuts need the window to be the active one."""
    shell.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is shell, timeout=5_000)


def press(qtbot, shell, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A key press where the keyboard sends it: to the widget that has the focus."""
    qtbot.keyClick(shell.focusWidget() or shell, key, modifier)


def focused(shell):
    return shell.focusWidget()


def test_login_and_the_way_to_the_checklist_need_only_the_keyboard(qtbot, make_shell, data_dir,
                                                                   demo_facts):
    shell = make_shell(data_dir)
    activate(qtbot, shell)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=15_000)
    login_page = shell.login
    assert focused(shell) is login_page.matricula
    login_page.matricula.setText("1001")
    press(qtbot, shell, Qt.Key.Key_Tab)
    assert focused(shell) is login_page.password
    login_page.password.setText("demo1001")
    press(qtbot, shell, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.main, timeout=15_000)
    wait_idle(qtbot, shell)

    press(qtbot, shell, Qt.Key.Key_N, ALT)  # "&Nova inspeção" on the day's work
    qtbot.waitUntil(lambda: shell.main.wizard is not None
                    and focused(shell) is shell.main.wizard.place_step.place, timeout=5_000)
    wizard = shell.main.wizard
    place = wizard.place_step
    assert wizard.step == LOCAL
    place.place.setText("Ponto de controle DF-130")
    press(qtbot, shell, Qt.Key.Key_L, ALT)  # "Tipo de &local"
    assert focused(shell) is place.location
    while place.location.currentData() != "ponto_controle":
        press(qtbot, shell, Qt.Key.Key_Down)
    press(qtbot, shell, Qt.Key.Key_A, ALT)  # "&Avançar"
    qtbot.waitUntil(lambda: wizard.step == VEHICLE, timeout=5_000)

    assert focused(shell) is wizard.vehicle_step.plate
    wizard.vehicle_step.plate.setText(demo_facts.df_plate)
    press(qtbot, shell, Qt.Key.Key_A, ALT)  # looks the plate up, then advances
    qtbot.waitUntil(lambda: wizard.step == DRIVER, timeout=10_000)
    assert "Permissionário" in wizard.vehicle_step.card.text()

    assert focused(shell) is wizard.driver_step.cpf
    wizard.driver_step.cpf.setText(demo_facts.df_driver_cpf)
    press(qtbot, shell, Qt.Key.Key_I, ALT)  # "&Iniciar inspeção"
    qtbot.waitUntil(lambda: wizard.step == CHECKLIST, timeout=10_000)
    wait_idle(qtbot, shell)

    first = focused(shell)
    assert isinstance(first, checklist.ItemRow)
    press(qtbot, shell, Qt.Key.Key_N)  # não conforme, then on to the next item
    second = focused(shell)
    assert isinstance(second, checklist.ItemRow) and second is not first
    press(qtbot, shell, Qt.Key.Key_C)
    wait_idle(qtbot, shell)
    assert (first.result, first.saved_state) == ("fail", "saved")
    assert (second.result, second.saved_state) == ("ok", "saved")
    assert wizard.state.location_type == "ponto_controle"
    assert wizard.state.driver.get("cpf")


def mnemonic_clashes(root) -> list[tuple[str, str]]:
    """(Alt+key, text) of visible controls whose mnemonic another visible control uses."""
    found = []
    for widget in (root.findChildren(QAbstractButton) + root.findChildren(QLabel)
                   + root.findChildren(QGroupBox)):
        if not widget.isVisible() or (isinstance(widget, QLabel) and widget.buddy() is None):
            continue
        text = widget.title() if isinstance(widget, QGroupBox) else widget.text()
        sequence = QKeySequence.mnemonic(text).toString()
        if sequence:
            found.append((sequence, text))
    counts = Counter(sequence for sequence, _text in found)
    return sorted((s, t) for s, t in found if counts[s] > 1)


def test_no_two_visible_controls_share_a_mnemonic_on_any_screen(qtbot, make_shell, data_dir,
                                                                demo_facts, monkeypatch):
    from inspector_app.ui import inspection

    asked: list[str] = []  # "não identificado" after typing a CPF asks which one is true
    monkeypatch.setattr(inspection.WhichIsTrue, "ask", classmethod(
        lambda cls, parent, title, text, options: asked.append(text) or 0))
    shell = make_shell(data_dir)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=15_000)
    screens = {"login": mnemonic_clashes(shell)}
    login(qtbot, shell, "1001")
    for key in ("today", "retention", "history", "settings"):
        shell.main.go(key)
        wait_idle(qtbot, shell)
        screens[key] = mnemonic_clashes(shell)
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    wizard = shell.main.wizard
    screens["place"] = mnemonic_clashes(shell)
    wizard.place_step.place.setText("Terminal de Brazlândia")
    click(qtbot, wizard.next_button)
    wizard.vehicle_step.plate.setText("ZZZ9Z99")  # unregistered: the CRLV fields show
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.vehicle_step.manual.isVisible()
    screens["vehicle"] = mnemonic_clashes(shell)
    click(qtbot, wizard.next_button)
    wizard.driver_step.cpf.setText("52998224725")  # valid, not in the registry
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.driver_step.manual.isVisible()
    screens["driver"] = mnemonic_clashes(shell)
    wizard.driver_step.absent.setChecked(True)
    assert len(asked) == 1 and "529.982.247-25" in asked[0]
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    screens["checklist"] = mnemonic_clashes(shell)
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-02"], Qt.Key.Key_N)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    screens["result"] = mnemonic_clashes(shell)
    wizard.result.narrative.setPlainText("Extintor ausente constatado no terminal.")
    click(qtbot, wizard.next_button)
    screens["signatures"] = mnemonic_clashes(shell)
    assert {name: clashes for name, clashes in screens.items() if clashes} == {}
