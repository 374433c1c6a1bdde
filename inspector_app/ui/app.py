"""Start the desktop app: check for a display, create the QApplication, show the main window.

Caveat: on Linux Qt aborts the process (SIGABRT, no message) when it finds no display, so
``run`` checks the environment before importing PySide6 and returns 2 with a message instead.
"""

from __future__ import annotations

import os
import sys

NO_DISPLAY_MESSAGE = (
    "No display found: set DISPLAY (e.g. run under xvfb-run) or QT_QPA_PLATFORM=offscreen."
)
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")


def has_display(environ: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt can find somewhere to draw. Only Linux (X11/Wayland) can lack one."""
    environ = dict(os.environ) if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return True
    return any(environ.get(name) for name in DISPLAY_VARIABLES)


def run(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; the exit status is the return value."""
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2

    from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator
    from PySide6.QtWidgets import QApplication

    from inspector_app.packs import list_packs
    from inspector_app.ui.packs_window import BASE_POINT_SIZE, PacksWindow

    args = list(sys.argv if argv is None else ["inspector", *argv])
    app = QApplication.instance() or QApplication(args)
    app.setApplicationName("Fiscalização")
    QLocale.setDefault(QLocale(QLocale.Language.Portuguese, QLocale.Country.Brazil))
    # Qt's own texts (context menus, standard buttons) in Portuguese when Qt ships them.
    translator = QTranslator(app)
    if translator.load(
        QLocale(), "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    ):
        app.installTranslator(translator)
    font = app.font()
    font.setPointSize(BASE_POINT_SIZE)
    app.setFont(font)

    window = PacksWindow(list_packs())
    window.show()
    return app.exec()
