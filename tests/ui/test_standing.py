"""HQ's standing of the holder beside the device's own figures, on the vehicle card and the
result step (offscreen, real store)."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from uikit import click, login, start_inspection, wait_idle

from inspector_app.store import open_store, reference
from inspector_app.ui.result import DEVICE_SOURCE, NO_HQ_STANDING

HQ_SENTENCE = (
    "Situação na sede (em 12/11/2026): 14 pontos em 4 meses, 14 em 8 meses e 20 em 12 meses; "
    "reincidência (12 meses) em DF15154.29.XIII (2 ocorrências); proposta de cassação "
    "(Decreto 15.154/1993, art. 39, I): 14 pontos em 4 meses (limite 12) – provisória "
    "(inclui autos pendentes).")


def give_standing(data_dir, plate: str) -> None:
    """The row HQ would have published for the holder of ``plate``, as the pull stores it."""
    store = open_store(data_dir)
    try:
        holder = reference.find_vehicle(store, plate).holder
        store.db.table("ref_standing").insert({
            "id": holder.id, "pack_id": "DF_STPCR", "as_of": "2026-11-12",
            "points_json": json.dumps({"4": 14, "8": 14, "12": 20}),
            "reincidence_json": json.dumps({"DF15154.29.XIII": 1}),
            "cassacao_proposed": True,
            "cassacao_json": json.dumps({
                "ground": "DF15154.39.I", "text": "14 pontos em 4 meses (limite 12)",
                "provisional": True, "citation": "Decreto 15.154/1993, art. 39, I"}),
            "windows_json": "[[4, 12], [8, 18], [12, 22]]",
        })
    finally:
        store.close()


@pytest.mark.parametrize(("has_standing", "hq_line", "level"), [
    (True, HQ_SENTENCE, "warning"),
    (False, NO_HQ_STANDING, "info"),
], ids=["hq-standing", "none-received"])
def test_the_inspector_sees_which_figures_are_the_devices_and_which_are_hqs(
        qtbot, make_shell, data_dir, demo_facts, has_standing, hq_line, level):
    if has_standing:
        give_standing(data_dir, demo_facts.df_plate)
    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    wizard = start_inspection(qtbot, shell, pack="DF_STPCR", place="Terminal de Brazlândia",
                              location="terminal", plate=demo_facts.df_plate)
    card = wizard.vehicle_step.card.text()
    assert (HQ_SENTENCE in card) is has_standing
    assert ("Situação na sede" in card) is has_standing
    qtbot.keyClick(wizard.checklist.rows["DF-SEG-02"], Qt.Key.Key_N)
    click(qtbot, wizard.next_button)
    wait_idle(qtbot, shell)
    result = wizard.result
    assert result.outcome is not None and result.standing.isVisible()
    assert result.standing.text() == f"{DEVICE_SOURCE}\n{hq_line}"
    assert result.standing.level == level
    # The engine's own figures for this auto are unchanged by HQ's standing.
    assert [i.points for i in result.active_infractions()] == [2]
