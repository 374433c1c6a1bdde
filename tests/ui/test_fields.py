"""Fields that do not mislead and the checklist conveniences peers have, with real widgets on
real SQLite stores: impossible dates refused, errors shown together and cleared field by
field, focus on the field at fault, the driver step's Enter and contradiction, "marcar os
restantes", jump to an item, photo thumbnails and removal, the GPS button."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from uikit import click, in_store, login, sign, start_inspection, wait_idle

from inspector_app import services
from inspector_app.domain.identity import format_cpf, parse_plate
from inspector_app.store import inspections as repo
from inspector_app.ui import checklist, inspection, location
from inspector_app.ui.inspection import CHECKLIST, DRIVER, LOCAL, VEHICLE

SHOTS = Path(__file__).resolve().parents[2] / "build" / "screenshots-i11c"


def shot(widget, name: str) -> None:
    """Keep a picture of what the test saw (looked at by the developer)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    widget.grab().save(str(SHOTS / f"{name}.png"))


def type_into(qtbot, edit, text: str) -> None:
    """Click into the field, then type, as a person does."""
    qtbot.mouseClick(edit, Qt.MouseButton.LeftButton, pos=QPoint(8, edit.height() // 2))
    qtbot.keyClicks(edit, text)


def open_wizard(qtbot, shell):
    shell.main.go("inspection")
    wait_idle(qtbot, shell)
    return shell.main.wizard


# --- dates ----------------------------------------------------------------------------------------


def test_a_date_item_starts_empty_says_what_it_asks_and_refuses_31_02(qtbot, make_shell,
                                                                      data_dir, demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    page = wizard.checklist
    row = page.rows["DF-DOC-06"]
    field = row.value_edit
    assert field.edit.text() == ""  # never a silent "today"
    assert row.date_label.text() == "Fim da vigência da apólice:"
    assert page.rows["DF-DOC-04"].date_label.text().startswith("Data da última vistoria")

    page.jump_to("DF-DOC-06")
    type_into(qtbot, field.edit, "31/02/2026")
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    assert "31/02/2026 não existe" in row.state_label.text()
    assert "fevereiro de 2026 tem 28 dias" in page.banner.text()
    assert field.edit.text() == "31/02/2026"  # kept for correction, not discarded
    shot(wizard, "date-refused")

    row.answer("ok")
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)  # the impossible date holds the step
    assert wizard.step == CHECKLIST
    assert "Fim da vigência da apólice" in wizard.banner.text()
    assert shell.focusWidget() is field.edit
    assert shell.focusWidget() is not shell.lock_button

    field.edit.selectAll()
    qtbot.keyClicks(field.edit, "15/08/2026")
    assert not wizard.banner.isVisible()  # fixed: the message goes at once
    qtbot.keyClick(field.edit, Qt.Key.Key_Return)
    wait_idle(qtbot, shell)
    answer = in_store(qtbot, shell, lambda s: repo.current_answers(
        s, wizard.state.inspection_id)["DF-DOC-06"])
    assert answer.result == "ok" and answer.value == "2026-08-15"


# --- all errors at once, focus, banner cleared ----------------------------------------------------


def test_every_error_of_the_place_step_is_shown_at_once_and_goes_when_fixed(qtbot, make_shell,
                                                                             data_dir):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = open_wizard(qtbot, shell)
    place = wizard.place_step
    assert place.longitude.placeholderText() == "opcional, ex.: -47,9292"
    assert place.latitude.placeholderText() == "opcional, ex.: -15,7801"
    type_into(qtbot, place.latitude, "norte")
    type_into(qtbot, place.longitude, "-200")
    click(qtbot, wizard.next_button)
    assert wizard.step == LOCAL
    text = wizard.banner.text()
    assert "Informe o local da inspeção" in text
    assert "Latitude inválida: use graus decimais, por exemplo -15,7801." in text
    assert "Longitude fora do intervalo -180 a 180." in text
    assert shell.focusWidget() is place.place  # the first field at fault, not "Bloquear"
    shot(wizard, "place-all-errors")

    qtbot.keyClicks(place.place, "Terminal de Sobradinho")
    assert "Informe o local" not in wizard.banner.text()
    assert wizard.banner.isVisible()
    place.latitude.setText("-15,65")
    assert "Latitude" not in wizard.banner.text()
    place.longitude.setText("-47,79")
    assert not wizard.banner.isVisible()
    click(qtbot, wizard.next_button)
    assert wizard.step == VEHICLE
    assert wizard.state.latitude == pytest.approx(-15.65)


def test_a_refused_plate_puts_the_focus_back_on_the_plate_never_on_the_lock_button(
        qtbot, make_shell, data_dir, demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = open_wizard(qtbot, shell)
    wizard.place_step.place.setText("Terminal de Brazlândia")
    click(qtbot, wizard.next_button)
    vehicle = wizard.vehicle_step
    type_into(qtbot, vehicle.plate, "AB12")
    wizard.next_button.setFocus()
    qtbot.keyClick(wizard.next_button, Qt.Key.Key_Return)
    wait_idle(qtbot, shell)
    assert wizard.step == VEHICLE
    assert wizard.banner.text().startswith("Placa inválida")
    assert shell.focusWidget() is vehicle.plate
    # A registered plate typed in lower case is shown in its one display form.
    vehicle.plate.setText(demo_facts.df_plate.lower())
    qtbot.keyClick(vehicle.plate, Qt.Key.Key_Return)  # Enter = Consultar
    wait_idle(qtbot, shell)
    shown = parse_plate(demo_facts.df_plate).display()
    assert vehicle.plate.text() == shown
    assert shown in wizard.state.summary() or wizard.state.plate == ""


# --- the driver step ------------------------------------------------------------------------------


def test_enter_on_the_cpf_consults_and_absent_after_naming_asks_which_is_true(
        qtbot, make_shell, data_dir, demo_facts, monkeypatch):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = open_wizard(qtbot, shell)
    wizard.place_step.place.setText("Terminal de Brazlândia")
    click(qtbot, wizard.next_button)
    wizard.vehicle_step.plate.setText(demo_facts.df_plate)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == DRIVER
    driver = wizard.driver_step
    assert "Condutor não identificado" in driver.card.text()  # the hint says what it needs
    assert "opcional" not in driver.card.text()
    type_into(qtbot, driver.cpf, demo_facts.df_driver_cpf)
    qtbot.keyClick(driver.cpf, Qt.Key.Key_Return)
    wait_idle(qtbot, shell)
    assert "Nome" in driver.card.text()
    formatted = format_cpf(demo_facts.df_driver_cpf)
    assert formatted in driver.card.text()  # CPF with its punctuation

    answers = [1, 0]
    asked: list[str] = []
    monkeypatch.setattr(inspection.WhichIsTrue, "ask", classmethod(
        lambda cls, parent, title, text, options: asked.append(text) or answers.pop(0)))
    driver.absent.setChecked(True)  # "keep the driver named"
    assert len(asked) == 1 and formatted in asked[0]
    assert not driver.absent.isChecked()
    assert driver.cpf.text() == demo_facts.df_driver_cpf and driver.cpf.isEnabled()
    driver.absent.setChecked(True)  # "not identified": the CPF goes, nothing contradicts
    assert driver.absent.isChecked() and driver.cpf.text() == ""
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    assert wizard.step == CHECKLIST
    assert wizard.state.driver == {}


# --- marking the rest, jumping --------------------------------------------------------------------


def test_a_full_jf_vistoria_takes_two_key_presses_instead_of_one_per_item(
        qtbot, make_shell, data_dir, demo_facts, monkeypatch):
    shell = make_shell(data_dir)
    login(qtbot, shell, "2001")
    wizard = start_inspection(qtbot, shell, pack="JF_1972", vistoria=True,
                              location="patio_vistoria", place="Pátio da SMU – Benfica",
                              plate=demo_facts.jf_plate)
    page = wizard.checklist
    items = len(page.rows)
    counts = [r for r in page.rows.values() if r.item.kind == "count"]
    confirmations: list[tuple[int, str]] = []

    def confirm(cls, parent, count, where):
        confirmations.append((count, where))
        return True

    monkeypatch.setattr(checklist.ConfirmMarking, "ask", classmethod(confirm))
    presses = 0
    qtbot.keyClick(page.rows[next(iter(page.rows))], Qt.Key.Key_N)  # one failure found
    presses += 1
    page.all_ok_button.setFocus()  # Alt+M in the window; offscreen windows are not active
    qtbot.keyClick(page.all_ok_button, Qt.Key.Key_Space)
    presses += 1  # (+ Enter on the confirmation, replaced here)
    presses += 1
    wait_idle(qtbot, shell)
    assert confirmations == [(items - 1 - len(counts), "de todas as seções")]
    assert page.answered() == items - len(counts)
    assert [r.result for r in page.rows.values()].count("fail") == 1
    assert not page.unsaved()
    print(f"\nJF_1972 vistoria: {items} itens; por item: {items} teclas; "
          f"com 'marcar os restantes': {presses} teclas (+ {len(counts)} de quantidade)")
    assert presses < items / 10
    shot(wizard, "checklist-marked")


def test_marking_one_section_leaves_the_others_and_the_answers_already_given(
        qtbot, make_shell, data_dir, demo_facts, monkeypatch):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    page = wizard.checklist
    monkeypatch.setattr(checklist.ConfirmMarking, "ask",
                        classmethod(lambda cls, parent, count, where: True))
    first = page._section_rows[0]
    first[0].answer("fail")
    page.sections.setCurrentRow(0)
    click(qtbot, page.section_buttons[0])
    wait_idle(qtbot, shell)
    assert first[0].result == "fail"
    assert all(r.result == "ok" for r in first[1:] if r.item.kind != "count")
    others = [r for rows in page._section_rows[1:] for r in rows]
    assert all(r.result is None for r in others)
    monkeypatch.setattr(checklist.ConfirmMarking, "ask",
                        classmethod(lambda cls, parent, count, where: False))
    click(qtbot, page.all_ok_button)  # cancelled: nothing changes
    assert all(r.result is None for r in others)


def test_ctrl_f_jumps_to_an_item_by_its_code_or_its_words(qtbot, make_shell, data_dir,
                                                          demo_facts):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    page = wizard.checklist
    shell.activateWindow()  # window shortcuts need the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is shell, timeout=5_000)
    start = shell.focusWidget()
    qtbot.keyClick(start, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert shell.focusWidget() is page.search
    qtbot.keyClicks(page.search, "apolice")  # no accent typed
    qtbot.keyClick(page.search, Qt.Key.Key_Return)
    target = page.rows["DF-DOC-06"]
    assert shell.focusWidget() is target
    assert target in page._section_rows[page.sections.currentRow()]
    qtbot.keyClick(target, Qt.Key.Key_N)  # answer where it landed
    assert target.result == "fail"
    qtbot.keyClick(shell.focusWidget(), Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(page.search, "df-seg-02")
    qtbot.keyClick(page.search, Qt.Key.Key_Return)
    assert shell.focusWidget() is page.rows["DF-SEG-02"]
    page.search.setText("zzzz nada")
    assert page.search_label.text() == "Nenhum item encontrado."
    shot(wizard, "checklist-search")


# --- photos ---------------------------------------------------------------------------------------


def test_a_photo_shows_as_a_thumbnail_opens_and_is_removed_before_sealing_never_after(
        qtbot, make_shell, data_dir, demo_facts, monkeypatch, tmp_path):
    from PIL import Image

    first, second = tmp_path / "extintor.jpg", tmp_path / "errada.jpg"
    Image.new("RGB", (640, 480), (200, 40, 40)).save(first)
    Image.new("RGB", (640, 480), (40, 40, 200)).save(second)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    row = wizard.checklist.rows["DF-SEG-02"]
    for photo in (first, second):
        monkeypatch.setattr(checklist.PhotoChooser, "ask",
                            classmethod(lambda cls, parent, p=photo: p))
        click(qtbot, row.photo_button)
        wait_idle(qtbot, shell)
    assert row.photo_label.text() == "2 fotos"
    assert len(row.photo_buttons) == 2
    assert not row.photo_buttons[0].icon().isNull()  # the thumbnail itself
    assert row.photo_buttons[0].height() >= 44
    shot(row, "photo-thumbnails")

    opened: list[object] = []
    monkeypatch.setattr(checklist.PhotoViewer, "ask", classmethod(
        lambda cls, parent, photo, title: opened.append(photo) or "remove"))
    click(qtbot, row.photo_buttons[1])
    wait_idle(qtbot, shell)
    assert opened[0].full.exists() and opened[0].name == "errada.jpg"
    assert row.photo_label.text() == "1 foto"
    inspection_id = wizard.state.inspection_id
    kept = in_store(qtbot, shell, lambda s: [p.original_name for p in repo.photos(
        s, inspection_id)])
    assert kept == ["extintor.jpg"]

    row.answer("fail")
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    wizard.result.narrative.setPlainText("Extintor ausente constatado no terminal.")
    click(qtbot, wizard.next_button)
    if wizard.step != 5:  # a review step (another branch) may come before the signatures
        click(qtbot, wizard.next_button)
    sign(qtbot, wizard.signatures.agent.pad)
    sign(qtbot, wizard.signatures.driver.pad)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    click(qtbot, wizard.next_button)  # Selar
    wait_idle(qtbot, shell)
    assert wizard.state.sealed is not None, wizard.banner.text()
    body = in_store(qtbot, shell, lambda s: services.load_record(
        s, wizard.state.sealed.records[0].id).envelope["body"])
    assert [p["name"] for p in body["photos"]] == ["extintor.jpg"]

    photo_id = opened[0].id - 1  # the photo that stayed, now sealed
    with pytest.raises(services.ServiceError, match="já foi selada"):
        store_call(qtbot, shell, lambda s: services.remove_photo(
            store=s, inspection_id=inspection_id, photo_id=photo_id))
    import sqlite3

    with pytest.raises(sqlite3.DatabaseError, match="cannot be removed"):
        store_call(qtbot, shell, lambda s: s.conn.execute(
            "INSERT INTO photo_removals(photo_id, inspection_id, removed_at) "
            "VALUES (?, ?, '2026-01-01')", [photo_id, inspection_id]))


def store_call(qtbot, shell, fn):
    """``fn(store)`` on the app's store worker; an exception it raises is raised here."""
    def job(store):
        try:
            return ("ok", fn(store))
        except Exception as exc:
            return ("raised", exc)

    status, value = in_store(qtbot, shell, job)
    if status == "raised":
        raise value
    return value


# --- GPS ------------------------------------------------------------------------------------------


def test_without_a_position_source_the_gps_button_is_disabled_and_says_why(qtbot):
    button = location.GpsButton(finder=lambda parent: (None, location.NO_SOURCE))
    qtbot.addWidget(button)
    assert not button.isEnabled()
    assert button.toolTip() == location.NO_SOURCE
    assert "nenhuma fonte de posição" in button.toolTip()


def _nmea(sentence: str) -> str:
    checksum = 0
    for char in sentence:
        checksum ^= ord(char)
    return f"${sentence}*{checksum:02X}"


def test_a_gps_fix_from_an_nmea_receiver_fills_latitude_and_longitude(qtbot, make_shell,
                                                                      data_dir, tmp_path,
                                                                      monkeypatch):
    log = tmp_path / "receiver.nmea"  # a replayed receiver: Esplanada dos Ministérios
    lines = [_nmea("GPRMC,123519,A,1547.3050,S,04757.7520,W,000.0,000.0,021226,,,A"),
             _nmea("GPGGA,123519,1547.3050,S,04757.7520,W,1,08,0.9,1172.0,M,0.0,M,,")]
    log.write_text("\r\n".join(lines * 5) + "\r\n", encoding="ascii")
    monkeypatch.setenv(location.NMEA_ENV, log.as_uri())
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = open_wizard(qtbot, shell)
    place = wizard.place_step
    assert place.gps.isEnabled(), place.gps.toolTip()
    click(qtbot, place.gps)
    qtbot.waitUntil(lambda: place.latitude.text() != "", timeout=10_000)
    assert place.latitude.text() == "-15,788417"
    assert place.longitude.text() == "-47,962533"
    assert "Posição preenchida pelo GPS" in place.gps_note.text()
    shot(wizard, "place-gps")


def test_a_gps_that_gives_no_fix_fills_nothing_and_says_so(qtbot, make_shell, data_dir,
                                                           tmp_path, monkeypatch):
    log = tmp_path / "nofix.nmea"  # a receiver without satellites: status V (void)
    log.write_text(_nmea("GPRMC,123519,V,,,,,,,021226,,,N") + "\r\n", encoding="ascii")
    monkeypatch.setenv(location.NMEA_ENV, log.as_uri())
    monkeypatch.setattr(location, "REQUEST_TIMEOUT_MS", 1_500)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = open_wizard(qtbot, shell)
    place = wizard.place_step
    click(qtbot, place.gps)
    qtbot.waitUntil(lambda: place.gps_note.isVisible(), timeout=10_000)
    assert place.latitude.text() == "" and place.longitude.text() == ""
    assert "GPS" in place.gps_note.text()
    assert QApplication.focusWidget() is not shell.lock_button
