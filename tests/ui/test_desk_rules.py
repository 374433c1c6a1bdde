"""Issue 11, "legally sound at the desk and at sealing" and "must not mislead": real widgets,
real demo stores (offscreen)."""

from __future__ import annotations

from uikit import click, in_store, login, wait_idle

from inspector_app import services
from inspector_app.store import numbering, open_store
from inspector_app.ui.context import AppSettings


def _alerts(shell) -> list[str]:
    return [text for _level, text in shell.main.today.snapshot.alerts]


# --- numbering ------------------------------------------------------------------------------------


def test_a_fresh_demo_install_has_its_numbering_and_never_says_esgotada(qtbot, make_shell,
                                                                       tmp_path):
    shell = make_shell(tmp_path / "empty", settings=AppSettings(demo_vehicles=12))
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.first_run, timeout=15_000)
    click(qtbot, shell.first_run.demo_button)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=30_000)
    login(qtbot, shell, "1001")
    wait_idle(qtbot, shell)
    assert not any("esgotada" in a.lower() for a in _alerts(shell)), _alerts(shell)
    # The demo ranges exist before the first seal: one series per órgão.
    series = in_store(qtbot, shell, lambda store: sorted(
        (r.jurisdiction, r.series.rsplit("-", 1)[0], r.source)
        for r in numbering.ranges(store)))
    assert series == [("DF", "DEMO-DF", "demo"), ("JF", "DEMO-JF", "demo")]


def test_the_warning_is_shown_when_the_numbers_really_ran_out(tmp_path):
    store = open_store(tmp_path / "d")
    try:
        assert numbering.low_numbers_warning(store) is None  # no range yet: demo at 1st seal
        with store.atomic():
            numbering.add_range(store, series="SEMOB-Z", first=1, last=1)
            numbering.take_next(store, "00000000-0000-0000-0000-000000000001")
        assert numbering.low_numbers_warning(store) == (
            "Numeração esgotada: nenhum auto pode ser emitido até receber nova faixa.")
    finally:
        store.close()


def test_each_organ_keeps_its_own_demo_number_series(data_dir):
    store = open_store(data_dir)
    try:
        services.prepare_demo_numbering(store=store)
        from uikit import STROKES
        numbers = {}
        for matricula, pack, plate in (("1001", "DF_STPCR", "JKL-1234"),
                                       ("2001", "JF_1972", "HMG-1234"),
                                       ("1001", "DF_STPCR", "JKL-1235")):
            session = services.login(store=store, matricula=matricula,
                                     password=f"demo{matricula}")
            iid = services.start_inspection(
                store=store, session=session, pack_id=pack, kind="vistoria",
                location_type="patio_vistoria", place="Pátio", plate=plate)
            services.record_signature(store=store, inspection_id=iid, role="agent",
                                      status="signed", strokes=STROKES)
            result = services.seal_inspection(store=store, session=session, inspection_id=iid)
            numbers.setdefault(pack, []).extend(
                (r.series.rsplit("-", 1)[0], r.number) for r in result.records)
        assert numbers == {"DF_STPCR": [("DEMO-DF", 1), ("DEMO-DF", 2)],
                           "JF_1972": [("DEMO-JF", 1)]}
    finally:
        store.close()


# --- packs by órgão ------------------------------------------------------------------------------


def _place_step(qtbot, shell):
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    return shell.main.wizard.place_step


def test_a_juiz_de_fora_inspector_gets_jf_1972_preselected_and_no_df_checkbox(
        qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "2001")
    step = _place_step(qtbot, shell)
    offered = [step.pack.itemData(i) for i in range(step.pack.count())]
    assert offered == ["JF_1972"]
    assert step.pack.currentData() == "JF_1972"
    assert not step.start_of_operation.isVisible()
    assert not step.start_of_operation.isVisibleTo(step)


def test_a_df_inspector_sees_the_df_packs_and_the_art_37_v_question(qtbot, make_shell,
                                                                    data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    step = _place_step(qtbot, shell)
    offered = [step.pack.itemData(i) for i in range(step.pack.count())]
    assert offered == ["DF_STPA", "DF_STPCR"]
    assert step.start_of_operation.isVisibleTo(step)
    assert step.start_of_operation.text() == "Início da operação do dia (art. 37, V)"


# --- cancellation: re-authentication, CANCELADO on screen and on every reprinted page ------------


def test_the_cancel_dialog_asks_the_supervisors_password_before_confirming(qtbot):
    from inspector_app.ui.dialogs import CancelAutoDialog

    dialog = CancelAutoDialog(None, CancelAutoDialog.PROMPT)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.text.setPlainText("Placa anotada errada no auto pelo agente.")
    dialog._check()
    assert dialog.result() != dialog.DialogCode.Accepted
    assert "senha" in dialog.banner.text()
    assert dialog.password.hasFocus() or dialog.focusWidget() is dialog.password
    assert dialog.password.echoMode() == dialog.password.EchoMode.Password
    dialog.password.setText("demo1004")
    dialog._check()
    assert dialog.result() == dialog.DialogCode.Accepted


def _history_of(qtbot, shell, text):
    shell.main.go("history")
    history = shell.main.history
    history.query.setText(text)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    return history


def test_a_wrong_password_refuses_the_cancellation_in_the_history(qtbot, make_shell, data_dir,
                                                                 demo_facts, monkeypatch):
    from uikit import seal_auto_offline

    from inspector_app.ui import dialogs

    auto = seal_auto_offline(data_dir, demo_facts.df_plate).of_kind("auto_infracao")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1004")
    history = _history_of(qtbot, shell, auto.verification_code)
    monkeypatch.setattr(dialogs.CancelAutoDialog, "ask_with_password", classmethod(
        lambda cls, parent: ("Placa anotada errada no auto pelo agente.", "senhaerrada")))
    click(qtbot, history.cancel_button)
    wait_idle(qtbot, shell)
    assert "Senha não confirmada" in history.banner.text()
    assert history.table.item(0, 6).text() == "válido"
    assert in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT COUNT(*) FROM records WHERE kind = 'cancelamento'").fetchone()[0]) == 0


def test_after_a_cancellation_the_details_say_cancelado_and_a_reprint_is_marked_on_every_page(
        qtbot, make_shell, data_dir, demo_facts, monkeypatch, tmp_path):
    from uikit import seal_auto_offline

    from inspector_app.ui import dialogs, printing

    first = seal_auto_offline(data_dir, demo_facts.df_plate, printed=True)
    auto = first.of_kind("auto_infracao")
    other = seal_auto_offline(data_dir, demo_facts.df_plate).of_kind("auto_infracao")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1004")
    history = _history_of(qtbot, shell, demo_facts.df_plate)
    numbers = [history.results[i].id for i in range(history.table.rowCount())]
    assert {auto.id, other.id} <= set(numbers)

    # The details pane follows the selected row.
    for record in (other, auto):
        history.table.selectRow(numbers.index(record.id))
        wait_idle(qtbot, shell)
        assert record.display_number in history.details.toPlainText()
    assert "Situação válido" in " ".join(history.details.toPlainText().split())

    monkeypatch.setattr(dialogs.CancelAutoDialog, "ask_with_password", classmethod(
        lambda cls, parent: ("Placa anotada errada no auto pelo agente.", "demo1004")))
    click(qtbot, history.cancel_button)
    wait_idle(qtbot, shell)
    cancel = in_store(qtbot, shell, lambda s: services.cancellation_of(
        store=s, record_id=auto.id))
    shown = " ".join(history.details.toPlainText().split())
    assert f"CANCELADO pelo registro n.º {cancel.number}" in shown, shown
    assert "válido" not in shown

    # Reimprimir of the cancelled auto: only a marked copy, on every page.
    history.table.selectRow(numbers.index(auto.id))
    wait_idle(qtbot, shell)
    out = tmp_path / "reimpressao.pdf"

    def ask(printer, _parent):
        printer.setOutputFormat(printer.OutputFormat.PdfFormat)
        printer.setOutputFileName(str(out))
        return True

    monkeypatch.setattr(printing.PrintChooser, "ask", classmethod(lambda cls, p, w: ask(p, w)))
    click(qtbot, history.reprint_button)
    wait_idle(qtbot, shell)
    current = history.panel.current
    assert current.record_id == auto.id and current.printed
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parents[1] / "documents"))
    from test_render_cancelled import page_texts

    texts = page_texts(current.pdf, tmp_path)
    assert texts and all(f"CANCELADO pelo registro n.º {cancel.number}" in t for t in texts)
    archived = in_store(qtbot, shell, lambda s: [
        d.pdf_sha256 for d in __import__("inspector_app.documents", fromlist=["x"])
        .archived_documents(s, auto.id)])
    import hashlib
    assert hashlib.sha256(current.pdf).hexdigest() in archived
