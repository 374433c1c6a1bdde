"""Rules engine, Juiz de Fora regime (Decreto 1.235/1972, historical): table-driven."""

from __future__ import annotations

from decimal import Decimal

import pytest
from casebuild import infraction, run_case

from inspector_app.domain.case import CaseError


def _prior(rule_id: str, *dates: str) -> list[dict[str, str]]:
    return [{"rule_id": rule_id, "date": d, "status": "upheld"} for d in dates]


# --- §A1.5 / art. 51 item 3: fine = % of the minimum wage (base R$ 1.000 in the case) ---------
# Second offence of the same code within 12 months: base fine, factor 1 (art. 47 + 51 §1).
@pytest.mark.parametrize(
    ("rule_id", "group", "fine", "cite"),
    [
        ("JF1235.2.4.13", "E1", "200.00", "art. 51, 2.4.13 (no brakes): E1 = 20%"),
        ("JF1235.2.1.4", "E1", "200.00", "art. 51, 2.1.4: E1 = 20%"),
        ("JF1235.2.4.5", "E3", "150.00", "art. 51, 2.4.5 (extinguisher): E3 = 15%"),
        ("JF1235.2.3.6", "E3", "150.00", "art. 51, 2.3.6 (doors): E3 = 15%"),
        ("JF1235.2.1.6", "E5", "100.00", "art. 51, 2.1.6 (overcrowding): E5 = 10%"),
        ("JF1235.2.4.9", "E5", "100.00", "art. 51, 2.4.9 (dirty vehicle): E5 = 10%"),
        ("JF1235.1.5.g", "E7", "50.00", "art. 51, 1.5 g (doors open): E7 = 5%"),
        ("JF1235.1.9", "E7", "50.00", "art. 51, 1.9 (uniform): E7 = 5%"),
        ("JF1235.1.11", "E9", "10.00", "art. 51, 1.11 (smoking): E9 = 1%"),
        ("JF1235.1.1", "E9", "10.00", "art. 51, 1.1 (documents): E9 = 1%"),
    ],
)
def test_fine_is_group_percent_of_minimum_wage(
    rule_id: str, group: str, fine: str, cite: str
) -> None:
    out = run_case("JF_1972", infractions=[rule_id], history=_prior(rule_id, "2026-01-05"))
    inf = infraction(out, rule_id)
    assert (inf.group, inf.penalty, str(inf.fine_brl), inf.points) == (group, "multa", fine, 0)
    assert any("art. 51" in b for b in inf.basis)


# --- art. 47 and art. 51 §1: first breach advertência, then doubling progressively (§A5.3) ---
@pytest.mark.parametrize(
    ("dates", "penalty", "fine", "cite"),
    [
        ((), "advertencia", "0.00", "art. 47: first breach, written warning contra-recibo"),
        (("2026-01-05",), "multa", "150.00", "art. 51 §1: 2nd = base fine (warning not counted)"),
        (("2025-12-01", "2026-01-05"), "multa", "300.00", "art. 51 §1: 3rd = ×2"),
        (("2025-11-01", "2025-12-01", "2026-01-05"), "multa", "600.00", "art. 51 §1: 4th = ×4"),
        (("2024-01-05",), "advertencia", "0.00", "G27: 12-month window, older breach is ignored"),
    ],
)
def test_specific_reincidence_doubles_progressively(
    dates: tuple[str, ...], penalty: str, fine: str, cite: str
) -> None:
    out = run_case("JF_1972", infractions=["JF1235.2.4.5"], history=_prior("JF1235.2.4.5", *dates))
    inf = infraction(out, "JF1235.2.4.5")
    assert (inf.penalty, str(inf.fine_brl)) == (penalty, fine)


@pytest.mark.parametrize(
    ("policy", "fine", "cite"),
    [
        ({"reincidence.progression": "linear"}, "450.00", "G27 linear: 4th = ×3"),
        ({"reincidence.counts_warning": True}, "1200.00", "G27: warning counts, 4th = ×8"),
        ({"reincidence.cap_factor": 2}, "300.00", "configurable cap on the progression"),
    ],
)
def test_progression_policy_is_configurable(
    policy: dict[str, object], fine: str, cite: str
) -> None:
    out = run_case(
        "JF_1972",
        infractions=["JF1235.2.4.5"],
        history=_prior("JF1235.2.4.5", "2025-11-01", "2025-12-01", "2026-01-05"),
        parameters={"minimum_wage_brl": "1000.00", **policy},
    )
    assert str(infraction(out, "JF1235.2.4.5").fine_brl) == fine


def test_another_code_does_not_make_a_specific_reincidence() -> None:
    out = run_case(
        "JF_1972", infractions=["JF1235.2.4.5"], history=_prior("JF1235.2.4.6", "2026-01-05")
    )
    assert infraction(out, "JF1235.2.4.5").penalty == "advertencia"


@pytest.mark.parametrize(
    ("occurred_at", "fine", "cite"),
    [
        ("2025-06-10T10:00:00-03:00", "151.80", "art. 50: SM of 2025 (R$ 1.518,00) × 10%"),
        ("2026-04-14T10:00:00-03:00", "162.10", "art. 50: SM of 2026 (R$ 1.621,00) × 10%"),
    ],
)
def test_minimum_wage_is_the_one_in_force_on_the_date_of_the_autuacao(
    occurred_at: str, fine: str, cite: str
) -> None:
    out = run_case(
        "JF_1972",
        occurred_at=occurred_at,
        infractions=["JF1235.2.4.9"],
        history=_prior("JF1235.2.4.9", "2025-05-01"),
        parameters=None,
    )
    inf = infraction(out, "JF1235.2.4.9")
    assert str(inf.fine_brl) == fine
    assert "fine.base" in {a.parameter for a in inf.assumptions}  # G25


@pytest.mark.parametrize("rule_id", ["JF1235.1.17", "JF1235.1.18"])
def test_drunkenness_and_weapon_mean_cassacao_of_professional_registration(rule_id: str) -> None:
    out = run_case("JF_1972", infractions=[rule_id])
    inf = infraction(out, rule_id)
    assert (inf.penalty, inf.fine_brl) == ("cassacao_registro_profissional", None)
    assert out.cassacao.proposed and out.cassacao.kind == "registro_profissional"


def test_omitted_infraction_is_defined_by_the_authority_art_51_p2() -> None:
    out = run_case("JF_1972", infractions=["JF1235.51.p2"])
    assert infraction(out, "JF1235.51.p2").penalty == "defined_by_authority"
    assert any("autoridade" in w for w in out.warnings)


# --- §A4.3: withdrawal from service (art. 37 §2) ---------------------------------------------
@pytest.mark.parametrize(
    ("item", "occurred_at", "preselected", "proposed", "cite"),
    [
        ("JF-SEG-01", "2026-04-14T10:00:00-03:00", True, False, "brakes 2.4.13: pre-selected"),
        ("JF-SEG-02", "2026-04-14T10:00:00-03:00", True, False, "steering 2.4.12: pre-selected"),
        ("JF-SEG-05", "2026-04-14T10:00:00-03:00", True, False, "tyres 2.4.8: pre-selected"),
        ("JF-DOOR-01", "2026-04-14T10:00:00-03:00", True, False, "doors 2.3.6: pre-selected"),
        ("JF-SEG-12", "2026-04-14T20:30:00-03:00", True, False, "lighting 2.3.3 at night"),
        ("JF-SEG-12", "2026-04-14T10:00:00-03:00", False, True, "lighting 2.3.3 by day: propose"),
        ("JF-SEG-03", "2026-04-14T10:00:00-03:00", False, True, "extinguisher 2.4.5: propose"),
        ("JF-HIG-01", "2026-04-14T10:00:00-03:00", False, False, "dirty 2.4.9: no withdrawal"),
    ],
)
def test_withdrawal_from_service_for_safety_failures(
    item: str, occurred_at: str, preselected: bool, proposed: bool, cite: str
) -> None:
    out = run_case("JF_1972", occurred_at=occurred_at, checklist={item: "fail"})
    assert out.withdrawal is not None
    assert out.withdrawal.required is preselected
    assert bool(out.withdrawal.possible_grounds) is proposed
    assert not out.retention.required  # JF has no retention (G30)


# --- §A2: vehicle requirements from the registry facts (art. 33, 35) ------------------------
@pytest.mark.parametrize(
    ("vehicle", "cite"),
    [
        ({"chassis_year": 2013}, "art. 33 §1: chassis 13 years > 12"),
        ({"body_year": 2017}, "art. 33 §1: body 9 years > 8 (G26: 'mínima' means maximum)"),
        ({"seats": 35}, "art. 35: at least 36 passenger seats"),
    ],
)
def test_vehicle_requirements_without_own_code_go_to_art_51_p2(
    vehicle: dict[str, object], cite: str
) -> None:
    out = run_case("JF_1972", vehicle=vehicle)
    assert [i.rule_id for i in out.infractions] == ["JF1235.51.p2"]


def test_over_age_vehicle_withdrawal_is_proposed() -> None:
    out = run_case("JF_1972", vehicle={"chassis_year": 2010})
    assert out.withdrawal is not None and out.withdrawal.possible_grounds


def test_tacografo_item_is_informative_only_g30() -> None:
    out = run_case("JF_1972", checklist={"JF-SEG-14": "fail"})
    assert out.infractions == ()
    assert any(n.startswith("JF-SEG-14") for n in out.notes)


def test_historical_pack_is_flagged_on_every_outcome() -> None:
    out = run_case("JF_1972")
    assert out.pack_status == "historical"
    assert any("histórico" in w for w in out.warnings)


def test_staff_and_company_refusal_are_alternatives_never_both_g29() -> None:
    out = run_case(
        "JF_1972", checklist={"JF-DOC-05": {"result": "fail", "rules": ["JF1235.2.1.5"]}}
    )
    assert [i.rule_id for i in out.infractions] == ["JF1235.2.1.5"]
    with pytest.raises(CaseError):
        run_case("JF_1972", checklist={"JF-DOC-05": {"result": "fail", "rules": ["JF1235.2.4.5"]}})


def test_fine_without_a_minimum_wage_row_is_not_estimated() -> None:
    out = run_case(
        "JF_1972",
        occurred_at="1990-05-10T10:00:00-03:00",
        infractions=["JF1235.1.9"],
        history=_prior("JF1235.1.9", "1990-01-10"),
        parameters=None,
        vehicle={"chassis_year": 1985, "body_year": 1985},
    )
    assert infraction(out, "JF1235.1.9").fine_brl is None
    assert any("multa não estimada" in w for w in out.warnings)
    assert Decimal(0) == out.total_fine
