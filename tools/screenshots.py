"""Screenshots for docs/user-guide.md, taken from the real windows on a temporary demo store.

Run with ``make screenshots`` (or ``QT_QPA_PLATFORM=offscreen .venv/bin/python
tools/screenshots.py [OUT_DIR]``). Nothing touches the user's data folder or settings: the
store and Qt's settings live in a temporary folder that is removed at the end.

Caveat: the names of the PNG files are referenced by the user guide (a test checks that every
image the guide shows exists); rename both together.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402
from PySide6.QtCore import QPoint, QSettings, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QWidget  # noqa: E402

from inspector_app import demo, services  # noqa: E402
from inspector_app.store import open_store, reference  # noqa: E402

SIZE = (1280, 860)
# A 1024×600 rugged laptop: the client area under a window manager's title bar.
SMALL_SIZE = (1024, 566)
SMALL_PREFIX = "1024-"
NARRATIVE = "Em fiscalização de rotina, constatei as irregularidades com o condutor presente."
REFUSAL = "Condutor recusou-se a assinar após a leitura do auto em voz alta."
STROKES = [[(20.0 + 6 * i, 100.0 + 40 * math.sin(i / 5)) for i in range(80)]]
CONTROL_POINT = "Ponto de controle DF-130 – Rajadinha"


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not reach the expected state")
        QApplication.processEvents()
        time.sleep(0.01)


def settle(shell: Any) -> None:
    wait_until(shell.tasks.is_idle)
    for _ in range(5):
        QApplication.processEvents()
        time.sleep(0.02)


def click(widget: QWidget) -> None:
    if not widget.isEnabled():
        raise RuntimeError(f"{widget!r} is disabled")
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def choose(combo: Any, data: str) -> None:
    combo.setCurrentIndex(combo.findData(data))


def sign(pad: QWidget) -> None:
    QTest.mousePress(pad, Qt.MouseButton.LeftButton, pos=QPoint(40, 120))
    for x in range(60, 400, 30):
        QTest.mouseMove(pad, QPoint(x, 100 + (x // 30 % 3) * 15))
    QTest.mouseRelease(pad, Qt.MouseButton.LeftButton, pos=QPoint(420, 110))


def save(widget: QWidget, out: Path, name: str, prefix: str = "") -> None:
    """Grab the window, save it and let Pillow shrink the PNG (palette, optimised)."""
    QApplication.processEvents()
    path = out / f"{prefix}{name}.png"
    widget.grab().save(str(path), "PNG")
    image = Image.open(path).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def clean_plate(store: Any, pack_id: str) -> str:
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? AND chassis_year >= ? ORDER BY id",
        [pack_id, dt.date.today().year - 8]).fetchall()
    for (plate,) in rows:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings:
            return str(plate)
    raise RuntimeError(f"no clean {pack_id} vehicle in the demo registry")


def seed(data_dir: Path) -> dict[str, str]:
    """A demo registry with an earlier retained auto (for the desk and the history)."""
    store = open_store(data_dir)
    try:
        demo.seed_registry(store, vehicles=30, seed=1)
        plates = [str(p) for (p,) in store.conn.execute(
            "SELECT plate FROM ref_vehicles WHERE pack_id = 'DF_STPCR' ORDER BY id")]
        plate = clean_plate(store, "DF_STPCR")
        holder = reference.find_vehicle(store, plate).holder
        row = store.conn.execute(
            "SELECT cpf FROM ref_drivers WHERE holder_id = ? AND registered = 1 ORDER BY id",
            [holder.id]).fetchone() or store.conn.execute(
            "SELECT cpf FROM ref_drivers WHERE registered = 1 ORDER BY id").fetchone()
        earlier = next(p for p in plates if p != plate)
        session = services.login(store=store, matricula="1001", password="demo1001")
        inspection_id = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal Rural de Planaltina", plate=earlier)
        services.record_answer(store=store, inspection_id=inspection_id, item_id="DF-SEG-02",
                               result="fail", note="Extintor ausente.")
        for role in ("agent", "driver"):
            services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                      status="signed", strokes=STROKES)
        result = services.seal_inspection(
            store=store, session=session, inspection_id=inspection_id, narrative=NARRATIVE,
            retain=True, retention_place="Pátio do terminal")
        auto = result.of_kind("auto_infracao")
        services.log_print(store=store, session=session, record_id=auto.id, copy="1")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {"plate": plate, "cpf": str(row[0]), "earlier": auto.display_number}
    finally:
        store.close()


def login(shell: Any, matricula: str) -> None:
    wait_until(lambda: shell.pages.currentWidget() is shell.login)
    shell.login.matricula.setText(matricula)
    shell.login.password.setText(f"demo{matricula}")
    click(shell.login.login_button)
    wait_until(lambda: shell.pages.currentWidget() is shell.main)
    settle(shell)


def take(out: Path, work: Path, size: tuple[int, int] = SIZE, prefix: str = "") -> None:
    from inspector_app.ui.context import AppSettings
    from inspector_app.ui.shell import ShellWindow

    shells: list[Any] = []

    def make(data_dir: Path, **kwargs: Any) -> Any:
        shell = ShellWindow(data_dir=data_dir, **kwargs)
        shell.resize(*size)
        shell.show()
        shells.append(shell)
        return shell

    # First run on an empty device.
    first = make(work / "empty", settings=AppSettings(demo_vehicles=12))
    wait_until(lambda: first.pages.currentWidget() is first.first_run)
    settle(first)
    save(first, out, "01-primeiro-uso", prefix)
    first.close()

    facts = seed(work / "data")
    shell = make(work / "data")
    wait_until(lambda: shell.pages.currentWidget() is shell.login)
    settle(shell)
    shell.login.matricula.setText("1001")
    save(shell, out, "02-login", prefix)
    login(shell, "1001")
    save(shell, out, "03-trabalho-do-dia", prefix)

    shell.main.go("inspection")
    settle(shell)
    wizard = shell.main.wizard
    step = wizard.place_step
    choose(step.pack, "DF_STPCR")
    choose(step.location, "ponto_controle")
    step.place.setText(CONTROL_POINT)
    save(shell, out, "04-local", prefix)
    click(wizard.next_button)
    wizard.vehicle_step.plate.setText(facts["plate"])
    click(wizard.next_button)
    settle(shell)
    wizard.driver_step.cpf.setText(facts["cpf"])
    click(wizard.next_button)
    settle(shell)
    rows = wizard.checklist.rows
    click(rows["DF-SEG-01"].buttons["fail"])
    click(rows["DF-SEG-02"].buttons["fail"])
    click(rows["DF-SEG-03"].buttons["ok"])
    click(rows["DF-SEG-04"].buttons["na"])
    rows["DF-SEG-02"].note.setText("Extintor ausente no suporte.")
    rows["DF-SEG-02"].note.editingFinished.emit()
    settle(shell)
    save(shell, out, "05-checklist", prefix)

    click(wizard.next_button)
    settle(shell)
    wizard.result.narrative.setPlainText(NARRATIVE)
    save(shell, out, "06-resultado", prefix)

    click(wizard.next_button)
    settle(shell)
    sign(wizard.signatures.agent.pad)
    wizard.signatures.driver.refused_radio.setChecked(True)
    wizard.signatures.driver.note.setText(REFUSAL)
    settle(shell)
    save(shell, out, "07-assinaturas", prefix)

    click(wizard.next_button)
    settle(shell)
    save(shell, out, "08-conferencia", prefix)
    click(wizard.next_button)  # Selar
    settle(shell)
    save(shell, out, "09-impressao", prefix)
    click(wizard.next_button)  # Concluir
    wait_until(lambda: shell.main.wizard is None)
    settle(shell)

    shell.main.go("history")
    history = shell.main.history
    history.query.setText(facts["earlier"])
    click(history.search_button)
    settle(shell)
    history.table.selectRow(0)
    settle(shell)
    save(shell, out, "10-historico", prefix)

    shell.main.go("settings")
    settle(shell)
    save(shell, out, "11-configuracoes", prefix)

    click(shell.logout_button)
    login(shell, "1003")
    shell.main.go("retention")
    settle(shell)
    save(shell, out, "12-patio", prefix)
    desk = shell.main.retention
    desk.table.selectRow(0)
    click(desk.release_button)
    settle(shell)
    if desk.release_dialog is not None:
        desk.release_dialog.fault_fixed.setChecked(True)
        desk.release_dialog.resize(min(900, size[0]), min(700, size[1]))
        save(desk.release_dialog, out, "13-liberacao", prefix)
        desk.release_dialog.reject()
    settle(shell)
    for each in shells:
        each.close()
        QApplication.processEvents()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    out = Path(args[0]) if args else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)

    from inspector_app.ui.app import prepare_app

    prepare_app(["inspector"])  # as the app runs: Portuguese, wheel and dialog guard, font
    with tempfile.TemporaryDirectory(prefix="inspector-shots-") as tmp:
        work = Path(tmp)
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                          str(work / "qsettings"))
        os.environ["INSPECTOR_DATA_DIR"] = str(work / "unused")
        take(out, work / "large")
        take(out, work / "small", SMALL_SIZE, SMALL_PREFIX)
    return 0


if __name__ == "__main__":
    sys.exit(main())
