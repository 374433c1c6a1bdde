"""Whole flows of the inspector's app on real widgets and a real demo store (offscreen)."""

from __future__ import annotations

import io
from pathlib import Path

from pypdf import PdfReader
from PySide6.QtCore import Qt
from uikit import (
    NARRATIVE,
    REFUSAL,
    click,
    in_store,
    login,
    seal_auto_offline,
    sign,
    start_inspection,
    wait_idle,
)

from inspector_app import services
from inspector_app.store.verify import verify_store
from inspector_app.ui import checklist, dialogs, printing
from inspector_app.ui.context import AppSettings
from inspector_app.ui.history import STATUS_COLUMN
from inspector_app.ui.login import ENROL_TOOLTIP
from inspector_app.ui.shell import DEMO_LABEL, IDLE_MESSAGE

CONTROL_POINT = "Ponto de controle DF-130 – Rajadinha"


def print_to(monkeypatch, path: Path) -> None:
    """The system print dialog answers "print" to a PDF file instead of a printer."""

    def ask(printer, _parent):
        printer.setOutputFormat(printer.OutputFormat.PdfFormat)
        printer.setOutputFileName(str(path))
        return True

    monkeypatch.setattr(printing.PrintChooser, "ask", classmethod(lambda cls, p, w: ask(p, w)))


def records(qtbot, shell) -> list[tuple[str, dict]]:
    """(kind, envelope) of every sealed record, oldest first."""
    return in_store(qtbot, shell, lambda store: [
        (kind, __import__("json").loads(payload)) for kind, payload in store.conn.execute(
            "SELECT kind, payload FROM records ORDER BY journal_seq")])


# --- first run and login --------------------------------------------------------------------------


def test_first_run_offers_demo_mode_and_labels_the_window_demonstracao(qtbot, make_shell,
                                                                      tmp_path):
    shell = make_shell(tmp_path / "empty", settings=AppSettings(demo_vehicles=12))
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.first_run, timeout=15_000)

    assert shell.first_run.enrol_button.isEnabled()
    assert shell.first_run.enrol_button.toolTip() == ENROL_TOOLTIP
    assert DEMO_LABEL not in shell.windowTitle()
    click(qtbot, shell.first_run.demo_button)
    assert shell.first_run.progress.isVisible()
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=30_000)

    assert shell.windowTitle().endswith(DEMO_LABEL)
    assert shell.demo_badge.isVisible() and shell.status_demo.isVisible()
    assert shell.login.demo_hint.isVisible()
    login(qtbot, shell, "1001")
    assert "João Batista Ferreira" in shell.status_user.text()
    assert shell.online_label.text() == "● offline"
    assert shell.last_sync_label.text() == "Última sincronização: —"
    assert shell.pending_label.text() == "Pendentes de envio: 0"


def test_five_wrong_passwords_count_down_and_then_lock_the_login(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=15_000)
    messages = []
    for _ in range(6):
        shell.login.matricula.setText("1001")
        shell.login.password.setText("senha-errada")
        click(qtbot, shell.login.login_button)
        wait_idle(qtbot, shell)
        messages.append(shell.login.banner.text())

    assert messages[0] == "Senha incorreta. Restam 4 tentativas antes do bloqueio."
    assert messages[3] == "Senha incorreta. Resta 1 tentativa antes do bloqueio."
    assert messages[4] == "Senha incorreta. Acesso bloqueado por 30 s."
    assert messages[5].startswith("Acesso bloqueado por tentativas erradas. Tente novamente em")
    assert shell.login.banner.level == "error"
    assert shell.login.password.text() == ""
    # Locked: even the right password is refused and the window stays on the login screen.
    shell.login.password.setText("demo1001")
    click(qtbot, shell.login.login_button)
    wait_idle(qtbot, shell)
    assert "bloqueado" in shell.login.banner.text()
    assert shell.pages.currentWidget() is shell.login


def test_idle_time_locks_the_session_and_the_password_returns_to_the_same_screen(
    qtbot, make_shell, data_dir
):
    shell = make_shell(data_dir, idle_lock_ms=400)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=5_000)

    assert shell.login.banner.text() == IDLE_MESSAGE
    assert shell.login.matricula.text() == "1001"
    assert shell.login.title.text() == "Sessão bloqueada"
    shell.login.password.setText("demo1001")
    click(qtbot, shell.login.login_button)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.main)
    assert shell.main.stack.currentWidget() is shell.main.history


# --- the guided inspection -----------------------------------------------------------------------


def test_df_stpcr_at_a_control_point_two_failures_retention_refusal_sealed_and_printed(
    qtbot, make_shell, data_dir, demo_facts, monkeypatch, tmp_path
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place=CONTROL_POINT,
                              location="ponto_controle", plate=demo_facts.df_plate,
                              driver_cpf=demo_facts.df_driver_cpf)
    rows = wizard.checklist.rows
    # Keyboard on the focused item: N = não conforme, C = conforme, A = não se aplica.
    qtbot.keyClick(rows["DF-SEG-01"], Qt.Key.Key_N)  # tacógrafo
    click(qtbot, rows["DF-SEG-02"].buttons["fail"])  # extintor
    qtbot.keyClick(rows["DF-SEG-03"], Qt.Key.Key_C)
    qtbot.keyClick(rows["DF-SEG-04"], Qt.Key.Key_A)
    rows["DF-SEG-02"].note.setText("Extintor ausente no suporte.")
    rows["DF-SEG-02"].note.editingFinished.emit()
    wait_idle(qtbot, shell)
    assert {i: rows[i].saved_state for i in ("DF-SEG-01", "DF-SEG-02", "DF-SEG-03",
                                             "DF-SEG-04")} == dict.fromkeys(
        ("DF-SEG-01", "DF-SEG-02", "DF-SEG-03", "DF-SEG-04"), "saved")
    assert wizard.checklist.progress.value() == 4

    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    result = wizard.result
    assert wizard.step == 4
    assert [i.rule_id for i in result.active_infractions()] == ["DF15154.29.VIII",
                                                                "DF15154.29.XIII"]
    assert result.verdict.text() == "2 infração(ões) proposta(s)"
    assert result.retain_check.isEnabled() and result.retain_check.isChecked()
    assert "art. 37, IV" in result.retention_grounds.text()
    assert "Defesa prévia" in result.deadlines.text()
    assert "Regra presumida aplicada" in result.presumed.text()
    # The same sentences as the auto: legal Portuguese, no parameter keys (issue 12).
    presumed = result.presumed.text()
    assert "Atribuiu-se 1 ponto à infração do Grupo A" in presumed or "Considerou-se" in presumed
    for key in ("any_infraction_window", "G10", "G1 ", "tables.", "primario."):
        assert key not in presumed
    assert "R$ 440,00" in result.totals.text()
    result.narrative.setPlainText(NARRATIVE)

    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)  # the review the driver reads is built on the store worker
    assert wizard.step == 5
    sign(qtbot, wizard.signatures.agent.pad)
    assert not wizard.signatures.agent.pad.is_empty()
    wizard.signatures.driver.refused_radio.setChecked(True)
    wizard.signatures.driver.note.setText(REFUSAL)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 6, wizard.banner.text()
    assert "recusou-se a assinar" in wizard.seal_step.summary.text()

    click(qtbot, wizard.next_button)  # Selar
    wait_idle(qtbot, shell)
    assert wizard.step == 7, wizard.banner.text()
    panel = wizard.print_step.panel
    assert panel.current is not None and panel.current.pdf.startswith(b"%PDF-")
    assert panel.current.path is not None and panel.current.path.exists()
    assert panel.document.pageCount() >= 1
    assert panel.list.count() == 3  # auto (1ª and 2ª via) and termo de retenção

    out = tmp_path / "impresso.pdf"
    print_to(monkeypatch, out)
    click(qtbot, panel.print_button)
    wait_idle(qtbot, shell)
    assert out.exists() and out.read_bytes().startswith(b"%PDF-")
    assert panel.banner.text().startswith("Impresso:")

    sealed = records(qtbot, shell)
    assert [kind for kind, _env in sealed] == ["auto_infracao", "termo_retencao"]
    auto = sealed[0][1]["body"]
    assert auto["signatures"]["driver"] == {**auto["signatures"]["driver"],
                                            "status": "refused", "note": REFUSAL}
    assert auto["answers"]["DF-SEG-02"]["note"] == "Extintor ausente no suporte."
    assert sealed[1][1]["body"]["grounds"] == ["DF15154.37.IV"]
    assert sealed[1][1]["body"]["place"] == CONTROL_POINT
    report = in_store(qtbot, shell, verify_store)
    assert report.ok, report.problems
    printed = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT copy, reprint_number FROM print_log").fetchall())
    assert printed == [("1", 0)]

    click(qtbot, wizard.next_button)  # Concluir
    qtbot.waitUntil(lambda: shell.main.wizard is None)
    wait_idle(qtbot, shell)
    today = shell.main.today
    assert today.records_table.rowCount() == 2
    assert shell.pending_label.text() == "Pendentes de envio: 2"


def test_the_same_findings_on_a_public_road_say_retention_may_not_happen_there(
    qtbot, make_shell, data_dir, demo_facts
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="DF-130, km 3",
                              location="via_publica", plate=demo_facts.df_plate)
    rows = wizard.checklist.rows
    qtbot.keyClick(rows["DF-SEG-01"], Qt.Key.Key_N)
    qtbot.keyClick(rows["DF-SEG-02"], Qt.Key.Key_N)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    result = wizard.result

    assert result.retention_banner.level == "error"
    assert "art. 37, parágrafo único" in result.retention_banner.text()
    assert not result.retain_check.isEnabled() and not result.retain_check.isChecked()
    assert result.insecurity_check.isVisible()

    # Too short a justification is refused with what to do.
    result.insecurity_check.setChecked(True)
    result.insecurity_text.setText("perigo")
    click(qtbot, result.insecurity_apply)
    assert "pelo menos 10 caracteres" in result.retention_banner.text()

    result.insecurity_text.setText("Extintor ausente com 30 passageiros a bordo, à noite.")
    click(qtbot, result.insecurity_apply)
    wait_idle(qtbot, shell)
    assert result.outcome.retention.allowed_here is True
    assert "insegurança manifesta" in result.retention_banner.text()
    assert result.retain_check.isEnabled() and result.retain_check.isChecked()
    assert wizard.state.insecurity_justification.startswith("Extintor ausente")


def test_a_jf_1972_vistoria_answered_by_keyboard_is_approved_and_sealed(
    qtbot, make_shell, data_dir, demo_facts
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "2001")
    wizard = start_inspection(qtbot, shell, pack="JF_1972", vistoria=True,
                              location="patio_vistoria",
                              place="Pátio de vistoria da SMU – Benfica",
                              plate=demo_facts.jf_plate)
    assert wizard.state.location_type == "patio_vistoria"
    checklist_page = wizard.checklist
    total = len(checklist_page.rows)
    for _ in range(total):
        focused = shell.focusWidget()  # the window's focus (offscreen windows are not active)
        assert isinstance(focused, checklist.ItemRow)
        qtbot.keyClick(focused, Qt.Key.Key_C)
    wait_idle(qtbot, shell)
    assert checklist_page.answered() == total
    assert not checklist_page.unsaved()
    assert checklist_page.sections.item(0).text().endswith(f"({len(checklist_page._section_rows[0])}/{len(checklist_page._section_rows[0])})")

    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.result.verdict.text() == "Vistoria APROVADA"
    assert wizard.result.active_infractions() == []
    assert "válida até" in wizard.result.vistoria.text()
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    sign(qtbot, wizard.signatures.agent.pad)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)  # Selar
    wait_idle(qtbot, shell)

    assert wizard.step == 7, wizard.banner.text()
    [(kind, envelope)] = records(qtbot, shell)
    assert kind == "auto_vistoria"
    assert envelope["body"]["result"] == "aprovado"
    assert len(envelope["body"]["answers"]) == total
    assert wizard.print_step.panel.current.kind == "auto_vistoria"


def test_removing_a_proposed_infraction_needs_a_reason_and_adding_one_comes_from_the_catalogue(
    qtbot, make_shell, data_dir, demo_facts, monkeypatch
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    qtbot.keyClick(wizard.checklist.rows["DF-OPS-10"], Qt.Key.Key_N)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    result = wizard.result
    assert [i.rule_id for i in result.active_infractions()] == ["DF15154.29.IV"]

    monkeypatch.setattr(dialogs.CatalogueDialog, "ask",
                        classmethod(lambda cls, parent, pack, exclude: "DF15154.29.I"))
    click(qtbot, result.add_button)
    wait_idle(qtbot, shell)
    assert {i.rule_id for i in result.active_infractions()} == {"DF15154.29.IV", "DF15154.29.I"}

    monkeypatch.setattr(dialogs.RemoveInfractionDialog, "ask",
                        classmethod(lambda cls, parent, prompt=None: None))
    remove = result.table.cellWidget(0, len(result_columns(result)) - 1)
    click(qtbot, remove)  # cancelled: nothing removed
    assert len(result.active_infractions()) == 2
    monkeypatch.setattr(dialogs.RemoveInfractionDialog, "ask",
                        classmethod(lambda cls, parent, prompt=None:
                                    "O condutor colaborou após orientação."))
    row = [i.rule_id for i in result.outcome.infractions].index("DF15154.29.IV")
    click(qtbot, result.table.cellWidget(row, 7))
    assert [i.rule_id for i in result.active_infractions()] == ["DF15154.29.I"]
    assert "RETIRADA – motivo: O condutor colaborou" in result.table.item(row, 2).text()
    assert wizard.state.removed == {"DF15154.29.IV": "O condutor colaborou após orientação."}


def result_columns(result) -> list[str]:
    return [result.table.horizontalHeaderItem(c).text() for c in range(result.table.columnCount())]


def test_a_photo_chosen_for_an_item_is_imported_and_counted(qtbot, make_shell, data_dir,
                                                           demo_facts, monkeypatch, tmp_path):
    from PIL import Image

    photo = tmp_path / "extintor.jpg"
    Image.new("RGB", (640, 480), (200, 40, 40)).save(photo)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    row = wizard.checklist.rows["DF-SEG-02"]
    monkeypatch.setattr(checklist.PhotoChooser, "ask", classmethod(lambda cls, parent: photo))
    click(qtbot, row.photo_button)
    wait_idle(qtbot, shell)
    assert row.photo_label.text() == "1 foto"
    count = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT COUNT(*) FROM photos WHERE item_id = 'DF-SEG-02'").fetchone()[0])
    assert count == 1


def test_an_open_inspection_is_resumed_with_every_answer_after_the_app_restarts(
    qtbot, make_shell, data_dir, demo_facts
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-01"], Qt.Key.Key_N)
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-02"], Qt.Key.Key_C)
    wait_idle(qtbot, shell)
    shell.close()

    again = make_shell(data_dir)
    login(qtbot, again, "1001")
    today = again.main.today
    assert today.open_table.rowCount() == 1
    click(qtbot, today.resume_button)
    wait_idle(qtbot, again)
    rows = again.main.wizard.checklist.rows
    assert (rows["DF-SEG-01"].result, rows["DF-SEG-02"].result) == ("fail", "ok")
    assert again.main.wizard.step == 3


# --- retention desk, history ----------------------------------------------------------------------


def test_the_retention_desk_releases_a_held_vehicle_under_art_38(qtbot, make_shell, data_dir,
                                                                demo_facts):
    seal_auto_offline(data_dir, demo_facts.df_plate, retain=True)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1003")
    assert not shell.main.nav_buttons["inspection"].isEnabled()
    shell.main.go("retention")
    wait_idle(qtbot, shell)
    desk = shell.main.retention
    assert desk.model.rowCount() == 1
    assert "art. 37, IV" in desk.model.text(0, 3)
    assert desk.model.text(0, 5).endswith("min")

    click(qtbot, desk.release_button)
    dialog = desk.release_dialog
    assert dialog is not None and dialog.isVisible()
    assert not dialog.compromisso.isVisible()  # not an over-age retention
    click(qtbot, dialog.release_button)  # no condition: refused, with the article
    wait_idle(qtbot, shell)
    assert "art. 38, I" in dialog.banner.text()

    dialog.fault_fixed.setChecked(True)
    item = dialog.items.item(0)
    assert "DF-SEG-02" in item.text()
    item.setCheckState(Qt.CheckState.Checked)
    click(qtbot, dialog.release_button)  # nobody named to receive the vehicle: refused
    wait_idle(qtbot, shell)
    assert "recebedor" in dialog.banner.text() and dialog.isVisible()
    dialog.receiver.name.setText("Sebastião Ferreira Lima")
    dialog.receiver.cpf.setText("169.440.601-67")
    dialog.receiver.document.setText("CNH 01234567890")
    sign(qtbot, dialog.receiver_signature.pad)
    sign(qtbot, dialog.agent_signature.pad)
    click(qtbot, dialog.release_button)
    wait_idle(qtbot, shell)

    assert not dialog.isVisible()
    assert "Veículo liberado" in desk.banner.text()
    assert "não depende de pagamento" in desk.warnings.text()
    assert desk.model.rowCount() == 0 and desk.empty.isVisible()
    kinds = [kind for kind, _env in records(qtbot, shell)]
    assert kinds == ["auto_infracao", "termo_retencao", "termo_liberacao"]
    liberation = records(qtbot, shell)[-1][1]["body"]
    assert liberation["conditions"]["rechecked_items"] == ["DF-SEG-02"]
    assert desk.panel.current is not None and desk.panel.current.kind == "termo_liberacao"


def test_a_reprint_from_the_history_is_logged_and_labelled_2a_via(
    qtbot, make_shell, data_dir, demo_facts, monkeypatch, tmp_path
):
    sealed = seal_auto_offline(data_dir, demo_facts.df_plate, printed=True)
    auto = sealed.of_kind("auto_infracao")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    history = shell.main.history
    history.query.setText(auto.display_number)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    assert history.table.rowCount() == 1
    assert history.table.item(0, 0).text() == auto.display_number
    assert "Auto de infração" in history.details.toPlainText()

    out = tmp_path / "reimpressao.pdf"
    print_to(monkeypatch, out)
    click(qtbot, history.reprint_button)
    wait_idle(qtbot, shell)

    assert out.exists()
    current = history.panel.current
    assert current.reprint_number == 1 and current.printed
    assert "Reimpressão n.º 1" in current.label and "2ª VIA" not in current.label
    logged = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT copy, reprint_number FROM print_log ORDER BY id").fetchall())
    assert logged == [("1", 0), ("1", 1)]
    archived = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT copy, reprint_number FROM documents ORDER BY id").fetchall())
    assert ("1", 1) in archived

    # "Salvar PDF…" is an output too: the same counter, logged and archived (issue 12).
    saved = tmp_path / "salvo.pdf"
    monkeypatch.setattr(printing.SavePdfChooser, "ask", classmethod(lambda cls, *_a: saved))
    click(qtbot, history.panel.save_button)
    wait_idle(qtbot, shell)
    assert saved.exists()
    saved_text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(saved.read_bytes())).pages)
    assert "Reimpressão n.º 2 (" in saved_text
    # … and so is `inspector render` (CLI): the next output is n.º 3.
    rendered = in_store(qtbot, shell, lambda s: services.render_record(
        store=s, record_id=auto.id, sign=False, target="cli.pdf"))
    assert rendered.reprint_number == 3
    logged = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT copy, reprint_number, substr(printer, 1, 4) FROM print_log "
        "ORDER BY id").fetchall())
    assert [row[:2] for row in logged] == [("1", 0), ("1", 1), ("1", 2), ("1", 3)]
    assert [row[2] for row in logged[2:]] == ["pdf:", "cli:"]
    archived = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT reprint_number FROM documents WHERE copy = '1' ORDER BY id").fetchall())
    assert {(2,), (3,)} <= set(archived)


def test_only_the_supervisor_cancels_an_auto_with_a_reason(qtbot, make_shell, data_dir,
                                                          demo_facts, monkeypatch):
    sealed = seal_auto_offline(data_dir, demo_facts.df_plate)
    auto = sealed.of_kind("auto_infracao")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    history = shell.main.history
    history.query.setText(demo_facts.df_plate)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    assert history.table.rowCount() == 1
    assert not history.cancel_button.isEnabled()
    assert "supervisão" in history.cancel_button.toolTip()

    click(qtbot, shell.logout_button)
    login(qtbot, shell, "1004")
    shell.main.go("history")
    history.query.setText(auto.verification_code)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    assert history.cancel_button.isEnabled()
    monkeypatch.setattr(dialogs.CancelAutoDialog, "ask_with_password", classmethod(
        lambda cls, parent: ("Placa anotada errada no auto pelo agente.", "demo1004")))
    click(qtbot, history.cancel_button)
    wait_idle(qtbot, shell)

    assert "cancelado pelo registro" in history.banner.text()
    assert history.table.item(0, STATUS_COLUMN).text() == "CANCELADO"
    assert not history.cancel_button.isEnabled()
    cancel = records(qtbot, shell)[-1]
    assert cancel[0] == "cancelamento"
    assert cancel[1]["refers_to"] == auto.id
    assert cancel[1]["body"]["reason"] == "Placa anotada errada no auto pelo agente."
    assert history.panel.current.kind == "cancelamento"


def test_a_search_that_finds_nothing_says_what_to_type(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    history = shell.main.history
    history.query.setText("XYZ-000999")
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)
    assert history.banner.level == "error"
    assert "ABC-1234 ou ABC1D23" in history.banner.text()


def test_login_works_from_the_keyboard_alone(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.login, timeout=15_000)
    assert shell.focusWidget() is shell.login.matricula
    qtbot.keyClicks(shell.login.matricula, "1001")
    qtbot.keyClick(shell.login.matricula, Qt.Key.Key_Return)
    assert shell.focusWidget() is shell.login.password
    qtbot.keyClicks(shell.login.password, "demo1001")
    qtbot.keyClick(shell.login.password, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.main, timeout=15_000)
    wait_idle(qtbot, shell)
    assert shell.main.stack.currentWidget() is shell.main.today


def test_an_unregistered_plate_is_entered_by_hand_and_flagged(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    wizard = shell.main.wizard
    wizard.place_step.place.setText("Terminal de Brazlândia")
    wizard.place_step.latitude.setText("-15,6797")
    wizard.place_step.longitude.setText("200")
    click(qtbot, wizard.next_button)
    assert wizard.step == 0 and "Longitude fora do intervalo" in wizard.banner.text()
    wizard.place_step.longitude.setText("-48,2070")
    click(qtbot, wizard.next_button)
    assert (wizard.state.latitude, wizard.state.longitude) == (-15.6797, -48.207)

    wizard.vehicle_step.plate.setText("AB-12345")
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 1
    assert wizard.banner.text().startswith("Placa inválida")
    assert "ABC-1234 (antiga) ou ABC1D23 (Mercosul)" in wizard.banner.text()
    wizard.vehicle_step.plate.setText("ZZZ9Z99")
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 1  # not registered: the CRLV fields appear first
    assert wizard.vehicle_step.manual.isVisible()
    assert "Veículo não cadastrado" in wizard.vehicle_step.card.text()
    wizard.vehicle_step.chassis_year.setValue(2019)
    wizard.vehicle_step.seats.setValue(28)
    wizard.vehicle_step.renavam.setText("123")
    click(qtbot, wizard.next_button)
    # Issue 11: no auto without an autuado: every problem shown at once, focus on the first.
    assert wizard.step == 1
    banner = wizard.banner.text()
    assert "Auto de infração sem autuado: informe o nome do proprietário" in banner
    assert "RENAVAM inválido" in banner and "marca/modelo" in banner
    assert wizard.vehicle_step.make_model.hasFocus() or \
        wizard.focusWidget() is wizard.vehicle_step.make_model
    wizard.vehicle_step.make_model.setText("Mercedes-Benz OF-1721")
    wizard.vehicle_step.renavam.setText("86769597308")
    wizard.vehicle_step.holder_name.setText("Viação Planalto Ltda.")
    wizard.vehicle_step.holder_document.setText("11.222.333/0001-81")
    click(qtbot, wizard.next_button)
    assert wizard.step == 2
    wizard.driver_step.absent.setChecked(True)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == 3, wizard.banner.text()
    assert "(não cadastrado)" in wizard.checklist.summary.text()
    vehicle = in_store(qtbot, shell, lambda s: __import__("json").loads(s.conn.execute(
        "SELECT vehicle_json FROM inspections").fetchone()[0]))
    assert vehicle == {**vehicle, "registered": False, "chassis_year": 2019, "seats": 28,
                       "plate": "ZZZ9Z99"}


def test_without_the_documents_module_the_print_step_says_what_to_do_and_loses_nothing(
    qtbot, make_shell, data_dir, demo_facts, monkeypatch
):
    sealed = seal_auto_offline(data_dir, demo_facts.df_plate)
    monkeypatch.setattr(printing, "documents_module", lambda: None)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("history")
    history = shell.main.history
    history.query.setText(sealed.of_kind("auto_infracao").display_number)
    click(qtbot, history.search_button)
    wait_idle(qtbot, shell)

    assert history.panel.banner.text() == printing.NO_DOCUMENTS
    assert not history.panel.print_button.isEnabled()
    assert "Auto de infração" in history.details.toPlainText()  # the record is still there


def test_every_control_of_the_first_wizard_step_is_a_large_touch_target(qtbot, make_shell,
                                                                        data_dir):
    from PySide6.QtWidgets import QComboBox, QLineEdit, QPushButton

    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    controls = [w for kind in (QPushButton, QLineEdit, QComboBox)
                for w in shell.findChildren(kind) if w.isVisible()]
    assert len(controls) > 10
    small = [(type(w).__name__, w.objectName() or getattr(w, "text", lambda: "")(), w.height())
             for w in controls if w.height() < 44]
    assert small == []


def test_sobre_opens_the_packs_screen_loaded_off_the_gui_thread(qtbot, make_shell, data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1003")
    click(qtbot, shell.main.nav_buttons["settings"])
    wait_idle(qtbot, shell)
    click(qtbot, shell.main.settings.packs_button)
    wait_idle(qtbot, shell)
    window = shell.main.packs_window
    assert window is not None and window.isVisible()
    qtbot.addWidget(window)
    packs = {window.cell_text(r, "Pacote") for r in range(window.table.rowCount())}
    assert {"DF_STPA", "DF_STPCR", "JF_1972"} <= packs
