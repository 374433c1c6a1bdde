"""An inspector's day in a real X window, driven with the mouse and keyboard (xdotool).

Run by ``tests/ui/test_real_window_day.py`` under ``xvfb-run`` (one X server per screen
size), or by hand::

    xvfb-run -n 11 -s "-screen 0 1024x600x24" .venv/bin/python tests/ui/desktop_day.py OUT

``OUT`` receives one screenshot per step (the whole screen, window-manager frame included)
and ``report.json``: the steps walked and every problem seen. At each step every action
button of that step must be visible, unclipped (``visibleRegion`` is its whole rectangle),
its text must fit, and it must lie inside ``QScreen.availableGeometry()``; so must the status
bar and the window's frame. ``--no-wm`` runs without a window manager (no decorations), as far as the first step.

The app is the real one (``ui.app.prepare_app`` and ``ShellWindow.place_on_screen``, as
``inspector gui`` runs it) on a fresh data folder: first run in demo mode, login, a DF_STPCR
inspection with failures and a refusal to sign, sealed and saved as PDF; the retention desk
releases the vehicle; the supervisor reprints from the history and cancels; a JF_1972
vistoria. Every wait is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

STEP_TIMEOUT = 20.0  # seconds any one thing may take
CONTROL_POINT = "Ponto de controle DF-130 - Rajadinha"
# Typed with xdotool, which drops letters with a tilde (ã, õ): the texts avoid them.
NARRATIVE = "Constatei as irregularidades descritas com o condutor presente no local."
REFUSAL = "Condutor recusou-se a assinar depois da leitura do auto."
CANCEL_REASON = "Placa anotada errada no auto pelo agente."


class StepFailed(Exception):
    pass


Steps = Generator[None, None, Any]


class Walk:
    def __init__(self, out: Path, home: Path, wm: bool, short: bool = False) -> None:
        from PySide6.QtWidgets import QApplication

        self.out = out
        self.home = home
        self.wm = wm
        self.app = QApplication.instance()
        self.problems: list[str] = []
        self.steps: list[dict[str, Any]] = []
        self.count = 0
        self.shell: Any = None
        self.started = time.monotonic()
        self.short = short

    # --- time and events --------------------------------------------------------------------------

    # Every step is a generator: the walk runs from a timer in Qt's event loop and yields
    # back to it, so it keeps driving when a modal dialog's exec() opens a nested loop.

    def pump(self, seconds: float = 0.05) -> Steps:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            yield

    def wait(self, condition: Callable[[], Any], what: str,
             timeout: float = STEP_TIMEOUT) -> Steps:
        deadline = time.monotonic() + timeout
        while True:
            value = condition()
            if value:
                return value
            if time.monotonic() > deadline:
                raise StepFailed(f"timed out waiting for {what}")
            yield

    def idle(self) -> Steps:
        yield from self.wait(self.shell.tasks.is_idle, "the store worker to finish")
        yield from self.pump(0.1)

    # --- xdotool: a person's mouse and keyboard ---------------------------------------------------

    def xdo(self, *args: str) -> Steps:
        # Popen and yield: Qt answers the X server (clipboard, focus) while xdotool runs.
        proc = subprocess.Popen(["xdotool", *args], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while proc.poll() is None:
            if time.monotonic() > deadline:
                proc.kill()
                raise StepFailed(f"xdotool {' '.join(args)} hung")
            yield
        if proc.returncode:
            raise StepFailed(f"xdotool {' '.join(args)}: {proc.stderr.read().decode()}")
        yield from self.pump(0.01)

    def point(self, widget: Any, where: Any = None) -> tuple[int, int]:
        from PySide6.QtCore import QPoint

        local = where if where is not None else widget.rect().center()
        moved = widget.mapToGlobal(QPoint(local))
        return moved.x(), moved.y()

    def click(self, widget: Any, what: str = "", where: Any = None) -> Steps:
        name = what or _label(widget)
        yield from self.wait(widget.isVisible, f"{name} to be visible")
        if not widget.isEnabled():
            raise StepFailed(f"{name} is disabled")
        yield from self.reveal(widget)
        from PySide6.QtCore import QPoint
        from PySide6.QtWidgets import QCheckBox, QRadioButton

        if where is None and isinstance(widget, QCheckBox | QRadioButton):
            where = QPoint(14, widget.height() // 2)  # on the box (the row is wider)
        if where is None:  # the middle of what can be seen of it, where a person clicks
            seen = widget.visibleRegion().boundingRect()
            where = seen.center() if not seen.isEmpty() else None
        x, y = self.point(widget, where)
        yield from self.xdo("mousemove", str(x), str(y))
        yield from self.xdo("click", "1")
        yield from self.pump(0.05)

    def type(self, text: str) -> Steps:
        yield from self.xdo("type", "--delay", "4", text)

    def key(self, *keys: str) -> Steps:
        yield from self.xdo("key", "--delay", "20", *keys)

    def click_and_type(self, field: Any, text: str) -> Steps:
        yield from self.click(field)
        yield from self.wait(field.hasFocus, f"{_label(field)} to take the focus")
        yield from self.key("ctrl+a")
        yield from self.type(text)

    def reveal(self, widget: Any) -> Steps:
        """Scroll the page as a person would to bring ``widget`` into view."""
        from PySide6.QtWidgets import QScrollArea

        parent = widget.parentWidget()
        while parent is not None:
            if isinstance(parent, QScrollArea) and parent.widget() is not None \
                    and parent.widget().isAncestorOf(widget):
                parent.ensureWidgetVisible(widget, 10, 10)
            parent = parent.parentWidget()
        yield from self.pump(0.03)

    def choose(self, combo: Any, data: str) -> Steps:
        """Open the combo box and click the entry."""
        index = combo.findData(data)
        if index < 0:
            raise StepFailed(f"{data!r} is not offered")
        if combo.currentIndex() == index:
            return
        yield from self.click(combo)
        view = combo.view()
        yield from self.wait(view.isVisible, "the list to open")
        model_index = view.model().index(index, combo.modelColumn(), view.rootIndex())
        view.scrollTo(model_index)
        yield from self.pump(0.05)
        rect = view.visualRect(model_index)
        x, y = self.point(view.viewport(), rect.center())
        yield from self.xdo("mousemove", str(x), str(y))
        yield from self.xdo("click", "1")
        yield from self.wait(lambda: combo.currentIndex() == index, f"{data!r} to be chosen")

    def draw_signature(self, pad: Any) -> Steps:
        from PySide6.QtCore import QPoint

        yield from self.reveal(pad)  # below the driver's review on the signature step
        x0, y0 = self.point(pad, QPoint(40, pad.height() // 2))
        yield from self.xdo("mousemove", str(x0), str(y0))
        yield from self.xdo("mousedown", "1")
        for step in range(1, 12):
            yield from self.xdo("mousemove", str(x0 + step * 30),
                     str(y0 + (-25 if step % 2 else 20)))
        yield from self.xdo("mouseup", "1")
        yield from self.wait(lambda: not pad.is_empty(), "the signature to be drawn")

    # --- what the person sees ---------------------------------------------------------------------

    def check(self, name: str, buttons: list[Any], window: Any = None) -> Steps:
        """Screenshot, then every listed button visible, unclipped and on the screen."""
        from PySide6.QtCore import QPoint, QRect
        from PySide6.QtGui import QGuiApplication

        yield from self.pump(0.08)
        self.count += 1
        shot = self.out / f"{self.count:02d}-{name}.png"
        screen = QGuiApplication.primaryScreen()
        screen.grabWindow(0).save(str(shot), "PNG")
        window = window or self.shell
        area = screen.availableGeometry()
        problems: list[str] = []
        frame = window.frameGeometry()
        if not area.contains(frame):
            problems.append(f"window frame {_rect(frame)} outside the screen {_rect(area)}")
        if window is self.shell:
            bar = self.shell.statusBar()
            buttons = [*buttons, bar]
            if window.minimumSizeHint().height() > area.height() or \
                    window.minimumSizeHint().width() > area.width():
                problems.append(f"minimum size {window.minimumSizeHint().toTuple()} exceeds "
                                f"the screen {area.size().toTuple()}")
        for widget in buttons:
            label = _label(widget)
            if not widget.isVisible():
                problems.append(f"{label}: not visible")
                continue
            seen = widget.visibleRegion().boundingRect()
            if seen != widget.rect():
                problems.append(f"{label}: clipped, {_rect(seen)} of {_rect(widget.rect())}")
            top_left = widget.mapToGlobal(QPoint(0, 0))
            on_screen = QRect(top_left, widget.size())
            if not area.contains(on_screen):
                problems.append(f"{label}: at {_rect(on_screen)}, outside {_rect(area)}")
            problems.extend(_text_fits(widget))
        for text in problems:
            self.problems.append(f"{name}: {text}")
        self.steps.append({"step": name, "screenshot": shot.name, "problems": problems,
                           "at_s": round(time.monotonic() - self.started, 1)})

    # --- the day ----------------------------------------------------------------------------------

    def run(self) -> Steps:
        from inspector_app.ui.context import AppSettings
        from inspector_app.ui.shell import ShellWindow

        data_dir = self.home / "data"
        shell = ShellWindow(data_dir=data_dir, settings=AppSettings(demo_vehicles=30))
        self.shell = shell
        shell.place_on_screen()
        shell.show()
        yield from self.wait(lambda: shell.pages.currentWidget() is shell.first_run, "the first-run page")
        yield from self.activate()
        yield from self.first_run()
        facts = self.facts(data_dir)
        yield from self.login("1001")
        yield from self.check("hoje", [*self.nav_buttons(), shell.main.today.new_button, shell.lock_button, shell.logout_button])
        for key in ("retention", "history", "settings", "sync"):
            yield from self.click(shell.main.nav_buttons[key])
            yield from self.idle()
            yield from self.check(f"pagina-{key}", self.nav_buttons())
        if self.short:  # without a window manager: the pages and the first step
            yield from self.click(shell.main.nav_buttons["inspection"])
            yield from self.idle()
            yield from self.check("local", self.wizard_buttons())
            return
        auto_number = yield from self.df_inspection(facts)
        yield from self.logout()
        yield from self.login("1003")
        yield from self.desk_release()
        yield from self.logout()
        yield from self.login("1004")
        yield from self.history_reprint_and_cancel(auto_number)
        yield from self.logout()
        yield from self.login("2001")
        yield from self.jf_vistoria(facts)

    def activate(self) -> Steps:
        if self.wm:
            yield from self.wait(lambda: self.shell.isActiveWindow() or self._raise(), "the window to "
                      "become active", timeout=10)

    def _raise(self) -> bool:
        self.shell.raise_()
        self.shell.activateWindow()
        return self.shell.isActiveWindow()

    def nav_buttons(self) -> list[Any]:
        return list(self.shell.main.nav_buttons.values())

    def facts(self, data_dir: Path) -> dict[str, str]:
        from inspector_app.store import open_store, reference

        store = open_store(data_dir)
        try:
            found: dict[str, str] = {}
            for pack in ("DF_STPCR", "JF_1972"):
                for (plate,) in store.conn.execute(
                        "SELECT plate FROM ref_vehicles WHERE pack_id = ? ORDER BY id", [pack]):
                    view = reference.find_vehicle(store, plate)
                    if view is not None and not view.warnings:
                        found[pack] = str(plate)
                        if pack == "DF_STPCR":
                            row = store.conn.execute(
                                "SELECT cpf FROM ref_drivers WHERE holder_id = ? AND "
                                "registered = 1 ORDER BY id", [view.holder.id]).fetchone()
                            if row is None:
                                continue
                            found["cpf"] = str(row[0])
                        break
            return found
        finally:
            store.close()

    def first_run(self) -> Steps:
        page = self.shell.first_run
        yield from self.check("primeiro-uso", [page.demo_button, page.enrol_button])
        yield from self.click(page.demo_button)
        yield from self.wait(lambda: self.shell.pages.currentWidget() is self.shell.login,
                  "the demo registry and the login page", timeout=60)

    def login(self, matricula: str) -> Steps:
        page = self.shell.login
        yield from self.wait(lambda: self.shell.pages.currentWidget() is page, "the login page")
        yield from self.pump(0.1)
        yield from self.click_and_type(page.matricula, matricula)
        yield from self.key("Tab")
        yield from self.type(f"demo{matricula}")
        if self.count < 3:
            yield from self.check("login", [page.login_button])
        yield from self.key("Return")
        yield from self.wait(lambda: self.shell.pages.currentWidget() is self.shell.main,
                  f"login of {matricula}")
        yield from self.idle()

    def logout(self) -> Steps:
        yield from self.click(self.shell.logout_button)
        yield from self.wait(lambda: self.shell.pages.currentWidget() is self.shell.login, "logout")

    def wizard_buttons(self) -> list[Any]:
        wizard = self.shell.main.wizard
        return [b for b in (wizard.back_button, wizard.abandon_button, wizard.next_button)
                if not b.isHidden()]

    def advance(self, to_step: int, what: str) -> Steps:
        wizard = self.shell.main.wizard
        yield from self.click(wizard.next_button)
        yield from self.idle()
        yield from self.wait(lambda: wizard.step >= to_step, f"{what} ({wizard.banner.text()})")

    def df_inspection(self, facts: dict[str, str]) -> Steps:
        shell = self.shell
        yield from self.click(shell.main.nav_buttons["inspection"])
        yield from self.idle()
        wizard = shell.main.wizard
        place = wizard.place_step
        yield from self.choose(place.pack, "DF_STPCR")
        yield from self.choose(place.location, "ponto_controle")
        yield from self.click_and_type(place.place, CONTROL_POINT)
        yield from self.check("local", self.wizard_buttons())
        yield from self.advance(1, "the vehicle step")
        yield from self.click_and_type(wizard.vehicle_step.plate, facts["DF_STPCR"])
        yield from self.check("veiculo", self.wizard_buttons())
        yield from self.advance(2, "the driver step")
        yield from self.click_and_type(wizard.driver_step.cpf, facts["cpf"])
        yield from self.check("condutor", self.wizard_buttons())
        yield from self.advance(3, "the checklist")
        rows = wizard.checklist.rows
        yield from self.show_item(wizard, "DF-SEG-01")
        yield from self.click(rows["DF-SEG-01"].buttons["fail"])
        yield from self.click(rows["DF-SEG-02"].buttons["fail"])
        yield from self.click_and_type(rows["DF-SEG-02"].note, "Extintor ausente no suporte.")
        yield from self.key("Tab")
        yield from self.idle()
        yield from self.reveal(rows["DF-SEG-02"])
        yield from self.check("checklist", self.wizard_buttons()
                   + [rows["DF-SEG-02"].buttons[k] for k in ("ok", "fail", "na")])
        yield from self.checklist_date_items(wizard)
        yield from self.advance(4, "the result step")
        result = wizard.result
        removers = [b for b in result.findChildren(type(wizard.next_button))
                    if b.text().replace("&", "").startswith("Retirar") and b.isVisible()]
        table = result.table
        if table.horizontalScrollBar().maximum() > 0:
            self.problems.append("resultado: the infractions table scrolls sideways")
        yield from self.reveal(removers[-1])
        yield from self.check("resultado", self.wizard_buttons() + removers)
        yield from self.click_and_type(result.narrative, NARRATIVE)
        yield from self.check("resultado-narrativa", self.wizard_buttons())
        yield from self.advance(5, "the signatures")
        signatures = wizard.signatures
        yield from self.draw_signature(signatures.agent.pad)
        yield from self.click(signatures.driver.refused_radio)
        yield from self.click_and_type(signatures.driver.note, REFUSAL)
        yield from self.check("assinaturas", self.wizard_buttons())
        yield from self.advance(6, "the seal step")
        yield from self.check("conferencia-selar", self.wizard_buttons())
        yield from self.advance(7, "the sealed documents")
        panel = wizard.print_step.panel
        yield from self.wait(lambda: panel.current is not None, "the PDF preview")
        yield from self.check("impressao", [*self.wizard_buttons(), panel.print_button, panel.save_button])
        number = panel.current.number
        yield from self.save_pdf(panel, "auto-salvo.pdf")
        yield from self.print_pdf(panel, "auto-impresso.pdf")
        yield from self.click(wizard.next_button)  # Concluir
        yield from self.wait(lambda: shell.main.wizard is None, "the wizard to close")
        yield from self.idle()
        return number

    def checklist_date_items(self, wizard: Any) -> Steps:
        """Answer a date item as a person would, with its C/N/A buttons in full view: click
        its date field and type the date (date items start empty; a text field takes no
        wheel)."""
        import datetime as dt

        from inspector_app.ui.fields import DateField

        dated = [i for i, r in wizard.checklist.rows.items()
                 if isinstance(r.value_edit, DateField)]
        if not dated:
            self.problems.append("checklist: the pack has no date item")
            return
        # The policy's end of validity: a date ahead is what "conforme" means.
        item_id = next((i for i in dated if "vigência" in
                        wizard.checklist.rows[i].date_label.text()), dated[0])
        row = wizard.checklist.rows[item_id]
        yield from self.show_item(wizard, item_id)
        yield from self.click(row.buttons["ok"])
        yield from self.idle()
        edit = row.value_edit.edit
        ahead = dt.date.today() + dt.timedelta(days=180)
        yield from self.click_and_type(edit, ahead.strftime("%d/%m/%Y"))
        yield from self.key("Tab")
        yield from self.pump(0.1)
        if row.value_edit.error():
            self.problems.append(f"checklist: {item_id} refused a typed date: "
                                 f"{row.value_edit.error()}")
        yield from self.reveal(row)
        yield from self.check("checklist-data", self.wizard_buttons()
                   + [row.buttons[k] for k in ("ok", "fail", "na")])

    def show_item(self, wizard: Any, item_id: str) -> Steps:
        """Click the item's section in the list of sections (and scroll to the item)."""
        row = wizard.checklist.rows[item_id]
        section = next(i for i, rows in enumerate(wizard.checklist._section_rows)
                       if row in rows)
        sections = wizard.checklist.sections
        if sections.currentRow() != section:
            sections.scrollToItem(sections.item(section))
            yield from self.pump(0.05)
            yield from self.click(sections.viewport(), "the section list",
                       where=sections.visualItemRect(sections.item(section)).center())
        yield from self.wait(row.isVisible, f"item {item_id}")
        yield from self.reveal(row)

    def save_pdf(self, panel: Any, name: str) -> Steps:
        """Salvar PDF…: Qt's file dialog, in Portuguese, opens in the documents folder."""
        from PySide6.QtWidgets import QApplication, QFileDialog

        yield from self.click(panel.save_button)
        dialog = yield from self.wait(lambda: next((w for w in QApplication.topLevelWidgets()
                                         if isinstance(w, QFileDialog) and w.isVisible()),
                                        None), "the save dialog")
        yield from self.pump(0.3)
        documents = self.home / "Documents"
        if Path(dialog.directory().absolutePath()).resolve() != documents.resolve():
            self.problems.append(f"save dialog opened in {dialog.directory().absolutePath()}, "
                                 f"not in {documents}")
        texts = " ".join(b.text() for b in dialog.findChildren(type(panel.save_button)))
        if "Salvar" not in texts and "Gravar" not in texts:
            self.problems.append(f"save dialog not in Portuguese: {texts!r}")
        yield from self.check("salvar-pdf", [], window=dialog)
        yield from self.key("ctrl+a")
        yield from self.type(str(documents / name))
        yield from self.key("Return")
        yield from self.wait(lambda: (documents / name).exists() and "PDF salvo" in panel.banner.text(),
                  "the saved PDF")

    def print_pdf(self, panel: Any, name: str) -> Steps:
        """Imprimir…: Qt's print dialog prints to a PDF file (no printer in the test)."""
        from PySide6.QtPrintSupport import QPrintDialog
        from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLineEdit

        target = self.home / name
        yield from self.click(panel.print_button)
        dialog = yield from self.wait(lambda: next((w for w in QApplication.topLevelWidgets()
                                         if isinstance(w, QPrintDialog) and w.isVisible()),
                                        None), "the print dialog")
        yield from self.pump(0.3)
        box = dialog.findChild(QDialogButtonBox)
        ok = box.button(QDialogButtonBox.StandardButton.Ok) if box else None
        yield from self.check("imprimir", [ok] if ok else [], window=dialog)
        fields = [f for f in dialog.findChildren(QLineEdit) if f.isVisible() and f.isEnabled()
                  and f.objectName() == "filename"]
        if fields:
            yield from self.click_and_type(fields[0], str(target))
        if ok is None:
            raise StepFailed("the print dialog has no Imprimir button")
        yield from self.click(ok)
        yield from self.idle()
        yield from self.wait(lambda: target.exists() or "Impresso" in panel.banner.text(),
                  f"the print ({panel.banner.text()})")

    def desk_release(self) -> Steps:
        shell = self.shell
        yield from self.click(shell.main.nav_buttons["retention"])
        yield from self.idle()
        desk = shell.main.retention
        yield from self.wait(lambda: desk.model.rowCount() > 0, "the held vehicle")
        grounds = desk.model.text(0, 3)
        column = desk.table.columnWidth(3)
        if desk.table.fontMetrics().horizontalAdvance(grounds.split("\n")[0]) > column \
                and not desk.table.wordWrap():
            self.problems.append("patio: the grounds column cuts its text")
        yield from self.check("patio", [*self.nav_buttons(), desk.release_button, desk.refresh_button])
        yield from self.click(desk.release_button)
        dialog = yield from self.wait(lambda: desk.release_dialog if desk.release_dialog is not None
                           and desk.release_dialog.isVisible() else None,
                           "the release dialog")
        yield from self.pump(0.3)
        yield from self.check("liberacao", [dialog.release_button, dialog.cancel_button], window=dialog)
        yield from self.wheel_over_deadline(dialog)
        yield from self.click(dialog.fault_fixed)
        items = dialog.items
        for index in range(items.count()):
            item = items.item(index)
            items.scrollToItem(item)
            rect = items.visualItemRect(item)
            yield from self.click(items.viewport(), f"item {item.text()}", where=rect.center())
            yield from self.key("space")
        # Who receives the vehicle, their signature and the releasing agent's (art. 38).
        yield from self.click_and_type(dialog.receiver.name, "Roberto Alves Pereira")
        yield from self.click_and_type(dialog.receiver.cpf, "529.982.247-25")
        yield from self.click_and_type(dialog.receiver.document, "CNH 01234567890")
        yield from self.draw_signature(dialog.receiver_signature.pad)
        yield from self.draw_signature(dialog.agent_signature.pad)
        yield from self.check("liberacao-marcada", [dialog.release_button, dialog.cancel_button],
                   window=dialog)
        yield from self.click(dialog.release_button)
        yield from self.idle()
        yield from self.wait(lambda: not dialog.isVisible(), f"the release ({dialog.banner.text()})")
        yield from self.wait(lambda: desk.panel.current is not None, "the termo de liberação")
        yield from self.check("liberado", [*self.nav_buttons(), desk.panel.print_button, desk.panel.save_button])

    def wheel_over_deadline(self, dialog: Any) -> Steps:
        """The wheel over "Prazo para o reparo" (not focused) scrolls the dialog and leaves
        the date as it was."""
        from PySide6.QtWidgets import QScrollArea

        yield from self.click(dialog.to_workshop)
        edit = dialog.workshop_deadline
        yield from self.wait(edit.isEnabled, "the deadline field to be enabled")
        scroll = next(a for a in dialog.findChildren(QScrollArea) if a.isAncestorOf(edit))
        yield from self.reveal(edit)
        bar = scroll.verticalScrollBar()
        wheel = "5" if bar.value() < bar.maximum() else "4"  # down, or up at the bottom
        before, position = edit.date(), bar.value()
        if edit.visibleRegion().isEmpty():
            self.problems.append("liberacao: the deadline field is out of view")
        else:
            x, y = self.point(edit)
            yield from self.xdo("mousemove", str(x), str(y))
            yield from self.xdo("click", "--repeat", "3", "--delay", "30", wheel)
            yield from self.pump(0.1)
            if edit.date() != before:
                self.problems.append("liberacao: the wheel changed the repair deadline "
                                     f"from {before.toString('dd/MM/yyyy')} to "
                                     f"{edit.date().toString('dd/MM/yyyy')}")
            if bar.maximum() > 0 and bar.value() == position:
                self.problems.append("liberacao: the wheel did not scroll the dialog")
        yield from self.click(dialog.to_workshop)  # untick: released for the fixed fault

    def history_reprint_and_cancel(self, number: str) -> Steps:
        from PySide6.QtWidgets import QApplication, QDialog

        shell = self.shell
        yield from self.click(shell.main.nav_buttons["history"])
        history = shell.main.history
        yield from self.click_and_type(history.query, number)
        yield from self.key("Return")
        yield from self.idle()
        yield from self.wait(lambda: history.table.rowCount() > 0, "the search result")
        yield from self.wait(lambda: history.panel.current is not None, "the document")
        yield from self.check("historico", [*self.nav_buttons(), history.search_button, history.open_button, history.reprint_button, history.cancel_button, history.panel.print_button])
        yield from self.click(history.reprint_button)
        yield from self.print_dialog_to(self.home / "reimpressao.pdf")
        yield from self.idle()
        yield from self.check("historico-reimpresso", [*self.nav_buttons(), history.reprint_button])
        yield from self.click(history.cancel_button)
        for _ in range(3):  # the reason, then (when asked) the supervisor's password again
            dialog = yield from self.wait(lambda: next((w for w in QApplication.topLevelWidgets()
                                             if isinstance(w, QDialog) and w.isVisible()),
                                            None), "the cancellation dialog", timeout=5)
            yield from self.pump(0.2)
            yield from self.answer_dialog(dialog)
            yield from self.idle()
            if not any(isinstance(w, QDialog) and w.isVisible()
                       for w in QApplication.topLevelWidgets()):
                break
        yield from self.wait(lambda: "cancelado" in history.banner.text().lower(),
                  f"the cancellation ({history.banner.text()})")
        yield from self.check("historico-cancelado", [*self.nav_buttons(), history.reprint_button])

    def answer_dialog(self, dialog: Any) -> Steps:
        from PySide6.QtWidgets import QDialogButtonBox, QLineEdit, QPlainTextEdit, QTextEdit

        buttons = dialog.findChild(QDialogButtonBox)
        ok = buttons.button(QDialogButtonBox.StandardButton.Ok) if buttons else None
        yield from self.check("dialogo-" + type(dialog).__name__.lower(), [ok] if ok else [],
                   window=dialog)
        for field in dialog.findChildren(QLineEdit):
            if field.isVisible() and field.echoMode() == QLineEdit.EchoMode.Password:
                yield from self.click_and_type(field, "demo1004")
        for field in [*dialog.findChildren(QPlainTextEdit), *dialog.findChildren(QTextEdit)]:
            if field.isVisible() and not field.isReadOnly():
                yield from self.click_and_type(field, CANCEL_REASON)
        if ok is None:
            raise StepFailed(f"{type(dialog).__name__} has no confirm button")
        yield from self.click(ok)

    def print_dialog_to(self, target: Path) -> Steps:
        from PySide6.QtPrintSupport import QPrintDialog
        from PySide6.QtWidgets import QApplication, QDialogButtonBox, QLineEdit

        dialog = yield from self.wait(lambda: next((w for w in QApplication.topLevelWidgets()
                                         if isinstance(w, QPrintDialog) and w.isVisible()),
                                        None), "the print dialog")
        yield from self.pump(0.3)
        fields = [f for f in dialog.findChildren(QLineEdit) if f.isVisible() and f.isEnabled()
                  and f.objectName() == "filename"]
        if fields:
            yield from self.click_and_type(fields[0], str(target))
        box = dialog.findChild(QDialogButtonBox)
        yield from self.click(box.button(QDialogButtonBox.StandardButton.Ok))
        yield from self.wait(lambda: not dialog.isVisible(), "the print dialog to close")

    def jf_vistoria(self, facts: dict[str, str]) -> Steps:
        from PySide6.QtCore import QPoint

        shell = self.shell
        yield from self.click(shell.main.nav_buttons["inspection"])
        yield from self.idle()
        wizard = shell.main.wizard
        place = wizard.place_step
        yield from self.choose(place.pack, "JF_1972")
        if not place.vistoria.isChecked():
            yield from self.click(place.vistoria)
        yield from self.choose(place.location, "patio_vistoria")
        yield from self.click_and_type(place.place, "Patio de vistoria da SMU - Benfica")
        yield from self.check("jf-local", self.wizard_buttons())
        yield from self.advance(1, "the vehicle step")
        yield from self.click_and_type(wizard.vehicle_step.plate, facts["JF_1972"])
        yield from self.advance(2, "the driver step")
        if not wizard.driver_step.absent.isChecked():
            yield from self.click(wizard.driver_step.absent)
        yield from self.advance(3, "the checklist")
        checklist = wizard.checklist
        total = len(checklist.rows)
        first = next(iter(checklist.rows.values()))
        yield from self.click(first, "the first item", where=QPoint(8, 8))
        yield from self.key(*(["c"] * total))
        yield from self.idle()
        yield from self.wait(lambda: checklist.answered() == total,
                  f"every item answered ({checklist.answered()}/{total})")
        yield from self.check("jf-checklist", self.wizard_buttons())
        yield from self.advance(4, "the result")
        yield from self.check("jf-resultado", self.wizard_buttons())
        yield from self.advance(5, "the signatures")
        yield from self.draw_signature(wizard.signatures.agent.pad)
        yield from self.advance(6, "the seal step")
        yield from self.advance(7, "the sealed vistoria")
        panel = wizard.print_step.panel
        yield from self.wait(lambda: panel.current is not None, "the PDF preview")
        yield from self.check("jf-impressao", [*self.wizard_buttons(), panel.print_button])
        yield from self.click(wizard.next_button)
        yield from self.wait(lambda: shell.main.wizard is None, "the wizard to close")


def _label(widget: Any) -> str:
    text = widget.text() if hasattr(widget, "text") and callable(widget.text) else ""
    text = str(text).replace("&", "").replace("\n", " ")
    return f"{type(widget).__name__} {text!r}" if text else type(widget).__name__


def _rect(rect: Any) -> str:
    return f"{rect.width()}x{rect.height()}+{rect.x()}+{rect.y()}"


def _text_fits(widget: Any) -> list[str]:
    from PySide6.QtWidgets import QAbstractButton

    if not isinstance(widget, QAbstractButton):
        return []
    from inspector_app.ui.screen_fit import button_text_problem

    problem = button_text_problem(widget)
    return [problem] if problem else []


def drive(app: Any, steps: Steps, timeout: float) -> str | None:
    """Run ``steps`` from a 5 ms timer inside Qt's event loop (nested loops of modal dialogs
    included) until they end; the traceback when they fail or take over ``timeout``."""
    from PySide6.QtCore import QTimer

    outcome: dict[str, str | None] = {"error": None}
    busy = [False]
    deadline = time.monotonic() + timeout

    def tick() -> None:
        if busy[0]:
            return
        busy[0] = True
        try:
            if time.monotonic() > deadline:
                raise StepFailed(f"the walk took more than {timeout:.0f} s")
            next(steps)
        except StopIteration:
            finish()
        except Exception:  # the report carries it
            outcome["error"] = traceback.format_exc()
            finish()
        finally:
            busy[0] = False

    def finish() -> None:
        timer.stop()
        for widget in app.topLevelWidgets():  # modal dialogs left open end their loops
            if widget.isModal() and widget.isVisible():
                widget.close()
        app.exit(0)

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(tick)
    timer.start()
    app.exec()
    timer.stop()
    return outcome["error"]


def start_window_manager(timeout: float = 10.0) -> subprocess.Popen[bytes] | None:
    if shutil.which("openbox") is None:
        return None
    proc = subprocess.Popen(["openbox", "--sm-disable"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        probe = subprocess.run(["xprop", "-root", "_NET_SUPPORTING_WM_CHECK"],
                               capture_output=True, text=True, timeout=5)
        if "window id" in probe.stdout:
            return proc
        time.sleep(0.1)
    proc.kill()
    raise StepFailed("openbox did not start")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--no-wm", action="store_true")
    parser.add_argument("--timeout", type=float, default=120.0)
    args = parser.parse_args(argv)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="inspector-day-"))
    os.environ.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                       "XDG_DATA_HOME": str(home / ".local/share"),
                       "INSPECTOR_DATA_DIR": str(home / "data"), "QT_QPA_PLATFORM": "xcb"})
    os.environ.pop("QT_QPA_PLATFORMTHEME", None)
    (home / "Documents").mkdir()
    wm = None
    report: dict[str, Any] = {"steps": [], "problems": [], "error": None}
    started = time.monotonic()
    try:
        if not args.no_wm:
            wm = start_window_manager()
            if wm is None:
                report["problems"].append("openbox is not installed")
        from PySide6.QtCore import QSettings

        from inspector_app.ui.app import prepare_app

        app = prepare_app(["inspector"])
        QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                          str(home / ".config"))
        walk = Walk(out, home, wm is not None, short=args.no_wm)
        try:
            report["error"] = drive(app, walk.run(), args.timeout)
            if report["error"]:
                drive(app, walk.check("falha", []), 10)
        finally:
            report["steps"] = walk.steps
            report["problems"].extend(walk.problems)
            for window in app.topLevelWidgets():
                window.close()
            app.processEvents()
    finally:
        report["seconds"] = round(time.monotonic() - started, 1)
        (out / "report.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))
        if wm is not None:
            wm.terminate()
            try:
                wm.wait(5)
            except subprocess.TimeoutExpired:
                wm.kill()
        shutil.rmtree(home, ignore_errors=True)
    return 0 if not report["problems"] and not report["error"] else 1


if __name__ == "__main__":
    sys.exit(main())
