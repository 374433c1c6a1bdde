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

import dataclasses
import datetime as dt
import difflib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from inspector_app.domain.case import Case, CaseError, HistoryEntry
from inspector_app.domain.deadlines import (
    WINDOW_LAST_DAY_INCLUDED,
    WINDOW_RULES,
    BusinessCalendar,
    add_months,
    due_date,
)
from inspector_app.domain.pack import (
    PENALTY_BY_AUTHORITY,
    PENALTY_CASSACAO_REGISTRO,
    Group,
    Pack,
    Parameter,
    Rule,
)

WINDOW_PARAMETER = "windows.boundary"
CASE_MONEY_PARAMETERS = ("tariff_brl", "minimum_wage_brl")

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
    counted_from: dt.date | None = None
    calendar_version: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "counted_from": self.counted_from.isoformat() if self.counted_from else None,
            "calendar_version": self.calendar_version,
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
class Commutation:
    """Art. 41 II: the authority may commute the cassação into a fine of 3 × Grupo C."""

    fine_brl: Decimal | None
    reference: str
    basis: str

    def as_json(self) -> dict[str, object]:
        return {
            "fine_brl": None if self.fine_brl is None else f"{money(self.fine_brl)}",
            "reference": self.reference,
            "basis": self.basis,
        }


@dataclass(frozen=True)
class AuthorityFlag:
    """A matter for the competent authority (never applied by the engine): what triggered
    it, with the count and the window when a count decided it."""

    id: str
    title: str
    detail: str
    basis: str
    count: int | None = None
    window_months: int | None = None
    presumed: bool = False

    def as_json(self) -> dict[str, object]:
        return {
            "id": self.id,
            "title": self.title,
            "detail": self.detail,
            "basis": self.basis,
            "count": self.count,
            "window_months": self.window_months,
            "presumed": self.presumed,
        }


@dataclass(frozen=True)
class CassacaoOutcome:
    proposed: bool
    kind: str
    grounds: tuple[CassacaoGround, ...]
    note: str
    commutation: Commutation | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "commutation": self.commutation.as_json() if self.commutation else None,
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
    flags: tuple[AuthorityFlag, ...] = ()
    autuado: Mapping[str, object] | None = None
    historical_reevaluation: str | None = None
    calendar_version: str = ""
    window_rule: str = ""

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
            "flags": [f.as_json() for f in self.flags],
            "autuado": dict(self.autuado) if self.autuado else None,
            "historical_reevaluation": self.historical_reevaluation,
            "calendar_version": self.calendar_version,
            "window_rule": self.window_rule,
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
    flags: list[AuthorityFlag] = field(default_factory=list)
    window_rule: str = WINDOW_LAST_DAY_INCLUDED
    window_text: str = ""

    _thresholds: dict[int, tuple[dt.date, dt.date]] = field(default_factory=dict)

    def _threshold(self, months: int) -> tuple[dt.date, dt.date]:
        """(first day whose period of ``months`` reaches the fact's date, first day whose
        period ends after it). ``add_months`` is monotone, so "inside the window" is a
        threshold on the entry date; entries between the two end exactly on the fact's
        date (the boundary day). Computed once per window length."""
        found = self._thresholds.get(months)
        if found is None:
            end = self.case.date
            day = add_months(end, -months) - dt.timedelta(days=4)
            while add_months(day, months) < end:
                day += dt.timedelta(days=1)
            first_reaching = day
            while add_months(day, months) <= end:
                day += dt.timedelta(days=1)
            found = self._thresholds[months] = (first_reaching, day)
        return found

    _memo: dict[tuple[str, int], list[HistoryEntry]] = field(default_factory=dict)

    def upheld(self) -> list[HistoryEntry]:
        key = ("upheld", 0)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = [h for h in self.case.history if h.status == "upheld"]
        return found

    def cached_window(
        self, entries: Sequence[HistoryEntry], months: int, what: str,
        used: list[Assumption] | None = None,
    ) -> list[HistoryEntry]:
        """:meth:`window` of the same entries for every infraction, computed once."""
        key = (what, months)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self.window(entries, months, what, used)
        elif used is not None and any(self._threshold(months)[0] <= h.date
                                      < self._threshold(months)[1] for h in entries):
            self.param(WINDOW_PARAMETER, used)
        return found

    def window(
        self, entries: Sequence[HistoryEntry], months: int, what: str,
        used: list[Assumption] | None = None,
    ) -> list[HistoryEntry]:
        """Entries whose period of ``months`` (date to date, art. 66 §3, boundary as the
        ``windows.boundary`` parameter says) still covers the fact's date. When an entry
        sits on the boundary day, the rule decided the outcome and a note says so."""
        end = self.case.date
        reaching, after = self._threshold(months)
        start = reaching if self.window_rule == WINDOW_LAST_DAY_INCLUDED else after
        out = [h for h in entries if start <= h.date <= end]
        for h in [h for h in entries if reaching <= h.date < after]:
            self.param(WINDOW_PARAMETER, used)
            inside = "dentro" if self.window_rule == WINDOW_LAST_DAY_INCLUDED else "fora"
            self.notes.append(
                f"{what}: o registro de {h.date:%d/%m/%Y} completa {months} meses na data "
                f"do fato; pela regra de contagem ({self.window_text}) ficou {inside} "
                "do período."
            )
        return out

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
            raise CaseError(f"parameters.{name}", f"expected an integer, got {value!r}",
                            code="parameter", pt=f"esperado um número inteiro, recebido {value!r}")
        return value

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)


def _cited(pack: Pack, rule_id: str) -> str:
    """A rule as the paper names it (its citation), never by its internal id."""
    rule = pack.rules.get(rule_id)
    return rule.citation if rule is not None and rule.citation else "infração do regulamento"


def _rule(ctx: _Context, rule_id: str, where: str) -> Rule:
    rule = ctx.pack.rules.get(rule_id)
    if rule is None:
        raise CaseError(where, f"unknown rule {rule_id!r} in pack {ctx.pack.id}",
                        code="unknown_rule", pt=f"{rule_id} não existe em {ctx.pack.id}")
    if not rule.selectable:
        raise CaseError(
            where, f"rule {rule_id!r} cannot be applied ({rule.status}: {rule.note})",
            code="not_applicable", pt=f"{rule_id} não pode ser aplicada ({rule.note})",
        )
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
            raise CaseError(
                where, f"unknown checklist item {answer.item_id!r} in pack {pack.id}",
                code="unknown_key", pt=f" (item inexistente na lista de {pack.id})",
            )
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
                    code="not_applicable",
                    pt=(
                        f"{rid} não decorre do item {item.id} (permitidas: "
                        f"{', '.join(item.allowed_rules) or 'nenhuma'})"
                    ),
                )
        for fact in item.requires_facts:
            if case.fact(fact) is not True:
                raise CaseError(
                    f"facts.{fact}",
                    f"missing legal precondition for {item.id}: {fact} must be true",
                    code="precondition",
                    pt=f"o item {item.id} exige que “{fact}” seja verdadeiro",
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
    if pack.alternatives:
        _resolve_alternatives(ctx, out)
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
                    code="precondition",
                    pt=(
                        f"a infração {rule.id} exige que “{fact}” seja verdadeiro "
                        f"({rule.precondition_basis})"
                    ),
                )
    return out


def _resolve_alternatives(ctx: _Context, out: _Collected) -> None:
    """One fact, one penalty (G33; Decreto 15.154/1993 art. 32 §2; JF art. 45 §ú, G29).

    A fact is one checklist answer or one vehicle check (its ``source``); an infraction the
    agent added by hand is a fact of its own. When one fact leads to several rules of a
    pack alternative, ``specific`` keeps the first (most specific) one and drops the others
    *for that fact*; ``choose_one`` refuses, asking the agent to choose. A dropped rule that
    another fact also supports stays, cited for that fact only. Linear in the rules
    collected (no re-evaluation per alternative).
    """
    by_source: dict[str, list[str]] = {}
    for rid, proposed in out.infractions.items():
        for source in proposed.sources:
            if source != "manual":
                by_source.setdefault(source, []).append(rid)
    for source, rids in by_source.items():
        if len(rids) < 2:
            continue
        present = set(rids)
        for alt in ctx.pack.alternatives:
            hits = [r for r in alt.rules if r in present]
            if len(hits) < 2:
                continue
            where = source.split(":", 1)[1] if ":" in source else source
            if alt.kind == "choose_one":
                field_name = (
                    f"checklist.{where}.rules" if source.startswith("checklist:") else source
                )
                raise CaseError(
                    field_name,
                    f"{', '.join(hits)} describe the same conduct: choose one ({alt.basis})",
                    code="not_applicable",
                    pt=(
                        f"{', '.join(hits)} descrevem a mesma conduta; escolha um só "
                        f"enquadramento para o fato ({alt.basis})"
                    ),
                )
            winner = hits[0]
            for loser in hits[1:]:
                entry = out.infractions.get(loser)
                if entry is None or source not in entry.sources:
                    continue
                entry.sources.remove(source)
                present.discard(loser)
                ctx.notes.append(
                    f"{where}: um fato, uma penalidade – aplicada só {winner}; {loser} não se "
                    f"aplica ao mesmo fato ({alt.basis})."
                )
    for rid in [r for r, p in out.infractions.items() if not p.sources]:
        del out.infractions[rid]


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
        if check.kind in ("max_age_chassis", "max_age_body") and v.age_exception is not None:
            exc = v.age_exception
            ctx.notes.append(
                f"{check.id}: veículo admitido pela Secretaria para linha não central pelo ato "
                f"nº {exc.act}" + (f" de {exc.issued_on:%d/%m/%Y}" if exc.issued_on else "")
                + (f" (linha {exc.route})" if exc.route else "")
                + "; limite de idade não aplicado (Decreto 1.235/1972, art. 33, §2º)."
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
                if not ctx.window([_as_entry(v.last_vistoria)], months, "Validade da vistoria"):
                    failed = f"vistoria vencida em {until:%d/%m/%Y} ({check.basis})"
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


def _primario(ctx: _Context, rule: Rule, used: list[Assumption]) -> bool:
    policy = ctx.param("primario.policy", used)
    upheld = ctx.upheld()
    if policy == "ever":
        return not upheld
    months = ctx.int_param("primario.window_months", used) or 12
    recent = ctx.cached_window(upheld, months, "Primariedade", used)
    if policy == "same_rule_window":
        return not any(h.rule_id == rule.id for h in recent)
    if policy == "any_infraction_window":
        return not recent
    raise CaseError("parameters.primario.policy", f"unknown policy {policy!r}",
                    code="parameter", pt=f"política desconhecida {policy!r}")


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
    same = ctx.window(
        [h for h in case.history if h.rule_id == rule.id], months, f"Reincidência ({rule.id})",
        used,
    )
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
    rule, used, basis = result.rule, result.used, result.basis
    months = ctx.int_param("reincidence.window_months", used) or 12
    upheld = ctx.upheld()
    n_prior = len(
        ctx.window(
            [h for h in upheld if h.rule_id == rule.id], months,
            f"Reincidência específica ({rule.id})", used,
        )
    )
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
        raise CaseError("parameters.reincidence.progression", f"unknown policy {progression!r}",
                        code="parameter", pt=f"política desconhecida {progression!r}")
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


def _age_replacement_due(ctx: _Context, cal: BusinessCalendar) -> dt.date | None:
    """Art. 39 III: the last day to replace an over-age vehicle, counted from the replacement
    notice (calendar days, Lei 9.784 art. 66 §2; moved off a non-business day, §1)."""
    notified = ctx.case.fact("age_replacement_notified_on")
    if not isinstance(notified, dt.date):
        return None
    days = ctx.int_param("cassacao.age_replacement_days") or 30
    return due_date(notified, days, "calendar_days", cal)


def _age_rules(pack: Pack) -> set[str]:
    return {r for c in pack.checks if c.kind == "max_age_chassis" for r in c.fail}


def _cassacao(
    ctx: _Context, infractions: tuple[InfractionOutcome, ...], cal: BusinessCalendar
) -> CassacaoOutcome:
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
            inside = ctx.window(live, months, f"Pontuação em {months} meses (art. 39, I)")
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
    limit = _age_replacement_due(ctx, cal)
    if (
        isinstance(notified, dt.date)
        and limit is not None
        and any(i.rule_id in _age_rules(pack) for i in infractions)
        and on > limit
    ):
        days = ctx.int_param("cassacao.age_replacement_days") or 30
        grounds.append(
            CassacaoGround(
                "DF15154.39.III",
                f"veículo acima da idade-limite não substituído em {days} dias da notificação "
                f"de {notified:%d/%m/%Y} (prazo encerrado em {limit:%d/%m/%Y}); não há novo "
                "prazo de substituição",
                False,
                "Decreto 15.154/1993, art. 39, III",
            )
        )
    commutation = _commutation(ctx) if grounds else None
    return CassacaoOutcome(bool(grounds), "permissao", tuple(grounds), note, commutation)


def _commutation(ctx: _Context) -> Commutation | None:
    """Art. 41 II: the CTPC may propose commuting the cassação into 3 × the Grupo C fine."""
    name = "cassacao.commutation_factor"
    if name not in ctx.pack.parameters:
        return None
    factor = Decimal(str(ctx.param(name)))
    group = ctx.pack.groups.get("C")
    basis = ctx.pack.parameters[name].basis
    if group is None:
        return None
    base, how = _fine_base(ctx, group, [])
    if base is None:
        return Commutation(None, f"{plain(factor)} × multa do Grupo C", basis)
    fine = money(factor * group.fine.factor * base)
    reference = (
        f"{plain(factor)} × multa do Grupo C ({plain(group.fine.factor)} × {how}); valor final "
        "com a maior tarifa vigente no mês do pagamento"
    )
    return Commutation(fine, reference, basis)


def _flags(ctx: _Context, infractions: tuple[InfractionOutcome, ...]) -> None:
    """Matters for the authority: art. 39 IV/V (DF), revocation of the concession (JF)."""
    pack, case = ctx.pack, ctx.case
    applied = {i.rule_id for i in infractions}
    params = pack.parameters
    if "cassacao.conditions_rules" in params:
        rules = ctx.param("cassacao.conditions_rules")
        hits = sorted(applied.intersection(rules if isinstance(rules, list) else []))
        if hits:
            ctx.flags.append(
                AuthorityFlag(
                    "DF15154.39.IV",
                    "Possível perda das condições legais ou regulamentares da permissão",
                    f"infrações que indicam falta de condição exigida para operar: "
                    f"{'; '.join(_cited(pack, rid) for rid in hits)}",
                    "Decreto 15.154/1993, art. 39, IV",
                    count=len(hits),
                    presumed=params["cassacao.conditions_rules"].assumption,
                )
            )
    if "cassacao.systematic_count" in params:
        needed = ctx.int_param("cassacao.systematic_count") or 0
        months = ctx.int_param("cassacao.systematic_window_months") or 12
        groups = ctx.param("cassacao.systematic_groups")
        serious = set(groups) if isinstance(groups, list) else {"B", "C"}
        today = [i for i in infractions if i.group in serious]
        live = [
            h for h in case.history
            if h.status != "cancelled"
            and (rule := pack.rules.get(h.rule_id)) is not None
            and rule.group in serious
        ]
        before = ctx.window(live, months, "Infrações sistemáticas (art. 39, V)")
        total = len(today) + len(before)
        if today and needed and total >= needed:
            ctx.flags.append(
                AuthorityFlag(
                    "DF15154.39.V",
                    "Infrações sistemáticas dos Grupos B/C que comprometem o serviço",
                    f"{total} infrações dos grupos {'/'.join(sorted(serious))} em {months} "
                    f"meses (hoje {len(today)}; antes {len(before)}; referência {needed})",
                    "Decreto 15.154/1993, art. 39, V",
                    count=total,
                    window_months=months,
                    presumed=params["cassacao.systematic_count"].assumption,
                )
            )
    if "revocation.rules" in params:
        table = ctx.param("revocation.rules")
        if isinstance(table, dict):
            for rid in sorted(applied):
                why = table.get(rid)
                if isinstance(why, str):
                    ctx.flags.append(
                        AuthorityFlag(
                            "JF1235.45.c",
                            "Possível revogação da concessão (inquérito administrativo)",
                            f"{_cited(pack, rid)}: {why}",
                            "Decreto 1.235/1972, arts. 45, c, 52 e 23",
                        )
                    )
    notified = case.fact("irregularity_notified_on")
    if isinstance(notified, dt.date) and "revocation.persistence_days" in params:
        days = ctx.int_param("revocation.persistence_days") or 10
        elapsed = (case.date - notified).days
        if elapsed > days and infractions:
            ctx.flags.append(
                AuthorityFlag(
                    "JF1235.23.p1",
                    "Instauração de inquérito administrativo para revogação da concessão",
                    f"irregularidade notificada em {notified:%d/%m/%Y} persiste há {elapsed} "
                    f"dias consecutivos (mais de {days})",
                    "Decreto 1.235/1972, art. 23, §1º",
                    count=elapsed,
                )
            )


# --- vistoria and deadlines -----------------------------------------------------------------


def _as_entry(day: dt.date) -> HistoryEntry:
    return HistoryEntry(rule_id="", date=day, status="upheld")


def _vistoria(ctx: _Context) -> VistoriaOutcome:
    last = ctx.case.vehicle.last_vistoria
    name = "vistoria.period_months"
    months = ctx.int_param(name) if name in ctx.pack.parameters else None
    basis = ctx.pack.parameters[name].basis if name in ctx.pack.parameters else ""
    if last is None or months is None:
        return VistoriaOutcome(last, months, None, None, basis)
    until = add_months(last, months)
    valid = bool(ctx.window([_as_entry(last)], months, "Validade da vistoria"))
    included = ctx.window_rule == WINDOW_LAST_DAY_INCLUDED
    shown = until if included else until - dt.timedelta(days=1)
    return VistoriaOutcome(last, months, shown, valid, basis)


def _deadlines(
    ctx: _Context,
    infractions: tuple[InfractionOutcome, ...],
    cal: BusinessCalendar,
    cassacao: CassacaoOutcome,
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
        start: dt.date | None = ctx.case.date
        basis = d.basis
        if d.kind == "substituicao_veiculo":
            # Art. 39 III: once the 30 days from the replacement notice have run, the
            # outcome proposes cassação and states no new deadline; before, the deadline
            # runs from the notice, not from this inspection.
            if any(g.id == "DF15154.39.III" for g in cassacao.grounds):
                continue
            notified = ctx.case.fact("age_replacement_notified_on")
            if isinstance(notified, dt.date):
                start = notified
                basis = f"{basis}; contado da notificação de {notified:%d/%m/%Y}"
        if d.trigger == "ciencia_auto":
            assert start is not None
            due: dt.date | None = due_date(start, d.days, unit, cal)
            target = now
        else:
            due, target, start = None, later, None
        target.append(
            DeadlineOutcome(
                d.kind, d.label, due, d.days, unit, d.trigger, d.body, basis, tuple(used),
                counted_from=start, calendar_version=cal.version,
            )
        )
    return tuple(now), tuple(later)


def _check_parameters(pack: Pack, case: Case) -> None:
    """Strict input: a case may override only parameters the pack has."""
    known = (*pack.parameters, *CASE_MONEY_PARAMETERS)
    for name in case.parameters:
        if name in known:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        raise CaseError(
            f"parameters.{name}",
            f"unknown parameter in pack {pack.id}"
            + (f"; did you mean {close[0]!r}?" if close else ""),
            code="unknown_key",
            pt=f" (quis dizer “{close[0]}”?)" if close else "",
        )


def _in_force(ctx: _Context) -> None:
    pack, case = ctx.pack, ctx.case
    if case.date < pack.meta.effective_from:
        raise CaseError(
            "occurred_at",
            f"{case.date.isoformat()} is before pack {pack.id} is in force "
            f"({pack.meta.effective_from.isoformat()})",
            code="not_in_force",
            pt=(
                f"fato de {case.date:%d/%m/%Y}, anterior à vigência do regulamento "
                f"({pack.meta.effective_from:%d/%m/%Y})"
            ),
        )
    until = pack.meta.effective_until
    if until is not None and case.date > until:
        if case.historical_reevaluation is None:
            raise CaseError(
                "occurred_at",
                f"{case.date.isoformat()} is after pack {pack.id} was revoked "
                f"({until.isoformat()}); set historical_reevaluation to re-evaluate",
                code="not_in_force",
                pt=(
                    f"fato de {case.date:%d/%m/%Y}, posterior à revogação do regulamento "
                    f"(vigente até {until:%d/%m/%Y}); só como reavaliação histórica"
                ),
            )
        why = f" Motivo: {case.historical_reevaluation}." if case.historical_reevaluation else ""
        norm = pack.meta.legal_basis[0].citation if pack.meta.legal_basis else pack.meta.title
        text = (
            f"Reavaliação histórica, sem efeito de autuação: {norm} vigorou até "
            f"{until:%d/%m/%Y} ({pack.meta.effective_until_basis}), antes do fato "
            f"({case.date:%d/%m/%Y}).{why}"
        )
        ctx.warn(text)
        ctx.notes.append(text)  # the notes are printed on every document of the outcome


def _autuado(ctx: _Context) -> dict[str, object] | None:
    """Who the auto is against. JF: always the company (arts. 45 and 50 §1). DF STPA: a
    natural person (Lei 194/1991 art. 2: no legal persons). STPCR: an autonomous
    professional or a MEI/ME/EPP (Decreto 45.620/2024)."""
    pack, case = ctx.pack, ctx.case
    a = case.autuado
    regime = pack.meta.penalty_regime
    if regime == "JF1235":
        if a is not None and a.kind != "empresa":
            raise CaseError(
                "autuado.kind",
                "in Juiz de Fora the autuado is always the company (Decreto 1.235/1972, "
                "arts. 45 and 50 §1)",
                code="choice",
                pt=(
                    "em Juiz de Fora o autuado é sempre a empresa (Decreto 1.235/1972, arts. 45 "
                    "e 50, §1º); registre o preposto como envolvido"
                ),
            )
        basis = "Decreto 1.235/1972, arts. 45 e 50, §1º (o autuado é sempre a empresa)"
        if a is None:
            return {"kind": "empresa", "name": "", "cnpj": None, "basis": basis}
    elif pack.id == "DF_STPA" and a is not None and a.kind != "permissionario":
        raise CaseError(
            "autuado.kind",
            "STPA permissions are for natural persons only (Lei 194/1991, art. 2)",
            code="choice",
            pt="no STPA a permissão é só de pessoa física (Lei 194/1991, art. 2º): informe o CPF",
        )
    else:
        basis = (
            "Lei 194/1991, art. 2º (permissionário pessoa física)"
            if pack.id == "DF_STPA"
            else "Decreto 15.154/1993, art. 32 (o permissionário responde por seus prepostos); "
            "Decreto 45.620/2024, art. 3º (profissional autônomo ou MEI/ME/EPP)"
        )
        if a is None:
            return None
    return {
        "kind": a.kind,
        "name": a.name,
        "cpf": a.cpf,
        "cnpj": a.cnpj,
        "permit": a.permit,
        "basis": basis,
    }


def _usable_history(ctx: _Context) -> None:
    """A registry row naming a rule the pack does not know is warned and left out; the
    rest of the history still counts (one bad row must not block every evaluation)."""
    case, pack = ctx.case, ctx.pack
    kept = []
    for i, h in enumerate(case.history):
        if h.rule_id in pack.rules:
            kept.append(h)
            continue
        ctx.warn(
            f"Histórico: o registro {i + 1} ({h.rule_id}, {h.date:%d/%m/%Y}"
            + (f", auto {h.auto}" if h.auto else "")
            + f") cita infração que não existe no regulamento {pack.id}; foi desconsiderado "
            "na reincidência e na pontuação. Peça à sede a correção do cadastro."
        )
    if len(kept) != len(case.history):
        ctx.case = dataclasses.replace(case, history=tuple(kept))


def _window_rule(ctx: _Context) -> None:
    if WINDOW_PARAMETER not in ctx.pack.parameters:
        return
    rule = ctx.case.parameters.get(WINDOW_PARAMETER, ctx.pack.parameters[WINDOW_PARAMETER].value)
    if rule not in WINDOW_RULES:
        raise CaseError(
            f"parameters.{WINDOW_PARAMETER}",
            f"must be one of {', '.join(WINDOW_RULES)}; got {rule!r}",
            code="parameter",
            pt="regra de contagem desconhecida",
        )
    ctx.window_rule = str(rule)
    ctx.window_text = (
        "de data a data, Lei 9.784/1999, art. 66, §3º; o último dia do período é incluído"
        if rule == WINDOW_LAST_DAY_INCLUDED
        else "de data a data, Lei 9.784/1999, art. 66, §3º; o último dia do período é excluído"
    )


def _driver_identification(ctx: _Context, infractions: tuple[InfractionOutcome, ...]) -> None:
    name = "auto.requires_driver_identification"
    if not infractions or name not in ctx.pack.parameters or ctx.param(name) is not True:
        return
    d = ctx.case.driver
    if not (d.cpf or d.cnh) or not d.name:
        ctx.warn(
            "O auto deve identificar o condutor (nome e CPF ou CNH) e colher sua assinatura "
            "(Lei 194/1991, art. 18, §6º); a recusa em assinar não invalida o auto (§7º)."
        )


def _age_exception(ctx: _Context) -> None:
    exc = ctx.case.vehicle.age_exception
    if exc is None:
        return
    if "vehicle.age_exception_allowed" not in ctx.pack.parameters:
        raise CaseError(
            "vehicle.age_exception",
            f"pack {ctx.pack.id} has no age exception by act (only JF Decreto 1.235/1972, "
            "art. 33 §2)",
            code="not_applicable",
            pt="este regulamento não prevê exceção de idade por ato da Secretaria",
        )


def evaluate(pack: Pack, case: Case, cal: BusinessCalendar) -> Outcome:
    """Apply ``pack`` to ``case``. Raises :class:`CaseError` for input the law cannot take."""
    if case.pack_id != pack.id:
        raise CaseError(
            "pack", f"case is for {case.pack_id!r}, pack is {pack.id!r}", code="pack",
            pt=f"o caso é do regulamento {case.pack_id}, não de {pack.id}",
        )
    _check_parameters(pack, case)
    ctx = _Context(pack, case)
    _in_force(ctx)
    _usable_history(ctx)
    _window_rule(ctx)
    _age_exception(ctx)
    autuado = _autuado(ctx)
    case = ctx.case
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
    cassacao = _cassacao(ctx, infractions, cal)
    vistoria = _vistoria(ctx)
    now, later = _deadlines(ctx, infractions, cal, cassacao)
    _flags(ctx, infractions)
    _driver_identification(ctx, infractions)
    # Surfaced on the existing paths (screens and documents print the notes).
    for f in ctx.flags:
        ctx.notes.append(
            f"Para a autoridade – {f.title} ({f.basis}): {f.detail}"
            + (" [regra presumida]" if f.presumed else "")
            + "."
        )
    if cassacao.commutation is not None:
        c = cassacao.commutation
        amount = format_brl(c.fine_brl) if c.fine_brl is not None else "valor a apurar"
        ctx.notes.append(
            f"Alternativa à cassação: a autoridade pode comutá-la em multa de {amount} "
            f"({c.reference}; {c.basis})."
        )
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
        flags=tuple(ctx.flags),
        autuado=autuado,
        historical_reevaluation=case.historical_reevaluation,
        calendar_version=cal.version,
        window_rule=ctx.window_text,
    )


__all__ = ["Outcome", "evaluate", "format_brl", "money"]
