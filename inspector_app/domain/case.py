"""An inspection case as the rules engine sees it: what was found, where, when, on what.

``parse_case`` turns the JSON shape of ``inspector rules evaluate`` (and of the GUI/store,
which build the same mapping) into frozen objects. Every problem raises :class:`CaseError`
naming the offending field, so the CLI can exit 2 with one line and the GUI can point at
the field in Portuguese.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from inspector_app.domain.identity import (
    IdentityError,
    Plate,
    check_cnh,
    normalize_cpf,
    parse_plate,
)
from inspector_app.domain.pack import LOCATION_TYPES

ANSWER_RESULTS = {
    "ok": "ok",
    "conforme": "ok",
    "fail": "fail",
    "nao_conforme": "fail",
    "na": "na",
    "nao_se_aplica": "na",
}
HISTORY_STATUSES = ("upheld", "pending", "cancelled")
YEAR_MIN, YEAR_MAX = 1900, 2200  # keeps deadline arithmetic far from date overflow
MONEY_MAX = Decimal("1000000")  # a tariff or a minimum wage above this is a typing error

# Facts the engine reads, with their JSON type. Unknown names are refused so that a typo
# (``vehicle_stoped``) cannot silently drop a legal precondition.
FACT_TYPES: dict[str, tuple[type, ...]] = {
    "vehicle_stopped": (bool,),  # Lei 194/1991 art. 18 §5
    "inspection_done": (bool,),  # Lei 194/1991 art. 18 §5
    "passengers_counted": (int,),
    "insecurity_justification": (str,),  # art. 37 §ú
    "age_replacement_notified_on": (str,),  # art. 39 III (date)
    "night": (bool,),  # JF withdrawal of lighting failures
}


class CaseError(ValueError):
    """Invalid case input. ``field`` is a dotted path such as ``vehicle.plate``."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")


@dataclass(frozen=True)
class VehicleFacts:
    plate: Plate | None = None
    chassis_year: int | None = None
    body_year: int | None = None
    seats: int | None = None
    doors: int | None = None
    insurance_valid_until: dt.date | None = None
    last_vistoria: dt.date | None = None


@dataclass(frozen=True)
class DriverFacts:
    cpf: str | None = None
    cnh: str | None = None
    cnh_valid: bool | None = None
    cnh_message: str | None = None
    cnh_override_reason: str | None = None
    registered: bool | None = None
    name: str | None = None


@dataclass(frozen=True)
class Answer:
    item_id: str
    result: str
    rules: tuple[str, ...] = ()
    note: str = ""
    value: object = None


@dataclass(frozen=True)
class HistoryEntry:
    rule_id: str
    date: dt.date
    status: str
    points: int | None = None
    auto: str = ""


@dataclass(frozen=True)
class Case:
    pack_id: str
    occurred_at: dt.datetime
    location_type: str
    start_of_operation: bool = False
    manifest_insecurity: bool = False
    vehicle: VehicleFacts = field(default_factory=VehicleFacts)
    driver: DriverFacts = field(default_factory=DriverFacts)
    answers: tuple[Answer, ...] = ()
    infractions: tuple[str, ...] = ()
    facts: Mapping[str, object] = field(default_factory=dict)
    history: tuple[HistoryEntry, ...] = ()
    parameters: Mapping[str, object] = field(default_factory=dict)

    @property
    def date(self) -> dt.date:
        """The date of the fact in its own UTC offset (deadlines run from it)."""
        return self.occurred_at.date()

    def fact(self, name: str) -> object:
        return self.facts.get(name)


# --- parsing helpers ------------------------------------------------------------------------


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise CaseError(where, f"expected an object, got {type(value).__name__}")
    return value


def _bool(data: Mapping[str, Any], key: str, where: str, default: bool | None) -> bool | None:
    value = data.get(key, default)
    if value is None or isinstance(value, bool):
        return value
    raise CaseError(f"{where}{key}", f"expected true or false, got {value!r}")


def _int(data: Mapping[str, Any], key: str, where: str, lo: int, hi: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CaseError(f"{where}{key}", f"expected an integer, got {value!r}")
    if not lo <= value <= hi:
        raise CaseError(f"{where}{key}", f"{value} is out of range {lo}..{hi}")
    return value


def parse_date(value: object, where: str) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str):
        raise CaseError(where, f"expected a date YYYY-MM-DD, got {value!r}")
    try:
        parsed = dt.date.fromisoformat(value)
    except ValueError:
        raise CaseError(where, f"invalid date {value!r} (expected YYYY-MM-DD)") from None
    if not YEAR_MIN <= parsed.year <= YEAR_MAX:
        raise CaseError(where, f"year {parsed.year} is outside {YEAR_MIN}..{YEAR_MAX}")
    return parsed


def _opt_date(data: Mapping[str, Any], key: str, where: str) -> dt.date | None:
    value = data.get(key)
    return None if value is None else parse_date(value, f"{where}{key}")


def parse_datetime(value: object, where: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value)
        except ValueError:
            raise CaseError(where, f"invalid date-time {value!r} (expected ISO 8601)") from None
    else:
        raise CaseError(where, f"expected an ISO 8601 date-time, got {value!r}")
    if parsed.tzinfo is None:
        raise CaseError(where, f"{value!r} has no UTC offset (e.g. 2026-04-14T10:30:00-03:00)")
    if not YEAR_MIN <= parsed.year <= YEAR_MAX:
        raise CaseError(where, f"year {parsed.year} is outside {YEAR_MIN}..{YEAR_MAX}")
    return parsed


def parse_money(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (str, int, Decimal)):
        raise CaseError(where, f'expected an amount as a string like "5.50", got {value!r}')
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise CaseError(where, f"invalid amount {value!r}") from None
    if not amount.is_finite() or amount <= 0:
        raise CaseError(where, f"amount must be positive, got {value!r}")
    if amount > MONEY_MAX:
        raise CaseError(where, f"amount {value!r} is implausibly large (max {MONEY_MAX})")
    return amount


def _vehicle(data: Mapping[str, Any], year_max: int) -> VehicleFacts:
    w = "vehicle."
    plate = None
    if data.get("plate") is not None:
        if not isinstance(data["plate"], str):
            raise CaseError("vehicle.plate", f"expected text, got {data['plate']!r}")
        try:
            plate = parse_plate(data["plate"])
        except IdentityError as exc:
            raise CaseError("vehicle.plate", exc.message) from None
    chassis = _int(data, "chassis_year", w, 1900, year_max)
    body = _int(data, "body_year", w, 1900, year_max)
    return VehicleFacts(
        plate=plate,
        chassis_year=chassis,
        body_year=body,
        seats=_int(data, "seats", w, 1, 200),
        doors=_int(data, "doors", w, 0, 20),
        insurance_valid_until=_opt_date(data, "insurance_valid_until", w),
        last_vistoria=_opt_date(data, "last_vistoria", w),
    )


def _driver(data: Mapping[str, Any]) -> DriverFacts:
    cpf = None
    if data.get("cpf") is not None:
        if not isinstance(data["cpf"], str):
            raise CaseError("driver.cpf", f"expected text, got {data['cpf']!r}")
        try:
            cpf = normalize_cpf(data["cpf"])
        except IdentityError as exc:
            raise CaseError("driver.cpf", exc.message) from None
    cnh = cnh_valid = cnh_message = None
    if data.get("cnh") is not None:
        if not isinstance(data["cnh"], str):
            raise CaseError("driver.cnh", f"expected text, got {data['cnh']!r}")
        try:
            check = check_cnh(data["cnh"])
        except IdentityError as exc:
            raise CaseError("driver.cnh", exc.message) from None
        cnh, cnh_valid, cnh_message = check.number, check.valid, check.message
    reason = data.get("cnh_override_reason")
    if reason is not None and not isinstance(reason, str):
        raise CaseError("driver.cnh_override_reason", "expected text")
    name = data.get("name")
    if name is not None and not isinstance(name, str):
        raise CaseError("driver.name", "expected text")
    return DriverFacts(
        cpf=cpf,
        cnh=cnh,
        cnh_valid=cnh_valid,
        cnh_message=cnh_message,
        cnh_override_reason=reason,
        registered=_bool(data, "registered", "driver.", None),
        name=name,
    )


def _answers(data: Mapping[str, Any]) -> tuple[Answer, ...]:
    out = []
    for item_id, raw in data.items():
        where = f"checklist.{item_id}"
        rules: tuple[str, ...] = ()
        note = ""
        value: object = None
        if isinstance(raw, Mapping):
            result = raw.get("result")
            raw_rules = raw.get("rules", [])
            if not isinstance(raw_rules, list) or not all(isinstance(r, str) for r in raw_rules):
                raise CaseError(f"{where}.rules", "expected a list of rule IDs")
            rules = tuple(raw_rules)
            note = raw.get("note") or ""
            if not isinstance(note, str):
                raise CaseError(f"{where}.note", "expected text")
            value = raw.get("value")
        else:
            result = raw
        if not isinstance(result, str) or result.lower() not in ANSWER_RESULTS:
            raise CaseError(where, f"answer must be ok, fail or na; got {result!r}")
        out.append(Answer(item_id, ANSWER_RESULTS[result.lower()], rules, note, value))
    return tuple(out)


def _history(rows: object) -> tuple[HistoryEntry, ...]:
    if rows is None:
        return ()
    if not isinstance(rows, list):
        raise CaseError("history", "expected a list")
    out = []
    for i, raw in enumerate(rows):
        where = f"history[{i}]"
        row = _mapping(raw, where)
        rule_id = row.get("rule_id")
        if not isinstance(rule_id, str) or not rule_id:
            raise CaseError(f"{where}.rule_id", "missing rule ID")
        status = row.get("status", "upheld")
        if status not in HISTORY_STATUSES:
            raise CaseError(f"{where}.status", f"must be one of {', '.join(HISTORY_STATUSES)}")
        auto = row.get("auto", "")
        out.append(
            HistoryEntry(
                rule_id=rule_id,
                date=parse_date(row.get("date"), f"{where}.date"),
                status=status,
                points=_int(row, "points", f"{where}.", 0, 1000),
                auto=str(auto),
            )
        )
    return tuple(out)


def parse_case(data: object) -> Case:
    """Build a :class:`Case` from the JSON shape; raise :class:`CaseError` on bad input."""
    root = _mapping(data, "case")
    pack_id = root.get("pack")
    if not isinstance(pack_id, str) or not pack_id:
        raise CaseError("pack", "missing pack id (DF_STPA, DF_STPCR, JF_1972)")
    occurred = parse_datetime(root.get("occurred_at"), "occurred_at")
    location = root.get("location_type")
    if location not in LOCATION_TYPES:
        raise CaseError(
            "location_type", f"must be one of {', '.join(LOCATION_TYPES)}; got {location!r}"
        )
    infractions = root.get("infractions", [])
    if not isinstance(infractions, list) or not all(isinstance(r, str) for r in infractions):
        raise CaseError("infractions", "expected a list of rule IDs")
    facts = dict(_mapping(root.get("facts"), "facts"))
    for name, value in facts.items():
        types = FACT_TYPES.get(name)
        if types is None:
            raise CaseError(f"facts.{name}", f"unknown fact (known: {', '.join(FACT_TYPES)})")
        if value is not None and (
            (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
        ):
            raise CaseError(f"facts.{name}", f"expected {types[0].__name__}, got {value!r}")
    if "age_replacement_notified_on" in facts and facts["age_replacement_notified_on"] is not None:
        facts["age_replacement_notified_on"] = parse_date(
            facts["age_replacement_notified_on"], "facts.age_replacement_notified_on"
        )
    if isinstance(facts.get("passengers_counted"), int) and facts["passengers_counted"] < 0:
        raise CaseError("facts.passengers_counted", "must not be negative")
    params = dict(_mapping(root.get("parameters"), "parameters"))
    for key in ("tariff_brl", "minimum_wage_brl"):
        if key in params:
            params[key] = parse_money(params[key], f"parameters.{key}")
    history = _history(root.get("history"))
    for h in history:
        if h.date > occurred.date():
            raise CaseError(
                "history", f"entry dated {h.date} is after the fact ({occurred.date()})"
            )
    return Case(
        pack_id=pack_id,
        occurred_at=occurred,
        location_type=location,
        start_of_operation=bool(_bool(root, "start_of_operation", "", False)),
        manifest_insecurity=bool(_bool(root, "manifest_insecurity", "", False)),
        vehicle=_vehicle(_mapping(root.get("vehicle"), "vehicle"), occurred.year + 1),
        driver=_driver(_mapping(root.get("driver"), "driver")),
        answers=_answers(_mapping(root.get("checklist"), "checklist")),
        infractions=tuple(infractions),
        facts=facts,
        history=history,
        parameters=params,
    )
