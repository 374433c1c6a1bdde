"""Checklist photos from a camera: disabled without one, a captured file is imported."""

from __future__ import annotations

import pytest
from PIL import Image
from PySide6.QtMultimedia import QCameraDevice, QMediaDevices
from PySide6.QtWidgets import QDialog
from uikit import click, in_store, login, start_inspection, wait_idle

from inspector_app.ui import camera, checklist


def photo_count(qtbot, shell, item_id: str) -> int:
    return in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT COUNT(*) FROM photos WHERE item_id = ?", [item_id]).fetchone()[0])


def test_without_a_camera_the_camera_button_is_disabled_and_says_so(qtbot, make_shell,
                                                                    data_dir, demo_facts):
    if QMediaDevices.videoInputs():
        pytest.skip("this machine has a camera")
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    rows = wizard.checklist.rows.values()
    assert {(r.camera_button.isEnabled(), r.camera_button.toolTip()) for r in rows} == {
        (False, "Nenhuma câmera encontrada")}
    assert all(r.photo_button.isEnabled() for r in rows)  # a file can still be chosen


def test_a_photo_the_camera_saved_is_attached_to_the_item_and_the_temporary_file_removed(
    qtbot, make_shell, data_dir, demo_facts, monkeypatch
):
    captured = []

    def capture(cls, parent, device, folder, name):
        # What QImageCapture leaves behind: a JPEG in the folder the dialog was given.
        path = folder / f"{name}-1.jpg"
        Image.new("RGB", (1280, 720), (30, 90, 160)).save(path, "JPEG")
        captured.append(path)
        return path

    monkeypatch.setattr(checklist, "find_camera", lambda: (QCameraDevice(), ""))
    monkeypatch.setattr(camera.CameraDialog, "ask", classmethod(capture))
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    row = wizard.checklist.rows["DF-SEG-02"]
    assert row.camera_button.isEnabled()
    click(qtbot, row.camera_button)
    wait_idle(qtbot, shell)

    assert row.photo_label.text() == "1 foto"
    assert photo_count(qtbot, shell, "DF-SEG-02") == 1
    [path] = captured
    assert not path.exists() and not path.parent.exists()
    name = in_store(qtbot, shell, lambda s: s.conn.execute(
        "SELECT original_name FROM photos").fetchone()[0])
    assert name == "DF-SEG-02-1.jpg"


def test_a_captured_file_that_cannot_be_imported_stays_where_it_is_and_the_message_says_where(
    qtbot, make_shell, data_dir, demo_facts, tmp_path
):
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    broken = tmp_path / "camera" / "DF-SEG-02-1.jpg"
    broken.parent.mkdir()
    broken.write_bytes(b"not a jpeg")
    row = wizard.checklist.rows["DF-SEG-02"]
    wizard.checklist.attach_captured(row, broken)
    wait_idle(qtbot, shell)

    assert broken.exists()
    assert f"A foto tirada continua em {broken}." in wizard.checklist.banner.text()
    assert row.photo_label.text() == ""
    assert photo_count(qtbot, shell, "DF-SEG-02") == 0


def test_the_camera_dialog_keeps_the_file_the_camera_wrote_and_refuses_an_empty_one(
    qtbot, tmp_path
):
    dialog = camera.CameraDialog(None, QCameraDevice(), tmp_path, "DF-SEG-02")
    qtbot.addWidget(dialog)
    empty = tmp_path / "DF-SEG-02-1.jpg"
    empty.write_bytes(b"")
    dialog.image_saved(1, str(empty))
    assert dialog.photo is None and dialog.banner.level == "error"
    assert "não foi gravado" in dialog.banner.text()

    good = tmp_path / "DF-SEG-02-2.jpg"
    Image.new("RGB", (64, 48), (0, 0, 0)).save(good, "JPEG")
    dialog.image_saved(2, str(good))
    assert dialog.photo == good
    assert dialog.result() == QDialog.DialogCode.Accepted
