"""The GUI side of sync: enrolment dialog, the background worker driving the status bar,
and the "Sincronização" screen, against a real HQ in a child process on loopback."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from uikit import NARRATIVE, STROKES, click, in_store, login

from inspector_app import services
from inspector_app.store.db import utc_now

SYNC_TESTS = Path(__file__).resolve().parents[1] / "sync"


@pytest.fixture
def hq(tmp_path):
    """A migrated SQLite HQ served by uvicorn in a child process; yields (process, engine)."""
    for folder in (SYNC_TESTS, SYNC_TESTS.parent):
        if str(folder) not in sys.path:
            sys.path.append(str(folder))
    HQProcess = importlib.import_module("hq_process").HQProcess
    free_port = importlib.import_module("hqkit").free_port
    from inspector_app.hq.core.db import make_engine, upgrade

    url = f"sqlite:///{tmp_path / 'hq.db'}"
    engine = make_engine(url)
    upgrade(engine)
    process = HQProcess(url, tmp_path / "hq-blobs", free_port(), idempotent=True)
    process.start()
    try:
        yield process, engine
    finally:
        if process.proc is not None and process.proc.poll() is None:
            process.kill()
        engine.dispose()


def _seal_one(plate: str):
    def job(store):
        session = services.login(store=store, matricula="1001", password="demo1001")
        inspection_id = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal Rural de Planaltina", plate=plate)
        services.record_answer(store=store, inspection_id=inspection_id, item_id="DF-SEG-02",
                               result="fail", note="Extintor ausente.")
        for role in ("agent", "driver"):
            services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                      status="signed", strokes=STROKES)
        return services.seal_inspection(store=store, session=session,
                                        inspection_id=inspection_id, narrative=NARRATIVE)
    return job


def test_enrol_sync_now_and_offline_status(qtbot, make_shell, data_dir, demo_facts, hq):
    from inspector_app.hq.devices import create_enrolment_code

    process, engine = hq
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    assert shell.online_label.text() == "● offline"  # not enrolled: no worker
    assert not shell.sync.running

    click(qtbot, shell.main.nav_buttons["sync"])
    page = shell.main.sync
    assert page.enrol_button.isVisible() and not page.sync_button.isEnabled()
    click(qtbot, page.enrol_button)
    dialog = shell.enrol_dialog
    assert dialog is not None and dialog.isVisible()

    # A wrong code: HQ refuses, the dialog says so in Portuguese and stays open.
    dialog.url.setText(f"http://127.0.0.1:{process.port}")
    dialog.code.setText("codigo-errado")
    click(qtbot, dialog.ok_button)
    qtbot.waitUntil(lambda: dialog.ok_button.isEnabled(), timeout=15_000)
    assert "sede recusou o cadastro" in dialog.banner.text()
    assert not shell.sync.running

    dialog.code.setText(create_enrolment_code(engine, series="AI", range_size=20))
    click(qtbot, dialog.ok_button)
    qtbot.waitUntil(lambda: shell.sync.running, timeout=15_000)
    qtbot.waitUntil(lambda: shell.online_label.text() == "● online", timeout=15_000)

    # Seal one auto through the services, then "Sincronizar agora".
    in_store(qtbot, shell, _seal_one(demo_facts.df_plate))
    started = utc_now()
    assert page.sync_button.isEnabled()
    click(qtbot, page.sync_button)

    def synced() -> bool:
        status = shell.sync.status
        return (status is not None and status.last_attempt is not None
                and status.last_attempt > started and not status.running
                and status.online is True and status.pending == 0)

    qtbot.waitUntil(synced, timeout=20_000)
    assert shell.online_label.text() == "● online"
    assert shell.pending_label.text() == "Pendentes de envio: 0"
    assert shell.last_sync_label.text() != "Última sincronização: —"
    assert "Pendentes de envio: 0" in page.status_label.text()
    from inspector_app.sync import client

    assert in_store(qtbot, shell, client.pending_count) == 0
    assert in_store(qtbot, shell, lambda store: len(client.quarantined(store))) == \
        page.table.rowCount()

    # HQ stops: the status bar shows offline and the error in its tooltip.
    process.kill()
    click(qtbot, page.sync_button)
    qtbot.waitUntil(lambda: shell.online_label.text() == "● offline", timeout=15_000)
    assert "sede inacessível" in shell.online_label.toolTip()
    assert "Último erro" in page.status_label.text()


def test_quarantined_records_are_listed_and_can_be_sent_again(qtbot, make_shell, data_dir,
                                                              demo_facts):
    from inspector_app.sync import client

    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    result = in_store(qtbot, shell, _seal_one(demo_facts.df_plate))
    auto = result.of_kind("auto_infracao")

    def quarantine(store):
        with store.atomic():
            store.conn.execute(
                "UPDATE outbox SET ack_status = 'rejected', last_error = ? WHERE record_id = ?",
                ["número fora da faixa do dispositivo", auto.id])

    in_store(qtbot, shell, quarantine)
    click(qtbot, shell.main.nav_buttons["sync"])
    page = shell.main.sync
    qtbot.waitUntil(lambda: page.table.rowCount() == 1, timeout=15_000)
    assert page.table.item(0, 0).text() == "Auto de infração"
    assert page.table.item(0, 1).text() == in_store(
        qtbot, shell, lambda store: client.quarantined(store)[0].number)
    assert "número fora da faixa" in page.table.item(0, 2).text()

    def hq_reason(store):  # HQ's answer: the machine word never reaches the screen
        with store.atomic():
            store.conn.execute(
                "UPDATE outbox SET last_error = ? WHERE record_id = ?",
                ["date_out_of_bounds: created_at 2099-01-01T10:00:00+00:00 está mais de 26 h "
                 "à frente do relógio da sede: acerte o relógio do dispositivo", auto.id])

    in_store(qtbot, shell, hq_reason)
    page.refresh()
    qtbot.waitUntil(lambda: "acerte o relógio" in page.table.item(0, 2).text(), timeout=15_000)
    shown = page.table.item(0, 2).text()
    assert shown.startswith("recusado: data fora dos limites aceitos pela sede: created_at")
    assert "date_out_of_bounds" not in shown
    assert page.table.item(0, 2).toolTip().startswith("date_out_of_bounds:")
    click(qtbot, page.requeue_buttons[0])
    qtbot.waitUntil(lambda: page.table.rowCount() == 0, timeout=15_000)
    assert in_store(qtbot, shell, client.quarantined) == []


def test_first_run_enrol_dialog_checks_its_fields(qtbot, make_shell, tmp_path):
    shell = make_shell(tmp_path / "empty")
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.first_run, timeout=15_000)
    click(qtbot, shell.first_run.enrol_button)
    dialog = shell.enrol_dialog
    assert dialog is not None and dialog.isVisible()
    click(qtbot, dialog.ok_button)
    assert dialog.banner.text() == "Informe o endereço da sede."
    dialog.url.setText("http://127.0.0.1:9")
    click(qtbot, dialog.ok_button)
    assert "código de cadastro" in dialog.banner.text()
    dialog.code.setText("abc")
    click(qtbot, dialog.ok_button)
    assert "Código de cadastro inválido" in dialog.banner.text()
    dialog.code.setText("ABCD-1234")
    click(qtbot, dialog.ok_button)
    qtbot.waitUntil(dialog.ok_button.isEnabled, timeout=15_000)
    assert "Não foi possível falar com a sede" in dialog.banner.text()
