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


# --- release desk (art. 38) ----------------------------------------------------------------------


def _multi_fault_retention(data_dir, plate):
    from uikit import NARRATIVE, STROKES

    store = open_store(data_dir)
    try:
        session = services.login(store=store, matricula="1001", password="demo1001")
        iid = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal Rural de Planaltina", plate=plate)
        for item in ("DF-SEG-01", "DF-SEG-02"):
            services.record_answer(store=store, inspection_id=iid, item_id=item,
                                   result="fail", note="Constatado.")
        for role in ("agent", "driver"):
            services.record_signature(store=store, inspection_id=iid, role=role,
                                      status="signed", strokes=STROKES)
        return services.seal_inspection(store=store, session=session, inspection_id=iid,
                                        narrative=NARRATIVE, retain=True,
                                        retention_place="Pátio do terminal")
    finally:
        store.close()


def test_the_desk_refuses_a_partial_recheck_and_releases_when_every_fault_is_checked(
        qtbot, make_shell, data_dir, demo_facts):
    from PySide6.QtCore import Qt
    from uikit import sign

    _multi_fault_retention(data_dir, demo_facts.df_plate)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1003")
    shell.main.go("retention")
    wait_idle(qtbot, shell)
    desk = shell.main.retention
    click(qtbot, desk.release_button)
    dialog = desk.release_dialog
    dialog.fault_fixed.setChecked(True)
    labels = [dialog.items.item(i).text() for i in range(dialog.items.count())]
    assert any("Tacógrafo" in t for t in labels) and any("Extintor" in t for t in labels)
    dialog.items.item(0).setCheckState(Qt.CheckState.Checked)
    dialog.receiver.name.setText("Sebastião Ferreira Lima")
    dialog.receiver.cpf.setText("169.440.601-67")
    dialog.receiver.document.setText("CNH 01234567890")
    sign(qtbot, dialog.receiver_signature.pad)
    sign(qtbot, dialog.agent_signature.pad)
    click(qtbot, dialog.release_button)
    wait_idle(qtbot, shell)
    assert dialog.isVisible()
    assert ("Liberação por falta sanada (art. 38, I) só quando todas as faltas"
            in dialog.banner.text())
    assert labels[1] in dialog.banner.text()
    assert dialog.items.hasFocus() or dialog.focusWidget() is dialog.items
    assert in_store(qtbot, shell, lambda s: len(services.vehicles_held(store=s))) == 1

    dialog.receiver.cpf.setText("169.440.601-00")  # a wrong CPF: refused, digits not given
    for i in range(dialog.items.count()):
        dialog.items.item(i).setCheckState(Qt.CheckState.Checked)
    click(qtbot, dialog.release_button)
    wait_idle(qtbot, shell)
    assert "CPF inválido" in dialog.banner.text() and "67" not in dialog.banner.text()
    assert dialog.focusWidget() is dialog.receiver.cpf
    dialog.receiver.cpf.setText("169.440.601-67")
    click(qtbot, dialog.release_button)
    wait_idle(qtbot, shell)
    assert not dialog.isVisible()
    body = in_store(qtbot, shell, lambda s: __import__("json").loads(s.conn.execute(
        "SELECT payload FROM records WHERE kind = 'termo_liberacao'").fetchone()[0]))["body"]
    assert [f["rechecked"] for f in body["faults"]] == [True] * len(labels)
    assert body["receiver"]["cpf"] == "16944060167"


# --- the driver reviews before signing; witness --------------------------------------------------


def test_the_driver_reviews_autuado_infractions_totals_and_measures_before_signing(
        qtbot, make_shell, data_dir, demo_facts):
    import json

    from PySide6.QtCore import Qt
    from uikit import NARRATIVE, sign, start_inspection

    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Planaltina",
                              location="terminal", plate=demo_facts.df_plate,
                              driver_cpf=demo_facts.df_driver_cpf)
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-01"], Qt.Key.Key_N)
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-02"], Qt.Key.Key_N)
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    wizard.result.narrative.setPlainText(NARRATIVE)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 5
    review = " ".join(wizard.signatures.review.text().split())
    state = wizard.state.review
    assert state["autuado"]["name"] in review
    for inf in state["infractions"]:
        assert inf["description"] in review and inf["article"] in review
    assert "Total estimado" in review and "R$ 440,00" in review
    assert "retenção do veículo" in review
    # The review is above the pads: read first.
    box, agent = wizard.signatures.review_box, wizard.signatures.agent
    assert box.mapTo(wizard.signatures, box.rect().topLeft()).y() < \
        agent.mapTo(wizard.signatures, agent.rect().topLeft()).y()

    sign(qtbot, wizard.signatures.agent.pad)
    sign(qtbot, wizard.signatures.driver.pad)
    witness = wizard.signatures.witness
    witness.person.name.setText("Maria das Dores Pereira")
    witness.person.cpf.setText("529.982.247-25")
    witness.person.document.setText("RG 1.234.567 SSP/DF")
    sign(qtbot, witness.signature.pad)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    summary = " ".join(wizard.seal_step.summary.text().split())
    assert state["autuado"]["name"] in summary and "Total estimado" in summary
    assert all(i["description"] in summary for i in state["infractions"])
    click(qtbot, wizard.next_button)  # Selar
    wait_idle(qtbot, shell)
    assert wizard.step == 7, wizard.banner.text()
    body = in_store(qtbot, shell, lambda s: json.loads(s.conn.execute(
        "SELECT payload FROM records WHERE kind = 'auto_infracao'").fetchone()[0]))["body"]
    assert {k: v for k, v in body["review"].items() if k != "shown_to_driver"} == state
    assert body["review"]["shown_to_driver"] is True
    assert body["witness"]["name"] == "Maria das Dores Pereira"
    assert body["signatures"]["witness"]["status"] == "signed"


def test_the_catalogue_and_the_result_show_each_rule_with_its_description(
        qtbot, make_shell, data_dir):
    from inspector_app.packs import get_pack
    from inspector_app.ui.dialogs import CatalogueDialog

    pack = get_pack("DF_STPCR")
    dialog = CatalogueDialog(None, pack, set())
    qtbot.addWidget(dialog)
    for row in range(dialog.list.count()):
        item = dialog.list.item(row)
        rule = pack.rules[item.data(256)]
        assert rule.description in item.text()


def test_the_rule_chooser_of_a_failed_item_shows_article_and_description(
        qtbot, make_shell, data_dir, demo_facts):
    from PySide6.QtCore import Qt
    from uikit import start_inspection

    from inspector_app.packs import get_pack

    pack = get_pack("DF_STPCR")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Planaltina",
                              location="terminal", plate=demo_facts.df_plate)
    row = wizard.checklist.rows["DF-SEG-01"]  # tacógrafo: a default rule and an option
    qtbot.keyClick(row, Qt.Key.Key_N)
    wait_idle(qtbot, shell)
    combo = row.rules_combo
    assert combo.isVisibleTo(row) and combo.count() == 2
    for index, rule_id in ((0, "DF15154.29.VIII"), (1, "DF15154.29.XIII")):
        rule = pack.rules[rule_id]
        text = combo.itemText(index)
        assert rule.description in text and rule.article in text, text
        assert combo.itemData(index, Qt.ItemDataRole.ToolTipRole) == text


# --- sealing without an autuado ------------------------------------------------------------------


def test_sealing_without_an_autuado_is_refused_and_asks_for_it_with_the_focus_on_the_field(
        qtbot, make_shell, data_dir):
    """An inspection of an unregistered vehicle opened without the CRLV owner (the issue's
    case: RENAVAM "123"-like gaps, empty make/model) is never sealed with "—" as autuado."""
    import json

    from uikit import NARRATIVE, sign

    store = open_store(data_dir)
    try:
        session = services.login(store=store, matricula="1001", password="demo1001")
        iid = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal de Brazlândia", plate="ZZZ9Z99")
        services.record_answer(store=store, inspection_id=iid, item_id="DF-SEG-02",
                               result="fail", note="Extintor ausente.")
    finally:
        store.close()
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    click(qtbot, shell.main.today.resume_button)
    wait_idle(qtbot, shell)
    wizard = shell.main.wizard
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    wizard.result.narrative.setPlainText(NARRATIVE)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    sign(qtbot, wizard.signatures.agent.pad)
    sign(qtbot, wizard.signatures.driver.pad)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert "NÃO IDENTIFICADO" in wizard.seal_step.summary.text()
    click(qtbot, wizard.next_button)  # Selar: refused
    wait_idle(qtbot, shell)
    assert wizard.step == 6
    text = wizard.banner.text()
    assert "Auto de infração sem autuado: informe o nome do proprietário do veículo" in text
    assert "marca/modelo" in text and "RENAVAM não informado" in text
    form = wizard.seal_step.autuado
    assert form.isVisible()
    assert form.edits["make_model"].hasFocus() or wizard.focusWidget() is \
        form.edits["make_model"]
    assert in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT COUNT(*) FROM records").fetchone()[0]) == 0

    form.edits["make_model"].setText("Mercedes-Benz OF-1721")
    form.edits["renavam"].setText("86769597308")
    form.edits["holder_name"].setText("Viação Planalto Ltda.")
    form.edits["holder_document"].setText("11.222.333/0001-81")
    click(qtbot, wizard.next_button)  # Selar again: the content changed since the review
    wait_idle(qtbot, shell)
    assert wizard.step == 5
    assert "mudou depois da revisão" in wizard.banner.text()
    assert "Viação Planalto Ltda." in wizard.signatures.review.text()
    assert wizard.signatures.driver.pad.is_empty()
    sign(qtbot, wizard.signatures.driver.pad)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)  # Selar
    wait_idle(qtbot, shell)
    assert wizard.step == 7, wizard.banner.text()
    body = in_store(qtbot, shell, lambda s: json.loads(s.conn.execute(
        "SELECT payload FROM records WHERE kind = 'auto_infracao'").fetchone()[0]))["body"]
    assert (body["vehicle"]["holder_name"], body["vehicle"]["holder_document"]) == (
        "Viação Planalto Ltda.", "11222333000181")
    assert body["review"]["autuado"]["name"] == "Viação Planalto Ltda."
