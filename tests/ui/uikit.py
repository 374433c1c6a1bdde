"""Helpers that drive the real widgets the way a person would (click, type, keys)."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt

from inspector_app import services
from inspector_app.store import open_store

NARRATIVE = "Em fiscalização de rotina, constatei as irregularidades com o condutor presente."
REFUSAL = "Condutor recusou-se a assinar após a leitura do auto em voz alta."
STROKES = [[(20.0 + 6 * i, 100.0 + 40 * math.sin(i / 5)) for i in range(80)]]


def wait_idle(qtbot, shell, timeout: int = 15_000) -> None:
    """Until no store or network work is queued, running or waiting for its callback."""
    qtbot.waitUntil(shell.tasks.is_idle, timeout=timeout)


def click(qtbot, button) -> None:
    assert button.isEnabled(), f"{button.text()!r} is disabled"
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def in_store(qtbot, shell, fn: Callable[[Any], Any]) -> Any:
    """Run ``fn(store)`` on the app's own store worker and return its result."""
    box: list[Any] = []
    shell.tasks.run_store(fn, box.append)
    qtbot.waitUntil(lambda: bool(box), timeout=15_000)
    return box[0]


def login(qtbot, shell, matricula: str, password: str | None = None) -> None:
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=15_000)
    shell.login.matricula.setText(matricula)
    shell.login.password.setText(password or f"demo{matricula}")
    click(qtbot, shell.login.login_button)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.main, timeout=15_000)
    wait_idle(qtbot, shell)


def choose(combo, data: str) -> None:
    index = combo.findData(data)
    assert index >= 0, f"{data!r} not in the combo box"
    combo.setCurrentIndex(index)


def sign(qtbot, pad) -> None:
    """Draw a stroke on the signature pad with the mouse."""
    qtbot.mousePress(pad, Qt.MouseButton.LeftButton, pos=QPoint(40, 120))
    for x in range(60, 400, 30):
        qtbot.mouseMove(pad, QPoint(x, 100 + (x // 30 % 3) * 15))
    qtbot.mouseRelease(pad, Qt.MouseButton.LeftButton, pos=QPoint(420, 110))


def start_inspection(qtbot, shell, *, pack: str, place: str, location: str, plate: str,
                     vistoria: bool = False, driver_cpf: str | None = None):
    """From the main window to the checklist step; returns the wizard."""
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    wizard = shell.main.wizard
    step = wizard.place_step
    choose(step.pack, pack)
    if vistoria:
        step.vistoria.setChecked(True)
    choose(step.location, location)
    step.place.setText(place)
    click(qtbot, wizard.next_button)
    wizard.vehicle_step.plate.setText(plate)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 2, wizard.banner.text()
    if driver_cpf:
        wizard.driver_step.cpf.setText(driver_cpf)
    else:
        wizard.driver_step.absent.setChecked(True)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 3, wizard.banner.text()
    return wizard


def seal_auto_offline(data_dir: Path, plate: str, *, item: str = "DF-SEG-02",
                      retain: bool = False, printed: bool = False) -> services.SealResult:
    """Seal an auto through the services before the window opens (a day's earlier work)."""
    store = open_store(data_dir)
    try:
        session = services.login(store=store, matricula="1001", password="demo1001")
        inspection_id = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal Rural de Planaltina", plate=plate)
        services.record_answer(store=store, inspection_id=inspection_id, item_id=item,
                               result="fail", note="Extintor ausente.")
        for role in ("agent", "driver"):
            services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                      status="signed", strokes=STROKES)
        result = services.seal_inspection(
            store=store, session=session, inspection_id=inspection_id, narrative=NARRATIVE,
            retain=retain, retention_place="Pátio do terminal" if retain else "")
        if printed:
            auto = result.of_kind("auto_infracao")
            services.log_print(store=store, session=session, record_id=auto.id, copy="1")
        return result
    finally:
        store.close()
