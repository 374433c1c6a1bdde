"""Regulation engine, second pass (issue 13). Every expected outcome is derived from the
regulation texts (shared/domain/seeds) and RULES.md, each row citing its article; windows are
tested on the boundary day, the day before and the day after."""

from __future__ import annotations

import datetime as dt
import time
from decimal import Decimal

import pytest

from inspector_app.domain.case import CaseError
from inspector_app.packs import get_pack
from tests.domain.casebuild import infraction, run_case

D = dt.date


# --- G33 / art. 32 §2: one fact, one penalty -----------------------------------------------
@pytest.mark.parametrize(
    ("changes", "applied", "absent", "cite"),
    [
        ({"driver": {"registered": False}}, "DF15154.30.I", "DF15154.29.XXII",
         "art. 30 I: unregistered driver (vehicle check)"),
        ({"checklist": {"DF-DOC-08": "fail"}}, "DF15154.30.I", "DF15154.29.XXII",
         "art. 30 I: unregistered driver (checklist)"),
        ({"driver": {"registered": False}, "checklist": {"DF-DOC-08": "fail"}},
         "DF15154.30.I", "DF15154.29.XXII", "G33: registry and answer are one fact"),
        ({"checklist": {"DF-DOC-04": {"result": "fail",
                                      "rules": ["DF15154.29.XX", "DF15154.29.X"]}}},
         "DF15154.29.XX", "DF15154.29.X", "art. 29 XX over X for the same certificate"),
        ({"checklist": {"DF-SEG-04": {"result": "fail",
                                      "rules": ["DF15154.29.XIII", "DF15154.29.XXI"]}}},
         "DF15154.29.XXI", "DF15154.29.XIII", "art. 29 XXI over XIII for the same defect"),
        ({"checklist": {"DF-OPS-04": {"result": "fail",
                                      "rules": ["DF15154.30.XVII", "DF15154.30.IV"]}}},
         "DF15154.30.XVII", "DF15154.30.IV", "art. 30 XVII over IV for the same cargo"),
    ],
)
def test_one_fact_one_penalty(changes: dict, applied: str, absent: str, cite: str) -> None:
    out = run_case("DF_STPCR", **changes)
    ids = [i.rule_id for i in out.infractions]
    assert applied in ids and absent not in ids, (cite, ids)


def test_two_unregistered_driver_autos_in_four_months_do_not_reach_cassacao() -> None:
    # art. 30 I is Grupo C (3 points). Before the fix 30 I + 29 XXII gave 6 points per auto,
    # so two autos (12 points) reached art. 39 I in 4 months. Now 3 + 3 (reincidence doubles
    # the second to 6, art. 32 §3) = 9 < 12.
    history = [{"rule_id": "DF15154.30.I", "date": "2026-02-14", "points": 3}]
    out = run_case("DF_STPCR", driver={"registered": False}, history=history)
    assert [i.rule_id for i in out.infractions] == ["DF15154.30.I"]
    assert out.total_points == 6
    assert out.total_fine == Decimal("300.00")  # one C fine: 50 × R$ 6,00
    assert not out.cassacao.proposed


def test_the_item_no_longer_offers_29_xxii_for_the_driver() -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", checklist={"DF-DOC-08": {
            "result": "fail", "rules": ["DF15154.30.I", "DF15154.29.XXII"]}})
    assert err.value.field == "checklist.DF-DOC-08.rules"


def test_a_different_fact_keeps_the_other_rule() -> None:
    # An unregistered cobrador added by hand is another irregularity (art. 32 §2 cumulates).
    out = run_case("DF_STPCR", driver={"registered": False}, infractions=["DF15154.29.XXII"])
    assert {i.rule_id for i in out.infractions} == {"DF15154.30.I", "DF15154.29.XXII"}


@pytest.mark.parametrize(
    ("pack", "item", "rules", "field"),
    [
        ("DF_STPCR", "DF-OPS-07", ["DF15154.30.XII", "DF15154.30.XIV"],
         "checklist.DF-OPS-07.rules"),  # art. 30 XII/XIV: one manoeuvre, one inciso
        ("JF_1972", "JF-DOC-05", ["JF1235.1.12", "JF1235.2.1.5"],
         "checklist.JF-DOC-05.rules"),  # G29: staff or company, never both
    ],
)
def test_choose_one_alternative_is_refused_when_both_are_given(
    pack: str, item: str, rules: list[str], field: str
) -> None:
    with pytest.raises(CaseError) as err:
        run_case(pack, checklist={item: {"result": "fail", "rules": rules}})
    assert err.value.field == field
    assert "escolha um só enquadramento" in err.value.message_pt


def test_jf_specific_schedule_rule_wins() -> None:
    out = run_case("JF_1972", checklist={"JF-DOC-08": {
        "result": "fail", "rules": ["JF1235.2.1.9", "JF1235.2.1.14"]}})
    assert [i.rule_id for i in out.infractions] == ["JF1235.2.1.14"]  # G29


def test_every_pack_alternative_names_known_rules_and_a_basis() -> None:
    for pid in ("DF_STPA", "DF_STPCR", "JF_1972"):
        pack = get_pack(pid)
        assert pack.alternatives
        for alt in pack.alternatives:
            assert all(r in pack.rules for r in alt.rules)
            assert "art." in alt.basis


# --- art. 39 III: replacement of an over-age vehicle ---------------------------------------
# Notice on 01/03/2026; 30 calendar days (Lei 9.784 art. 66 §2) end on 31/03/2026 (Tuesday).
@pytest.mark.parametrize(
    ("fact_day", "proposed", "due", "cite"),
    [
        ("2026-03-30", False, D(2026, 3, 31), "art. 39 III: the day before the end"),
        ("2026-03-31", False, D(2026, 3, 31), "art. 39 III: the 30th day itself"),
        ("2026-04-01", True, None, "art. 39 III: the day after, cassação, no new deadline"),
    ],
)
def test_age_replacement_deadline_or_cassacao(
    fact_day: str, proposed: bool, due: D | None, cite: str
) -> None:
    out = run_case(
        "DF_STPCR",
        occurred_at=f"{fact_day}T10:00:00-03:00",
        vehicle={"chassis_year": 2016},
        facts={"age_replacement_notified_on": "2026-03-01"},
    )
    assert out.cassacao.proposed is proposed, cite
    replacement = [d for d in out.deadlines if d.kind == "substituicao_veiculo"]
    if proposed:
        assert replacement == [], cite
        assert "não há novo prazo" in out.cassacao.grounds[0].detail
    else:
        assert [d.due for d in replacement] == [due], cite
        assert replacement[0].counted_from == D(2026, 3, 1)


def test_age_replacement_without_notice_runs_from_the_auto() -> None:
    out = run_case("DF_STPCR", vehicle={"chassis_year": 2016})  # fact 14/04/2026
    (d,) = [d for d in out.deadlines if d.kind == "substituicao_veiculo"]
    assert (d.counted_from, d.due) == (D(2026, 4, 14), D(2026, 5, 14))


def test_notice_after_the_fact_is_refused() -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", vehicle={"chassis_year": 2016},
                 facts={"age_replacement_notified_on": "2026-04-15"})
    assert err.value.field == "facts.age_replacement_notified_on"


# --- art. 41 II: commutation of the cassação -----------------------------------------------
def test_cassacao_shows_commutation_into_three_times_group_c() -> None:
    history = [{"rule_id": "DF15154.30.XII", "date": "2026-01-20", "points": 9}]
    out = run_case("DF_STPCR", infractions=["DF15154.30.VI"], history=history)
    assert out.cassacao.proposed
    c = out.cassacao.commutation
    assert c is not None and c.fine_brl == Decimal("900.00")  # 3 × 50 × R$ 6,00
    assert "art. 41, II" in c.basis


def test_no_commutation_without_cassacao() -> None:
    assert run_case("DF_STPCR", infractions=["DF15154.30.VI"]).cassacao.commutation is None


# --- one window rule (Lei 9.784/1999 art. 66 §3), boundary day/before/after ----------------
# Fact 14/04/2026. Each window is counted from the earlier date, date to date, last day in.
@pytest.mark.parametrize(
    ("months", "points", "day", "proposed", "cite"),
    [
        (4, 9, "2025-12-13", False, "art. 39 I 4 months: the day before the boundary"),
        (4, 9, "2025-12-14", True, "art. 39 I 4 months: the boundary day (last day included)"),
        (4, 9, "2025-12-15", True, "art. 39 I 4 months: the day after"),
        (8, 15, "2025-08-13", False, "art. 39 I 8 months: the day before"),
        (8, 15, "2025-08-14", True, "art. 39 I 8 months: the boundary day"),
        (12, 19, "2025-04-13", False, "art. 39 I 12 months: the day before"),
        (12, 19, "2025-04-14", True, "art. 39 I 12 months: the boundary day"),
        (12, 19, "2025-04-15", True, "art. 39 I 12 months: the day after"),
    ],
)
def test_cassacao_point_windows_boundary(
    months: int, points: int, day: str, proposed: bool, cite: str
) -> None:
    history = [{"rule_id": "DF15154.30.XII", "date": day, "points": points}]
    out = run_case("DF_STPCR", infractions=["DF15154.30.VI"], history=history)
    assert out.cassacao.proposed is proposed, cite
    if day.endswith(("12-14", "08-14", "04-14")):
        assert any("regra de contagem" in n and "art. 66" in n for n in out.notes), cite


@pytest.mark.parametrize(
    ("last", "valid", "cite"),
    [
        ("2026-02-13", False, "art. 21: 2 months from 13/02 ended 13/04"),
        ("2026-02-14", True, "art. 21: 2 months from 14/02 end on 14/04, the fact's day"),
        ("2026-02-15", True, "art. 21: still valid"),
    ],
)
def test_vistoria_window_uses_the_same_rule(last: str, valid: bool, cite: str) -> None:
    out = run_case("DF_STPCR", vehicle={"last_vistoria": last})
    assert out.vistoria.valid is valid, cite
    assert ("DF15154.29.XX" in {i.rule_id for i in out.infractions}) is (not valid), cite


def test_window_rule_can_be_switched_and_is_printed() -> None:
    history = [{"rule_id": "DF15154.29.XIII", "date": "2025-04-14"}]
    out = run_case("DF_STPCR", infractions=["DF15154.29.XIII"], history=history,
                   parameters={"tariff_brl": "6.00", "windows.boundary": "last_day_excluded"})
    assert infraction(out, "DF15154.29.XIII").reincidence is False
    assert "excluído" in out.window_rule
    assert any("ficou fora" in n for n in out.notes)
    with pytest.raises(CaseError):
        run_case("DF_STPCR", parameters={"windows.boundary": "sometimes"})


def test_end_of_month_date_to_date() -> None:
    # art. 66 §3: no 31/02 -> the period from 31/12/2025 of 2 months ends on 28/02/2026.
    inside = run_case("DF_STPCR", occurred_at="2026-02-28T10:00:00-03:00",
                      vehicle={"last_vistoria": "2025-12-31"})
    after = run_case("DF_STPCR", occurred_at="2026-03-01T10:00:00-03:00",
                     vehicle={"last_vistoria": "2025-12-31"})
    assert (inside.vistoria.valid, after.vistoria.valid) == (True, False)


# --- a bad registry row warns; evaluation proceeds -------------------------------------------
def test_history_row_with_unknown_rule_warns_and_the_rest_counts() -> None:
    history = [
        {"rule_id": "JF1235.1.1", "date": "2026-01-01", "auto": "X-1"},
        {"rule_id": "DF15154.29.XIII", "date": "2026-01-10"},
    ]
    out = run_case("DF_STPCR", infractions=["DF15154.29.XIII"], history=history)
    assert infraction(out, "DF15154.29.XIII").reincidence is True  # art. 32 §3 still applied
    assert any("JF1235.1.1" in w and "desconsiderado" in w for w in out.warnings)


# --- art. 39 IV and V flags ----------------------------------------------------------------
def test_art_39_iv_flag_for_missing_insurance() -> None:
    out = run_case("DF_STPCR", vehicle={"insurance_valid_until": "2026-04-01"})
    (flag,) = [f for f in out.flags if f.id == "DF15154.39.IV"]
    assert "Decreto 15.154/1993, art. 29, XXIV" in flag.detail and flag.count == 1 and flag.presumed
    assert "DF15154" not in flag.detail  # printed on the auto: no internal key


@pytest.mark.parametrize(
    ("dates", "flagged", "cite"),
    [
        (["2026-01-10"], False, "art. 39 V: 2 B/C in 12 months (1 before + today)"),
        (["2026-01-10", "2025-06-01"], True, "art. 39 V: 3 B/C in 12 months"),
        (["2026-01-10", "2025-04-13"], False, "art. 39 V: the 2nd is a day outside 12 months"),
        (["2026-01-10", "2025-04-14"], True, "art. 39 V: the 2nd on the boundary day"),
    ],
)
def test_art_39_v_flag_systematic_b_c(dates: list[str], flagged: bool, cite: str) -> None:
    history = [{"rule_id": "DF15154.29.IV", "date": d} for d in dates]
    out = run_case("DF_STPCR", infractions=["DF15154.29.XIII"], history=history)
    flags = [f for f in out.flags if f.id == "DF15154.39.V"]
    assert bool(flags) is flagged, cite
    if flagged:
        assert (flags[0].count, flags[0].window_months) == (3, 12)


def test_group_a_does_not_count_towards_art_39_v() -> None:
    history = [{"rule_id": "DF15154.29.I", "date": "2026-01-10"},
               {"rule_id": "DF15154.29.I", "date": "2026-02-10"}]
    out = run_case("DF_STPCR", infractions=["DF15154.29.XIII"], history=history)
    assert not [f for f in out.flags if f.id == "DF15154.39.V"]


# --- Lei 194 art. 18 (STPA) ------------------------------------------------------------------
def test_stpa_without_driver_identification_warns_art_18_p6() -> None:
    out = run_case("DF_STPA", driver={"cpf": None, "registered": True},
                   infractions=["DF15154.29.XIII"])
    assert any("art. 18, §6º" in w for w in out.warnings)
    ok = run_case("DF_STPA", driver={"name": "João da Silva"}, infractions=["DF15154.29.XIII"])
    assert not any("art. 18, §6º" in w for w in ok.warnings)


def test_stpa_permission_is_for_natural_persons() -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPA", autuado={"kind": "empresa", "cnpj": "11222333000181"})
    assert err.value.field == "autuado.kind"
    out = run_case("DF_STPCR", autuado={"kind": "empresa", "cnpj": "12ABC34501DE35"})
    assert out.autuado is not None and out.autuado["cnpj"] == "12ABC34501DE35"


# --- Juiz de Fora ------------------------------------------------------------------------------
def test_jf_company_is_always_the_autuado() -> None:
    out = run_case("JF_1972", infractions=["JF1235.1.9"])
    assert out.autuado is not None and out.autuado["kind"] == "empresa"
    assert "art" in str(out.autuado["basis"]) and "50" in str(out.autuado["basis"])
    with pytest.raises(CaseError) as err:
        run_case("JF_1972", autuado={"kind": "permissionario", "cpf": "16944060167"})
    assert err.value.field == "autuado.kind"


@pytest.mark.parametrize(
    ("day", "historical", "ok", "cite"),
    [
        ("2014-12-30", False, True, "in force the day before the end date"),
        ("2014-12-31", False, True, "the last day in force"),
        ("2015-01-01", False, False, "revoked: refused"),
        ("2015-01-01", True, True, "revoked: allowed as historical re-evaluation"),
    ],
)
def test_jf_1972_end_date(day: str, historical: bool, ok: bool, cite: str) -> None:
    changes: dict = {"occurred_at": f"{day}T10:00:00-02:00", "infractions": ["JF1235.1.9"],
                     "vehicle": {"chassis_year": 2010, "body_year": 2010},
                     "historical_reevaluation": {"reason": "revisão"} if historical else None}
    if not ok:
        with pytest.raises(CaseError) as err:
            run_case("JF_1972", **changes)
        assert err.value.field == "occurred_at" and err.value.code == "not_in_force"
        return
    out = run_case("JF_1972", **changes)
    said = any("Reavaliação histórica" in w for w in out.warnings)
    assert said is historical, cite
    assert any("Reavaliação histórica" in n for n in out.notes) is historical  # printed
    assert (out.historical_reevaluation is not None) is historical


@pytest.mark.parametrize(
    ("notified", "flagged", "cite"),
    [
        ("2026-04-04", False, "art. 23 §1: 10 days is not more than 10"),
        ("2026-04-03", True, "art. 23 §1: 11 consecutive days"),
    ],
)
def test_jf_inquiry_when_irregularity_persists(notified: str, flagged: bool, cite: str) -> None:
    out = run_case("JF_1972", infractions=["JF1235.2.1.3"],
                   facts={"irregularity_notified_on": notified})
    assert bool([f for f in out.flags if f.id == "JF1235.23.p1"]) is flagged, cite


def test_jf_revocation_flag_for_suspension_and_undue_prices() -> None:
    out = run_case("JF_1972", infractions=["JF1235.2.1.12", "JF1235.1.7.2"])
    details = [f.detail for f in out.flags if f.id == "JF1235.45.c"]
    assert len(details) == 2 and any("52, 3, h" in d for d in details)


def test_jf_age_exception_by_act_art_33_p2() -> None:
    old = {"chassis_year": 2010, "body_year": 2010}
    plain = run_case("JF_1972", vehicle=old)
    assert plain.infractions  # art. 33 §1: chassis ≤ 12, body ≤ 8 years
    excepted = run_case("JF_1972", vehicle={**old, "age_exception": {
        "act": "Portaria SMU 123/2025", "issued_on": "2025-02-01", "route": "Linha 500"}})
    assert not excepted.infractions
    assert any("Portaria SMU 123/2025" in n and "art. 33, §2º" in n for n in excepted.notes)
    with pytest.raises(CaseError) as err:
        run_case("JF_1972", vehicle={**old, "age_exception": {"act": " "}})
    assert err.value.field == "vehicle.age_exception.act"
    with pytest.raises(CaseError):
        run_case("DF_STPCR", vehicle={"age_exception": {"act": "x"}})


# --- calendar version on every deadline ----------------------------------------------------
def test_every_deadline_names_its_calendar_version() -> None:
    out = run_case("DF_STPCR", infractions=["DF15154.29.XIII"])
    assert out.deadlines and all(d.calendar_version.startswith("DF_STPCR@")
                                 for d in out.deadlines)
    assert out.as_json()["deadlines"][0]["calendar_version"] == out.calendar_version


def test_engine_is_linear_in_alternatives() -> None:
    # Not a timing test: the resolution touches each fact once (G33 must not re-evaluate).
    t0 = time.perf_counter()
    run_case("DF_STPCR", driver={"registered": False})
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize(
    ("day", "inside"),
    [("2025-12-13", False), ("2025-12-14", True), ("2025-12-15", True)],
)
def test_hq_standing_counts_windows_by_the_same_rule(day: str, inside: bool) -> None:
    # One window rule everywhere (Lei 9.784 art. 66 §3): HQ's standing of the holder agrees
    # with the engine on the boundary day of the 4-month window (art. 39 I).
    from inspector_app.hq.standing import compute_standing

    history = [{"rule_id": "DF15154.30.XII", "date": day, "status": "upheld", "points": 9},
               {"rule_id": "DF15154.30.VI", "date": "2026-04-14", "status": "upheld",
                "points": 3}]
    row = compute_standing(history, [(4, 12)], holder_key="h", pack_id="DF_STPCR",
                           as_of=D(2026, 4, 14))
    assert row["cassacao_proposed"] is inside
    engine = run_case("DF_STPCR", infractions=["DF15154.30.VI"],
                      history=[{"rule_id": "DF15154.30.XII", "date": day, "points": 9}])
    assert engine.cassacao.proposed is inside
