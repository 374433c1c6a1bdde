"""The regulation pack as domain objects: metadata, rule catalogue, checklist, parameters.

A pack is read from ``forms/<ID>/`` by :mod:`inspector_app.packs`; here it is plain, frozen
data that the rules engine consults. Parameters that the regulation leaves open carry
``assumption=True`` so every outcome that used one can say that a presumed rule applied.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal

ParamValue = int | str | bool | Decimal | list[object] | dict[str, object] | None

PENALTY_DEFAULT = "default"
PENALTY_CASSACAO_REGISTRO = "cassacao_registro_profissional"
PENALTY_BY_AUTHORITY = "defined_by_authority"
PENALTY_KINDS = (PENALTY_DEFAULT, PENALTY_CASSACAO_REGISTRO, PENALTY_BY_AUTHORITY)

WITHDRAWAL_KINDS = ("none", "propose", "preselected", "preselected_at_night")
LOCATION_TYPES = ("terminal", "ponto_controle", "via_publica", "patio_vistoria")
DEADLINE_UNITS = ("business_days", "calendar_days", "months")
DEADLINE_TRIGGERS = (
    "ciencia_auto",
    "ciencia_penalidade",
    "ciencia_cassacao",
    "notificacao_multa",
    "fim_prazo_pagamento",
)
CHECK_KINDS = (
    "max_age_chassis",
    "max_age_body",
    "min_doors",
    "seats_range",
    "vistoria_valid",
    "insurance_valid",
    "driver_registered",
    "overcrowding",
)
PENALTY_REGIMES = ("DF15154", "JF1235")


@dataclass(frozen=True)
class LegalBasis:
    id: str
    citation: str
    title: str = ""
    seed: str = ""


@dataclass(frozen=True)
class PackMeta:
    id: str
    version: str
    title: str
    jurisdiction: str
    service: str
    status: Literal["in_force", "historical"]
    penalty_regime: str
    organ: str
    organ_name: str
    organ_note: str
    effective_from: dt.date
    analogy: bool
    notes: tuple[str, ...] = ()
    legal_basis: tuple[LegalBasis, ...] = ()
    # Last day the norm was in force (a revoked pack); facts after it are refused unless
    # the case is a historical re-evaluation. ``effective_until_basis`` says why this day.
    effective_until: dt.date | None = None
    effective_until_basis: str = ""
    timezone: str = "America/Sao_Paulo"  # the órgão's legal time: every printed time
    # Where the autuado files a defence (printed with the deadlines): body, address,
    # protocol, online, hours; a device setting may override it (store.device_context).
    filing: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class FineFormula:
    """``tariff_multiple``: multiplier × tariff; ``minimum_wage_percent``: percent % × wage."""

    kind: Literal["tariff_multiple", "minimum_wage_percent", "none"]
    factor: Decimal = Decimal(0)


@dataclass(frozen=True)
class Group:
    id: str
    label: str
    fine: FineFormula
    points_parameter: str | None
    warning_if_primario: bool
    basis: str


@dataclass(frozen=True)
class Rule:
    id: str
    article: str
    citation: str
    description: str
    group: str | None
    selectable: bool = True
    status: str = "in_force"
    penalty: str = PENALTY_DEFAULT
    retention: tuple[str, ...] = ()
    retention_possible: tuple[str, ...] = ()
    withdrawal: str = "none"
    preconditions: tuple[str, ...] = ()
    precondition_basis: str = ""
    analogy: bool = False
    parameters: tuple[str, ...] = ()
    seed_label: str = ""
    note: str = ""


ALTERNATIVE_KINDS = ("specific", "choose_one")


@dataclass(frozen=True)
class Alternative:
    """Rules that describe one conduct (G33, Decreto 15.154/1993 art. 32 §2: penalties
    cumulate only for *distinct* irregularities). ``specific``: the first rule is the more
    specific one and wins when one fact leads to several of them; ``choose_one``: the agent
    must pick one (JF G29), the engine refuses both for one fact."""

    rules: tuple[str, ...]
    kind: str
    basis: str
    note: str = ""


@dataclass(frozen=True)
class MeasureGround:
    id: str
    article: str
    citation: str
    description: str
    only_start_of_operation: bool = False
    analogy: bool = False


@dataclass(frozen=True)
class Measure:
    kind: Literal["retencao", "retirada"]
    label: str
    basis: str
    grounds: Mapping[str, MeasureGround]
    location_parameter: str | None = None
    location_basis: str = ""


@dataclass(frozen=True)
class Section:
    id: str
    label: str


@dataclass(frozen=True)
class ChecklistItem:
    id: str
    section: str
    label: str
    criterion: str = ""
    kind: str = "check"
    fail: tuple[str, ...] = ()
    fail_options: tuple[str, ...] = ()
    retention: tuple[str, ...] = ()
    retention_possible: tuple[str, ...] = ()
    withdrawal: str = "none"
    evidence: tuple[str, ...] = ()
    requires_facts: tuple[str, ...] = ()
    ctb_overlay: str = ""
    informative: str = ""
    note: str = ""
    value_label: str = ""  # count/date items: what the value is ("Fim da vigência da apólice")

    @property
    def allowed_rules(self) -> tuple[str, ...]:
        return self.fail + tuple(r for r in self.fail_options if r not in self.fail)


@dataclass(frozen=True)
class VehicleCheck:
    id: str
    kind: str
    parameters: tuple[str, ...]
    item: str
    fail: tuple[str, ...]
    retention: tuple[str, ...] = ()
    withdrawal: str = "none"
    basis: str = ""


@dataclass(frozen=True)
class Parameter:
    name: str
    value: ParamValue
    label: str = ""
    assumption: bool = False
    gap: str = ""
    note: str = ""
    basis: str = ""
    printed: str = ""  # the presumed rule as one sentence of legal Portuguese (documents)


@dataclass(frozen=True)
class DatedValue:
    start: dt.date
    value: Decimal
    assumption: bool = False
    note: str = ""
    basis: str = ""
    printed: str = ""


@dataclass(frozen=True)
class Deadline:
    kind: str
    label: str
    days: int
    unit: str
    trigger: str
    body: str
    basis: str
    when_rules: tuple[str, ...] = ()
    parameter: str = ""


@dataclass(frozen=True)
class ExtraHoliday:
    """A day the pack adds to the calendar: ``month``/``day`` recurring, or one ``year``."""

    month: int
    day: int
    name: str
    year: int | None = None
    assumption: bool = False
    basis: str = ""

    def falls_on(self, date: dt.date) -> bool:
        return (
            date.month == self.month
            and date.day == self.day
            and (self.year is None or self.year == date.year)
        )


EXCEPTION_KINDS = ("closed", "early_close", "late_open")


@dataclass(frozen=True)
class CalendarException:
    """A dated day decreed for one year (ponto facultativo, expediente reduzido): ``closed``
    (no public business), ``early_close`` (counts as a business day; a due date on it moves
    on, Lei 9.784/1999 art. 66 §1) or ``late_open`` (counts; a due date may end on it).
    ``decree`` cites the act (GDF or Juiz de Fora decree)."""

    date: dt.date
    kind: str
    name: str
    decree: str = ""
    source: str = "pack"


@dataclass(frozen=True)
class CalendarSpec:
    country: str
    subdivision: str
    include_optional_parameter: str | None
    extra_holidays: tuple[ExtraHoliday, ...] = ()
    exceptions: tuple[CalendarException, ...] = ()


@dataclass(frozen=True)
class Pack:
    meta: PackMeta
    groups: Mapping[str, Group]
    rules: Mapping[str, Rule]
    measure: Measure
    sections: tuple[Section, ...]
    items: Mapping[str, ChecklistItem]
    checks: tuple[VehicleCheck, ...]
    parameters: Mapping[str, Parameter]
    tables: Mapping[str, tuple[DatedValue, ...]]
    deadlines: tuple[Deadline, ...]
    calendar: CalendarSpec
    alternatives: tuple[Alternative, ...] = ()
    content_hash: str = ""
    source_files: tuple[str, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        return self.meta.id

    def parameter(self, name: str) -> Parameter:
        try:
            return self.parameters[name]
        except KeyError:
            raise KeyError(f"pack {self.meta.id} has no parameter {name!r}") from None

    def dated_value(self, table: str, on: dt.date) -> DatedValue | None:
        """The row of a dated table in force on ``on`` (last row starting on or before it)."""
        found: DatedValue | None = None
        for row in self.tables.get(table, ()):
            if row.start <= on and (found is None or row.start >= found.start):
                found = row
        return found
