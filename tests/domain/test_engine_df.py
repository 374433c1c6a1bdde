"""Rules engine, DF regimes (Decreto 15.154/1993; Lei 194/1991 by analogy): table-driven."""

from __future__ import annotations

from decimal import Decimal

import pytest
from casebuild import infraction, run_case

from inspector_app.domain.case import CaseError

# --- RULES.md §A1.1: fines (art. 35) and points (art. 35 §ú) by group, T = R$ 6,00 -----------
# Each rule is evaluated as a second offence (another infraction upheld 2 months earlier), so
# group A is not an advertência and no reincidence doubles the points.
PRIOR_OTHER = [{"rule_id": "DF15154.30.XIX", "date": "2026-02-10", "status": "upheld"}]


@pytest.mark.parametrize(
    ("pack", "rule_id", "group", "fine", "points", "cite"),
    [
        ("DF_STPCR", "DF15154.29.I", "A", "180.00", 1, "art. 35 I; §ú points A presumed (G1)"),
        ("DF_STPCR", "DF15154.29.XVII", "A", "180.00", 1, "art. 29 XVII, art. 35 I"),
        ("DF_STPCR", "DF15154.30.II", "A", "180.00", 1, "art. 30 II, art. 35 I"),
        ("DF_STPCR", "DF15154.29.II", "B", "240.00", 2, "art. 29 II, art. 35 II and §ú"),
        ("DF_STPCR", "DF15154.29.XIII", "B", "240.00", 2, "art. 29 XIII, art. 35 II"),
        ("DF_STPCR", "DF15154.30.XVI", "B", "240.00", 2, "art. 30 XVI, art. 35 II"),
        ("DF_STPCR", "DF15154.29.XV", "C", "300.00", 3, "art. 29 XV, art. 35 III and §ú"),
        ("DF_STPCR", "DF15154.29.XXIV", "C", "300.00", 3, "art. 29 XXIV, art. 35 III"),
        ("DF_STPCR", "DF15154.30.XV", "C", "300.00", 3, "art. 30 XV, art. 35 III"),
        ("DF_STPA", "DF15154.29.II", "B", "240.00", 2, "Lei 194 art. 11 by analogy, art. 35 II"),
        ("DF_STPA", "DF15154.30.XII", "C", "300.00", 3, "art. 30 XII by analogy, art. 35 III"),
    ],
)
def test_fine_is_group_multiple_of_highest_tariff_and_points_by_group(
    pack: str, rule_id: str, group: str, fine: str, points: int, cite: str
) -> None:
    changes: dict[str, object] = {"infractions": [rule_id], "history": PRIOR_OTHER}
    if pack == "DF_STPA" and rule_id == "DF15154.30.XVI":
        changes["facts"] = {"vehicle_stopped": True, "inspection_done": True}
    inf = infraction(run_case(pack, **changes), rule_id)
    assert (inf.group, inf.penalty, str(inf.fine_brl), inf.points) == (group, "multa", fine, points)
    assert any("Decreto 15.154/1993" in b for b in inf.basis)
    assert inf.analogy is (pack == "DF_STPA")


def test_group_a_points_are_a_presumed_rule_g1() -> None:
    inf = infraction(
        run_case("DF_STPCR", infractions=["DF15154.29.XIX"], history=PRIOR_OTHER), "DF15154.29.XIX"
    )
    assert "points.group_a" in {a.parameter for a in inf.assumptions}


def test_group_b_points_are_not_presumed() -> None:
    inf = infraction(run_case("DF_STPCR", infractions=["DF15154.29.IV"]), "DF15154.29.IV")
    assert "points.group_a" not in {a.parameter for a in inf.assumptions}


# --- §A5.1: advertência (art. 34) and primário (G10) ------------------------------------------
@pytest.mark.parametrize(
    ("rule_id", "history", "penalty", "fine", "cite"),
    [
        ("DF15154.29.XIX", [], "advertencia", "0.00", "art. 34: Grupo A, primário"),
        ("DF15154.29.XIX", PRIOR_OTHER, "multa", "180.00", "art. 34: not primário (any, 12 m)"),
        (
            "DF15154.29.XIX",
            [{"rule_id": "DF15154.30.XIX", "date": "2025-03-01", "status": "upheld"}],
            "advertencia",
            "0.00",
            "G10 default: only the last 12 months count",
        ),
        (
            "DF15154.29.XIX",
            [{"rule_id": "DF15154.30.XIX", "date": "2026-03-01", "status": "cancelled"}],
            "advertencia",
            "0.00",
            "cancelled autos do not count",
        ),
        ("DF15154.29.IV", [], "multa", "240.00", "art. 34: advertência only for Grupo A"),
        ("DF15154.30.VI", [], "multa", "300.00", "art. 34: Grupo C is always multa"),
    ],
)
def test_advertencia_only_for_group_a_primario(
    rule_id: str, history: list[dict[str, str]], penalty: str, fine: str, cite: str
) -> None:
    inf = infraction(run_case("DF_STPCR", infractions=[rule_id], history=history), rule_id)
    assert (inf.penalty, str(inf.fine_brl)) == (penalty, fine)


def test_group_a_first_offence_gets_advertencia_with_points_by_default_g12() -> None:
    inf = infraction(run_case("DF_STPCR", infractions=["DF15154.30.X"]), "DF15154.30.X")
    assert inf.penalty == "advertencia" and inf.points == 1
    assert {"points.on_advertencia", "points.group_a"} <= {a.parameter for a in inf.assumptions}


def test_points_on_advertencia_can_be_switched_off() -> None:
    out = run_case(
        "DF_STPCR",
        infractions=["DF15154.30.X"],
        parameters={"tariff_brl": "6.00", "points.on_advertencia": False},
    )
    assert infraction(out, "DF15154.30.X").points == 0


def test_primario_policy_ever_counts_old_history() -> None:
    out = run_case(
        "DF_STPCR",
        infractions=["DF15154.29.XIX"],
        history=[{"rule_id": "DF15154.30.XIX", "date": "2020-01-01", "status": "upheld"}],
        parameters={"tariff_brl": "6.00", "primario.policy": "ever"},
    )
    assert infraction(out, "DF15154.29.XIX").penalty == "multa"


# --- §A5.1: reincidence doubles points, not the fine (art. 32 §3) -----------------------------
@pytest.mark.parametrize(
    ("history_date", "status", "points", "reincidence", "cite"),
    [
        ("2026-01-10", "upheld", 4, True, "art. 32 §3: same rule within 12 months"),
        ("2025-04-15", "upheld", 4, True, "art. 32 §3: 12 months minus one day"),
        # Lei 9.784/1999 art. 66 caput and §3 (windows.boundary = last_day_included): the
        # 12 months from 14/04/2025 end on 14/04/2026, a day still inside the period
        ("2025-04-14", "upheld", 4, True, "art. 32 §3 + Lei 9.784 art. 66 §3: the end day"),
        ("2025-04-13", "upheld", 2, False, "art. 32 §3: the period ended the day before"),
        ("2024-12-01", "upheld", 2, False, "art. 32 §3: older than 12 months"),
        ("2026-01-10", "pending", 2, False, "pending auto: warning only (G15)"),
        ("2026-01-10", "cancelled", 2, False, "cancelled auto never counts"),
    ],
)
def test_reincidence_within_12_months_doubles_points_not_fine(
    history_date: str, status: str, points: int, reincidence: bool, cite: str
) -> None:
    out = run_case(
        "DF_STPCR",
        infractions=["DF15154.29.XIII"],
        history=[{"rule_id": "DF15154.29.XIII", "date": history_date, "status": status}],
    )
    inf = infraction(out, "DF15154.29.XIII")
    assert (inf.points, inf.reincidence, str(inf.fine_brl)) == (points, reincidence, "240.00")
    if status == "pending":
        assert any("pendente" in w for w in out.warnings)


def test_reincidence_of_another_rule_does_not_double_points() -> None:
    out = run_case(
        "DF_STPCR",
        infractions=["DF15154.29.XIII"],
        history=[{"rule_id": "DF15154.29.IV", "date": "2026-01-10", "status": "upheld"}],
    )
    assert infraction(out, "DF15154.29.XIII").points == 2


def test_stpa_fine_reincidence_factor_is_configurable_g9() -> None:
    # Lei 194/1991 art. 18 II: fines "agravadas no caso de reincidência"; RULES.md G9 revised
    # default 2 (presumed), so a reincident B fine is 2 × 40 × T.
    history = [{"rule_id": "DF15154.29.XIII", "date": "2026-01-10", "status": "upheld"}]
    out = run_case("DF_STPA", infractions=["DF15154.29.XIII"], history=history)
    default = infraction(out, "DF15154.29.XIII")
    assert default.fine_brl == Decimal("480.00")
    assert "fine.reincidence_factor" in {a.parameter for a in default.assumptions}
    plain = infraction(
        run_case(
            "DF_STPA", infractions=["DF15154.29.XIII"], history=history,
            parameters={"tariff_brl": "6.00", "fine.reincidence_factor": "1"},
        ),
        "DF15154.29.XIII",
    )
    assert plain.fine_brl == Decimal("240.00")
    aggravated = run_case(
        "DF_STPA",
        infractions=["DF15154.29.XIII"],
        history=history,
        parameters={"tariff_brl": "6.00", "fine.reincidence_factor": "1.5"},
    )
    assert infraction(aggravated, "DF15154.29.XIII").fine_brl == Decimal("360.00")


# --- G8: the tariff table is dated and presumed -----------------------------------------------
def test_fine_without_case_tariff_uses_pack_table_and_says_it_is_presumed() -> None:
    out = run_case("DF_STPCR", infractions=["DF15154.29.IV"], parameters=None)
    inf = infraction(out, "DF15154.29.IV")
    assert inf.fine_brl == Decimal("220.00")  # 40 × R$ 5,50 reference row
    assert "tables.tariff_brl" in {a.parameter for a in inf.assumptions}
    assert "estimativa" in inf.fine_reference


# --- §A4.1: retention grounds (art. 37) --------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "ground", "cite"),
    [
        ({"driver": {"registered": False}}, "DF15154.37.I", "art. 37 I: driver not registered"),
        ({"infractions": ["DF15154.29.XXI"]}, "DF15154.37.II", "art. 37 II: dangerous defect"),
        ({"vehicle": {"chassis_year": 2017}}, "DF15154.37.III", "art. 37 III: over age (art. 22)"),
        ({"checklist": {"DF-SEG-02": "fail"}}, "DF15154.37.IV", "art. 37 IV: extinguisher"),
        ({"checklist": {"DF-SEG-01": "fail"}}, "DF15154.37.IV", "art. 37 IV: tacógrafo"),
        (
            {"checklist": {"DF-HIG-01": "fail"}, "start_of_operation": True},
            "DF15154.37.V",
            "art. 37 V: hygiene at the start of operation",
        ),
        ({"checklist": {"DF-DOC-12": "fail"}}, "DF15154.37.VI", "art. 37 VI: notificação"),
        ({"checklist": {"DF-VIS-01": "fail"}}, "DF15154.37.VII", "art. 37 VII: visual standard"),
        ({"checklist": {"DF-DOC-10": "fail"}}, "DF15154.37.VIII", "art. 37 VIII: route"),
        ({"checklist": {"DF-DOC-04": "fail"}}, "DF15154.37.IX", "art. 37 IX: certificate"),
        (
            {"vehicle": {"last_vistoria": "2026-01-10"}},
            "DF15154.37.IX",
            "art. 21 + 37 IX: bimonthly vistoria expired",
        ),
    ],
)
def test_retention_ground_follows_from_finding(
    changes: dict[str, object], ground: str, cite: str
) -> None:
    out = run_case("DF_STPCR", **changes)
    assert ground in {g.id for g in out.retention.grounds}
    assert out.retention.required and out.retention.allowed_here


def test_hygiene_retention_v_only_at_start_of_operation_g17() -> None:
    out = run_case("DF_STPCR", checklist={"DF-HIG-01": "fail"}, start_of_operation=False)
    assert "DF15154.37.V" not in {g.id for g in out.retention.grounds}
    assert infraction(out, "DF15154.29.XIII").penalty == "multa"
    assert any("início da operação" in n for n in out.notes)


@pytest.mark.parametrize(
    ("location", "insecurity", "allowed", "cite"),
    [
        ("terminal", False, True, "art. 37 §ú: terminal"),
        ("ponto_controle", False, True, "art. 37 §ú: ponto de controle"),
        ("via_publica", False, False, "art. 37 §ú: not on the public road"),
        ("patio_vistoria", False, False, "art. 37 §ú: only terminals and control points"),
        ("via_publica", True, True, "art. 37 §ú: manifest insecurity"),
    ],
)
def test_retention_allowed_only_at_terminals_or_control_points(
    location: str, insecurity: bool, allowed: bool, cite: str
) -> None:
    out = run_case(
        "DF_STPCR",
        checklist={"DF-SEG-02": "fail"},
        location_type=location,
        manifest_insecurity=insecurity,
        facts={"insecurity_justification": "freios sem ação"} if insecurity else {},
    )
    assert out.retention.required
    assert out.retention.allowed_here is allowed
    assert any(w.startswith("A retenção não pode") for w in out.warnings) is (not allowed)


def test_manifest_insecurity_without_justification_is_warned() -> None:
    out = run_case(
        "DF_STPCR",
        checklist={"DF-SEG-02": "fail"},
        location_type="via_publica",
        manifest_insecurity=True,
    )
    assert any("justificativa" in w for w in out.warnings)


def test_missing_insurance_is_an_infraction_without_automatic_retention_g13() -> None:
    out = run_case("DF_STPCR", vehicle={"insurance_valid_until": "2026-03-31"})
    assert infraction(out, "DF15154.29.XXIV").group == "C"
    assert not out.retention.required


# --- vehicle facts even without checklist answers (§A2, §A3) ---------------------------------
@pytest.mark.parametrize(
    ("pack", "vehicle", "rule_id", "cite"),
    [
        ("DF_STPCR", {"chassis_year": 2017}, "DF15154.29.XII", "art. 22: 9 years > 8"),
        ("DF_STPA", {"doors": 3}, "DF15154.29.II", "Lei 194 art. 11: at least 4 doors"),
        ("DF_STPA", {"seats": 6}, "DF15154.29.II", "Lei 194 art. 11: at least 7 seats"),
        ("DF_STPA", {"seats": 17}, "DF15154.29.II", "Lei 194 art. 11: at most 16 seats"),
        (
            "DF_STPA",
            {"last_vistoria": "2025-12-13"},
            "DF15154.29.XX",
            "Lei 194 art. 11 §2: vistoria every 4 months",
        ),
    ],
)
def test_vehicle_facts_produce_infractions_without_answers(
    pack: str, vehicle: dict[str, object], rule_id: str, cite: str
) -> None:
    out = run_case(pack, vehicle=vehicle)
    assert "vehicle:" in infraction(out, rule_id).sources[0]


@pytest.mark.parametrize(
    ("pack", "vehicle", "cite"),
    [
        ("DF_STPCR", {"chassis_year": 2018}, "art. 22: 8 years is within the limit"),
        ("DF_STPA", {"doors": 4, "seats": 16}, "Lei 194 art. 11: limits included"),
        (
            "DF_STPA",
            {"last_vistoria": "2025-12-14"},
            "4 months date to date (Lei 9.784 art. 66 §3)",
        ),
        ("DF_STPCR", {"last_vistoria": "2026-02-14"}, "art. 21: 2 months date to date"),
    ],
)
def test_vehicle_within_limits_has_no_infraction(
    pack: str, vehicle: dict[str, object], cite: str
) -> None:
    assert run_case(pack, vehicle=vehicle).infractions == ()


def test_stpa_maximum_operating_age_is_not_configured_g7() -> None:
    out = run_case("DF_STPA", vehicle={"chassis_year": 2000})
    assert out.infractions == ()
    assert any("não configurado" in w for w in out.warnings)


def test_inspector_answer_prevails_over_registry_fact_with_warning() -> None:
    out = run_case("DF_STPCR", vehicle={"chassis_year": 2017}, checklist={"DF-DOC-13": "ok"})
    assert out.infractions == ()
    assert any("Prevalece a resposta do agente" in w for w in out.warnings)


def test_vistoria_validity_is_reported_as_dates() -> None:
    out = run_case("DF_STPCR", vehicle={"last_vistoria": "2026-03-01"})
    assert out.vistoria.valid_until.isoformat() == "2026-05-01"
    assert out.vistoria.valid is True


# --- Lei 194/1991 art. 18 §5: overcrowding needs the vehicle stopped and a vistoria ------------
@pytest.mark.parametrize(
    ("facts", "field"),
    [
        ({}, "facts.vehicle_stopped"),
        ({"vehicle_stopped": True}, "facts.inspection_done"),
        ({"vehicle_stopped": False, "inspection_done": True}, "facts.vehicle_stopped"),
    ],
)
def test_stpa_overcrowding_without_legal_precondition_is_refused(
    facts: dict[str, bool], field: str
) -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPA", infractions=["DF15154.30.XVI"], facts=facts)
    assert err.value.field == field
    assert "Lei 194/1991, art. 18, §5" in err.value.message


def test_stpa_overcrowding_counted_from_facts_when_preconditions_hold() -> None:
    out = run_case(
        "DF_STPA",
        facts={"vehicle_stopped": True, "inspection_done": True, "passengers_counted": 19},
    )
    assert infraction(out, "DF15154.30.XVI").sources == ("vehicle:excesso_lotacao",)


def test_stpcr_overcrowding_has_no_stpa_precondition() -> None:
    out = run_case("DF_STPCR", facts={"passengers_counted": 40})
    assert infraction(out, "DF15154.30.XVI").group == "B"


# --- art. 39: cassação proposals --------------------------------------------------------------
def _points_history(points: int, date: str, status: str = "upheld") -> list[dict[str, object]]:
    return [{"rule_id": "DF15154.30.XII", "date": date, "status": status, "points": points}]


@pytest.mark.parametrize(
    ("history", "proposed", "provisional", "cite"),
    [
        (_points_history(9, "2026-01-20"), True, False, "art. 39 I: 12 points in 4 months"),
        (_points_history(8, "2026-01-20"), False, False, "art. 39 I: 11 points is below 12"),
        (_points_history(15, "2025-09-01"), True, False, "art. 39 I: 18 points in 8 months"),
        (_points_history(19, "2025-05-01"), True, False, "art. 39 I: 22 points in 12 months"),
        (_points_history(18, "2025-04-01"), False, False, "art. 39 I: older than 12 months"),
        (_points_history(9, "2026-01-20", "pending"), True, True, "G15: pending = provisional"),
        (_points_history(9, "2026-01-20", "cancelled"), False, False, "cancelled never counts"),
    ],
)
def test_cassacao_by_points_in_rolling_windows(
    history: list[dict[str, object]], proposed: bool, provisional: bool, cite: str
) -> None:
    out = run_case("DF_STPCR", infractions=["DF15154.30.VI"], history=history)  # C: 3 points
    assert out.cassacao.proposed is proposed
    if proposed:
        ground = out.cassacao.grounds[0]
        assert (ground.id, ground.provisional) == ("DF15154.39.I", provisional)


def test_cassacao_on_second_drunkenness_auto_g16() -> None:
    first = run_case("DF_STPCR", infractions=["DF15154.30.XI"])
    assert not first.cassacao.proposed
    second = run_case(
        "DF_STPCR",
        infractions=["DF15154.30.XI"],
        history=[
            {"rule_id": "DF15154.30.XI", "date": "2023-01-01", "status": "upheld", "points": 3}
        ],
    )
    assert "DF15154.39.II" in {g.id for g in second.cassacao.grounds}


def test_cassacao_when_over_age_vehicle_not_replaced_within_30_days() -> None:
    late = run_case(
        "DF_STPCR",
        vehicle={"chassis_year": 2016},
        facts={"age_replacement_notified_on": "2026-03-01"},
    )
    assert "DF15154.39.III" in {g.id for g in late.cassacao.grounds}
    in_time = run_case(
        "DF_STPCR",
        vehicle={"chassis_year": 2016},
        facts={"age_replacement_notified_on": "2026-03-20"},
    )
    assert not in_time.cassacao.proposed


# --- bad input --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"infractions": ["DF15154.30.III"]}, "infractions[0]"),
        ({"infractions": ["DF15154.99.I"]}, "infractions[0]"),
        ({"checklist": {"DF-XXX-01": "fail"}}, "checklist.DF-XXX-01"),
        ({"checklist": {"DF-SEG-02": "maybe"}}, "checklist.DF-SEG-02"),
        (
            {"checklist": {"DF-SEG-02": {"result": "fail", "rules": ["DF15154.30.VI"]}}},
            "checklist.DF-SEG-02.rules",
        ),
        ({"occurred_at": "2024-03-18T10:00:00-03:00"}, "occurred_at"),  # before Dec. 45.620/2024
        ({"facts": {"vehicle_stoped": True}}, "facts.vehicle_stoped"),
    ],
)
def test_invalid_case_names_the_field(changes: dict[str, object], field: str) -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", **changes)
    assert err.value.field == field


def test_inspector_may_choose_an_alternative_rule_of_the_item() -> None:
    out = run_case(
        "DF_STPCR", checklist={"DF-DOC-04": {"result": "fail", "rules": ["DF15154.29.X"]}}
    )
    assert [i.rule_id for i in out.infractions] == ["DF15154.29.X"]


def test_every_outcome_names_its_legal_basis() -> None:
    out = run_case(
        "DF_STPCR",
        checklist={"DF-SEG-02": "fail", "DF-DOC-08": "fail"},
        infractions=["DF15154.30.XV"],
    )
    # DF-DOC-08 gives 30.I only (G33, art. 32 §2), no longer 30.I + 29.XXII
    assert len(out.infractions) == 3
    for inf in out.infractions:
        assert inf.basis[0] == f"Decreto 15.154/1993, {inf.article}"
        assert any("art. 35" in b for b in inf.basis)


def test_cnh_with_failing_check_digit_is_a_warning_the_agent_can_override() -> None:
    warned = run_case("DF_STPCR", driver={"cnh": "50195471143"})
    assert any("CNH" in w for w in warned.warnings)
    accepted = run_case(
        "DF_STPCR", driver={"cnh": "50195471143", "cnh_override_reason": "CNH modelo antigo"}
    )
    assert not any("CNH" in w for w in accepted.warnings)
    assert any("CNH modelo antigo" in n for n in accepted.notes)


@pytest.mark.parametrize(
    ("driver", "field"),
    [
        ({"cpf": "16944060168"}, "driver.cpf"),
        ({"cnh": "1234"}, "driver.cnh"),
        ({"registered": "sim"}, "driver.registered"),
    ],
)
def test_invalid_driver_documents_are_refused(driver: dict[str, object], field: str) -> None:
    with pytest.raises(CaseError) as err:
        run_case("DF_STPCR", driver=driver)
    assert err.value.field == field
