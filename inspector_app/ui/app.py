"""Start the desktop app: check for a display, create the QApplication, show the main window.

The main window (``ui.shell.ShellWindow``) opens the store in ``default_data_dir()``
(``INSPECTOR_DATA_DIR`` overrides it) and offers demo mode on first run.

Caveat: on Linux Qt aborts the process (SIGABRT, no message) when it finds no display, so
``run`` checks the environment before importing PySide6 and returns 2 with a message instead.
"""

from __future__ import annotations

import ctypes
import os
import re
import sys
from pathlib import Path
from typing import Any

NO_DISPLAY_MESSAGE = (
    "No display found: set DISPLAY (e.g. run under xvfb-run) or QT_QPA_PLATFORM=offscreen."
)
DISPLAY_VARIABLES = ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
# What Qt's X11 (xcb) platform plugin needs from Debian/Ubuntu beyond the offscreen set.
XCB_PACKAGES = (
    "libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 "
    "libxcb-render-util0 libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0"
)


def has_display(environ: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt can find somewhere to draw. Only Linux (X11/Wayland) can lack one."""
    environ = dict(os.environ) if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return True
    return any(environ.get(name) for name in DISPLAY_VARIABLES)


def uses_xcb(environ: dict[str, str] | None = None, platform: str | None = None) -> bool:
    """Whether Qt will pick its X11 (xcb) platform plugin."""
    environ = dict(os.environ) if environ is None else environ
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(";")[0].split(":")[0] == "xcb"
    return bool(environ.get("DISPLAY")) and not environ.get("WAYLAND_DISPLAY")


def missing_xcb_libraries(plugin: Path) -> list[str]:
    """System libraries Qt's xcb plugin cannot find; empty when it will load.

    Caveat: the dynamic loader names only the first missing dependency of the plugin.
    libxcb-cursor is loaded by Qt at run time, so it is looked up separately.
    """
    missing = []
    try:
        ctypes.CDLL(str(plugin))
    except OSError as exc:
        found = re.search(r"([\w.+-]+\.so[\w.]*): cannot open shared object", str(exc))
        missing.append(found.group(1) if found else str(exc))
    try:
        ctypes.CDLL("libxcb-cursor.so.0")
    except OSError:
        missing.append("libxcb-cursor.so.0")
    return missing


def install_pt_br(app: Any) -> Any:
    """Brazilian number and date formats, and Qt's own texts (standard buttons, context
    menus) in Portuguese from ``qtbase_pt_BR.qm``; returns the installed ``QTranslator``, or
    None when Qt ships no such file.

    Caveat: the translations folder is Qt's (``QLibraryInfo``), inside PySide6 from source and
    inside the bundle's ``_internal/PySide6`` from PyInstaller.
    """
    from PySide6.QtCore import QLibraryInfo, QLocale, QTranslator

    QLocale.setDefault(QLocale(QLocale.Language.Portuguese, QLocale.Country.Brazil))
    translator = QTranslator(app)
    loaded = translator.load(
        QLocale(), "qtbase", "_", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)
    )
    if not loaded:
        return None
    app.installTranslator(translator)
    return translator


def run(argv: list[str] | None = None) -> int:
    """Open the main window and run the event loop; the exit status is the return value."""
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2
    if uses_xcb():
        # Qt aborts when the xcb plugin cannot load; say which libraries are missing instead.
        import PySide6

        plugin = Path(PySide6.__file__).parent / "Qt/plugins/platforms/libqxcb.so"
        missing = missing_xcb_libraries(plugin) if plugin.exists() else []
        if missing:
            print(
                f"Qt cannot open the X11 display: missing {', '.join(missing)}. "
                f"On Debian/Ubuntu: apt-get install {XCB_PACKAGES}",
                file=sys.stderr,
            )
            return 2

    from inspector_app.store import default_data_dir
    from inspector_app.ui.shell import ShellWindow

    app = prepare_app(list(sys.argv if argv is None else ["inspector", *argv]))
    window = ShellWindow(data_dir=default_data_dir())
    window.place_on_screen()
    window.show()
    return app.exec()


def prepare_app(args: list[str]) -> Any:
    """The QApplication as the desktop app runs it: name, Brazilian Portuguese (Qt's own
    dialogs included), the wheel and dialog guard (``ui.screen_fit``), the base font."""
    from PySide6.QtWidgets import QApplication

    from inspector_app.ui.packs_window import BASE_POINT_SIZE
    from inspector_app.ui.screen_fit import install_screen_guard

    app = QApplication.instance() or QApplication(args)
    app.setApplicationName("Fiscalização")
    install_pt_br(app)
    install_screen_guard(app)  # wheel only on focused fields; dialogs kept on screen
    font = QApplication.font()
    font.setPointSize(BASE_POINT_SIZE)
    QApplication.setFont(font)
    return app
