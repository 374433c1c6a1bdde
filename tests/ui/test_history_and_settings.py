"""History search by permit holder and date, and the settings screen with "Sobre"."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices
from PySide6.QtPrintSupport import QPrinter
from uikit import click, in_store, login, seal_auto_offline, wait_idle

from inspector_app.packs import list_packs
from inspector_app.store import open_store, reference
from inspector_app.ui import printing
from inspector_app.ui.context import AppSettings, load_settings, save_settings
from inspector_app.ui.history import COLUMNS
from inspector_app.ui.settings import NOT_YET, SYSTEM_PRINTER, validate_hq_url


def other_holders_plate(data_dir: Path, plate: str) -> str:
    """A clean DF_STPCR vehicle of another permit holder than ``plate``'s."""
    store = open_store(data_dir)
    try:
        holder = reference.find_vehicle(store, plate).holder
        rows = store.conn.execute(
            "SELECT plate FROM ref_vehicles WHERE pack_id = 'DF_STPCR' AND holder_id != ? "
            "AND chassis_year >= ? ORDER BY id", [holder.id, dt.date.today().year - 8],
        ).fetchall()
        for (candidate,) in rows:
            view = reference.find_vehicle(store, candidate)
            if view is not None and not view.warnings:
                return str(candidate)
    finally:
        store.close()
    raise AssertionError("no second clean DF_STPCR vehicle in the demo registry")


def formatted(document: str) -> str:
    """A CPF or CNPJ as people type it: 123.456.789-09 / 12.345.678/0001-90."""
    if len(document) == 11:
        return f"{document[:3]}.{document[3:6]}.{document[6:9]}-{document[9:]}"
    return f"{document[:2]}.{document[2:5]}.{document[5:8]}/{document[8:12]}-{document[12:]}"


def search(qtbot, shell, *, text: str = "", holder: str = "", day: dt.date | None = None):
    history = shell.main.history
    history.query.setText(text)
    history.holder.setText(holder)
    history.use_day.setChecked(day is not None)
    if day is not None:
        history.day.set_value(day)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    return [history.table.item(r, 0).text() for r in range(history.table.rowCount())]


# --- history --------------------------------------------------------------------------------------


def test_history_finds_records_by_permit_holder_name_document_or_id_and_by_date(
    qtbot, make_shell, data_dir, demo_facts
):
    first = seal_auto_offline(data_dir, demo_facts.df_plate).of_kind("auto_infracao")
    second_plate = other_holders_plate(data_dir, demo_facts.df_plate)
    second = seal_auto_offline(data_dir, second_plate).of_kind("auto_infracao")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    holder = in_store(qtbot, shell,
                      lambda s: reference.find_vehicle(s, demo_facts.df_plate).holder)
    shell.main.go("history")
    history = shell.main.history
    assert not history.day.isEnabled()  # the date filter is off until its box is ticked

    for typed in (holder.name, formatted(holder.document), holder.id):
        assert search(qtbot, shell, holder=typed) == [first.display_number], typed
    assert history.table.item(0, COLUMNS.index("Permissionário")).text() == holder.name
    assert "Auto de infração" in history.details.toPlainText()

    today = dt.date.today()
    assert search(qtbot, shell, day=today) == [second.display_number, first.display_number]
    assert history.day.isEnabled()
    assert search(qtbot, shell, holder=holder.id, day=today) == [first.display_number]
    assert search(qtbot, shell, text=second_plate, day=today) == [second.display_number]

    # Criteria that exclude each other: nothing, and the message says what was searched.
    assert search(qtbot, shell, text=second_plate, holder=holder.id) == []
    assert history.banner.level == "error"
    assert f"permissionário \"{holder.id}\"" in history.banner.text()
    yesterday = today - dt.timedelta(days=1)
    assert search(qtbot, shell, day=yesterday) == []
    assert f"data do fato {yesterday:%d/%m/%Y}" in history.banner.text()
    assert search(qtbot, shell, holder="Ninguém Com Este Nome") == []
    assert "nome como no cadastro, o CPF/CNPJ ou o código" in history.banner.text()
    assert search(qtbot, shell) == []
    assert history.banner.text().startswith("Digite o número do auto")


# --- settings and "Sobre" -------------------------------------------------------------------------


def test_hq_address_must_be_a_full_http_url():
    assert validate_hq_url("  https://sede.exemplo.gov.br/ ") == "https://sede.exemplo.gov.br"
    assert validate_hq_url("http://10.0.0.5:8080/api") == "http://10.0.0.5:8080/api"
    assert validate_hq_url("") == ""
    for bad in ("sede.exemplo.gov.br", "ftp://sede", "https://", "https://sede:99999",
                "https://sede/?token=1", "https://se de.gov.br"):
        try:
            validate_hq_url(bad)
        except Exception as exc:  # UiError
            assert "Endereço da sede inválido" in str(exc), bad
        else:
            raise AssertionError(f"{bad!r} was accepted")


def test_settings_are_saved_to_the_settings_file_and_applied_at_once(
    qtbot, make_shell, data_dir, demo_facts, settings_file
):
    sealed = seal_auto_offline(data_dir, demo_facts.df_plate).of_kind("auto_infracao")
    shell = make_shell(data_dir, settings=AppSettings())
    login(qtbot, shell, "1001")
    click(qtbot, shell.main.nav_buttons["settings"])
    wait_idle(qtbot, shell)
    page = shell.main.settings
    assert shell.main.stack.currentWidget() is page
    assert page.data_dir.text() == str(data_dir) and page.data_dir.isReadOnly()

    page.hq_url.setText("sede.exemplo.gov.br")
    click(qtbot, page.save_button)
    assert page.banner.level == "error" and "https://" in page.banner.text()
    assert not list(settings_file.rglob("*.ini"))  # nothing was written

    page.hq_url.setText("https://sede.exemplo.gov.br/")
    page.layout_combo.setCurrentIndex(page.layout_combo.findData("80mm"))
    page.idle_minutes.setValue(3)
    assert page.printer_combo.itemText(0) == SYSTEM_PRINTER
    click(qtbot, page.save_button)

    assert page.banner.text() == "Configurações salvas."
    assert [p.name for p in settings_file.rglob("*.ini")] == ["inspector.ini"]
    assert load_settings() == AppSettings(idle_lock_minutes=3.0, layout="80mm", printer="",
                                          hq_url="https://sede.exemplo.gov.br")
    assert shell.ctx.settings.layout == "80mm"
    assert shell.idle.timer.interval() == 3 * 60_000
    # The print panel starts at the new default layout.
    shell.main.go("history")
    shell.main.history.query.setText(sealed.display_number)
    click(qtbot, shell.main.history.search_button)
    wait_idle(qtbot, shell)
    panel = shell.main.history.panel
    assert panel.layout_combo.currentData() == "80mm"
    assert panel.current.layout == "80mm"
    width_mm = panel.document.pagePointSize(0).width() * 25.4 / 72
    assert abs(width_mm - 72) < 1  # the roll's printable width (72 mm of 80 mm paper)


def test_sobre_shows_versions_packs_with_hashes_device_ids_and_the_store(
    qtbot, make_shell, data_dir, demo_facts
):
    from inspector_app import __version__

    seal_auto_offline(data_dir, demo_facts.df_plate)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1004")
    shell.main.go("settings")
    wait_idle(qtbot, shell)
    page = shell.main.settings
    meta = in_store(qtbot, shell, lambda s: (s.meta("device_id"), s.meta("device_key_id"),
                                             str(s.path)))
    assert None not in meta
    assert (page.device_id.text(), page.device_key_id.text(), page.store_path.text()) == meta
    assert __version__ in page.app_version.text()
    assert page.registry.text().startswith("DEMONSTRAÇÃO")
    shown = {page.packs.item(r, 0).text(): (page.packs.item(r, 1).text(),
                                            page.packs.item(r, 3).text())
             for r in range(page.packs.rowCount())}
    assert shown == {p.id: (str(p.version), p.content_hash) for p in list_packs()}


def test_a_new_device_says_its_ids_are_not_generated_yet(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    ids = in_store(qtbot, shell, lambda s: (s.meta("device_id"), s.meta("device_key_id")))
    shell.main.go("settings")
    wait_idle(qtbot, shell)
    page = shell.main.settings
    assert page.device_key_id.text() == (ids[1] or NOT_YET)
    assert page.device_id.text() == (ids[0] or NOT_YET)


class UrlCatcher(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def open(self, url: QUrl) -> None:
        self.urls.append(url)


def test_abrir_pasta_hands_the_data_folder_to_the_system_file_manager(qtbot, make_shell,
                                                                      data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("settings")
    wait_idle(qtbot, shell)
    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "open")
    try:
        click(qtbot, shell.main.settings.open_folder_button)
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert catcher.urls == [QUrl.fromLocalFile(str(data_dir))]


def test_a_saved_printer_that_is_gone_is_listed_and_printing_uses_the_system_default(
    qtbot, make_shell, data_dir
):
    save_settings(AppSettings(printer="Térmica do balcão"))
    shell = make_shell(data_dir)  # reads the settings file
    assert shell.ctx.settings.printer == "Térmica do balcão"
    login(qtbot, shell, "1001")
    shell.main.go("settings")
    wait_idle(qtbot, shell)
    combo = shell.main.settings.printer_combo
    assert combo.currentText() == "Térmica do balcão (não encontrada)"
    assert combo.itemText(0) == SYSTEM_PRINTER and combo.itemData(0) == ""
    printer = QPrinter()
    before = printer.printerName()
    assert printing.apply_default_printer(printer, "Térmica do balcão") is False
    assert printer.printerName() == before
