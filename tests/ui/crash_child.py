"""Child process of the crash test: runs the app and answers checklist items until killed.

Usage: ``python crash_child.py DATA_DIR SETTINGS_DIR PLATE``. Logs in as 1001, starts a
DF_STPCR inspection through the wizard, then clicks the answer buttons of the checklist one
item after another, with at most one answer's save still in flight. After each answer is saved (the checklist's save-done
callback, hooked here and not in the app) it prints ``SAVED <item id> <result>``. When every
item is answered it prints ``DONE`` and keeps running until the parent kills it.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

ANSWERS = ("fail", "ok", "na", "ok")


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            print(f"TIMEOUT {what}", flush=True)
            raise SystemExit(3)
        QTest.qWait(10)


def click(button) -> None:
    assert button.isEnabled(), button.text()
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)


def main() -> int:
    data_dir, settings_dir, plate = sys.argv[1:4]
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, settings_dir)
    app = QApplication(sys.argv[:1])

    from inspector_app.ui import checklist
    from inspector_app.ui.shell import ShellWindow

    saved_done = checklist.ChecklistPage._saved

    count = [0]

    def saved(self, row) -> None:
        saved_done(self, row)
        count[0] += 1
        print(f"SAVED {row.item.id} {row.result}", flush=True)

    checklist.ChecklistPage._saved = saved

    shell = ShellWindow(data_dir=Path(data_dir))
    shell.show()
    wait_until(lambda: shell.pages.currentWidget() is shell.login, "login page")
    shell.login.matricula.setText("1001")
    shell.login.password.setText("demo1001")
    click(shell.login.login_button)
    wait_until(lambda: shell.pages.currentWidget() is shell.main, "main window")

    click(shell.main.nav_buttons["inspection"])
    wizard = shell.main.wizard
    place = wizard.place_step
    wait_until(lambda: place.pack.findData("DF_STPCR") >= 0, "packs")
    place.pack.setCurrentIndex(place.pack.findData("DF_STPCR"))
    place.place.setText("Terminal Rodoviário de Sobradinho")
    click(wizard.next_button)
    wizard.vehicle_step.plate.setText(plate)
    click(wizard.next_button)
    wait_until(lambda: wizard.step == 2, "driver step")
    click(wizard.driver_step.absent)
    click(wizard.next_button)
    wait_until(lambda: wizard.step == 3, "checklist")
    print("CHECKLIST", flush=True)

    page = wizard.checklist
    for index, (item_id, row) in enumerate(page.rows.items()):
        page.sections.setCurrentRow(next(i for i, rows in enumerate(page._section_rows)
                                         if row in rows))
        click(row.buttons[ANSWERS[index % len(ANSWERS)]])
        assert row.item.id == item_id
        QTest.qWait(5)  # let queued callbacks run between answers, as a person would
        # At most this answer's save still in flight: the parent kills the app while answers
        # are being saved, never after the last one (on a busy machine the saves could
        # otherwise all lag behind the clicks and "DONE" come first).
        wait_until(lambda done=index: count[0] >= done, "the previous answer's save")
    print("DONE", flush=True)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
