"""The main window: first run, login and lock, and the inspector's screens behind them.

One window for everything, so locking after inactivity only covers the screens (a half-done
inspection stays where it was) and keyboard focus never jumps between windows. The status
bar always shows online/offline, records pending, last sync and who is logged in. When the
sync worker reports registry changes it applied, the shell emits
``ctx.reference_did_change`` and the open screens reload what they show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QDialog,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from inspector_app.ui import queries
from inspector_app.ui.context import AppContext, AppSettings, load_settings, open_qsettings
from inspector_app.ui.errors import describe_error
from inspector_app.ui.history import HistoryPage
from inspector_app.ui.inspection import InspectionWizard
from inspector_app.ui.login import FirstRunPage, LoginPage
from inspector_app.ui.retention import RetentionDesk
from inspector_app.ui.screen_fit import (
    ScrollingStack,
    fit_to_screen,
    refit_later,
    remember_geometry,
    restore_geometry,
)
from inspector_app.ui.settings import SettingsPage
from inspector_app.ui.sync_screen import EnrolDialog, SyncBridge, SyncPage, format_time
from inspector_app.ui.tasks import TaskManager
from inspector_app.ui.today import TodayPage
from inspector_app.ui.widgets import (
    BASE_POINT_SIZE,
    ROLE_LABELS,
    STYLE_SHEET,
    TOUCH_TARGET_PX,
    Banner,
)

TITLE = "Fiscalização de transporte público"
DEMO_LABEL = "DEMONSTRAÇÃO"
IDLE_MESSAGE = "Sessão bloqueada por inatividade. Digite a senha para continuar."
_INPUT_EVENTS = frozenset({
    QEvent.Type.KeyPress, QEvent.Type.MouseButtonPress, QEvent.Type.MouseMove,
    QEvent.Type.Wheel, QEvent.Type.TouchBegin, QEvent.Type.TouchUpdate,
    QEvent.Type.TabletPress, QEvent.Type.TabletMove,
})


class IdleWatcher(QObject):
    """Fires ``timed_out`` after ``interval_ms`` without keyboard, mouse, touch or pen."""

    timed_out = Signal()

    def __init__(self, interval_ms: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(max(1, interval_ms))
        self.timer.timeout.connect(self.timed_out)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    def start(self) -> None:
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()

    def detach(self) -> None:
        self.stop()
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() in _INPUT_EVENTS and self.timer.isActive():
            self.timer.start()
        return False


class MainArea(QWidget):
    """Navigation on the left, the chosen screen on the right."""

    NAV = (("today", "Hoje", "Ctrl+1"), ("inspection", "Nova inspeção", "Ctrl+2"),
           ("retention", "Retenções", "Ctrl+3"), ("history", "Histórico", "Ctrl+4"),
           ("settings", "Configurações", "Ctrl+5"), ("sync", "Sincronização", "Ctrl+6"))

    def __init__(self, ctx: AppContext, bridge: SyncBridge | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.sync = SyncPage(ctx, bridge or SyncBridge(self))
        self.today = TodayPage(ctx)
        self.retention = RetentionDesk(ctx)
        self.history = HistoryPage(ctx)
        self.settings = SettingsPage(ctx)
        self.wizard: InspectionWizard | None = None
        self.wizard_holder = QStackedWidget()
        self.no_wizard = QLabel("Nenhuma inspeção em andamento.")
        self.wizard_holder.addWidget(self.no_wizard)
        self.packs_window: QWidget | None = None
        self.banner = Banner()

        # Pages scroll (the window never needs more than the screen); the wizard keeps its
        # footer in view and scrolls each step itself.
        self.stack = ScrollingStack()
        self.pages = {"today": self.today, "inspection": self.wizard_holder,
                      "retention": self.retention, "history": self.history,
                      "settings": self.settings, "sync": self.sync}
        for page in self.pages.values():
            self.stack.addWidget(page, scroll=page is not self.wizard_holder)

        self.nav_group = QButtonGroup(self)
        self.nav_buttons: dict[str, QPushButton] = {}
        nav = QVBoxLayout()
        for key, label, shortcut in self.NAV:
            button = QPushButton(f"{label}\n{shortcut}")
            button.setMinimumSize(170, TOUCH_TARGET_PX + 16)
            button.setCheckable(True)
            button.setToolTip(f"{label} ({shortcut})")
            button.setAccessibleName(label)
            button.clicked.connect(lambda _c=False, k=key: self.go(k))
            self.nav_group.addButton(button)
            nav.addWidget(button)
            self.nav_buttons[key] = button
            QShortcut(QKeySequence(shortcut), self).activated.connect(
                lambda k=key: self.go(k))
        nav.addStretch(1)

        self.today.new_inspection_requested.connect(lambda: self.go("inspection"))
        self.today.resume_requested.connect(self.resume_inspection)
        self.settings.packs_requested.connect(self.show_packs)
        ctx.records_did_change.connect(self.today.refresh)

        right = QVBoxLayout()
        right.addWidget(self.banner)
        right.addWidget(self.stack, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)  # the window's margins are enough
        layout.addLayout(nav)
        layout.addLayout(right, 1)

    def reset(self) -> None:
        """A new session: forget the previous user's screens (open work stays on disk)."""
        self._drop_wizard()
        self.banner.clear_message()
        allowed = self.ctx.can("start_inspection")
        button = self.nav_buttons["inspection"]
        button.setEnabled(allowed)
        button.setToolTip("Nova inspeção (Ctrl+2)" if allowed else
                          "Seu perfil não inicia inspeções.")
        self.go("today")

    def go(self, key: str) -> None:
        if key == "inspection":
            if not self.ctx.can("start_inspection"):
                self.banner.error("Seu perfil não inicia inspeções.")
                return
            if self.wizard is None:
                self._new_wizard().start_new()
        self.banner.clear_message()
        self.nav_buttons[key].setChecked(True)
        self.stack.setCurrentWidget(self.pages[key])
        if key == "today":
            self.today.refresh()
            today = self.today
            (today.new_button if today.new_button.isEnabled() else today.refresh_button
             ).setFocus()
        elif key == "retention":
            self.retention.refresh()
        elif key == "history":
            self.history.query.setFocus()
        elif key == "settings":
            self.settings.refresh()
            self.settings.hq_url.setFocus()
        elif key == "sync":
            self.sync.refresh()
            self.sync.sync_button.setFocus()

    def resume_inspection(self, inspection_id: str) -> None:
        if self.wizard is not None and self.wizard.state.inspection_id == inspection_id:
            self.go("inspection")
            return
        self._drop_wizard()
        self._new_wizard().resume(inspection_id)
        self.nav_buttons["inspection"].setChecked(True)
        self.stack.setCurrentWidget(self.wizard_holder)

    def _new_wizard(self) -> InspectionWizard:
        self._drop_wizard()
        wizard = InspectionWizard(self.ctx)
        wizard.did_finish.connect(self._wizard_finished)
        self.wizard_holder.addWidget(wizard)
        self.wizard_holder.setCurrentWidget(wizard)
        self.wizard = wizard
        return wizard

    def _drop_wizard(self) -> None:
        if self.wizard is not None:
            self.wizard_holder.removeWidget(self.wizard)
            self.wizard.deleteLater()
            self.wizard = None
        self.wizard_holder.setCurrentWidget(self.no_wizard)

    def _wizard_finished(self) -> None:
        self._drop_wizard()
        self.go("today")

    def show_packs(self) -> None:
        from inspector_app.packs import list_packs
        from inspector_app.ui.packs_window import PacksWindow

        def loaded(listings: list[Any]) -> None:
            window = PacksWindow(listings)
            window.setWindowTitle("Sobre / pacotes de regulamentação")
            window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
            self.packs_window = window
            window.show()

        self.ctx.tasks.run_store(lambda _store: list_packs(), loaded,
                                 lambda exc: self.banner.error(describe_error(exc)), owner=self)


class ShellWindow(QMainWindow):
    """Loading → first run → login → main area; lock returns to login over the same screens."""

    def __init__(self, *, data_dir: Path | None = None, settings: AppSettings | None = None,
                 idle_lock_ms: int | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tasks = TaskManager(self)
        self.ctx = AppContext(self.tasks, settings or load_settings(), data_dir, self)
        self.setWindowTitle(TITLE)
        self.setStyleSheet(STYLE_SHEET)
        font = self.font()
        font.setPointSize(BASE_POINT_SIZE)
        self.setFont(font)

        self.loading = QLabel("Abrindo o banco de dados…")
        self.loading.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.startup_banner = Banner()
        loading_page = QWidget()
        loading_layout = QVBoxLayout(loading_page)
        loading_layout.addWidget(self.loading, 1)
        loading_layout.addWidget(self.startup_banner)
        self.first_run = FirstRunPage(self.ctx)
        self.login = LoginPage(self.ctx)
        self.sync = SyncBridge(self)
        self.sync.status_changed.connect(self._sync_status)
        self.main = MainArea(self.ctx, self.sync)
        self.main.sync.enrol_requested.connect(self.show_enrol)
        self.first_run.enrol_requested.connect(self.show_enrol)
        self.enrol_dialog: EnrolDialog | None = None
        self._last_success: str | None = None
        self._reference_seen = 0  # SyncStatus.reference_changes already announced
        self.pages = QStackedWidget()
        for page in (loading_page, self.first_run, self.login, self.main):
            self.pages.addWidget(page)
        self.loading_page = loading_page

        self.demo_badge = QLabel(DEMO_LABEL)
        self.demo_badge.setObjectName("demoBadge")
        self.demo_badge.hide()
        self.user_label = QLabel("")
        self.lock_button = QPushButton("&Bloquear (Ctrl+L)")
        self.lock_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.lock_button.clicked.connect(lambda: self.lock(""))
        self.logout_button = QPushButton("Sai&r")
        self.logout_button.setMinimumHeight(TOUCH_TARGET_PX)
        self.logout_button.clicked.connect(self.logout)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 0, 0)
        top.addWidget(self.demo_badge)
        top.addWidget(self.user_label)
        top.addStretch(1)
        top.addWidget(self.lock_button)
        top.addWidget(self.logout_button)
        self.top_bar = QWidget()
        self.top_bar.setLayout(top)
        self._show_session_controls(False)
        central = QWidget()
        column = QVBoxLayout(central)
        column.setContentsMargins(8, 4, 8, 4)
        column.addWidget(self.top_bar)
        column.addWidget(self.pages, 1)
        self.setCentralWidget(central)

        self.online_label = QLabel("● offline")
        self.online_label.setToolTip("A sincronização com a sede chega em uma próxima versão.")
        self.online_label.setStyleSheet("color:#5f6368;")
        self.pending_label = QLabel("Pendentes de envio: —")
        self.last_sync_label = QLabel("Última sincronização: —")
        self.status_user = QLabel("Ninguém conectado")
        self.status_demo = QLabel(DEMO_LABEL)
        self.status_demo.setStyleSheet("color:#b3261e; font-weight:bold;")
        self.status_demo.hide()
        bar = self.statusBar()
        for widget in (self.status_demo, self.online_label, self.pending_label,
                       self.last_sync_label, self.status_user):
            bar.addPermanentWidget(widget)

        self._idle_lock_ms = idle_lock_ms  # tests shorten the lock; settings then leave it
        self.idle = IdleWatcher(self._idle_interval(), self)
        self.idle.timed_out.connect(lambda: self.lock(IDLE_MESSAGE))
        QShortcut(QKeySequence("Ctrl+L"), self).activated.connect(lambda: self.lock(""))

        self.first_run.demo_did_load.connect(self._demo_loaded)
        self.login.did_login.connect(self._logged_in)
        self.tasks.task_did_fail.connect(self._task_failed)
        self.ctx.records_did_change.connect(self.refresh_status)
        self.ctx.records_did_change.connect(self.sync.wake)  # sealed: send it now
        self.ctx.settings_did_change.connect(
            lambda: self.idle.timer.setInterval(self._idle_interval()))
        self.main.today.snapshot_did_load.connect(
            lambda snap: self._set_pending(snap.pending))
        self.resize(1280, 860)  # ``place_on_screen`` fits it to the screen it opens on
        self.pages.setCurrentWidget(self.loading_page)
        self.tasks.open_store(data_dir, self._store_opened, self._store_failed, owner=self)

    def _idle_interval(self) -> int:
        if self._idle_lock_ms is not None:
            return max(1, self._idle_lock_ms)
        return max(1, int(self.ctx.settings.idle_lock_minutes * 60_000))

    # --- start-up ---------------------------------------------------------------------------------

    def _store_opened(self, _none: object) -> None:
        def read(store: Any) -> dict[str, Any]:
            from inspector_app.store.reference import counts

            return {"inspectors": counts(store)["inspectors"],
                    "demo": store.meta("registry_source") == "demo",
                    "enrolled": bool(store.meta("hq_url"))}

        self.tasks.run_store(read, self._startup, self._store_failed, owner=self)

    def _store_failed(self, exc: BaseException) -> None:
        self.loading.setText("Não foi possível abrir o banco de dados.")
        self.startup_banner.error(describe_error(exc))

    def _startup(self, info: dict[str, Any]) -> None:
        self._set_demo(info["demo"])
        if info["enrolled"]:
            self.start_sync()
        if info["inspectors"] == 0:
            self.pages.setCurrentWidget(self.first_run)
            self.first_run.demo_button.setFocus()
        else:
            self.show_login()

    def _demo_loaded(self) -> None:
        self._set_demo(True)
        self.show_login()

    def _set_demo(self, demo: bool) -> None:
        self.ctx.demo = demo
        self.setWindowTitle(f"{TITLE} – {DEMO_LABEL}" if demo else TITLE)
        self.demo_badge.setVisible(demo)
        self.status_demo.setVisible(demo)

    # --- session ----------------------------------------------------------------------------------

    def _show_session_controls(self, visible: bool) -> None:
        for widget in (self.user_label, self.lock_button, self.logout_button):
            widget.setVisible(visible)

    def show_login(self, *, locked_for: str | None = None, reason: str = "") -> None:
        self._show_session_controls(False)
        self.login.prepare(locked_for=locked_for, demo=self.ctx.demo, reason=reason)
        self.pages.setCurrentWidget(self.login)

    def _logged_in(self, session: Any) -> None:
        previous = self.ctx.session
        resumed = self.login.locked_for == session.matricula and previous is not None \
            and previous.matricula == session.matricula
        self.ctx.session = session
        self.ctx.session_did_change.emit()
        role = ROLE_LABELS.get(session.role, session.role)
        self.user_label.setText(f"{session.name} – {role} – mat. {session.matricula}")
        self.status_user.setText(f"{session.name} ({role})")
        self._show_session_controls(True)
        if not resumed:
            self.main.reset()
        self.pages.setCurrentWidget(self.main)
        self.refresh_status()
        self.idle.start()

    def lock(self, reason: str) -> None:
        """Cover the screens until the password is typed again (work stays as it was)."""
        session = self.ctx.session
        if session is None or self.pages.currentWidget() is not self.main:
            return
        self.idle.stop()
        for dialog in self.findChildren(QDialog):
            if dialog.isVisible():
                dialog.reject()
        self.show_login(locked_for=session.matricula, reason=reason)

    def logout(self) -> None:
        self.idle.stop()
        self.ctx.session = None
        self.ctx.session_did_change.emit()
        self.status_user.setText("Ninguém conectado")
        self.show_login()

    # --- status bar -------------------------------------------------------------------------------

    def refresh_status(self) -> None:
        self.tasks.run_store(queries.pending_sync_count, self._set_pending,
                             self._task_failed, owner=self)

    def _set_pending(self, count: int) -> None:
        self.pending_label.setText(f"Pendentes de envio: {count}")

    # --- sync with HQ -----------------------------------------------------------------------------

    def start_sync(self) -> None:
        """Start the background sync worker (its own store connection, its own thread)."""
        from inspector_app.store import open_store

        data_dir = self.ctx.data_dir
        self.online_label.setText("● verificando")
        self.online_label.setToolTip("Verificando a conexão com a sede…")
        if not self.sync.running:
            self._reference_seen = 0  # a new worker counts from zero
        self.sync.start(lambda: open_store(data_dir))
        self.main.sync.show_status(None)

    def show_enrol(self) -> None:
        if self.sync.running:
            return
        dialog = EnrolDialog(self.ctx, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.did_enrol.connect(self._enrolled)
        self.enrol_dialog = dialog
        dialog.show()
        dialog.url.setFocus()

    def _enrolled(self, result: Any) -> None:
        self.statusBar().showMessage(
            f"Dispositivo cadastrado na sede ({result.hq_url}); numeração {result.series} "
            f"{result.first}–{result.last}.", 15_000)
        self.start_sync()
        self.refresh_status()
        self.reference_changed()  # the device now holds HQ's number range

    def _sync_status(self, status: Any) -> None:
        if status.online is None:
            text, color = "● verificando", "#5f6368"
        elif status.online:
            text, color = "● online", "#1e8e3e"
        else:
            text, color = "● offline", "#b3261e"
        self.online_label.setText(text)
        self.online_label.setStyleSheet(f"color:{color};")
        tip = f"Último erro: {status.last_error}" if status.last_error else \
            "Sincronização com a sede sem erros."
        self.online_label.setToolTip(tip)
        self.pending_label.setText(f"Pendentes de envio: {status.pending}")
        self.pending_label.setToolTip(tip)
        self.last_sync_label.setText(f"Última sincronização: {format_time(status.last_success)}")
        synced = bool(status.last_success) and status.last_success != self._last_success
        if synced:
            self._last_success = status.last_success
        if status.reference_changes > self._reference_seen:
            self._reference_seen = status.reference_changes
            self.reference_changed()
        elif synced and self.pages.currentWidget() is self.main:
            self.main.today.refresh()  # records delivered: the "aguardando envio" alert

    def reference_changed(self) -> None:
        """The registry or the number ranges changed under the open screens (the sync
        worker applied pulled changes on its own store connection, or enrolment added a
        range): tell every screen, on the GUI thread, so each reloads what it shows
        through the store worker (``ctx.reference_did_change``). The registry may also
        bring the first inspectors to a device still on the first-run page."""
        self.ctx.reference_did_change.emit()
        if self.pages.currentWidget() is self.first_run:
            self.tasks.run_store(self._store_opened_read, self._registry_arrived,
                                 self._task_failed, owner=self)

    @staticmethod
    def _store_opened_read(store: Any) -> int:
        from inspector_app.store.reference import counts

        return int(counts(store)["inspectors"])

    def _registry_arrived(self, inspectors: int) -> None:
        if inspectors and self.pages.currentWidget() is self.first_run:
            self.show_login()

    def _task_failed(self, exc: BaseException) -> None:
        self.statusBar().showMessage(describe_error(exc), 15_000)

    # --- window geometry --------------------------------------------------------------------------

    def place_on_screen(self) -> None:
        """Before the first show: the size and position the user left (when they still fit
        this screen), else the preferred size fitted to the available screen."""
        if not restore_geometry(self, open_qsettings()):
            fit_to_screen(self)
        refit_later(self)

    def closeEvent(self, event: QCloseEvent) -> None:
        remember_geometry(self, open_qsettings())
        self.idle.detach()
        self.sync.stop()
        self.tasks.shutdown()
        super().closeEvent(event)
