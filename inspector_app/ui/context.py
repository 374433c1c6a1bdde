"""What every screen shares: the task manager, the session, settings and app-wide events.

Device settings live in a QSettings INI file in the user scope under ``ORGANISATION`` /
``APPLICATION`` (on Linux ``~/.config/Fiscalizacao/inspector.ini``). Tests point
``QSettings.setPath`` at a temporary folder so they never touch the user's file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal

from inspector_app.services import Session
from inspector_app.ui.tasks import TaskManager

ORGANISATION = "Fiscalizacao"
APPLICATION = "inspector"
LAYOUTS = ("a4", "80mm")
IDLE_LOCK_RANGE = (1, 240)  # minutes the settings screen accepts


@dataclass
class AppSettings:
    """Device settings, read from and saved to the settings screen ("Configurações")."""

    idle_lock_minutes: float = 10.0
    layout: str = "a4"  # default print layout: "a4" or "80mm"
    printer: str = ""  # default printer name; "" = the system's default printer
    hq_url: str = ""  # HQ address (http/https), "" when not configured
    demo_vehicles: int = 200  # size of the demo registry seeded on first run


def open_qsettings() -> QSettings:
    """The device's settings file (INI format, user scope)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANISATION,
                     APPLICATION)


def load_settings(qsettings: QSettings | None = None) -> AppSettings:
    """The saved settings; a missing or unreadable value keeps its default."""
    qs = qsettings or open_qsettings()
    defaults = AppSettings()

    def text(key: str, default: str) -> str:
        value = qs.value(key, default)
        return value if isinstance(value, str) else default

    try:
        minutes = float(qs.value("lock/idle_minutes", defaults.idle_lock_minutes))
    except (TypeError, ValueError):
        minutes = defaults.idle_lock_minutes
    low, high = IDLE_LOCK_RANGE
    layout = text("print/layout", defaults.layout)
    return AppSettings(
        idle_lock_minutes=min(max(minutes, low), high),
        layout=layout if layout in LAYOUTS else defaults.layout,
        printer=text("print/printer", ""),
        hq_url=text("hq/url", ""),
    )


def save_settings(settings: AppSettings, qsettings: QSettings | None = None) -> None:
    """Write the settings the screen edits (``demo_vehicles`` is not a user setting).

    Raises OSError when the file cannot be written."""
    qs = qsettings or open_qsettings()
    qs.setValue("lock/idle_minutes", settings.idle_lock_minutes)
    qs.setValue("print/layout", settings.layout)
    qs.setValue("print/printer", settings.printer)
    qs.setValue("hq/url", settings.hq_url)
    qs.sync()
    if qs.status() != QSettings.Status.NoError:
        raise OSError(f"não foi possível gravar {qs.fileName()}")


class AppContext(QObject):
    """The session, settings and task manager, and the signals screens listen to."""

    records_did_change = Signal()  # something was sealed (day's work, status bar refresh)
    # The registry (ref_* tables) or the number ranges changed under the open screens (a
    # sync pulled changes, or enrolment added a range); emitted on the GUI thread by the
    # shell. Screens that show registry data reload it on the store worker, keeping what
    # the inspector typed or chose.
    reference_did_change = Signal()
    session_did_change = Signal()
    settings_did_change = Signal()  # saved on the settings screen (ctx.settings is current)

    def __init__(self, tasks: TaskManager, settings: AppSettings, data_dir: Path | None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.settings = settings
        self.data_dir = data_dir
        self.session: Session | None = None
        self.demo = False

    def can(self, action: str) -> bool:
        """Whether the logged-in role may do ``action`` (security.login.PERMISSIONS)."""
        from inspector_app.security.login import can

        return self.session is not None and can(self.session.role, action)
