"""What every screen shares: the task manager, the session, settings and app-wide events."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector_app.services import Session
from inspector_app.ui.tasks import TaskManager


@dataclass
class AppSettings:
    """Device settings (later: read from and saved to the settings screen)."""

    idle_lock_minutes: float = 10.0
    layout: str = "a4"  # default print layout: "a4" or "80mm"
    demo_vehicles: int = 200  # size of the demo registry seeded on first run


class AppContext(QObject):
    """The session, settings and task manager, and the signals screens listen to."""

    records_did_change = Signal()  # something was sealed (day's work, status bar refresh)
    session_did_change = Signal()

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
