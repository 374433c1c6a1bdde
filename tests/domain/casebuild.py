"""Builders for rules-engine tests: real packs from forms/, real calendars (no fakes)."""

from __future__ import annotations

import copy
from typing import Any

from inspector_app.domain.case import parse_case
from inspector_app.domain.engine import Outcome
from inspector_app.services import evaluate_parsed

BASE_CASES: dict[str, dict[str, Any]] = {
    "DF_STPCR": {
        "pack": "DF_STPCR",
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "terminal",
        "vehicle": {
            "plate": "JKL1A23",
            "chassis_year": 2022,
            "body_year": 2022,
            "seats": 28,
            "doors": 2,
        },
        "driver": {"cpf": "16944060167", "registered": True},
        "parameters": {"tariff_brl": "6.00"},
    },
    "DF_STPA": {
        "pack": "DF_STPA",
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "ponto_controle",
        "vehicle": {
            "plate": "JKL-1234",
            "chassis_year": 2022,
            "body_year": 2022,
            "seats": 14,
            "doors": 4,
        },
        "driver": {"cpf": "41840660546", "registered": True},
        "parameters": {"tariff_brl": "6.00"},
    },
    "JF_1972": {
        "pack": "JF_1972",
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "terminal",
        "vehicle": {
            "plate": "HMG4F67",
            "chassis_year": 2020,
            "body_year": 2020,
            "seats": 40,
            "doors": 2,
        },
        "driver": {"cpf": "16944060167"},
        "parameters": {"minimum_wage_brl": "1000.00"},
        # Decreto 1.235/1972 is revoked (pack effective_until): a 2026 fact is evaluated
        # only as a historical re-evaluation.
        "historical_reevaluation": {"reason": "testes do regulamento histórico"},
    },
}


def build_case(pack: str, **changes: Any) -> dict[str, Any]:
    """A valid case for ``pack`` with top-level keys replaced, nested dicts merged, None removed."""
    data = copy.deepcopy(BASE_CASES[pack])
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        elif isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return data


def run_case(pack: str, **changes: Any) -> Outcome:
    return evaluate_parsed(case=parse_case(build_case(pack, **changes)))


def infraction(outcome: Outcome, rule_id: str) -> Any:
    for inf in outcome.infractions:
        if inf.rule_id == rule_id:
            return inf
    raise AssertionError(f"{rule_id} not in outcome: {[i.rule_id for i in outcome.infractions]}")
