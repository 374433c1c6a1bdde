"""Typed dates, plate and document display, checklist search: pure functions, table-driven."""

from __future__ import annotations

import datetime as dt

import pytest

from inspector_app.domain.fieldtext import (
    DateTextError,
    document_display,
    match_items,
    parse_date_br,
    plate_display,
)


@pytest.mark.parametrize(("text", "expected"), [
    ("05/03/2026", dt.date(2026, 3, 5)),
    ("5/3/2026", dt.date(2026, 3, 5)),
    ("05-03-2026", dt.date(2026, 3, 5)),
    ("05032026", dt.date(2026, 3, 5)),
    ("29/02/2024", dt.date(2024, 2, 29)),  # leap year: the boundary day exists
    ("28/02/2026", dt.date(2026, 2, 28)),  # the day before the impossible one
    ("31/12/2026", dt.date(2026, 12, 31)),
    ("", None),
    ("  /  /    ", None),
])
def test_a_real_date_is_read_and_an_empty_field_is_no_date(text, expected):
    assert parse_date_br(text) == expected


@pytest.mark.parametrize(("text", "says"), [
    ("31/02/2026", "Data impossível: 31/02/2026 não existe (fevereiro de 2026 tem 28 dias)"),
    ("29/02/2026", "fevereiro de 2026 tem 28 dias"),
    ("30/02/2024", "fevereiro de 2024 tem 29 dias"),
    ("31/04/2026", "abril de 2026 tem 30 dias"),
    ("00/01/2026", "01/2026 não existe"),
    ("10/13/2026", "Mês 13 não existe"),
    ("10/10/1850", "Ano 1850 fora do intervalo"),
    ("10/10", "Data incompleta"),
    ("amanhã", "Data incompleta"),
])
def test_an_impossible_or_malformed_date_is_refused_with_a_portuguese_reason(text, says):
    with pytest.raises(DateTextError) as err:
        parse_date_br(text)
    assert says in err.value.message


@pytest.mark.parametrize(("text", "shown"), [
    ("abc1234", "ABC-1234"), ("ABC-1234", "ABC-1234"), ("ABC 1234", "ABC-1234"),
    ("abc1d23", "ABC1D23"), ("ABC1D23", "ABC1D23"), ("", ""), (None, ""),
    ("XYZ", "XYZ"),  # not a plate: shown as it is, never hidden
])
def test_a_plate_has_one_display_form(text, shown):
    assert plate_display(text) == shown


@pytest.mark.parametrize(("text", "shown"), [
    ("52998224725", "529.982.247-25"),
    ("529.982.247-25", "529.982.247-25"),
    ("11222333000181", "11.222.333/0001-81"),
    ("52998224700", "52998224700"),  # wrong check digits: as stored, never "corrected"
    ("", ""), (None, ""),
])
def test_cpf_and_cnpj_are_shown_with_their_punctuation_when_valid(text, shown):
    assert document_display(text) == shown


def test_items_are_found_by_code_first_then_by_every_word_without_accents():
    items = [("DF-SEG-02", "Extintor de incêndio ABC"), ("DF-SEG-01", "Portas"),
             ("DF-DOC-04", "Certificado de Vistoria portado e válido"),
             ("DF-SEG-021", "Extintor reserva")]
    assert match_items("df-seg-02", items) == ["DF-SEG-02", "DF-SEG-021"]
    assert match_items("extintor", items) == ["DF-SEG-02", "DF-SEG-021"]
    assert match_items("VISTORIA valido", items) == ["DF-DOC-04"]
    assert match_items("incendio reserva", items) == []
    assert match_items("  ", items) == []
