"""The packs window (the "Sobre / pacotes" screen), and starting the app with and without a display."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from inspector_app.ui import app
from inspector_app.ui.packs_window import WINDOW_TITLE, PacksWindow


@dataclass(frozen=True)
class Listing:
    """Stands in for ``inspector_app.packs.PackListing`` (same attributes)."""

    id: str
    version: str
    title: str
    status: str
    organ: str
    content_hash: str
    problems: list[str] = field(default_factory=list)


DF = Listing(
    id="DF_STPCR",
    version="2024.1",
    title="Serviço de Transporte Público Coletivo Rural – Decreto 15.154/1993",
    status="in_force",
    organ="SEMOB-DF",
    content_hash="0123456789abcdef" * 4,
)
JF = Listing(
    id="JF_1972",
    version="1972.1",
    title="Transporte coletivo de Juiz de Fora – Decreto 1.235/1972",
    status="historical",
    organ="Prefeitura de Juiz de Fora",
    content_hash="fedcba9876543210" * 4,
)
BROKEN = Listing(
    id="DF_STPA",
    version="?",
    title="",
    status="in_force",
    organ="",
    content_hash="abc",
    problems=[
        "checklist.toml: items[DF-SEG-02].fail[0]: unknown rule 'DF15154.29.XIIII'",
        "pack.toml: organ: missing",
    ],
)


def test_window_lists_each_pack_with_portuguese_status_and_short_hash(qtbot):
    window = PacksWindow([DF, JF])
    qtbot.addWidget(window)
    window.show()

    assert window.windowTitle() == WINDOW_TITLE
    assert window.table.rowCount() == 2
    assert [window.table.horizontalHeaderItem(c).text() for c in range(7)] == [
        "Pacote",
        "Versão",
        "Título",
        "Situação",
        "Órgão",
        "Hash",
        "Problemas",
    ]
    assert window.cell_text(0, "Pacote") == "DF_STPCR"
    assert window.cell_text(0, "Versão") == "2024.1"
    assert window.cell_text(0, "Título") == DF.title
    assert window.cell_text(0, "Situação") == "em vigor"
    assert window.cell_text(0, "Órgão") == "SEMOB-DF"
    assert window.cell_text(0, "Hash") == "0123456789ab"
    assert window.cell_text(0, "Problemas") == "nenhum"
    assert window.cell_text(1, "Situação") == "histórico"
    assert window.statusBar().currentMessage() == "2 pacotes carregados; nenhum com problemas."


def test_pack_with_problems_shows_every_problem_and_is_counted_in_status_bar(qtbot):
    window = PacksWindow([DF, BROKEN])
    qtbot.addWidget(window)

    shown = window.cell_text(1, "Problemas")
    assert all(problem in shown for problem in BROKEN.problems)
    assert window.statusBar().currentMessage() == "2 pacotes carregados; 1 com problemas."


def test_no_packs_says_so_in_the_status_bar(qtbot):
    window = PacksWindow([])
    qtbot.addWidget(window)

    assert window.table.rowCount() == 0
    assert window.statusBar().currentMessage() == "Nenhum pacote de regulamentação encontrado."


def test_window_uses_a_large_font_and_tab_then_space_on_fechar_closes_it(qtbot):
    window = PacksWindow([DF, JF])
    qtbot.addWidget(window)
    window.show()
    qtbot.waitActive(window)

    assert window.font().pointSize() >= 12
    assert window.close_button.text() == "&Fechar"
    assert window.focusWidget() is window.table
    assert window.table.currentRow() == 0

    qtbot.keyClick(window.table, Qt.Key.Key_Tab)
    assert window.focusWidget() is window.close_button
    qtbot.keyClick(window.close_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: not window.isVisible())


def test_escape_in_the_table_closes_the_window(qtbot):
    window = PacksWindow([DF])
    qtbot.addWidget(window)
    window.show()
    qtbot.waitActive(window)

    qtbot.keyClick(window.table, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: not window.isVisible())


def test_run_opens_the_main_window_on_the_data_folder_and_returns_0_when_closed(
    qtbot, tmp_path, monkeypatch
):
    from PySide6.QtCore import QTimer

    from inspector_app.ui.shell import ShellWindow

    monkeypatch.setenv("INSPECTOR_DATA_DIR", str(tmp_path / "data"))
    seen: list[str] = []

    def close_when_first_run_shows() -> None:
        windows = [w for w in QApplication.topLevelWidgets() if isinstance(w, ShellWindow)]
        if not windows or windows[0].pages.currentWidget() is not windows[0].first_run:
            QTimer.singleShot(20, close_when_first_run_shows)
            return
        for window in windows:
            seen.append(window.first_run.demo_button.text())
            window.close()
            window.deleteLater()

    QTimer.singleShot(0, close_when_first_run_shows)
    assert app.run([]) == 0
    # An empty data folder: the window offers demo mode, and the store was created there.
    assert seen == ["&Modo demonstração"]
    assert (tmp_path / "data" / "inspector.db").exists()


def test_the_about_screen_lists_the_repository_packs(qtbot):
    from inspector_app.packs import list_packs

    expected = [listing.id for listing in list_packs()]
    window = PacksWindow(list_packs())
    qtbot.addWidget(window)
    assert [window.cell_text(r, "Pacote") for r in range(window.table.rowCount())] == expected


def test_run_without_a_display_prints_a_message_and_returns_2_instead_of_aborting():
    env = {k: v for k, v in os.environ.items() if k not in app.DISPLAY_VARIABLES}
    result = subprocess.run(
        [sys.executable, "-c", "from inspector_app.ui.app import run; raise SystemExit(run([]))"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 2, result.stderr  # SIGABRT would be -6
    assert app.NO_DISPLAY_MESSAGE in result.stderr
    assert "core dumped" not in result.stderr.lower()


def test_has_display_needs_one_of_the_display_variables_only_on_linux():
    assert not app.has_display({}, "linux")
    assert app.has_display({"DISPLAY": ":0"}, "linux")
    assert app.has_display({"WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert app.has_display({"QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert app.has_display({}, "win32")
    assert app.has_display({}, "darwin")


def test_uses_xcb_when_the_environment_points_qt_at_x11():
    assert app.uses_xcb({"DISPLAY": ":0"}, "linux")
    assert app.uses_xcb({"QT_QPA_PLATFORM": "xcb"}, "linux")
    assert not app.uses_xcb({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, "linux")
    assert not app.uses_xcb({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, "linux")
    assert not app.uses_xcb({"DISPLAY": ":0"}, "win32")


def test_missing_xcb_libraries_names_the_library_the_loader_could_not_open(tmp_path):
    missing = app.missing_xcb_libraries(tmp_path / "libqxcb-absent.so")

    assert missing[0] == "libqxcb-absent.so"
