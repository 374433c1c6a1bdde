"""Registry changes show in the open screens without a restart, and keep what was typed.

The sync worker applies pulled pages on its own store connection and reports how many
reference changes it applied (``SyncStatus.reference_changes``); the shell turns a larger
count into ``ctx.reference_did_change`` on the GUI thread and every screen that shows
registry data reloads it through the store worker. One test runs the whole path against a
real HQ on loopback; the others change the store the way a pull does (``apply_page`` on a
connection of its own) and hand the window the status the worker would publish.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from uikit import choose, click, in_store, login, seal_auto_offline, start_inspection, wait_idle

from inspector_app.store import open_store
from inspector_app.store.db import utc_now
from inspector_app.sync.client import META_PULL_CURSOR, apply_page
from inspector_app.sync.protocol import REFERENCE_KEYS, Change, PullPage
from inspector_app.sync.worker import SyncStatus
from inspector_app.ui import inspection

PLACE = "Terminal Rural de Planaltina"
RENAMED = "Transportes Renomeados Ltda"


# --- helpers ----------------------------------------------------------------------------------


def digits(text: str) -> str:
    """A CPF as typed, whatever punctuation the screen added after the lookup."""
    return "".join(c for c in text if c.isdigit())


def ref_row(data_dir: Path, table: str, row_id: str) -> dict[str, Any]:
    """One reference row as it is on the device (read on a connection of its own)."""
    store = open_store(data_dir)
    try:
        cursor = store.conn.execute(f"SELECT * FROM ref_{table} WHERE id = ?", [row_id])
        names = [d[0] for d in cursor.description]
        return dict(zip(names, cursor.fetchone(), strict=True))
    finally:
        store.close()


def pull(data_dir: Path, *changes: tuple[str, str, dict[str, Any]]) -> int:
    """Apply one pull page (table, op, row) on a store connection of its own, as the sync
    worker does after fetching it from HQ; returns how many changes it held."""
    store = open_store(data_dir)
    try:
        cursor = int(store.meta(META_PULL_CURSOR) or 0)
        page = PullPage(changes=[
            Change(seq=cursor + n, table=table, op=op, row=row,
                   key="|".join(str(row[c]) for c in REFERENCE_KEYS[table]))
            for n, (table, op, row) in enumerate(changes, start=1)
        ], next_cursor=cursor + len(changes), more=False)
        apply_page(store, page)
    finally:
        store.close()
    return len(changes)


def announce(qtbot, shell, pulled: int) -> None:
    """Publish what the worker publishes after a run that applied ``pulled`` changes (the
    bridge's ``publish`` is the worker's ``on_status``), then wait for the screens."""
    status = replace(shell.sync.status or SyncStatus(), online=True, last_success=utc_now(),
                     running=False)
    status = replace(status, reference_changes=status.reference_changes + pulled)
    with qtbot.waitSignal(shell.ctx.reference_did_change, timeout=5_000):
        shell.sync.publish(status)
    qtbot.waitUntil(lambda: shell.sync.status is status, timeout=5_000)
    wait_idle(qtbot, shell)


def vehicle_of(qtbot, shell, plate: str) -> Any:
    from inspector_app.store import reference

    return in_store(qtbot, shell, lambda store: reference.find_vehicle(store, plate))


def saved_vehicle(qtbot, shell, wizard) -> dict[str, Any]:
    """The vehicle snapshot saved with the wizard's inspection when it started."""
    from inspector_app.store import inspections as repo

    inspection_id = wizard.state.inspection_id
    return in_store(qtbot, shell, lambda store: repo.get_inspection(store, inspection_id).vehicle)


def to_driver_step(qtbot, shell, plate: str, cpf: str) -> Any:
    """A new inspection with the plate and the driver looked up, not started yet."""
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    wizard = shell.main.wizard
    choose(wizard.place_step.pack, "DF_STPCR")
    choose(wizard.place_step.location, "terminal")
    wizard.place_step.place.setText(PLACE)
    click(qtbot, wizard.next_button)
    wizard.vehicle_step.plate.setText(plate)
    click(qtbot, wizard.vehicle_step.lookup_button)
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == inspection.DRIVER, wizard.banner.text()
    wizard.driver_step.cpf.setText(cpf)
    click(qtbot, wizard.driver_step.lookup_button)
    wait_idle(qtbot, shell)
    return wizard


# --- the whole path, with a real HQ -----------------------------------------------------------


def test_a_real_sync_updates_the_open_inspection_and_settings_keeping_what_was_typed(
        qtbot, make_shell, data_dir, demo_facts, tmp_path):
    from hqkit import running_hq

    from inspector_app.hq.numbering import allocate_next
    from inspector_app.hq.registry import import_registry
    from inspector_app.sync.client import enrol

    folder = tmp_path / "hq"
    folder.mkdir()
    with running_hq("sqlite", folder) as hq:
        store = open_store(data_dir)
        try:
            enrolled = enrol(store, hq_url=hq.url, code=hq.enrol_code(series="RF", range_size=30))
        finally:
            store.close()
        shell = make_shell(data_dir)  # enrolled: the sync worker starts with the window
        threads: list[threading.Thread] = []  # where the signal is delivered
        shell.ctx.reference_did_change.connect(
            lambda: threads.append(threading.current_thread()))
        login(qtbot, shell, "1001")
        qtbot.waitUntil(lambda: shell.sync.status is not None
                        and shell.sync.status.last_success is not None, timeout=20_000)
        wait_idle(qtbot, shell)

        shell.main.go("settings")
        wait_idle(qtbot, shell)
        settings = shell.main.settings
        assert settings.numbering.text() == "série RF: 1–30, restam 30 número(s)"
        settings.hq_url.setText("https://rascunho.exemplo.gov.br")  # typed, not saved

        wizard = to_driver_step(qtbot, shell, demo_facts.df_plate, demo_facts.df_driver_cpf)
        view = vehicle_of(qtbot, shell, demo_facts.df_plate)
        holder = view.holder
        assert f"{holder.permit_number} – ativa" in wizard.vehicle_step.card.text()
        assert not wizard.registry_notice.isVisible()

        # At HQ: the holder's permit is suspended and the device gets a second range.
        row = {k: v for k, v in ref_row(data_dir, "permit_holders", holder.id).items()
               if k != "updated_at"}
        path = tmp_path / "suspensao.json"
        path.write_text(json.dumps({"permit_holders": [{**row, "permit_status": "suspensa"}]}),
                        encoding="utf-8")
        assert import_registry(hq.engine, path).ok
        with hq.engine.begin() as conn:
            allocate_next(conn, device_id=enrolled.device_id, series="RF", size=10)

        shell.sync.wake()  # what "Sincronizar agora" does
        qtbot.waitUntil(lambda: "suspensa" in wizard.registry_notice.text(), timeout=20_000)
        wait_idle(qtbot, shell)

        notice = wizard.registry_notice
        assert notice.isVisible() and notice.level == "warning"
        assert notice.text().startswith("Cadastro atualizado pela sede; a consulta foi refeita:")
        assert (f"Permissão {holder.permit_number} agora suspensa: o veículo não está "
                "autorizado a operar.") in notice.text()
        assert f"{holder.permit_number} – suspensa" in wizard.vehicle_step.card.text()
        # Nothing typed was lost and the wizard did not move.
        assert wizard.step == inspection.DRIVER
        assert wizard.place_step.place.text() == PLACE
        assert wizard.vehicle_step.plate.text() == demo_facts.df_plate
        assert digits(wizard.driver_step.cpf.text()) == demo_facts.df_driver_cpf  # kept, punctuated
        # Settings: "Sobre" shows the new range and the registry's date; the unsaved field stays.
        assert settings.numbering.text() == ("série RF: 1–30, restam 30 número(s)\n"
                                             "série RF: 31–40, restam 10 número(s)")
        assert "dados de referência recebidos da sede, atualizados em" in \
            settings.registry.text()
        assert settings.hq_url.text() == "https://rascunho.exemplo.gov.br"
        assert shell.online_label.text() == "● online"
        # The worker applied the pages on its own connection and thread; the screens heard of
        # it on the GUI thread only (and read the store through the store worker).
        assert threads and all(t is threading.main_thread() for t in threads)

        # The inspection starts from the registry as it is now.
        click(qtbot, wizard.next_button)
        wait_idle(qtbot, shell)
        assert wizard.step == inspection.CHECKLIST, wizard.banner.text()
        assert saved_vehicle(qtbot, shell, wizard)["permit_status"] == "suspended"
        shell.close()  # the worker stops before HQ does


# --- the guided inspection --------------------------------------------------------------------


def test_a_vehicle_gone_from_the_registry_is_a_notice_on_a_started_inspection(
        qtbot, make_shell, data_dir, demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place=PLACE, location="terminal",
                              plate=demo_facts.df_plate, driver_cpf=demo_facts.df_driver_cpf)
    rows = wizard.checklist.rows
    click(qtbot, rows["DF-SEG-02"].buttons["fail"])
    rows["DF-SEG-02"].note.setText("Extintor ausente no suporte.")
    rows["DF-SEG-02"].note.editingFinished.emit()
    wait_idle(qtbot, shell)
    summary = wizard.checklist.summary.text()
    view = vehicle_of(qtbot, shell, demo_facts.df_plate)

    announce(qtbot, shell, pull(data_dir, ("vehicles", "delete", {"id": view.id})))

    notice = wizard.registry_notice
    assert notice.isVisible() and notice.level == "warning"
    assert notice.text() == (
        "Cadastro atualizado pela sede durante esta inspeção:\n"
        f"• O veículo {view.plate_display} não consta mais no cadastro.\n"
        "A inspeção mantém o veículo e o condutor gravados no início; confira antes de selar.")
    # The case is not changed silently: answers, note, summary and the saved vehicle stay.
    assert wizard.step == inspection.CHECKLIST
    assert (rows["DF-SEG-02"].result, rows["DF-SEG-02"].saved_state) == ("fail", "saved")
    assert rows["DF-SEG-02"].note.text() == "Extintor ausente no suporte."
    assert wizard.checklist.summary.text() == summary
    saved = saved_vehicle(qtbot, shell, wizard)
    assert saved["registered"] is True and saved["holder_id"] == view.holder.id

    click(qtbot, wizard.next_button)  # the result still evaluates from what was saved
    wait_idle(qtbot, shell)
    assert wizard.step == inspection.RESULT and wizard.result.outcome is not None
    assert notice.isVisible()


def test_a_vehicle_gone_before_the_inspection_starts_is_looked_up_again(
        qtbot, make_shell, data_dir, demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = to_driver_step(qtbot, shell, demo_facts.df_plate, demo_facts.df_driver_cpf)
    view = vehicle_of(qtbot, shell, demo_facts.df_plate)
    assert view.holder.name in wizard.vehicle_step.card.text()

    announce(qtbot, shell, pull(data_dir, ("vehicles", "delete", {"id": view.id})))

    assert wizard.registry_notice.text() == (
        "Cadastro atualizado pela sede; a consulta foi refeita:\n"
        f"• O veículo {view.plate_display} não consta mais no cadastro.\n"
        "• Volte ao passo Veículo para informar os dados do CRLV.")
    assert "Veículo não cadastrado" in wizard.vehicle_step.card.text()
    assert wizard.state.vehicle_view is None
    assert wizard.step == inspection.DRIVER
    assert digits(wizard.driver_step.cpf.text()) == demo_facts.df_driver_cpf  # kept, punctuated
    assert wizard.vehicle_step.plate.text() == demo_facts.df_plate

    click(qtbot, wizard.back_button)  # the CRLV fields are offered, the plate kept
    assert wizard.step == inspection.VEHICLE and wizard.vehicle_step.manual.isVisibleTo(wizard)
    wizard.vehicle_step.make_model.setText("Marcopolo Volare")
    click(qtbot, wizard.vehicle_step.lookup_button)  # a lookup of her own clears the notice
    wait_idle(qtbot, shell)
    assert not wizard.registry_notice.isVisible()
    assert wizard.vehicle_step.make_model.text() == "Marcopolo Volare"


def test_new_history_recalculates_the_result_and_keeps_the_narrative(
        qtbot, make_shell, data_dir, demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place=PLACE, location="terminal",
                              plate=demo_facts.df_plate)
    click(qtbot, wizard.checklist.rows["DF-SEG-02"].buttons["fail"])
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    result = wizard.result
    assert [i.reincidence for i in result.outcome.infractions] == [False]
    rule = result.outcome.infractions[0].rule_id
    points = result.table.item(0, 5).text()
    assert result.table.item(0, 6).text() == "não"
    result.narrative.setPlainText("Extintor ausente; condutor orientado.")
    holder = vehicle_of(qtbot, shell, demo_facts.df_plate).holder

    earlier = (dt.date.today() - dt.timedelta(days=90)).isoformat()
    announce(qtbot, shell, pull(data_dir, ("history", "upsert", {
        "id": "hq-hist-1", "holder_id": holder.id, "plate_key": None, "rule_id": rule,
        "date": earlier, "status": "upheld", "points": None, "auto_number": "SEMOB-000041",
        "updated_at": utc_now()})))

    assert result.table.item(0, 6).text() == "sim"  # reincidence: same rule within 12 months
    assert int(result.table.item(0, 5).text()) == 2 * int(points)
    assert result.narrative.toPlainText() == "Extintor ausente; condutor orientado."
    assert wizard.step == inspection.RESULT
    assert wizard.registry_notice.text() == (
        "Cadastro atualizado pela sede durante esta inspeção:\n"
        "• O resultado foi recalculado com o cadastro atualizado (histórico e parâmetros): "
        "confira as infrações antes de selar.")
    click(qtbot, wizard.next_button)  # seen and confirmed: the notice goes
    wait_idle(qtbot, shell)  # the review the driver reads is built on the store worker
    assert wizard.step == inspection.SIGNATURES
    assert not wizard.registry_notice.isVisible()


# --- history, settings, the day's work --------------------------------------------------------


def test_the_history_runs_its_search_again_when_a_holder_is_renamed(
        qtbot, make_shell, data_dir, demo_facts):
    seal_auto_offline(data_dir, demo_facts.df_plate)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    page = shell.main.history
    page.holder.setText("Renomeados")
    click(qtbot, page.search_button)
    wait_idle(qtbot, shell)
    assert page.table.rowCount() == 0 and "Nenhum registro" in page.banner.text()
    page.query.setText("ainda digitando")  # typed after the search, not searched yet

    holder = vehicle_of(qtbot, shell, demo_facts.df_plate).holder
    row = {**ref_row(data_dir, "permit_holders", holder.id), "name": RENAMED,
           "updated_at": utc_now()}
    announce(qtbot, shell, pull(data_dir, ("permit_holders", "upsert", row)))

    assert page.table.rowCount() == 1 and not page.banner.isVisible()
    assert page.table.item(0, 3).text() == demo_facts.df_plate
    assert "Auto de infração n.º" in page.details.toPlainText()  # the record found is open
    assert (page.holder.text(), page.query.text()) == ("Renomeados", "ainda digitando")


def test_a_new_number_range_shows_in_settings_and_on_the_days_work(
        qtbot, make_shell, data_dir, demo_facts):
    from inspector_app import services

    store = open_store(data_dir)  # two inspections left open earlier today
    try:
        session = services.login(store=store, matricula="1001", password="demo1001")
        for place in (PLACE, "Rodoviária do Plano Piloto"):
            services.start_inspection(store=store, session=session, pack_id="DF_STPCR",
                                      kind="fiscalizacao", location_type="terminal",
                                      place=place, plate=demo_facts.df_plate)
    finally:
        store.close()
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("settings")
    wait_idle(qtbot, shell)
    settings = shell.main.settings
    assert "ZZ" not in settings.numbering.text()
    settings.idle_minutes.setValue(42)  # typed, not saved
    shell.main.go("today")
    wait_idle(qtbot, shell)
    today = shell.main.today
    assert not any("Restam apenas" in text for _level, text in today.snapshot.alerts)
    assert today.open_table.rowCount() == 2
    today.open_table.selectRow(1)  # the inspector's choice, kept across the reload
    chosen = today.snapshot.open_inspections[1].id

    announce(qtbot, shell, pull(data_dir, ("number_ranges", "upsert",
                                           {"id": "r-zz", "series": "ZZ", "first": 1,
                                            "last": 5})))

    assert ("warning", "Restam apenas 5 números de auto neste dispositivo: sincronize com a "
                       "sede.") in today.snapshot.alerts
    assert today.open_table.selectionModel().selectedRows()[0].row() == [
        i.id for i in today.snapshot.open_inspections].index(chosen)
    assert settings.numbering.text() == "série ZZ: 1–5, restam 5 número(s)"
    assert "recebidos da sede" in settings.registry.text()
    assert settings.idle_minutes.value() == 42


def test_a_sync_that_pulled_nothing_does_not_reload_the_screens(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    status = SyncStatus(online=True, last_success=utc_now())
    with qtbot.assertNotEmitted(shell.ctx.reference_did_change, wait=200):
        shell.sync.publish(status)
    assert shell.last_sync_label.text() != "Última sincronização: —"


# --- the notices themselves -------------------------------------------------------------------


def _view(status: str = "active", holder_name: str = "Maria Souza", line: str | None = "0.110"):
    holder = SimpleNamespace(id="h1", name=holder_name, permit_number="P-1",
                             permit_status=status)
    line_view = SimpleNamespace(label=lambda: f"{line} – Rodoviária") if line else None
    return SimpleNamespace(holder=holder, line=line_view)


def test_notices_compare_the_saved_vehicle_with_the_registry_now():
    saved = {"registered": True, "holder_id": "h1", "holder_name": "Maria Souza",
             "permit_number": "P-1", "permit_status": "active", "line_code": "0.110",
             "line_name": "Rodoviária"}
    assert inspection.vehicle_notices("JJK-8448", saved, _view()) == []
    assert inspection.vehicle_notices("JJK-8448", saved, _view("revoked")) == [
        ("Permissão P-1 agora cassada: o veículo não está autorizado a operar.", True)]
    assert inspection.vehicle_notices("JJK-8448", saved, _view(line=None)) == [
        ("Linha agora: não informada.", False)]
    assert inspection.vehicle_notices("JJK-8448", saved, None) == [
        ("O veículo JJK-8448 não consta mais no cadastro.", True)]
    assert inspection.vehicle_notices("JJK-8448", {"registered": False}, None) == []
    assert inspection.vehicle_notices("JJK-8448", None, _view())[0] == (
        "O veículo JJK-8448 agora consta no cadastro.", False)
    driver = {"cpf": "16944060167", "registered": True, "name": "João Lima"}
    assert inspection.driver_notices(driver, None) == [
        ("O condutor João Lima não consta mais no cadastro.", True)]
    assert inspection.driver_notices(driver, SimpleNamespace(registered=False,
                                                             name="João Lima")) == [
        ("O condutor João Lima agora consta como não cadastrado junto ao órgão gestor.", True)]
    assert inspection.driver_notices(driver, SimpleNamespace(registered=True,
                                                             name="João Lima")) == []
