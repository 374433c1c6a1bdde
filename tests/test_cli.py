"""The ``inspector`` command run as a real process: the command-line contract of issue #2."""

from __future__ import annotations

import copy
import datetime as dt
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from inspector_app import __version__

REPO_ROOT = Path(__file__).resolve().parent.parent
MONEY = re.compile(r"^\d+\.\d{2}$")
SHIPPED_PACKS = ("DF_STPA", "DF_STPCR", "JF_1972")

# The case of the issue's "Command-line contract"; its location_type placeholder set to
# "terminal" (a place where art. 37 §ú allows retention).
ISSUE_CASE: dict[str, Any] = {
    "pack": "DF_STPCR",
    "occurred_at": "2026-04-14T10:30:00-03:00",
    "location_type": "terminal",
    "start_of_operation": False,
    "manifest_insecurity": False,
    "vehicle": {"plate": "JKL1A23", "chassis_year": 2019, "body_year": 2019, "seats": 14,
                "doors": 4},
    "driver": {"cpf": "16944060167", "registered": True},
    "checklist": {"DF-SEG-02": "fail", "DF-HIG-01": "ok"},
    "infractions": ["DF15154.30.XV"],
    "facts": {"vehicle_stopped": True, "inspection_done": True, "passengers_counted": 19},
    "history": [{"rule_id": "DF15154.29.XIII", "date": "2026-01-10", "status": "upheld"}],
    "parameters": {"tariff_brl": "5.50", "minimum_wage_brl": "1518.00"},
}

# One valid case per regime, for checks that must hold whatever the pack.
CASES_BY_PACK: dict[str, dict[str, Any]] = {
    "DF_STPCR": ISSUE_CASE,
    "DF_STPA": {
        "pack": "DF_STPA",
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "ponto_controle",
        "vehicle": {"plate": "JKL-1234", "chassis_year": 2022, "seats": 14, "doors": 4},
        "infractions": ["DF15154.30.XVI", "DF15154.29.II"],
        "facts": {"vehicle_stopped": True, "inspection_done": True},
        "parameters": {"tariff_brl": "6.00"},
    },
    "JF_1972": {
        "pack": "JF_1972",
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "terminal",
        "historical_reevaluation": {"reason": "demonstração"},  # revoked (effective_until)
        "vehicle": {"plate": "HMG4F67"},
        "infractions": ["JF1235.1.1"],
        "history": [{"rule_id": "JF1235.1.1", "date": "2026-01-10", "status": "upheld"}],
        "parameters": {"minimum_wage_brl": "1518.00"},
    },
}


def inspector(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m inspector_app.cli ARGS`` against the shipped forms/."""
    env = {k: v for k, v in os.environ.items() if k != "INSPECTOR_FORMS_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", *args],
        input=stdin, capture_output=True, text=True, encoding="utf-8", cwd=REPO_ROOT, env=env,
        timeout=120, check=False,
    )


def evaluate_ok(case: object) -> dict[str, Any]:
    result = inspector("rules", "evaluate", "-", stdin=json.dumps(case))
    assert (result.returncode, result.stderr) == (0, ""), result.stderr
    outcome = json.loads(result.stdout)  # the whole of stdout is one JSON document
    assert isinstance(outcome, dict)
    return outcome


def case_with(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``base`` with top-level keys replaced and nested objects merged."""
    data = copy.deepcopy(base)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return data


def walk(node: object, key: str = "") -> Iterator[tuple[str, object]]:
    """Every (key, value) pair in a JSON tree, at any depth."""
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from walk(v, k)
    elif isinstance(node, list):
        for v in node:
            yield from walk(v, key)


def rule(outcome: dict[str, Any], rule_id: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [i for i in outcome["infractions"] if i["rule_id"] == rule_id]
    assert len(found) == 1, [i["rule_id"] for i in outcome["infractions"]]
    return found[0]


def deadline(outcome: dict[str, Any], kind: str) -> dict[str, Any]:
    found: list[dict[str, Any]] = [d for d in outcome["deadlines"] if d["kind"] == kind]
    assert len(found) == 1, [d["kind"] for d in outcome["deadlines"]]
    return found[0]


def is_iso_date(value: object) -> bool:
    return isinstance(value, str) and dt.date.fromisoformat(value).isoformat() == value


# --- rules evaluate: the outcome --------------------------------------------------------------


def test_the_issue_case_from_a_file_prints_one_json_object_with_the_contract_shape(
    tmp_path: Path,
) -> None:
    case_file = tmp_path / "case.json"
    case_file.write_text(json.dumps(ISSUE_CASE), encoding="utf-8")
    result = inspector("rules", "evaluate", str(case_file))
    assert (result.returncode, result.stderr) == (0, "")
    out = json.loads(result.stdout)

    assert {"pack", "pack_version", "infractions", "retention", "cassacao", "deadlines",
            "warnings"} <= out.keys()
    assert out["pack"] == "DF_STPCR"
    assert isinstance(out["pack_version"], str) and out["pack_version"]
    assert out["infractions"]
    for inf in out["infractions"]:
        assert {"rule_id", "group", "penalty", "fine_brl", "points", "reincidence", "basis",
                "assumptions"} <= inf.keys()
        assert MONEY.match(inf["fine_brl"]), inf["fine_brl"]
        assert isinstance(inf["points"], int) and not isinstance(inf["points"], bool)
        assert isinstance(inf["reincidence"], bool)
        assert inf["basis"] and all(isinstance(b, str) and b for b in inf["basis"])
        assert isinstance(inf["assumptions"], list)
    retention = out["retention"]
    assert isinstance(retention["required"], bool)
    assert all(isinstance(g, str) for g in retention["grounds"])
    assert isinstance(retention["allowed_here"], bool)
    assert isinstance(out["cassacao"]["proposed"], bool)
    assert isinstance(out["cassacao"]["grounds"], list)
    assert out["deadlines"]
    for deadline in out["deadlines"]:
        assert {"kind", "due", "business_days", "basis"} <= deadline.keys()
        assert is_iso_date(deadline["due"]), deadline["due"]
        assert isinstance(deadline["basis"], str) and deadline["basis"]
    assert isinstance(out["warnings"], list)


@pytest.mark.parametrize(
    ("what", "expected", "cite"),
    [
        (lambda o: rule(o, "DF15154.29.XIII")["fine_brl"], "220.00",
         "DF-SEG-02 fails -> art. 29 XIII, group B: 40 × R$ 5,50 (art. 35 II)"),
        (lambda o: rule(o, "DF15154.30.XV")["fine_brl"], "275.00",
         "art. 30 XV, group C: 50 × R$ 5,50 (art. 35 III)"),
        (lambda o: (rule(o, "DF15154.29.XIII")["reincidence"], rule(o, "DF15154.29.XIII")["points"]),
         (True, 4), "same rule upheld 2026-01-10, within 12 months: points doubled (art. 32 §3)"),
        (lambda o: deadline(o, "defesa")["due"], "2026-04-29",
         "10 business days from 14/04, Tiradentes 21/04 skipped (art. 40 I; Lei 9.784 art. 66)"),
        (lambda o: deadline(o, "defesa")["business_days"], 10, "art. 40 I: 10 dias úteis"),
        (lambda o: (o["retention"]["required"], o["retention"]["allowed_here"]), (True, True),
         "extintor fails -> art. 37 IV; at a terminal (art. 37 §ú)"),
    ],
)
def test_the_issue_case_gives_the_figures_the_regulation_requires(
    what: Any, expected: object, cite: str
) -> None:
    assert what(evaluate_ok(ISSUE_CASE)) == expected, cite


def test_a_case_on_standard_input_gives_the_same_outcome_as_the_same_case_in_a_file(
    tmp_path: Path,
) -> None:
    case_file = tmp_path / "case.json"
    case_file.write_text(json.dumps(ISSUE_CASE), encoding="utf-8")
    from_file = inspector("rules", "evaluate", str(case_file))
    from_stdin = inspector("rules", "evaluate", "-", stdin=json.dumps(ISSUE_CASE))
    assert from_stdin.returncode == 0
    assert json.loads(from_stdin.stdout) == json.loads(from_file.stdout)


@pytest.mark.parametrize("pack", SHIPPED_PACKS)
def test_every_amount_is_a_two_decimal_string_and_every_due_date_is_iso(pack: str) -> None:
    out = evaluate_ok(CASES_BY_PACK[pack])
    amounts = [v for k, v in walk(out) if k.endswith("_brl")]
    dues = [v for k, v in walk(out) if k in ("due", "occurred_on") and v is not None]
    assert amounts and dues
    assert all(isinstance(v, str) and MONEY.match(v) for v in amounts), amounts
    assert all(is_iso_date(v) for v in dues), dues


# --- rules evaluate: invalid input exits 2 with one line ---------------------------------------

DF_STPA_OVERCROWDING_WITHOUT_FACTS = {
    "pack": "DF_STPA",
    "occurred_at": "2026-04-14T10:30:00-03:00",
    "location_type": "ponto_controle",
    "infractions": ["DF15154.30.XVI"],
}


@pytest.mark.parametrize(
    ("stdin", "named", "why"),
    [
        (case_with(ISSUE_CASE, pack="DF_XYZ"), "DF_XYZ", "unknown pack"),
        (case_with(ISSUE_CASE, infractions=["DF15154.29.XXX"]), "DF15154.29.XXX",
         "unknown rule ID"),
        (case_with(ISSUE_CASE, infractions=["DF15154.30.III"]), "DF15154.30.III",
         "art. 30 III is missing from the text (G2): present but not selectable"),
        (case_with(ISSUE_CASE, checklist={"DF-XXX-99": "fail"}), "DF-XXX-99",
         "unknown checklist item"),
        (case_with(ISSUE_CASE, vehicle={"plate": "AB-12345"}), "vehicle.plate", "invalid plate"),
        (case_with(ISSUE_CASE, driver={"cpf": "16944060168"}), "driver.cpf",
         "CPF check digit does not match"),
        (case_with(ISSUE_CASE, occurred_at="2026-02-30T10:00:00-03:00"), "occurred_at",
         "30 February does not exist"),
        (case_with(ISSUE_CASE, occurred_at="2026-04-14T10:30:00"), "occurred_at",
         "a date-time without UTC offset is ambiguous"),
        ("{not json", "JSON", "invalid JSON"),
        ([ISSUE_CASE], "object", "a JSON array instead of an object"),
        (DF_STPA_OVERCROWDING_WITHOUT_FACTS, "vehicle_stopped",
         "Lei 194/1991 art. 18 §5: overcrowding only with the vehicle stopped"),
        (case_with(ISSUE_CASE, facts={"vehicle_stoped": True}), "facts.vehicle_stoped",
         "unknown fact name (a typo must not drop a precondition)"),
        (case_with(ISSUE_CASE, vehicle={"seats": "doze"}), "vehicle.seats", "wrong type"),
        (case_with(ISSUE_CASE, parameters={"tariff_brl": "-5.50"}), "parameters.tariff_brl",
         "negative tariff"),
        (case_with(ISSUE_CASE, parameters={"tariff_brl": "0.00"}), "parameters.tariff_brl",
         "zero tariff"),
        (case_with(ISSUE_CASE, parameters={"minimum_wage_brl": 0}),
         "parameters.minimum_wage_brl", "zero minimum wage"),
    ],
)
def test_invalid_input_exits_2_with_one_line_naming_the_field_and_no_traceback(
    stdin: object, named: str, why: str
) -> None:
    text = stdin if isinstance(stdin, str) else json.dumps(stdin)
    result = inspector("rules", "evaluate", "-", stdin=text)
    assert result.returncode == 2, why
    assert result.stdout == "", why
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert named in result.stderr, (why, result.stderr)


def test_a_case_file_that_does_not_exist_exits_2_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nao_existe.json"
    result = inspector("rules", "evaluate", str(missing))
    assert (result.returncode, result.stdout) == (2, "")
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert "nao_existe.json" in result.stderr


# --- packs and rules catalogue -----------------------------------------------------------------


def test_packs_validate_without_a_folder_reports_each_shipped_pack_ok() -> None:
    result = inspector("packs", "validate")
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines() == [f"{p}: ok" for p in SHIPPED_PACKS]


@pytest.mark.parametrize("pack", SHIPPED_PACKS)
def test_packs_validate_of_one_shipped_pack_folder_prints_ok(pack: str) -> None:
    result = inspector("packs", "validate", str(REPO_ROOT / "forms" / pack))
    assert (result.returncode, result.stdout) == (0, f"{pack}: ok\n")


def test_packs_list_prints_json_with_the_three_packs_and_their_hashes() -> None:
    result = inspector("packs", "list")
    assert result.returncode == 0
    rows = json.loads(result.stdout)
    assert [r["id"] for r in rows] == list(SHIPPED_PACKS)
    for row in rows:
        assert row["version"] and row["title"] and row["problems"] == []
        assert re.fullmatch(r"[0-9a-f]{64}", row["content_hash"])
    assert {r["id"]: r["status"] for r in rows}["JF_1972"] == "historical"


@pytest.mark.parametrize(
    ("pack", "count", "cite"),
    [
        ("DF_STPCR", 46, "Decreto 15.154/1993 art. 29 I–XXIV (24) + art. 30 I–XXII (22)"),
        ("DF_STPA", 46, "the same catalogue, by analogy (Lei 194/1991)"),
    ],
)
def test_rules_catalogue_lists_every_rule_of_the_pack(pack: str, count: int, cite: str) -> None:
    result = inspector("rules", "catalogue", pack)
    assert result.returncode == 0
    rules = json.loads(result.stdout)
    assert len(rules) == count, cite
    assert len({r["rule_id"] for r in rules}) == count
    assert [r["rule_id"] for r in rules if not r["selectable"]] == ["DF15154.30.III"]


def test_rules_catalogue_of_an_unknown_pack_exits_2_naming_it() -> None:
    result = inspector("rules", "catalogue", "DF_XYZ")
    assert (result.returncode, result.stdout) == (2, "")
    assert "DF_XYZ" in result.stderr and "Traceback" not in result.stderr


def test_version_prints_the_package_version() -> None:
    result = inspector("--version")
    assert (result.returncode, result.stdout) == (0, f"inspector {__version__}\n")


@pytest.mark.parametrize(
    "args",
    [("frobnicate",), ("rules", "frobnicate"), ("packs",), ("rules", "evaluate")],
)
def test_a_wrong_command_line_exits_2_with_one_line_and_no_traceback(args: tuple[str, ...]) -> None:
    result = inspector(*args)
    assert (result.returncode, result.stdout) == (2, "")
    assert "Traceback" not in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr


# --- out-of-range input found by review: exit 2, never a traceback ---------------------------
OUT_OF_RANGE_BASE = {
    "pack": "DF_STPCR",
    "occurred_at": "2026-04-14T10:30:00-03:00",
    "location_type": "terminal",
    "infractions": ["DF15154.29.II"],
}


@pytest.mark.parametrize(
    ("stdin", "named"),
    [
        (json.dumps({**OUT_OF_RANGE_BASE, "parameters": {"tariff_brl": "1e400"}}),
         "parameters.tariff_brl"),
        (json.dumps({**OUT_OF_RANGE_BASE, "parameters": {"tariff_brl": "1e27"}}),
         "parameters.tariff_brl"),
        (json.dumps({**OUT_OF_RANGE_BASE, "occurred_at": "9999-12-31T10:30:00-03:00"}),
         "occurred_at"),
        (json.dumps({**OUT_OF_RANGE_BASE, "history": [
            {"rule_id": "DF15154.29.II", "date": "0001-01-01"}]}), "history[0].date"),
        ("[" * 100000 + "]" * 100000, "JSON"),
    ],
)
def test_out_of_range_input_exits_2_without_traceback(stdin: str, named: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", "rules", "evaluate", "-"],
        input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert named in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_packs_list_of_a_missing_folder_exits_2_without_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", "packs", "list", str(tmp_path / "nao_existe")],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
