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
