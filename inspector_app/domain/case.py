"""An inspection case as the rules engine sees it: what was found, where, when, on what.

``parse_case`` turns the JSON shape of ``inspector rules evaluate`` (and of the GUI/store,
which build the same mapping) into frozen objects. Every problem raises :class:`CaseError`
naming the offending field, with a ``code`` and a Portuguese ``message_pt``, so the CLI can
exit 2 with one line and the GUI can point at the field in Portuguese.

Input is strict everywhere: every object of the case (the root, vehicle, driver, autuado,
place, checklist answers, history rows, facts) refuses keys it does not know, because a
misspelt key (``start_of_operaton``, ``registred``) would otherwise silently drop a legal
precondition. Impossible timelines are refused too (a fact in the future, a vistoria, a
manufacture year or a history row after the fact, an insurance that starts after it ends).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from inspector_app.domain.identity import (
    IdentityError,
    Plate,
    check_cnh,
    normalize_cnpj,
    normalize_cpf,
    parse_plate,
)
from inspector_app.domain.legaltime import FUTURE_TOLERANCE, legal_date
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
AUTUADO_KINDS = ("permissionario", "empresa")
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
    "irregularity_notified_on": (str,),  # JF art. 23 §1 (date of the notice to fix)
}
DATE_FACTS = ("age_replacement_notified_on", "irregularity_notified_on")

# The keys each object of the case may carry (strict input).
ROOT_KEYS = (
    "pack", "occurred_at", "location_type", "start_of_operation", "manifest_insecurity",
    "vehicle", "driver", "autuado", "place", "checklist", "infractions", "facts", "history",
    "parameters", "historical_reevaluation",
)
VEHICLE_KEYS = (
    "plate", "chassis_year", "body_year", "seats", "doors", "insurance_valid_from",
    "insurance_valid_until", "last_vistoria", "age_exception",
)
AGE_EXCEPTION_KEYS = ("act", "issued_on", "route")
DRIVER_KEYS = ("cpf", "cnh", "cnh_override_reason", "registered", "name")
AUTUADO_KEYS = ("kind", "name", "cpf", "cnpj", "permit")
PLACE_KEYS = ("address", "latitude", "longitude")
ANSWER_KEYS = ("result", "rules", "note", "value")
HISTORY_KEYS = ("rule_id", "date", "status", "points", "auto")
REEVALUATION_KEYS = ("reason",)

# Portuguese for each error code; ``{field}`` is the dotted path, ``{detail}`` the specifics.
MESSAGES_PT: dict[str, str] = {
    "unknown_key": "Campo desconhecido “{field}”{detail}. Corrija o nome do campo.",
    "unknown_fact": "Fato desconhecido “{field}”{detail}.",
    "type": "Valor inválido em “{field}”: {detail}.",
    "range": "Valor fora do intervalo permitido em “{field}”: {detail}.",
    "date": "Data inválida em “{field}”: {detail}.",
    "required": "Informação obrigatória ausente: “{field}”{detail}.",
    "choice": "Opção inválida em “{field}”: {detail}.",
    "identity": "{detail}",
    "future": "Fato datado no futuro (“{field}”): {detail}.",
    "timeline": "Sequência de datas impossível (“{field}”): {detail}.",
    "unknown_rule": "Infração desconhecida neste regulamento (“{field}”): {detail}.",
    "not_applicable": "Infração que não pode ser aplicada (“{field}”): {detail}.",
    "precondition": "Falta condição legal para a autuação (“{field}”): {detail}.",
    "pack": "Regulamento inválido para este caso (“{field}”): {detail}.",
    "not_in_force": "Norma fora de vigência na data do fato (“{field}”): {detail}.",
    "parameter": "Parâmetro inválido (“{field}”): {detail}.",
    "input": "Dado inválido (“{field}”): {detail}.",
}


class CaseError(ValueError):
    """Invalid case input.

    ``field`` is a dotted path such as ``vehicle.plate``; ``code`` one of
    :data:`MESSAGES_PT`; ``message`` English (CLI, logs); ``message_pt`` the Portuguese
    sentence for the screen.
    """

    def __init__(
        self, field: str, message: str, *, code: str = "input", pt: str | None = None
    ) -> None:
        self.field = field
        self.message = message
        self.code = code if code in MESSAGES_PT else "input"
        detail = pt if pt is not None else ""
        template = MESSAGES_PT[self.code]
        if pt is None and "{detail}" in template and self.code not in ("unknown_key",):
            detail = message
        self.message_pt = template.format(field=field, detail=detail)
        super().__init__(f"{field}: {message}")

    def __reduce__(self) -> Any:
        return (_rebuild_case_error, (self.field, self.message, self.code, self.message_pt))


def _rebuild_case_error(field: str, message: str, code: str, message_pt: str) -> CaseError:
    err = CaseError(field, message, code=code)
    err.message_pt = message_pt
    return err


@dataclass(frozen=True)
class AgeException:
    """JF Decreto 1.235/1972 art. 33 §2: an older vehicle accepted by the Secretaria for a
    non-central route, by an act whose number the agent records."""

    act: str
    issued_on: dt.date | None = None
    route: str = ""


@dataclass(frozen=True)
class VehicleFacts:
    plate: Plate | None = None
    chassis_year: int | None = None
    body_year: int | None = None
    seats: int | None = None
    doors: int | None = None
    insurance_valid_from: dt.date | None = None
    insurance_valid_until: dt.date | None = None
    last_vistoria: dt.date | None = None
    age_exception: AgeException | None = None


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
class Autuado:
    """Who the auto is drawn up against: a permissionário (CPF) or a company (CNPJ)."""

    kind: str
    name: str = ""
    cpf: str | None = None
    cnpj: str | None = None
    permit: str = ""


@dataclass(frozen=True)
class Place:
    address: str = ""
    latitude: float | None = None
    longitude: float | None = None


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
    autuado: Autuado | None = None
    place: Place | None = None
    historical_reevaluation: str | None = None

    @property
    def date(self) -> dt.date:
        """The legal date of the fact (Brasília), from which deadlines run."""
        return legal_date(self.occurred_at)

    def fact(self, name: str) -> object:
        return self.facts.get(name)


# --- parsing helpers ------------------------------------------------------------------------


def _mapping(value: object, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise CaseError(
            where,
            f"expected an object, got {type(value).__name__}",
            code="type",
            pt="esperado um objeto",
        )
    return value


def _strict(data: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    """Refuse the first key of ``data`` not in ``allowed``, naming it (and a near match)."""
    for key in data:
        if key in allowed:
            continue
        name = f"{where}{key}" if where else str(key)
        close = difflib.get_close_matches(str(key), allowed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        hint_pt = f" (quis dizer “{close[0]}”?)" if close else ""
        raise CaseError(
            name,
            f"unknown key (allowed: {', '.join(allowed)}){hint}",
            code="unknown_key",
            pt=hint_pt,
        )


def _bool(data: Mapping[str, Any], key: str, where: str, default: bool | None) -> bool | None:
    value = data.get(key, default)
    if value is None or isinstance(value, bool):
        return value
    raise CaseError(
        f"{where}{key}",
        f"expected true or false, got {value!r}",
        code="type",
        pt=f"esperado verdadeiro ou falso, recebido {value!r}",
    )


def _int(data: Mapping[str, Any], key: str, where: str, lo: int, hi: int) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise CaseError(
            f"{where}{key}",
            f"expected an integer, got {value!r}",
            code="type",
            pt=f"esperado um número inteiro, recebido {value!r}",
        )
    if not lo <= value <= hi:
        raise CaseError(
            f"{where}{key}",
            f"{value} is out of range {lo}..{hi}",
            code="range",
            pt=f"{value} fora de {lo}..{hi}",
        )
    return value


def _text(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None or isinstance(value, str):
        return value
    raise CaseError(
        f"{where}{key}", f"expected text, got {value!r}", code="type", pt="esperado um texto"
    )


def parse_date(value: object, where: str) -> dt.date:
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str):
        raise CaseError(
            where,
            f"expected a date YYYY-MM-DD, got {value!r}",
            code="date",
            pt=f"esperada uma data AAAA-MM-DD, recebido {value!r}",
        )
    try:
        parsed = dt.date.fromisoformat(value)
    except ValueError:
        raise CaseError(
            where,
            f"invalid date {value!r} (expected YYYY-MM-DD)",
            code="date",
            pt=f"{value!r} não é uma data AAAA-MM-DD",
        ) from None
    if not YEAR_MIN <= parsed.year <= YEAR_MAX:
        raise CaseError(
            where,
            f"year {parsed.year} is outside {YEAR_MIN}..{YEAR_MAX}",
            code="date",
            pt=f"ano {parsed.year} fora de {YEAR_MIN}..{YEAR_MAX}",
        )
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
            raise CaseError(
                where,
                f"invalid date-time {value!r} (expected ISO 8601)",
                code="date",
                pt=f"{value!r} não é uma data e hora ISO 8601",
            ) from None
    else:
        raise CaseError(
            where,
            f"expected an ISO 8601 date-time, got {value!r}",
            code="date",
            pt="esperada uma data e hora ISO 8601",
        )
    if parsed.tzinfo is None:
        raise CaseError(
            where,
            f"{value!r} has no UTC offset (e.g. 2026-04-14T10:30:00-03:00)",
            code="date",
            pt="data e hora sem fuso horário (ex.: 2026-04-14T10:30:00-03:00)",
        )
    if not YEAR_MIN <= parsed.year <= YEAR_MAX:
        raise CaseError(
            where,
            f"year {parsed.year} is outside {YEAR_MIN}..{YEAR_MAX}",
            code="date",
            pt=f"ano {parsed.year} fora de {YEAR_MIN}..{YEAR_MAX}",
        )
    return parsed


def parse_money(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, (str, int, Decimal)):
        raise CaseError(
            where,
            f'expected an amount as a string like "5.50", got {value!r}',
            code="type",
            pt='esperado um valor como "5.50"',
        )
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise CaseError(
            where, f"invalid amount {value!r}", code="type", pt=f"valor {value!r} inválido"
        ) from None
    if not amount.is_finite() or amount <= 0:
        raise CaseError(
            where,
            f"amount must be positive, got {value!r}",
            code="range",
            pt="o valor deve ser positivo",
        )
    if amount > MONEY_MAX:
        raise CaseError(
            where,
            f"amount {value!r} is implausibly large (max {MONEY_MAX})",
            code="range",
            pt=f"valor {value!r} implausível (máximo {MONEY_MAX})",
        )
    return amount


def _identity(where: str, exc: IdentityError) -> CaseError:
    return CaseError(where, exc.message, code="identity", pt=exc.message)


def _age_exception(raw: object) -> AgeException | None:
    if raw is None:
        return None
    w = "vehicle.age_exception."
    data = _mapping(raw, "vehicle.age_exception")
    _strict(data, AGE_EXCEPTION_KEYS, w)
    act = _text(data, "act", w)
    if not act or not act.strip():
        raise CaseError(
            f"{w}act",
            "the exception needs the number of the Secretaria's act (JF art. 33 §2)",
            code="required",
            pt=" (número do ato da Secretaria que admitiu o veículo, art. 33, §2º)",
        )
    return AgeException(
        act=act.strip(),
        issued_on=_opt_date(data, "issued_on", w),
        route=(_text(data, "route", w) or "").strip(),
    )


def _vehicle(data: Mapping[str, Any]) -> VehicleFacts:
    w = "vehicle."
    _strict(data, VEHICLE_KEYS, w)
    plate = None
    if data.get("plate") is not None:
        text = _text(data, "plate", w)
        try:
            plate = parse_plate(text or "")
        except IdentityError as exc:
            raise _identity("vehicle.plate", exc) from None
    chassis = _int(data, "chassis_year", w, YEAR_MIN, YEAR_MAX)
    body = _int(data, "body_year", w, YEAR_MIN, YEAR_MAX)
    return VehicleFacts(
        plate=plate,
        chassis_year=chassis,
        body_year=body,
        seats=_int(data, "seats", w, 1, 200),
        doors=_int(data, "doors", w, 0, 20),
        insurance_valid_from=_opt_date(data, "insurance_valid_from", w),
        insurance_valid_until=_opt_date(data, "insurance_valid_until", w),
        last_vistoria=_opt_date(data, "last_vistoria", w),
        age_exception=_age_exception(data.get("age_exception")),
    )


def _driver(data: Mapping[str, Any]) -> DriverFacts:
    w = "driver."
    _strict(data, DRIVER_KEYS, w)
    cpf = None
    if data.get("cpf") is not None:
        try:
            cpf = normalize_cpf(_text(data, "cpf", w) or "")
        except IdentityError as exc:
            raise _identity("driver.cpf", exc) from None
    cnh = cnh_valid = cnh_message = None
    if data.get("cnh") is not None:
        try:
            check = check_cnh(_text(data, "cnh", w) or "")
        except IdentityError as exc:
            raise _identity("driver.cnh", exc) from None
        cnh, cnh_valid, cnh_message = check.number, check.valid, check.message
    return DriverFacts(
        cpf=cpf,
        cnh=cnh,
        cnh_valid=cnh_valid,
        cnh_message=cnh_message,
        cnh_override_reason=_text(data, "cnh_override_reason", w),
        registered=_bool(data, "registered", w, None),
        name=_text(data, "name", w),
    )


def _autuado(raw: object) -> Autuado | None:
    if raw is None:
        return None
    w = "autuado."
    data = _mapping(raw, "autuado")
    _strict(data, AUTUADO_KEYS, w)
    kind = data.get("kind")
    if kind not in AUTUADO_KINDS:
        raise CaseError(
            f"{w}kind",
            f"must be one of {', '.join(AUTUADO_KINDS)}; got {kind!r}",
            code="choice",
            pt="informe permissionário (CPF) ou empresa (CNPJ)",
        )
    cpf = cnpj = None
    if kind == "permissionario":
        if data.get("cnpj") is not None:
            raise CaseError(
                f"{w}cnpj",
                "a permissionário is a natural person: give a CPF, not a CNPJ",
                code="choice",
                pt="permissionário é pessoa física: informe o CPF, não um CNPJ",
            )
        if data.get("cpf") is None:
            raise CaseError(
                f"{w}cpf", "the permissionário's CPF is required", code="required",
                pt=" (CPF do permissionário)",
            )
        try:
            cpf = normalize_cpf(_text(data, "cpf", w) or "")
        except IdentityError as exc:
            raise _identity(f"{w}cpf", exc) from None
    else:
        if data.get("cpf") is not None:
            raise CaseError(
                f"{w}cpf",
                "a company is identified by its CNPJ, not a CPF",
                code="choice",
                pt="empresa é identificada pelo CNPJ, não por CPF",
            )
        if data.get("cnpj") is None:
            raise CaseError(
                f"{w}cnpj", "the company's CNPJ is required", code="required",
                pt=" (CNPJ da empresa)",
            )
        try:
            cnpj = normalize_cnpj(_text(data, "cnpj", w) or "")
        except IdentityError as exc:
            raise _identity(f"{w}cnpj", exc) from None
    return Autuado(
        kind=str(kind),
        name=(_text(data, "name", w) or "").strip(),
        cpf=cpf,
        cnpj=cnpj,
        permit=(_text(data, "permit", w) or "").strip(),
    )


def _place(raw: object) -> Place | None:
    if raw is None:
        return None
    w = "place."
    if isinstance(raw, str):
        return Place(address=raw.strip())
    data = _mapping(raw, "place")
    _strict(data, PLACE_KEYS, w)
    coords: list[float | None] = []
    for key, limit in (("latitude", 90), ("longitude", 180)):
        value = data.get(key)
        if value is not None and (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not -limit <= value <= limit
        ):
            raise CaseError(
                f"{w}{key}", f"expected a number in -{limit}..{limit}, got {value!r}",
                code="range", pt=f"esperado um número entre -{limit} e {limit}",
            )
        coords.append(None if value is None else float(value))
    return Place(address=(_text(data, "address", w) or "").strip(), latitude=coords[0],
                 longitude=coords[1])


def _answers(data: Mapping[str, Any]) -> tuple[Answer, ...]:
    out = []
    for item_id, raw in data.items():
        where = f"checklist.{item_id}"
        rules: tuple[str, ...] = ()
        note = ""
        value: object = None
        if isinstance(raw, Mapping):
            _strict(raw, ANSWER_KEYS, f"{where}.")
            result = raw.get("result")
            raw_rules = raw.get("rules", [])
            if not isinstance(raw_rules, list) or not all(isinstance(r, str) for r in raw_rules):
                raise CaseError(
                    f"{where}.rules", "expected a list of rule IDs", code="type",
                    pt="esperada uma lista de infrações",
                )
            rules = tuple(raw_rules)
            note = raw.get("note") or ""
            if not isinstance(note, str):
                raise CaseError(f"{where}.note", "expected text", code="type",
                                pt="esperado um texto")
            value = raw.get("value")
        else:
            result = raw
        if not isinstance(result, str) or result.lower() not in ANSWER_RESULTS:
            raise CaseError(
                where, f"answer must be ok, fail or na; got {result!r}", code="choice",
                pt="a resposta deve ser conforme, não conforme ou não se aplica",
            )
        out.append(Answer(item_id, ANSWER_RESULTS[result.lower()], rules, note, value))
    return tuple(out)


def _history(rows: object) -> tuple[HistoryEntry, ...]:
    if rows is None:
        return ()
    if not isinstance(rows, list):
        raise CaseError("history", "expected a list", code="type", pt="esperada uma lista")
    out = []
    for i, raw in enumerate(rows):
        where = f"history[{i}]"
        row = _mapping(raw, where)
        _strict(row, HISTORY_KEYS, f"{where}.")
        rule_id = row.get("rule_id")
        if not isinstance(rule_id, str) or not rule_id:
            raise CaseError(f"{where}.rule_id", "missing rule ID", code="required")
        status = row.get("status", "upheld")
        if status not in HISTORY_STATUSES:
            raise CaseError(
                f"{where}.status", f"must be one of {', '.join(HISTORY_STATUSES)}",
                code="choice", pt="situação deve ser mantido, pendente ou cancelado",
            )
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


def _timeline(case: Case, now: dt.datetime | None) -> None:
    """Refuse what cannot have happened before the fact (or the fact after now)."""
    on = case.date
    if now is not None and case.occurred_at > now + FUTURE_TOLERANCE:
        raise CaseError(
            "occurred_at",
            f"{case.occurred_at.isoformat()} is in the future (now {now.isoformat()})",
            code="future",
            pt=f"{case.occurred_at.isoformat()} é posterior ao momento atual",
        )
    v = case.vehicle
    if v.last_vistoria is not None and v.last_vistoria > on:
        raise CaseError(
            "vehicle.last_vistoria",
            f"{v.last_vistoria} is after the fact ({on})",
            code="timeline",
            pt=f"última vistoria em {v.last_vistoria:%d/%m/%Y}, depois do fato ({on:%d/%m/%Y})",
        )
    for key, year in (("chassis_year", v.chassis_year), ("body_year", v.body_year)):
        # The year of manufacture (not the model year) cannot be later than the fact's.
        if year is not None and year > on.year:
            raise CaseError(
                f"vehicle.{key}",
                f"manufacture year {year} is after the fact ({on.year})",
                code="timeline",
                pt=f"ano de fabricação {year} posterior ao fato ({on.year})",
            )
    if (
        v.insurance_valid_from is not None
        and v.insurance_valid_until is not None
        and v.insurance_valid_from > v.insurance_valid_until
    ):
        raise CaseError(
            "vehicle.insurance_valid_from",
            f"insurance starts {v.insurance_valid_from} after it ends "
            f"{v.insurance_valid_until}",
            code="timeline",
            pt=(
                f"seguro começa em {v.insurance_valid_from:%d/%m/%Y}, depois do fim "
                f"({v.insurance_valid_until:%d/%m/%Y})"
            ),
        )
    for i, h in enumerate(case.history):
        if h.date > on:
            raise CaseError(
                f"history[{i}].date",
                f"entry dated {h.date} is after the fact ({on})",
                code="timeline",
                pt=f"registro de {h.date:%d/%m/%Y} posterior ao fato ({on:%d/%m/%Y})",
            )
    for name in DATE_FACTS:
        notified = case.fact(name)
        if isinstance(notified, dt.date) and notified > on:
            raise CaseError(
                f"facts.{name}",
                f"notice {notified} is after the fact ({on})",
                code="timeline",
                pt=f"notificação de {notified:%d/%m/%Y} posterior ao fato ({on:%d/%m/%Y})",
            )
    exc = v.age_exception
    if exc is not None and exc.issued_on is not None and exc.issued_on > on:
        raise CaseError(
            "vehicle.age_exception.issued_on",
            f"act dated {exc.issued_on} is after the fact ({on})",
            code="timeline",
            pt=f"ato de {exc.issued_on:%d/%m/%Y} posterior ao fato ({on:%d/%m/%Y})",
        )


def _reevaluation(raw: object) -> str | None:
    """``historical_reevaluation``: true, or an object with the reason (documents say so)."""
    if raw is None or raw is False:
        return None
    if raw is True:
        return ""
    data = _mapping(raw, "historical_reevaluation")
    _strict(data, REEVALUATION_KEYS, "historical_reevaluation.")
    return (_text(data, "reason", "historical_reevaluation.") or "").strip()


def parse_case(data: object, *, now: dt.datetime | None = None) -> Case:
    """Build a :class:`Case` from the JSON shape; raise :class:`CaseError` on bad input.

    ``now`` (aware) is the clock a fact may not be later than (plus a small tolerance);
    ``None`` skips that one check (replaying stored cases).
    """
    root = _mapping(data, "case")
    _strict(root, ROOT_KEYS, "")
    pack_id = root.get("pack")
    if not isinstance(pack_id, str) or not pack_id:
        raise CaseError(
            "pack", "missing pack id (DF_STPA, DF_STPCR, JF_1972)", code="required",
            pt=" (regulamento: DF_STPA, DF_STPCR ou JF_1972)",
        )
    occurred = parse_datetime(root.get("occurred_at"), "occurred_at")
    location = root.get("location_type")
    if location not in LOCATION_TYPES:
        raise CaseError(
            "location_type", f"must be one of {', '.join(LOCATION_TYPES)}; got {location!r}",
            code="choice", pt="tipo de local deve ser terminal, ponto de controle, via pública "
            "ou pátio de vistoria",
        )
    infractions = root.get("infractions", [])
    if not isinstance(infractions, list) or not all(isinstance(r, str) for r in infractions):
        raise CaseError("infractions", "expected a list of rule IDs", code="type",
                        pt="esperada uma lista de infrações")
    facts = dict(_mapping(root.get("facts"), "facts"))
    for name, value in facts.items():
        types = FACT_TYPES.get(name)
        if types is None:
            raise CaseError(
                f"facts.{name}", f"unknown fact (known: {', '.join(FACT_TYPES)})",
                code="unknown_fact", pt="",
            )
        if value is not None and (
            (isinstance(value, bool) and bool not in types) or not isinstance(value, types)
        ):
            raise CaseError(f"facts.{name}", f"expected {types[0].__name__}, got {value!r}",
                            code="type", pt=f"tipo inesperado {value!r}")
    for name in DATE_FACTS:
        if facts.get(name) is not None:
            facts[name] = parse_date(facts[name], f"facts.{name}")
    if isinstance(facts.get("passengers_counted"), int) and facts["passengers_counted"] < 0:
        raise CaseError("facts.passengers_counted", "must not be negative", code="range",
                        pt="não pode ser negativo")
    params = dict(_mapping(root.get("parameters"), "parameters"))
    for key in ("tariff_brl", "minimum_wage_brl"):
        if key in params:
            params[key] = parse_money(params[key], f"parameters.{key}")
    case = Case(
        pack_id=pack_id,
        occurred_at=occurred,
        location_type=location,
        start_of_operation=bool(_bool(root, "start_of_operation", "", False)),
        manifest_insecurity=bool(_bool(root, "manifest_insecurity", "", False)),
        vehicle=_vehicle(_mapping(root.get("vehicle"), "vehicle")),
        driver=_driver(_mapping(root.get("driver"), "driver")),
        answers=_answers(_mapping(root.get("checklist"), "checklist")),
        infractions=tuple(infractions),
        facts=facts,
        history=_history(root.get("history")),
        parameters=params,
        autuado=_autuado(root.get("autuado")),
        place=_place(root.get("place")),
        historical_reevaluation=_reevaluation(root.get("historical_reevaluation")),
    )
    _timeline(case, now)
    return case
