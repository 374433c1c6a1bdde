"""Qt's own texts in Portuguese and Brazilian number and date formats (``ui.app.install_pt_br``)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QDate, QLocale
from PySide6.QtWidgets import QApplication, QMessageBox

from inspector_app.ui.app import install_pt_br


@pytest.fixture
def pt_br(qapp):
    previous = QLocale()
    translator = install_pt_br(qapp)
    yield translator
    if translator is not None:
        QApplication.removeTranslator(translator)
    QLocale.setDefault(previous)


def test_qt_ships_and_loads_the_brazilian_portuguese_catalogue(pt_br):
    assert pt_br is not None, "qtbase_pt_BR.qm not found in Qt's translations folder"


def test_standard_buttons_of_a_message_box_read_in_portuguese(qtbot, pt_br):
    box = QMessageBox(QMessageBox.Icon.Question, "Confirmar", "Cancelar o auto?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No
                      | QMessageBox.StandardButton.Cancel)
    qtbot.addWidget(box)
    texts = {box.button(b).text().replace("&", "") for b in (
        QMessageBox.StandardButton.Yes, QMessageBox.StandardButton.No,
        QMessageBox.StandardButton.Cancel)}
    assert texts == {"Sim", "Não", "Cancelar"}


def test_numbers_and_dates_use_the_brazilian_format(pt_br):
    locale = QLocale()
    assert locale.name() == "pt_BR"
    assert locale.toString(1234.56, "f", 2) == "1.234,56"
    date = QDate(2026, 3, 9)
    assert locale.toString(date, QLocale.FormatType.ShortFormat) == "09/03/2026"
