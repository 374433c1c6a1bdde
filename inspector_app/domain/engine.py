"""The rules engine: from what the inspector found to what the regulation says must follow.

``evaluate(pack, case, calendar)`` is pure: the pack (rules as in force for the regime), the
case (facts, answers, history) and a business-day calendar in, an :class:`Outcome` out.
Every infraction names its legal basis; every parameter the regulation leaves open that the
computation used is listed as a presumed rule (``assumptions``) so screens and autos can say so.

Two penalty regimes are table-driven from the pack:

* ``DF15154`` (Decreto 15.154/1993, also by analogy for STPA): advertência for a primário in a
  group that allows it (art. 34), else multa = multiplier × highest tariff (art. 35); points per
  group (art. 35 §ú), doubled on reincidence within the window (art. 32 §3); cassação proposals
  (art. 39 I–III); retention grounds (art. 37) and where it may happen (§ único).
* ``JF1235`` (Decreto 1.235/1972 Juiz de Fora): advertência for a first breach (art. 47), multa
  = percent × minimum wage at the date of the autuação (art. 50–51), doubled progressively on
  specific reincidence (art. 51 §1); withdrawal from service (art. 37 §2).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from inspector_app.domain.case import Case, CaseError, HistoryEntry
from inspector_app.domain.deadlines import BusinessCalendar, add_months, due_date, months_before
from inspector_app.domain.pack import (
    PENALTY_BY_AUTHORITY,
    PENALTY_CASSACAO_REGISTRO,
    Group,
    Pack,
    Parameter,
    Rule,
)

CENTS = Decimal("0.01")

PENALTY_ADVERTENCIA = "advertencia"
PENALTY_MULTA = "multa"


def money(value: Decimal) -> Decimal:
    return value.quantize(CENTS, rounding=ROUND_HALF_UP)


def plain(value: Decimal) -> str:
    """A factor without exponent or trailing zeros: ``40``, ``2.5``."""
    text = f"{value:f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def format_brl(value: Decimal) -> str:
    """``R$ 1.234,56`` (Brazilian grouping and decimal comma)."""
    text = f"{money(value):,.2f}"
    return "R$ " + text.replace(",", "_").replace(".", ",").replace("_", ".")


@dataclass(frozen=True)
class Assumption:
    parameter: str
    gap: str
    text: str

    def as_json(self) -> dict[str, str]:
        return {"parameter": self.parameter, "gap": self.gap, "text": self.text}


@dataclass(frozen=True)
class InfractionOutcome:
    rule_id: str
    article: str
    description: str
    group: str | None
    penalty: str
    fine_brl: Decimal | None
    fine_reference: str
    points: int
    reincidence: bool
    primario: bool
    basis: tuple[str, ...]
    assumptions: tuple[Assumption, ...]
    sources: tuple[str, ...]
    analogy: bool

    def as_json(self) -> dict[str, object]:
        return {
            "rule_id": self.rule_id,
            "article": self.article,
            "description": self.description,
            "group": self.group,
            "penalty": self.penalty,
            "fine_brl": None if self.fine_brl is None else f"{money(self.fine_brl)}",
            "fine_reference": self.fine_reference,
            "points": self.points,
            "reincidence": self.reincidence,
            "primario": self.primario,
            "basis": list(self.basis),
            "assumptions": [a.as_json() for a in self.assumptions],
            "sources": list(self.sources),
            "analogy": self.analogy,
        }


@dataclass(frozen=True)
class DeadlineOutcome:
    kind: str
    label: str
    due: dt.date | None
    days: int
    unit: str
    trigger: str
    body: str
    basis: str
    assumptions: tuple[Assumption, ...] = ()

    def as_json(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "label": self.label,
            "due": self.due.isoformat() if self.due else None,
            "days": self.days,
            "unit": self.unit,
            "business_days": self.days if self.unit == "business_days" else None,
            "trigger": self.trigger,
            "body": self.body,
            "basis": self.basis,
            "assumptions": [a.as_json() for a in self.assumptions],
        }


@dataclass(frozen=True)
class Ground:
    id: str
    citation: str
    description: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class MeasureOutcome:
    """Retention (DF art. 37) or withdrawal from service (JF art. 37 §2)."""

    kind: str
    required: bool
    grounds: tuple[Ground, ...]
    possible_grounds: tuple[Ground, ...]
    allowed_here: bool | None
    location_type: str
    reason: str
    basis: tuple[str, ...]

    def as_json(self) -> dict[str, object]:
        def g(x: Ground) -> dict[str, object]:
            return {
                "id": x.id,
                "citation": x.citation,
                "description": x.description,
                "sources": list(x.sources),
            }

        return {
            "kind": self.kind,
            "required": self.required,
            "grounds": [x.id for x in self.grounds],
            "details": [g(x) for x in self.grounds],
            "possible_grounds": [g(x) for x in self.possible_grounds],
            "allowed_here": self.allowed_here,
            "location_type": self.location_type,
            "reason": self.reason,
            "basis": list(self.basis),
        }


@dataclass(frozen=True)
class CassacaoGround:
    id: str
    detail: str
    provisional: bool
    basis: str


@dataclass(frozen=True)
class CassacaoOutcome:
    proposed: bool
    kind: str
    grounds: tuple[CassacaoGround, ...]
    note: str

    def as_json(self) -> dict[str, object]:
        return {
            "proposed": self.proposed,
            "kind": self.kind,
            "grounds": [g.id for g in self.grounds],
            "details": [
                {"id": g.id, "detail": g.detail, "provisional": g.provisional, "basis": g.basis}
                for g in self.grounds
            ],
            "note": self.note,
        }


@dataclass(frozen=True)
class VistoriaOutcome:
    last: dt.date | None
    period_months: int | None
    valid_until: dt.date | None
    valid: bool | None
    basis: str

    def as_json(self) -> dict[str, object]:
        return {
            "last": self.last.isoformat() if self.last else None,
            "period_months": self.period_months,
            "valid_until": self.valid_until.isoformat() if self.valid_until else None,
            "valid": self.valid,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class Outcome:
    pack: str
    pack_version: str
    pack_hash: str
    pack_status: str
    occurred_on: dt.date
    infractions: tuple[InfractionOutcome, ...]
    retention: MeasureOutcome
    withdrawal: MeasureOutcome | None
    cassacao: CassacaoOutcome
    vistoria: VistoriaOutcome
    deadlines: tuple[DeadlineOutcome, ...]
    later_deadlines: tuple[DeadlineOutcome, ...]
    warnings: tuple[str, ...]
    notes: tuple[str, ...]
    assumptions: tuple[Assumption, ...]

    @property
    def total_fine(self) -> Decimal:
        return money(sum((i.fine_brl or Decimal(0) for i in self.infractions), Decimal(0)))

    @property
    def total_points(self) -> int:
        return sum(i.points for i in self.infractions)

    def as_json(self) -> dict[str, object]:
        return {
            "pack": self.pack,
            "pack_version": self.pack_version,
            "pack_hash": self.pack_hash,
            "pack_status": self.pack_status,
            "occurred_on": self.occurred_on.isoformat(),
            "infractions": [i.as_json() for i in self.infractions],
            "totals": {"fine_brl": f"{self.total_fine}", "points": self.total_points},
            "retention": self.retention.as_json(),
            "withdrawal": self.withdrawal.as_json() if self.withdrawal else None,
            "cassacao": self.cassacao.as_json(),
            "vistoria": self.vistoria.as_json(),
            "deadlines": [d.as_json() for d in self.deadlines],
            "later_deadlines": [d.as_json() for d in self.later_deadlines],
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "assumptions": [a.as_json() for a in self.assumptions],
            "presumed_rule_applied": bool(self.assumptions),
        }


# --- evaluation context ---------------------------------------------------------------------


@dataclass
class _Proposed:
    rule: Rule
    sources: list[str] = field(default_factory=list)


@dataclass
class _Context:
    pack: Pack
    case: Case
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    all_assumptions: dict[str, Assumption] = field(default_factory=dict)

    def param(self, name: str, used: list[Assumption] | None = None) -> object:
        """A parameter's value; a case override wins and is not presumed."""
        if name in self.case.parameters:
            return self.case.parameters[name]
        p: Parameter = self.pack.parameter(name)
        if p.assumption:
            a = Assumption(name, p.gap, p.note or p.label)
            self.all_assumptions.setdefault(name, a)
            if used is not None and a not in used:
                used.append(a)
        return p.value

    def int_param(self, name: str, used: list[Assumption] | None = None) -> int | None:
        value = self.param(name, used)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise CaseError(f"parameters.{name}", f"expected an integer, got {value!r}")
        return value

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def _rule(ctx: _Context, rule_id: str, where: str) -> Rule:
    rule = ctx.pack.rules.get(rule_id)
    if rule is None:
        raise CaseError(where, f"unknown rule {rule_id!r} in pack {ctx.pack.id}")
    if not rule.selectable:
        raise CaseError(where, f"rule {rule_id!r} cannot be applied ({rule.status}: {rule.note})")
    return rule


def _vehicle_age(year: int | None, on: dt.date) -> int | None:
    """Age in whole calendar years (year of the fact − year of manufacture)."""
    return None if year is None else on.year - year


# --- collecting infractions -----------------------------------------------------------------


@dataclass
class _Collected:
    infractions: dict[str, _Proposed] = field(default_factory=dict)
    grounds: dict[str, list[str]] = field(default_factory=dict)
    possible: dict[str, list[str]] = field(default_factory=dict)
    withdrawal: dict[str, list[str]] = field(default_factory=dict)
    withdrawal_possible: dict[str, list[str]] = field(default_factory=dict)

    def add(self, rule: Rule, source: str) -> None:
        entry = self.infractions.setdefault(rule.id, _Proposed(rule))
        if source not in entry.sources:
            entry.sources.append(source)

    @staticmethod
    def _mark(target: dict[str, list[str]], ids: Iterable[str], source: str) -> None:
        for gid in ids:
            sources = target.setdefault(gid, [])
            if source not in sources:
                sources.append(source)

    def ground(self, ids: Iterable[str], source: str) -> None:
        self._mark(self.grounds, ids, source)

    def possible_ground(self, ids: Iterable[str], source: str) -> None:
        self._mark(self.possible, ids, source)

    def withdraw(self, kind: str, source: str, night: bool) -> None:
        if kind == "preselected" or (kind == "preselected_at_night" and night):
            self._mark(self.withdrawal, ["preselected"], source)
        elif kind in ("propose", "preselected_at_night"):
            self._mark(self.withdrawal_possible, ["propose"], source)


def _is_night(ctx: _Context) -> bool:
    """The ``night`` fact when given, else the pack's night hours (JF lighting withdrawal)."""
    night = ctx.case.fact("night")
    if isinstance(night, bool):
        return night
    names = ("withdrawal.night_start_hour", "withdrawal.night_end_hour")
    if not all(name in ctx.pack.parameters for name in names):
        return False
    start, end = (ctx.int_param(name) for name in names)
    if start is None or end is None:
        return False
    hour = ctx.case.occurred_at.hour
    return hour >= start or hour < end


def _collect(ctx: _Context) -> _Collected:
    pack, case = ctx.pack, ctx.case
    out = _Collected()
    night = _is_night(ctx)
    answered: dict[str, str] = {}
    for answer in case.answers:
        where = f"checklist.{answer.item_id}"
        item = pack.items.get(answer.item_id)
        if item is None:
            raise CaseError(where, f"unknown checklist item {answer.item_id!r} in pack {pack.id}")
        answered[item.id] = answer.result
        if answer.result != "fail":
            continue
        chosen = answer.rules or item.fail
        for rid in chosen:
            if rid not in item.allowed_rules:
                raise CaseError(
                    f"{where}.rules",
                    f"{rid!r} is not a consequence of {item.id} (allowed: "
                    f"{', '.join(item.allowed_rules) or 'none'})",
                )
        for fact in item.requires_facts:
            if case.fact(fact) is not True:
                raise CaseError(
                    f"facts.{fact}",
                    f"missing legal precondition for {item.id}: {fact} must be true",
                )
        if item.informative and not chosen:
            ctx.notes.append(f"{item.id}: {item.informative}")
        source = f"checklist:{item.id}"
        for rid in chosen:
            out.add(_rule(ctx, rid, f"{where}.rules"), source)
        out.ground(item.retention, source)
        out.possible_ground(item.retention_possible, source)
        out.withdraw(item.withdrawal, source, night)
        if item.ctb_overlay:
            ctx.notes.append(f"{item.id}: {item.ctb_overlay}")
    for i, rid in enumerate(case.infractions):
        out.add(_rule(ctx, rid, f"infractions[{i}]"), "manual")
    _vehicle_checks(ctx, out, answered, night)
    for proposed in out.infractions.values():
        rule = proposed.rule
        source = f"rule:{rule.id}"
        out.ground(rule.retention, source)
        out.possible_ground(rule.retention_possible, source)
        out.withdraw(rule.withdrawal, source, night)
        for fact in rule.preconditions:
            if case.fact(fact) is not True:
                raise CaseError(
                    f"facts.{fact}",
                    f"missing legal precondition for {rule.id} ({rule.precondition_basis}): "
                    f"{fact} must be true",
                )
    return out


def _vehicle_checks(
    ctx: _Context, out: _Collected, answered: Mapping[str, str], night: bool
) -> None:
    """Checks from the vehicle and driver facts; an answered item is the inspector's call."""
    case = ctx.case
    v, d, on = case.vehicle, case.driver, case.date
    for check in ctx.pack.checks:
        values = [ctx.param(name) for name in check.parameters]
        failed: str | None = None
        if any(val is None for val in values):
            names = ", ".join(
                n for n, val in zip(check.parameters, values, strict=True) if val is None
            )
            ctx.warn(
                f"Verificação '{check.id}' não executada: parâmetro não configurado ({names})."
            )
            continue
        if check.kind in ("max_age_chassis", "max_age_body"):
            year = v.chassis_year if check.kind == "max_age_chassis" else v.body_year
            age = _vehicle_age(year, on)
            limit = ctx.int_param(check.parameters[0])
            if age is not None and limit is not None and age > limit:
                what = "chassi" if check.kind == "max_age_chassis" else "carroceria"
                failed = f"idade do {what} {age} anos > limite de {limit} anos ({check.basis})"
        elif check.kind == "min_doors":
            limit = ctx.int_param(check.parameters[0])
            if v.doors is not None and limit is not None and v.doors < limit:
                failed = f"{v.doors} portas < mínimo de {limit} ({check.basis})"
        elif check.kind == "seats_range":
            lo = ctx.int_param(check.parameters[0])
            hi = ctx.int_param(check.parameters[1]) if len(check.parameters) > 1 else None
            if v.seats is not None and lo is not None and v.seats < lo:
                failed = f"{v.seats} lugares < mínimo de {lo} ({check.basis})"
            elif v.seats is not None and hi is not None and v.seats > hi:
                failed = f"{v.seats} lugares > máximo de {hi} ({check.basis})"
        elif check.kind == "vistoria_valid":
            months = ctx.int_param(check.parameters[0])
            if v.last_vistoria is not None and months is not None:
                until = add_months(v.last_vistoria, months)
                if on > until:
                    failed = f"vistoria vencida em {until.isoformat()} ({check.basis})"
        elif check.kind == "insurance_valid":
            if v.insurance_valid_until is not None and on > v.insurance_valid_until:
                failed = f"seguro vencido em {v.insurance_valid_until.isoformat()} ({check.basis})"
        elif check.kind == "driver_registered" and d.registered is False:
            failed = f"condutor não cadastrado ({check.basis})"
        elif check.kind == "overcrowding":
            counted = case.fact("passengers_counted")
            if isinstance(counted, int) and v.seats is not None and counted > v.seats:
                failed = (
                    f"{counted} passageiros contados para {v.seats} lugares do CRLV ({check.basis})"
                )
        if failed is None:
            continue
        if check.item and check.item in answered:
            if answered[check.item] != "fail":
                ctx.warn(
                    f"Os dados do cadastro indicam {failed}, mas o item {check.item} foi "
                    f"respondido '{answered[check.item]}'. Prevalece a resposta do agente."
                )
            continue
        source = f"vehicle:{check.id}"
        ctx.notes.append(f"{check.id}: {failed}")
        for rid in check.fail:
            out.add(_rule(ctx, rid, f"vehicle ({check.id})"), source)
        out.ground(check.retention, source)
        out.withdraw(check.withdrawal, source, night)


# --- penalties ------------------------------------------------------------------------------


def _window(entries: Iterable[HistoryEntry], end: dt.date, months: int) -> list[HistoryEntry]:
    """Entries dated within ``months`` before ``end``: start < date <= end."""
    start = months_before(end, months)
    return [h for h in entries if start < h.date <= end]


def _primario(ctx: _Context, rule: Rule, used: list[Assumption]) -> bool:
    policy = ctx.param("primario.policy", used)
    upheld = [h for h in ctx.case.history if h.status == "upheld"]
    if policy == "ever":
        return not upheld
    months = ctx.int_param("primario.window_months", used) or 12
    recent = _window(upheld, ctx.case.date, months)
    if policy == "same_rule_window":
        return not any(h.rule_id == rule.id for h in recent)
    if policy == "any_infraction_window":
        return not recent
    raise CaseError("parameters.primario.policy", f"unknown policy {policy!r}")


def _fine_base(ctx: _Context, group: Group, used: list[Assumption]) -> tuple[Decimal | None, str]:
    """The base value the group's factor applies to, and how it was chosen (for the auto)."""
    on = ctx.case.date
    if group.fine.kind == "tariff_multiple":
        table, what, policy = "tariff_brl", "T", "tariff.reference"
    else:
        table, what, policy = "minimum_wage_brl", "SM", "fine.base"
    if policy in ctx.pack.parameters:
        ctx.param(policy, used)
    override = table
    if override in ctx.case.parameters:
        value = ctx.case.parameters[override]
        assert isinstance(value, Decimal)
        return value, f"{what} = {format_brl(value)} informado no caso"
    row = ctx.pack.dated_value(table, on)
    if row is None:
        ctx.warn(f"Sem valor de {table} vigente em {on.isoformat()} no pacote: multa não estimada.")
        return None, ""
    if row.assumption:
        a = Assumption(
            f"tables.{table}", "", row.note or f"valor de referência presumido ({table})"
        )
        ctx.all_assumptions.setdefault(a.parameter, a)
        if a not in used:
            used.append(a)
    since = row.start.strftime("%d/%m/%Y")
    return row.value, f"{what} = {format_brl(row.value)} (vigente desde {since})"


def _penalize(ctx: _Context, proposed: _Proposed) -> InfractionOutcome:
    rule = proposed.rule
    used: list[Assumption] = []
    for name in rule.parameters:
        ctx.param(name, used)
    basis = [rule.citation]
    if rule.precondition_basis:
        basis.append(rule.precondition_basis)
    if rule.analogy:
        basis.append("aplicado por analogia (Decreto 15.154/1993)")
    result = _Result(proposed, basis, used)
    if rule.penalty == PENALTY_CASSACAO_REGISTRO:
        return result.build(
            PENALTY_CASSACAO_REGISTRO, None, "sem multa", 0, False, _primario(ctx, rule, used)
        )
    if rule.penalty == PENALTY_BY_AUTHORITY:
        ctx.warn(f"{rule.id}: penalidade e valor definidos pela autoridade ({rule.citation}).")
        return result.build(
            PENALTY_BY_AUTHORITY,
            None,
            "definida pela autoridade competente",
            0,
            False,
            _primario(ctx, rule, used),
        )
    assert rule.group is not None
    group = ctx.pack.groups[rule.group]
    basis.append(group.basis)
    if ctx.pack.meta.penalty_regime == "JF1235":
        return _penalize_jf(ctx, group, result)
    return _penalize_df(ctx, group, result)


@dataclass
class _Result:
    """What an infraction's outcome shares whatever the penalty; ``build`` finishes it."""

    proposed: _Proposed
    basis: list[str]
    used: list[Assumption]

    @property
    def rule(self) -> Rule:
        return self.proposed.rule

    def build(
        self,
        penalty: str,
        fine: Decimal | None,
        reference: str,
        points: int,
        reincidence: bool,
        primario: bool,
    ) -> InfractionOutcome:
        rule = self.rule
        return InfractionOutcome(
            rule_id=rule.id,
            article=rule.article,
            description=rule.description,
            group=rule.group,
            penalty=penalty,
            fine_brl=fine,
            fine_reference=reference,
            points=points,
            reincidence=reincidence,
            primario=primario,
            basis=tuple(self.basis),
            assumptions=tuple(self.used),
            sources=tuple(self.proposed.sources),
            analogy=rule.analogy,
        )


def _penalize_df(ctx: _Context, group: Group, result: _Result) -> InfractionOutcome:
    case, rule, used, basis = ctx.case, result.rule, result.used, result.basis
    months = ctx.int_param("reincidence.window_months", used) or 12
    ctx.param("reincidence.key", used)
    same = [h for h in _window(case.history, case.date, months) if h.rule_id == rule.id]
    reincidence = any(h.status == "upheld" for h in same)
    if not reincidence and any(h.status == "pending" for h in same):
        ctx.warn(
            f"{rule.id}: há auto pendente pela mesma infração nos últimos {months} meses; "
            "haverá reincidência (pontos em dobro) se for mantido."
        )
    primario = _primario(ctx, rule, used)
    advertencia = group.warning_if_primario and primario
    points = 0
    if group.points_parameter:
        points = ctx.int_param(group.points_parameter, used) or 0
    if reincidence:
        points *= 2
        basis.append("Decreto 15.154/1993, art. 32, §3º (reincidência: pontos em dobro)")
    if advertencia:
        basis.append("Decreto 15.154/1993, art. 34 (advertência ao infrator primário, Grupo A)")
        if ctx.param("points.on_advertencia", used) is False:
            points = 0
        return result.build(
            PENALTY_ADVERTENCIA,
            Decimal("0.00"),
            "advertência por escrito (sem multa)",
            points,
            reincidence,
            primario,
        )
    base, how = _fine_base(ctx, group, used)
    fine: Decimal | None = None
    reference = ""
    if base is not None:
        fine = group.fine.factor * base
        reference = (
            f"estimativa: {plain(group.fine.factor)} × {how}; valor final calculado com a "
            "maior tarifa vigente no mês do pagamento (art. 35)"
        )
        factor_name = "fine.reincidence_factor"
        if reincidence and factor_name in ctx.pack.parameters:
            factor = Decimal(str(ctx.param(factor_name, used)))
            if factor != 1:
                fine *= factor
                reference += f"; agravada × {plain(factor)} por reincidência"
        fine = money(fine)
    return result.build(PENALTY_MULTA, fine, reference, points, reincidence, primario)


def _penalize_jf(ctx: _Context, group: Group, result: _Result) -> InfractionOutcome:
    case, rule, used, basis = ctx.case, result.rule, result.used, result.basis
    months = ctx.int_param("reincidence.window_months", used) or 12
    upheld = [h for h in case.history if h.status == "upheld"]
    n_prior = sum(1 for h in _window(upheld, case.date, months) if h.rule_id == rule.id)
    primario = _primario(ctx, rule, used)
    first_is_warning = ctx.param("penalty.first_is_warning", used) is True
    if group.warning_if_primario and first_is_warning and primario:
        basis.append("Decreto 1.235/1972, art. 47 (advertência contra-recibo)")
        return result.build(
            PENALTY_ADVERTENCIA,
            Decimal("0.00"),
            "advertência por escrito, contra-recibo (sem multa)",
            0,
            False,
            True,
        )
    counts_warning = ctx.param("reincidence.counts_warning", used) is True
    k = n_prior if (counts_warning or not first_is_warning) else max(n_prior - 1, 0)
    progression = ctx.param("reincidence.progression", used)
    if progression == "geometric":
        factor = Decimal(2) ** k
    elif progression == "linear":
        factor = Decimal(k + 1)
    else:
        raise CaseError("parameters.reincidence.progression", f"unknown policy {progression!r}")
    cap = ctx.param("reincidence.cap_factor", used)
    if cap is not None:
        factor = min(factor, Decimal(str(cap)))
    if factor != 1:
        basis.append("Decreto 1.235/1972, art. 51, §1º (reincidência específica: multa em dobro)")
    base, how = _fine_base(ctx, group, used)
    fine: Decimal | None = None
    reference = ""
    if base is not None:
        fine = money(group.fine.factor / 100 * base * factor)
        reference = f"{plain(group.fine.factor)}% × {how}"
        if factor != 1:
            reference += f" × {plain(factor)} (reincidência específica)"
        reference += "; salário mínimo na data da autuação (art. 50)"
    return result.build(PENALTY_MULTA, fine, reference, 0, n_prior > 0, primario)


# --- measures -------------------------------------------------------------------------------


def _grounds(ctx: _Context, marks: Mapping[str, list[str]]) -> list[Ground]:
    out = []
    for gid, sources in marks.items():
        g = ctx.pack.measure.grounds[gid]
        out.append(Ground(g.id, g.citation, g.description, tuple(sources)))
    return sorted(out, key=lambda x: list(ctx.pack.measure.grounds).index(x.id))


def _retention(ctx: _Context, col: _Collected) -> MeasureOutcome:
    pack, case = ctx.pack, ctx.case
    measure = pack.measure
    if measure.kind != "retencao":
        return MeasureOutcome(
            kind="retencao",
            required=False,
            grounds=(),
            possible_grounds=(),
            allowed_here=None,
            location_type=case.location_type,
            reason=f"O regime {pack.id} não prevê retenção; ver retirada de circulação.",
            basis=(),
        )
    grounds = []
    for g in _grounds(ctx, col.grounds):
        if pack.measure.grounds[g.id].only_start_of_operation and not case.start_of_operation:
            ctx.notes.append(
                f"{g.citation} só se aplica no início da operação; não há retenção por este "
                "fundamento."
            )
            continue
        grounds.append(g)
    chosen = {g.id for g in grounds}
    possible = [
        g
        for g in _grounds(ctx, col.possible)
        if g.id not in chosen
        and not (pack.measure.grounds[g.id].only_start_of_operation and not case.start_of_operation)
    ]
    required = bool(grounds)
    allowed_here: bool | None = None
    reason = "Nenhum fundamento de retenção."
    basis = [measure.basis]
    if required or possible:
        places = ctx.param(measure.location_parameter) if measure.location_parameter else None
        allowed = list(places) if isinstance(places, list) else []
        basis.append(measure.location_basis)
        if case.location_type in allowed:
            allowed_here = True
            reason = "Local permitido para retenção (terminal ou ponto de controle)."
        elif case.manifest_insecurity:
            allowed_here = True
            reason = "Fora de terminal/ponto de controle, admitida por insegurança manifesta."
            if not case.fact("insecurity_justification"):
                ctx.warn(
                    "Insegurança manifesta declarada sem justificativa: registre a justificativa "
                    "e uma foto (art. 37, parágrafo único)."
                )
        else:
            allowed_here = False
            reason = (
                "A retenção não pode ser feita neste local (somente em terminais ou pontos de "
                "controle, salvo insegurança manifesta – art. 37, parágrafo único)."
            )
            if required:
                ctx.warn(reason)
    if any(g.analogy for g in pack.measure.grounds.values()) and (required or possible):
        basis.append("fundamentos do art. 37 do Decreto 15.154/1993 aplicados por analogia")
    return MeasureOutcome(
        kind="retencao",
        required=required,
        grounds=tuple(grounds),
        possible_grounds=tuple(possible),
        allowed_here=allowed_here,
        location_type=case.location_type,
        reason=reason,
        basis=tuple(b for b in basis if b),
    )


def _withdrawal(ctx: _Context, col: _Collected) -> MeasureOutcome | None:
    measure = ctx.pack.measure
    if measure.kind != "retirada":
        return None
    gid = next(iter(measure.grounds))
    g = measure.grounds[gid]
    pre = col.withdrawal.get("preselected", [])
    prop = [s for s in col.withdrawal_possible.get("propose", []) if s not in pre]
    grounds = (Ground(g.id, g.citation, g.description, tuple(pre)),) if pre else ()
    possible = (Ground(g.id, g.citation, g.description, tuple(prop)),) if prop else ()
    if pre:
        reason = "Retirada de circulação pré-selecionada (falha de segurança); o agente confirma."
    elif prop:
        reason = "Retirada de circulação proposta; decisão do agente."
    else:
        reason = "Nenhuma falha que justifique retirada de circulação."
    return MeasureOutcome(
        kind="retirada",
        required=bool(pre),
        grounds=grounds,
        possible_grounds=possible,
        allowed_here=True,
        location_type=ctx.case.location_type,
        reason=reason,
        basis=(measure.basis,),
    )


# --- cassação -------------------------------------------------------------------------------


def _history_points(ctx: _Context, h: HistoryEntry) -> int:
    if h.points is not None:
        return h.points
    rule = ctx.pack.rules.get(h.rule_id)
    if rule is None or rule.group is None:
        return 0
    group = ctx.pack.groups.get(rule.group)
    if group is None or not group.points_parameter:
        return 0
    return ctx.int_param(group.points_parameter) or 0


def _cassacao(ctx: _Context, infractions: tuple[InfractionOutcome, ...]) -> CassacaoOutcome:
    pack, case = ctx.pack, ctx.case
    note = "Proposta para decisão da autoridade competente; nunca aplicada automaticamente."
    grounds: list[CassacaoGround] = []
    if pack.meta.penalty_regime == "JF1235":
        for inf in infractions:
            if inf.penalty == PENALTY_CASSACAO_REGISTRO:
                grounds.append(
                    CassacaoGround(
                        inf.rule_id,
                        f"{inf.description}: cassação do registro do profissional",
                        False,
                        pack.rules[inf.rule_id].citation,
                    )
                )
        return CassacaoOutcome(bool(grounds), "registro_profissional", tuple(grounds), note)
    on = case.date
    live = [h for h in case.history if h.status != "cancelled"]
    pending_policy = ctx.param("cassacao.pending_policy")
    windows = ctx.param("cassacao.point_windows")
    today_points = sum(i.points for i in infractions)
    if isinstance(windows, list):
        for w in windows:
            if not isinstance(w, dict):
                continue
            months, threshold = int(w["months"]), int(w["points"])
            inside = _window(live, on, months)
            upheld_pts = sum(_history_points(ctx, h) for h in inside if h.status == "upheld")
            pending_pts = sum(_history_points(ctx, h) for h in inside if h.status == "pending")
            total = today_points + upheld_pts + pending_pts
            if total >= threshold and (
                pending_policy != "ignore" or today_points + upheld_pts >= threshold
            ):
                provisional = today_points + upheld_pts < threshold
                grounds.append(
                    CassacaoGround(
                        "DF15154.39.I",
                        f"{total} pontos em {months} meses (limite {threshold})"
                        + (" – inclui autos pendentes" if provisional else ""),
                        provisional,
                        "Decreto 15.154/1993, art. 39, I",
                    )
                )
                break
    drunk_rule = ctx.param("cassacao.drunkenness_rule")
    if any(i.rule_id == drunk_rule for i in infractions):
        needed = ctx.int_param("cassacao.drunkenness_autos") or 2
        before = sum(1 for h in case.history if h.rule_id == drunk_rule and h.status == "upheld")
        if before + 1 >= needed:
            grounds.append(
                CassacaoGround(
                    "DF15154.39.II",
                    f"{before + 1}ª autuação por embriaguez/drogas ({drunk_rule})",
                    False,
                    "Decreto 15.154/1993, art. 39, II",
                )
            )
    notified = case.fact("age_replacement_notified_on")
    age_rules = {r for c in pack.checks if c.kind == "max_age_chassis" for r in c.fail}
    if isinstance(notified, dt.date) and any(i.rule_id in age_rules for i in infractions):
        days = ctx.int_param("cassacao.age_replacement_days") or 30
        limit = notified + dt.timedelta(days=days)
        if on > limit:
            grounds.append(
                CassacaoGround(
                    "DF15154.39.III",
                    f"veículo acima da idade-limite não substituído em {days} dias da notificação "
                    f"de {notified.isoformat()}",
                    False,
                    "Decreto 15.154/1993, art. 39, III",
                )
            )
    return CassacaoOutcome(bool(grounds), "permissao", tuple(grounds), note)


# --- vistoria and deadlines -----------------------------------------------------------------


def _vistoria(ctx: _Context) -> VistoriaOutcome:
    last = ctx.case.vehicle.last_vistoria
    name = "vistoria.period_months"
    months = ctx.int_param(name) if name in ctx.pack.parameters else None
    basis = ctx.pack.parameters[name].basis if name in ctx.pack.parameters else ""
    if last is None or months is None:
        return VistoriaOutcome(last, months, None, None, basis)
    until = add_months(last, months)
    return VistoriaOutcome(last, months, until, ctx.case.date <= until, basis)


def _deadlines(
    ctx: _Context, infractions: tuple[InfractionOutcome, ...], cal: BusinessCalendar
) -> tuple[tuple[DeadlineOutcome, ...], tuple[DeadlineOutcome, ...]]:
    if not infractions:
        return (), ()
    applied = {i.rule_id for i in infractions}
    now: list[DeadlineOutcome] = []
    later: list[DeadlineOutcome] = []
    for d in ctx.pack.deadlines:
        if d.when_rules and not applied.intersection(d.when_rules):
            continue
        used: list[Assumption] = []
        unit = d.unit
        if d.parameter:
            value = ctx.param(d.parameter, used)
            if isinstance(value, str) and value in ("business_days", "calendar_days", "months"):
                unit = value
        if d.trigger == "ciencia_auto":
            due: dt.date | None = due_date(ctx.case.date, d.days, unit, cal)
            target = now
        else:
            due, target = None, later
        target.append(
            DeadlineOutcome(
                d.kind, d.label, due, d.days, unit, d.trigger, d.body, d.basis, tuple(used)
            )
        )
    return tuple(now), tuple(later)


def evaluate(pack: Pack, case: Case, cal: BusinessCalendar) -> Outcome:
    """Apply ``pack`` to ``case``. Raises :class:`CaseError` for input the law cannot take."""
    if case.pack_id != pack.id:
        raise CaseError("pack", f"case is for {case.pack_id!r}, pack is {pack.id!r}")
    if case.date < pack.meta.effective_from:
        raise CaseError(
            "occurred_at",
            f"{case.date.isoformat()} is before pack {pack.id} is in force "
            f"({pack.meta.effective_from.isoformat()})",
        )
    for i, h in enumerate(case.history):
        if h.rule_id not in pack.rules:
            raise CaseError(
                f"history[{i}].rule_id", f"unknown rule {h.rule_id!r} in pack {pack.id}"
            )
    ctx = _Context(pack, case)
    if pack.meta.status == "historical":
        ctx.warn(
            f"Pacote {pack.id} é histórico (norma revogada): uso para treinamento/demonstração."
        )
    if case.driver.cnh_valid is False:
        if case.driver.cnh_override_reason:
            ctx.notes.append(
                "CNH com dígito verificador inválido aceita pelo agente: "
                f"{case.driver.cnh_override_reason}"
            )
        else:
            ctx.warn(case.driver.cnh_message or "CNH com dígito verificador inválido.")
    collected = _collect(ctx)
    infractions = tuple(_penalize(ctx, p) for p in collected.infractions.values())
    retention = _retention(ctx, collected)
    withdrawal = _withdrawal(ctx, collected)
    cassacao = _cassacao(ctx, infractions)
    vistoria = _vistoria(ctx)
    now, later = _deadlines(ctx, infractions, cal)
    if "release.requires_payment" in pack.parameters and retention.required:
        ctx.param("release.requires_payment")
    return Outcome(
        pack=pack.id,
        pack_version=pack.meta.version,
        pack_hash=pack.content_hash,
        pack_status=pack.meta.status,
        occurred_on=case.date,
        infractions=infractions,
        retention=retention,
        withdrawal=withdrawal,
        cassacao=cassacao,
        vistoria=vistoria,
        deadlines=now,
        later_deadlines=later,
        warnings=tuple(ctx.warnings),
        notes=tuple(dict.fromkeys(ctx.notes)),
        assumptions=tuple(ctx.all_assumptions.values()),
    )


__all__ = ["Outcome", "evaluate", "format_brl", "money"]
