"""Read regulation packs (``forms/<ID>/*.toml``) into domain objects, and validate them.

Every problem is reported with the file and the key that holds it (``checklist.toml:
items[DF-SEG-02].fail[0]: unknown rule 'DF15154.29.XIIII'``), so a pack author can fix it
without reading code. A pack with problems is never handed to the engine.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import tomllib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TypeVar, cast

from inspector_app.domain import pack as model
from inspector_app.paths import forms_dir

PACK_FILES = (
    "pack.toml",
    "infractions.toml",
    "measures.toml",
    "checklist.toml",
    "vehicle.toml",
    "parameters.toml",
    "deadlines.toml",
    "calendar.toml",
)

T = TypeVar("T")

# Keys each table may hold (docs/PACK_FORMAT.md). Anything else is reported.
KEYS: dict[str, frozenset[str]] = {
    name: frozenset(keys.split())
    for name, keys in {
        "pack.toml": "pack legal_basis",
        "pack": "id version title jurisdiction service status penalty_regime organ organ_name "
        "organ_note effective_from effective_until effective_until_basis analogy notes "
        "timezone filing",
        "filing": "body address protocol online hours",
        "legal_basis": "id citation title seed",
        "infractions.toml": "groups rules alternatives",
        "alternative": "rules kind basis note",
        "group": "label fine points_parameter warning_if_primario basis",
        "fine": "kind multiplier percent",
        "rule": "id article citation seed_label group description selectable status penalty "
        "retention retention_possible withdrawal preconditions precondition_basis analogy "
        "parameters note",
        "measures.toml": "measure grounds",
        "measure": "kind label basis location_parameter location_basis",
        "ground": "id article citation description only_start_of_operation analogy",
        "checklist.toml": "sections items",
        "section": "id label",
        "item": "id section label criterion kind fail fail_options retention retention_possible "
        "withdrawal evidence requires_facts ctb_overlay informative note value_label",
        "vehicle.toml": "checks",
        "check": "id kind parameters item fail retention withdrawal basis note",
        "parameters.toml": "parameters tables",
        "parameter": "value label assumption gap note basis printed",
        "dated": "from value assumption note basis printed",
        "deadlines.toml": "deadlines",
        "deadline": "kind label days unit trigger when_rules body basis parameter note",
        "calendar.toml": "calendar holidays exceptions",
        "exception": "date kind name decree note",
        "calendar": "country subdivision include_optional_parameter",
        "holiday": "date name assumption basis note",
    }.items()
}


@dataclass(frozen=True)
class Problem:
    file: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


class PackError(Exception):
    """A pack could not be loaded; ``problems`` lists every reason found."""

    def __init__(self, pack_dir: Path, problems: list[Problem]) -> None:
        self.pack_dir = pack_dir
        self.problems = problems
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"pack {pack_dir.name} has {len(problems)} problem(s):\n{lines}")


@dataclass(frozen=True)
class PackListing:
    """What a screen needs to list a pack, also when it failed to load."""

    id: str
    version: str
    title: str
    status: str
    organ: str
    content_hash: str
    problems: list[str]
    path: Path


class _Reader:
    """Typed access to one TOML table, recording problems instead of raising."""

    def __init__(self, problems: list[Problem], file: str) -> None:
        self.problems = problems
        self.file = file

    def problem(self, key: str, message: str) -> None:
        self.problems.append(Problem(self.file, key, message))

    def known(self, table: Mapping[str, Any], allowed: frozenset[str], where: str) -> None:
        """Report keys the format does not define: a typo must not drop a rule silently."""
        for key in table:
            if key not in allowed:
                full = f"{where}.{key}" if where else key
                self.problem(full, f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def get(
        self,
        table: Mapping[str, Any],
        key: str,
        kind: type[T],
        where: str,
        default: T | None = None,
        *,
        required: bool = True,
    ) -> T:
        full = f"{where}.{key}" if where else key
        if key not in table:
            if required and default is None:
                self.problem(full, "missing")
            return cast(T, default)
        value = table[key]
        if kind is int and isinstance(value, bool):
            self.problem(full, f"expected an integer, got {value!r}")
            return cast(T, default)
        if not isinstance(value, kind):
            self.problem(full, f"expected {kind.__name__}, got {type(value).__name__} {value!r}")
            return cast(T, default)
        return value

    def text(self, table: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str:
        return self.get(table, key, str, where, "" if not required else None, required=required)

    def texts(self, table: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
        values = self.get(table, key, list, where, [], required=False)
        out: list[str] = []
        for i, v in enumerate(values):
            if isinstance(v, str):
                out.append(v)
            else:
                self.problem(f"{where}.{key}[{i}]", f"expected a string, got {v!r}")
        return tuple(out)

    def flag(self, table: Mapping[str, Any], key: str, where: str, default: bool) -> bool:
        return self.get(table, key, bool, where, default, required=False)

    def date(self, table: Mapping[str, Any], key: str, where: str) -> dt.date:
        value = table.get(key)
        if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
            return value
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value)
            except ValueError:
                pass
        self.problem(f"{where}.{key}", f"expected a date YYYY-MM-DD, got {value!r}")
        return dt.date.min

    def decimal(self, value: object, key: str) -> Decimal:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            self.problem(key, f'expected a decimal string like "5.50", got {value!r}')
            return Decimal(0)
        try:
            return Decimal(str(value))
        except InvalidOperation:
            self.problem(key, f"not a decimal number: {value!r}")
            return Decimal(0)

    def choice(
        self, table: Mapping[str, Any], key: str, where: str, allowed: tuple[str, ...], default: str
    ) -> str:
        value = self.get(table, key, str, where, default, required=False)
        if value not in allowed:
            self.problem(f"{where}.{key}", f"must be one of {', '.join(allowed)}; got {value!r}")
            return default
        return value


def _tables(
    reader: _Reader, data: Mapping[str, Any], key: str
) -> Iterator[tuple[int, dict[str, Any]]]:
    rows = data.get(key, [])
    if not isinstance(rows, list):
        reader.problem(key, "expected an array of tables")
        return
    for i, row in enumerate(rows):
        if isinstance(row, dict):
            yield i, row
        else:
            reader.problem(f"{key}[{i}]", "expected a table")


def _read_toml(path: Path, problems: list[Problem]) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        problems.append(Problem(path.name, "-", "file missing"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(Problem(path.name, "-", f"invalid TOML: {exc}"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(Problem(path.name, "-", f"cannot read: {exc}"))
    return {}


def content_hash(pack_dir: Path) -> str:
    """SHA-256 over each pack file's name and bytes, in a fixed order."""
    digest = hashlib.sha256()
    for name in PACK_FILES:
        path = pack_dir / name
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes() if path.exists() else b"")
        digest.update(b"\0")
    return digest.hexdigest()


# --- parsing -------------------------------------------------------------------------------


def _parse_meta(r: _Reader, data: Mapping[str, Any], folder: str) -> model.PackMeta:
    meta = data.get("pack")
    if not isinstance(meta, dict):
        r.problem("pack", "missing [pack] table")
        meta = {}
    r.known(meta, KEYS["pack"], "pack")
    pid = r.text(meta, "id", "pack")
    if pid and pid != folder:
        r.problem("pack.id", f"must equal the folder name {folder!r}, got {pid!r}")
    bases = []
    for i, row in _tables(r, data, "legal_basis"):
        where = f"legal_basis[{i}]"
        r.known(row, KEYS["legal_basis"], where)
        bases.append(
            model.LegalBasis(
                id=r.text(row, "id", where),
                citation=r.text(row, "citation", where),
                title=r.text(row, "title", where, required=False),
                seed=r.text(row, "seed", where, required=False),
            )
        )
    status = r.choice(meta, "status", "pack", ("in_force", "historical"), "in_force")
    return model.PackMeta(
        id=pid,
        version=r.text(meta, "version", "pack"),
        title=r.text(meta, "title", "pack"),
        jurisdiction=r.text(meta, "jurisdiction", "pack"),
        service=r.text(meta, "service", "pack"),
        status=cast(Any, status),
        penalty_regime=r.choice(meta, "penalty_regime", "pack", model.PENALTY_REGIMES, "DF15154"),
        organ=r.text(meta, "organ", "pack"),
        organ_name=r.text(meta, "organ_name", "pack"),
        organ_note=r.text(meta, "organ_note", "pack", required=False),
        effective_from=r.date(meta, "effective_from", "pack"),
        effective_until=r.date(meta, "effective_until", "pack") if "effective_until" in meta
        else None,
        effective_until_basis=r.text(meta, "effective_until_basis", "pack", required=False),
        analogy=r.flag(meta, "analogy", "pack", False),
        notes=r.texts(meta, "notes", "pack"),
        legal_basis=tuple(bases),
        timezone=_timezone(r, meta),
        filing=_filing(r, meta),
    )


def _timezone(r: _Reader, meta: Mapping[str, Any]) -> str:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = r.text(meta, "timezone", "pack", required=False) or "America/Sao_Paulo"
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        r.problem("pack.timezone", f"unknown IANA time zone {name!r}")
        return "America/Sao_Paulo"
    return name


def _filing(r: _Reader, meta: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    raw = meta.get("filing")
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        r.problem("pack.filing", "expected a table (body, address, protocol, online, hours)")
        return ()
    r.known(raw, KEYS["filing"], "pack.filing")
    return tuple((k, r.text(raw, k, "pack.filing", required=False))
                 for k in sorted(KEYS["filing"]) if raw.get(k))


def _parse_groups(r: _Reader, data: Mapping[str, Any]) -> dict[str, model.Group]:
    groups: dict[str, model.Group] = {}
    raw = data.get("groups", {})
    if not isinstance(raw, dict) or not raw:
        r.problem("groups", "missing [groups.<ID>] tables")
        return groups
    for gid, row in raw.items():
        where = f"groups.{gid}"
        if not isinstance(row, dict):
            r.problem(where, "expected a table")
            continue
        r.known(row, KEYS["group"], where)
        fine_raw = r.get(row, "fine", dict, where, {})
        r.known(fine_raw, KEYS["fine"], f"{where}.fine")
        kind = r.choice(
            fine_raw,
            "kind",
            f"{where}.fine",
            ("tariff_multiple", "minimum_wage_percent", "none"),
            "none",
        )
        factor_key = {"tariff_multiple": "multiplier", "minimum_wage_percent": "percent"}.get(kind)
        factor = Decimal(0)
        if factor_key:
            if factor_key in fine_raw:
                factor = r.decimal(fine_raw[factor_key], f"{where}.fine.{factor_key}")
            else:
                r.problem(f"{where}.fine.{factor_key}", "missing")
        groups[gid] = model.Group(
            id=gid,
            label=r.text(row, "label", where),
            fine=model.FineFormula(kind=cast(Any, kind), factor=factor),
            points_parameter=r.get(row, "points_parameter", str, where, None, required=False),
            warning_if_primario=r.flag(row, "warning_if_primario", where, False),
            basis=r.text(row, "basis", where),
        )
    return groups


def _parse_rules(r: _Reader, data: Mapping[str, Any]) -> dict[str, model.Rule]:
    rules: dict[str, model.Rule] = {}
    for i, row in _tables(r, data, "rules"):
        rid = r.text(row, "id", f"rules[{i}]")
        where = f"rules[{rid or i}]"
        r.known(row, KEYS["rule"], where)
        if rid in rules:
            r.problem(where, "duplicate rule id")
        rules[rid] = model.Rule(
            id=rid,
            article=r.text(row, "article", where),
            citation=r.text(row, "citation", where),
            description=r.text(row, "description", where),
            group=r.get(row, "group", str, where, None, required=False),
            selectable=r.flag(row, "selectable", where, True),
            status=r.choice(row, "status", where, ("in_force", "missing_in_text"), "in_force"),
            penalty=r.choice(row, "penalty", where, model.PENALTY_KINDS, model.PENALTY_DEFAULT),
            retention=r.texts(row, "retention", where),
            retention_possible=r.texts(row, "retention_possible", where),
            withdrawal=r.choice(row, "withdrawal", where, model.WITHDRAWAL_KINDS, "none"),
            preconditions=r.texts(row, "preconditions", where),
            precondition_basis=r.text(row, "precondition_basis", where, required=False),
            analogy=r.flag(row, "analogy", where, False),
            parameters=r.texts(row, "parameters", where),
            seed_label=r.text(row, "seed_label", where, required=False),
            note=r.text(row, "note", where, required=False),
        )
    if not rules:
        r.problem("rules", "the catalogue has no rules")
    return rules


def _parse_alternatives(r: _Reader, data: Mapping[str, Any]) -> tuple[model.Alternative, ...]:
    out = []
    for i, row in _tables(r, data, "alternatives"):
        where = f"alternatives[{i}]"
        r.known(row, KEYS["alternative"], where)
        rules = r.texts(row, "rules", where)
        if len(rules) < 2:
            r.problem(f"{where}.rules", "an alternative names at least two rules")
        out.append(
            model.Alternative(
                rules=rules,
                kind=r.choice(row, "kind", where, model.ALTERNATIVE_KINDS, "specific"),
                basis=r.text(row, "basis", where),
                note=r.text(row, "note", where, required=False),
            )
        )
    return tuple(out)


def _parse_measure(r: _Reader, data: Mapping[str, Any]) -> model.Measure:
    raw = data.get("measure")
    if not isinstance(raw, dict):
        r.problem("measure", "missing [measure] table")
        raw = {}
    r.known(raw, KEYS["measure"], "measure")
    grounds: dict[str, model.MeasureGround] = {}
    for i, row in _tables(r, data, "grounds"):
        gid = r.text(row, "id", f"grounds[{i}]")
        where = f"grounds[{gid or i}]"
        r.known(row, KEYS["ground"], where)
        if gid in grounds:
            r.problem(where, "duplicate ground id")
        grounds[gid] = model.MeasureGround(
            id=gid,
            article=r.text(row, "article", where),
            citation=r.text(row, "citation", where),
            description=r.text(row, "description", where),
            only_start_of_operation=r.flag(row, "only_start_of_operation", where, False),
            analogy=r.flag(row, "analogy", where, False),
        )
    return model.Measure(
        kind=cast(Any, r.choice(raw, "kind", "measure", ("retencao", "retirada"), "retencao")),
        label=r.text(raw, "label", "measure"),
        basis=r.text(raw, "basis", "measure"),
        grounds=grounds,
        location_parameter=r.get(raw, "location_parameter", str, "measure", None, required=False),
        location_basis=r.text(raw, "location_basis", "measure", required=False),
    )


def _parse_checklist(
    r: _Reader, data: Mapping[str, Any]
) -> tuple[tuple[model.Section, ...], dict[str, model.ChecklistItem]]:
    sections = []
    for i, row in _tables(r, data, "sections"):
        where = f"sections[{i}]"
        r.known(row, KEYS["section"], where)
        sections.append(
            model.Section(id=r.text(row, "id", where), label=r.text(row, "label", where))
        )
    items: dict[str, model.ChecklistItem] = {}
    for i, row in _tables(r, data, "items"):
        iid = r.text(row, "id", f"items[{i}]")
        where = f"items[{iid or i}]"
        r.known(row, KEYS["item"], where)
        if iid in items:
            r.problem(where, "duplicate item id")
        items[iid] = model.ChecklistItem(
            id=iid,
            section=r.text(row, "section", where),
            label=r.text(row, "label", where),
            criterion=r.text(row, "criterion", where, required=False),
            kind=r.choice(row, "kind", where, ("check", "count", "date"), "check"),
            fail=r.texts(row, "fail", where),
            fail_options=r.texts(row, "fail_options", where),
            retention=r.texts(row, "retention", where),
            retention_possible=r.texts(row, "retention_possible", where),
            withdrawal=r.choice(row, "withdrawal", where, model.WITHDRAWAL_KINDS, "none"),
            evidence=r.texts(row, "evidence", where),
            requires_facts=r.texts(row, "requires_facts", where),
            ctb_overlay=r.text(row, "ctb_overlay", where, required=False),
            informative=r.text(row, "informative", where, required=False),
            note=r.text(row, "note", where, required=False),
            value_label=r.text(row, "value_label", where, required=False),
        )
    if not items:
        r.problem("items", "the checklist has no items")
    return tuple(sections), items


def _parse_checks(r: _Reader, data: Mapping[str, Any]) -> tuple[model.VehicleCheck, ...]:
    checks = []
    for i, row in _tables(r, data, "checks"):
        where = f"checks[{row.get('id', i)}]"
        r.known(row, KEYS["check"], where)
        checks.append(
            model.VehicleCheck(
                id=r.text(row, "id", where),
                kind=r.choice(row, "kind", where, model.CHECK_KINDS, "max_age_chassis"),
                parameters=r.texts(row, "parameters", where),
                item=r.text(row, "item", where, required=False),
                fail=r.texts(row, "fail", where),
                retention=r.texts(row, "retention", where),
                withdrawal=r.choice(row, "withdrawal", where, model.WITHDRAWAL_KINDS, "none"),
                basis=r.text(row, "basis", where),
            )
        )
    return tuple(checks)


def _parse_parameters(
    r: _Reader, data: Mapping[str, Any]
) -> tuple[dict[str, model.Parameter], dict[str, tuple[model.DatedValue, ...]]]:
    params: dict[str, model.Parameter] = {}
    raw = data.get("parameters", {})
    if not isinstance(raw, dict):
        r.problem("parameters", "expected [parameters.<name>] tables")
        raw = {}
    for name, row in raw.items():
        where = f"parameters.{name}"
        if not isinstance(row, dict):
            r.problem(where, "expected a table with value, label, assumption, ...")
            continue
        r.known(row, KEYS["parameter"], where)
        params[name] = model.Parameter(
            name=name,
            value=row.get("value"),
            label=r.text(row, "label", where),
            assumption=r.flag(row, "assumption", where, False),
            gap=r.text(row, "gap", where, required=False),
            note=r.text(row, "note", where, required=False),
            basis=r.text(row, "basis", where, required=False),
            printed=r.text(row, "printed", where, required=False),
        )
        if params[name].assumption and not params[name].note:
            r.problem(f"{where}.note", "an assumed parameter must say what is presumed")
    tables: dict[str, tuple[model.DatedValue, ...]] = {}
    raw_tables = data.get("tables", {})
    if not isinstance(raw_tables, dict):
        r.problem("tables", "expected [[tables.<name>]] arrays")
        raw_tables = {}
    for name, rows in raw_tables.items():
        out = []
        for i, row in _tables(r, {name: rows}, name):
            where = f"tables.{name}[{i}]"
            r.known(row, KEYS["dated"], where)
            out.append(
                model.DatedValue(
                    start=r.date(row, "from", where),
                    value=r.decimal(row.get("value"), f"{where}.value"),
                    assumption=r.flag(row, "assumption", where, False),
                    note=r.text(row, "note", where, required=False),
                    basis=r.text(row, "basis", where, required=False),
                    printed=r.text(row, "printed", where, required=False),
                )
            )
        starts = [row.start for row in out]
        if starts != sorted(starts) or len(set(starts)) != len(starts):
            r.problem(f"tables.{name}", "rows must be in strictly increasing 'from' order")
        tables[name] = tuple(out)
    return params, tables


def _parse_deadlines(r: _Reader, data: Mapping[str, Any]) -> tuple[model.Deadline, ...]:
    out = []
    for i, row in _tables(r, data, "deadlines"):
        where = f"deadlines[{row.get('kind', i)}]"
        r.known(row, KEYS["deadline"], where)
        days = r.get(row, "days", int, where, 0)
        if days <= 0:
            r.problem(f"{where}.days", "must be a positive integer")
        out.append(
            model.Deadline(
                kind=r.text(row, "kind", where),
                label=r.text(row, "label", where),
                days=days,
                unit=r.choice(row, "unit", where, model.DEADLINE_UNITS, "calendar_days"),
                trigger=r.choice(row, "trigger", where, model.DEADLINE_TRIGGERS, "ciencia_auto"),
                body=r.text(row, "body", where),
                basis=r.text(row, "basis", where),
                when_rules=r.texts(row, "when_rules", where),
                parameter=r.text(row, "parameter", where, required=False),
            )
        )
    if not out:
        r.problem("deadlines", "the pack has no deadlines")
    return tuple(out)


def _parse_calendar(r: _Reader, data: Mapping[str, Any]) -> model.CalendarSpec:
    raw = data.get("calendar")
    if not isinstance(raw, dict):
        r.problem("calendar", "missing [calendar] table")
        raw = {}
    r.known(raw, KEYS["calendar"], "calendar")
    extras = []
    for i, row in _tables(r, data, "holidays"):
        where = f"holidays[{i}]"
        r.known(row, KEYS["holiday"], where)
        text = r.text(row, "date", where)
        year: int | None = None
        try:
            parts = [int(p) for p in text.split("-")]
            if len(parts) == 3:
                year, month, day = parts
                dt.date(year, month, day)
            elif len(parts) == 2:
                month, day = parts
                dt.date(2000, month, day)  # leap year: allows 02-29
            else:
                raise ValueError(text)
        except ValueError:
            r.problem(f"{where}.date", f"expected MM-DD or YYYY-MM-DD, got {text!r}")
            continue
        extras.append(
            model.ExtraHoliday(
                month=month,
                day=day,
                year=year,
                name=r.text(row, "name", where),
                assumption=r.flag(row, "assumption", where, False),
                basis=r.text(row, "basis", where, required=False),
            )
        )
    exceptions = []
    for i, row in _tables(r, data, "exceptions"):
        where = f"exceptions[{i}]"
        r.known(row, KEYS["exception"], where)
        exceptions.append(
            model.CalendarException(
                date=r.date(row, "date", where),
                kind=r.choice(row, "kind", where, model.EXCEPTION_KINDS, "closed"),
                name=r.text(row, "name", where),
                decree=r.text(row, "decree", where),
            )
        )
    return model.CalendarSpec(
        exceptions=tuple(exceptions),
        country=r.text(raw, "country", "calendar"),
        subdivision=r.text(raw, "subdivision", "calendar"),
        include_optional_parameter=r.get(
            raw, "include_optional_parameter", str, "calendar", None, required=False
        ),
        extra_holidays=tuple(extras),
    )


# --- cross-references ---------------------------------------------------------------------


def _check_references(p: model.Pack, problems: list[Problem]) -> None:
    def bad(file: str, key: str, message: str) -> None:
        problems.append(Problem(file, key, message))

    def rule_refs(file: str, key: str, ids: tuple[str, ...], *, selectable: bool = True) -> None:
        for i, rid in enumerate(ids):
            rule = p.rules.get(rid)
            if rule is None:
                bad(file, f"{key}[{i}]", f"unknown rule {rid!r}")
            elif selectable and not rule.selectable:
                bad(file, f"{key}[{i}]", f"rule {rid!r} is not selectable")

    def ground_refs(file: str, key: str, ids: tuple[str, ...]) -> None:
        for i, gid in enumerate(ids):
            if gid not in p.measure.grounds:
                bad(file, f"{key}[{i}]", f"unknown {p.measure.kind} ground {gid!r}")

    def param_ref(file: str, key: str, name: str | None) -> None:
        if name and name not in p.parameters:
            bad(file, key, f"unknown parameter {name!r}")

    for gid, group in p.groups.items():
        param_ref("infractions.toml", f"groups.{gid}.points_parameter", group.points_parameter)
        if group.fine.kind == "tariff_multiple" and "tariff_brl" not in p.tables:
            bad(
                "infractions.toml",
                f"groups.{gid}.fine",
                "needs [[tables.tariff_brl]] in parameters.toml",
            )
        if group.fine.kind == "minimum_wage_percent" and "minimum_wage_brl" not in p.tables:
            bad(
                "infractions.toml",
                f"groups.{gid}.fine",
                "needs [[tables.minimum_wage_brl]] in parameters.toml",
            )
    for rid, rule in p.rules.items():
        where = f"rules[{rid}]"
        if rule.penalty == model.PENALTY_DEFAULT:
            if rule.group is None:
                bad(
                    "infractions.toml", f"{where}.group", "missing (required for penalty 'default')"
                )
            elif rule.group not in p.groups:
                bad("infractions.toml", f"{where}.group", f"unknown group {rule.group!r}")
        elif rule.group is not None and rule.group not in p.groups:
            bad("infractions.toml", f"{where}.group", f"unknown group {rule.group!r}")
        ground_refs("infractions.toml", f"{where}.retention", rule.retention)
        ground_refs("infractions.toml", f"{where}.retention_possible", rule.retention_possible)
        for i, name in enumerate(rule.parameters):
            param_ref("infractions.toml", f"{where}.parameters[{i}]", name)
        if rule.withdrawal != "none" and p.measure.kind != "retirada":
            bad(
                "infractions.toml",
                f"{where}.withdrawal",
                "withdrawal needs measure kind 'retirada'",
            )
    for i, alt in enumerate(p.alternatives):
        rule_refs("infractions.toml", f"alternatives[{i}].rules", alt.rules)
        if len(set(alt.rules)) != len(alt.rules):
            bad("infractions.toml", f"alternatives[{i}].rules", "a rule is listed twice")
    section_ids = {s.id for s in p.sections}
    for iid, item in p.items.items():
        where = f"items[{iid}]"
        if item.section not in section_ids:
            bad("checklist.toml", f"{where}.section", f"unknown section {item.section!r}")
        rule_refs("checklist.toml", f"{where}.fail", item.fail)
        rule_refs("checklist.toml", f"{where}.fail_options", item.fail_options)
        if not item.fail and not item.informative:
            bad("checklist.toml", f"{where}.fail", "empty: name a rule, or set 'informative'")
        ground_refs("checklist.toml", f"{where}.retention", item.retention)
        ground_refs("checklist.toml", f"{where}.retention_possible", item.retention_possible)
        if item.withdrawal != "none" and p.measure.kind != "retirada":
            bad("checklist.toml", f"{where}.withdrawal", "withdrawal needs measure kind 'retirada'")
    for check in p.checks:
        where = f"checks[{check.id}]"
        for i, name in enumerate(check.parameters):
            param_ref("vehicle.toml", f"{where}.parameters[{i}]", name)
        if check.item and check.item not in p.items:
            bad("vehicle.toml", f"{where}.item", f"unknown checklist item {check.item!r}")
        rule_refs("vehicle.toml", f"{where}.fail", check.fail)
        if not check.fail:
            bad("vehicle.toml", f"{where}.fail", "empty: a failed check must name a rule")
        ground_refs("vehicle.toml", f"{where}.retention", check.retention)
    param_ref("measures.toml", "measure.location_parameter", p.measure.location_parameter)
    if not p.measure.grounds:
        bad("measures.toml", "grounds", "at least one ground is required")
    for d in p.deadlines:
        rule_refs("deadlines.toml", f"deadlines[{d.kind}].when_rules", d.when_rules)
        param_ref("deadlines.toml", f"deadlines[{d.kind}].parameter", d.parameter or None)
    param_ref(
        "calendar.toml",
        "calendar.include_optional_parameter",
        p.calendar.include_optional_parameter,
    )


def load_pack(pack_dir: Path) -> model.Pack:
    """Load and validate one pack folder; raise :class:`PackError` listing every problem."""
    pack_dir = Path(pack_dir)
    problems: list[Problem] = []
    if not pack_dir.is_dir():
        raise PackError(pack_dir, [Problem(str(pack_dir), "-", "not a folder")])
    raw = {name: _read_toml(pack_dir / name, problems) for name in PACK_FILES}

    def reader(name: str) -> _Reader:
        return _Reader(problems, name)

    for name, data in raw.items():
        reader(name).known(data, KEYS[name], "")
    meta = _parse_meta(reader("pack.toml"), raw["pack.toml"], pack_dir.name)
    groups = _parse_groups(reader("infractions.toml"), raw["infractions.toml"])
    rules = _parse_rules(reader("infractions.toml"), raw["infractions.toml"])
    alternatives = _parse_alternatives(reader("infractions.toml"), raw["infractions.toml"])
    measure = _parse_measure(reader("measures.toml"), raw["measures.toml"])
    sections, items = _parse_checklist(reader("checklist.toml"), raw["checklist.toml"])
    checks = _parse_checks(reader("vehicle.toml"), raw["vehicle.toml"])
    params, tables = _parse_parameters(reader("parameters.toml"), raw["parameters.toml"])
    deadlines = _parse_deadlines(reader("deadlines.toml"), raw["deadlines.toml"])
    calendar = _parse_calendar(reader("calendar.toml"), raw["calendar.toml"])
    pack = model.Pack(
        meta=meta,
        groups=groups,
        rules=rules,
        measure=measure,
        sections=sections,
        items=items,
        checks=checks,
        parameters=params,
        tables=tables,
        deadlines=deadlines,
        calendar=calendar,
        alternatives=alternatives,
        content_hash=content_hash(pack_dir) if not problems else "",
        source_files=PACK_FILES,
    )
    if not problems:
        _check_references(pack, problems)
    if problems:
        raise PackError(pack_dir, problems)
    return pack


def pack_dirs(root: Path | None = None) -> list[Path]:
    """Folders under ``root`` (default: the shipped ``forms/``) that look like packs."""
    base = Path(root) if root is not None else forms_dir()
    if (base / "pack.toml").exists():
        return [base]
    return sorted(d for d in base.iterdir() if d.is_dir() and (d / "pack.toml").exists())


def validate(root: Path | None = None) -> dict[str, list[Problem]]:
    """Problems per pack folder name (an empty list means the pack is valid)."""
    result: dict[str, list[Problem]] = {}
    for d in pack_dirs(root):
        try:
            load_pack(d)
            result[d.name] = []
        except PackError as exc:
            result[d.name] = exc.problems
    return result


def _listing_from(d: Path, loader: Callable[[Path], model.Pack]) -> PackListing:
    try:
        p = loader(d)
    except PackError as exc:
        meta = _read_toml(d / "pack.toml", []).get("pack", {})
        meta = meta if isinstance(meta, dict) else {}
        return PackListing(
            id=str(meta.get("id", d.name)),
            version=str(meta.get("version", "?")),
            title=str(meta.get("title", "")),
            status=str(meta.get("status", "?")),
            organ=str(meta.get("organ", "")),
            content_hash="",
            problems=[str(pr) for pr in exc.problems],
            path=d,
        )
    return PackListing(
        id=p.meta.id,
        version=p.meta.version,
        title=p.meta.title,
        status=p.meta.status,
        organ=p.meta.organ,
        content_hash=p.content_hash,
        problems=[],
        path=d,
    )


def list_packs(root: Path | None = None) -> list[PackListing]:
    """Every pack folder with its metadata; broken packs are listed with their problems."""
    return [_listing_from(d, load_pack) for d in pack_dirs(root)]


_cache: dict[Path, tuple[tuple[tuple[int, int], ...], model.Pack]] = {}


def _stamp(pack_dir: Path) -> tuple[tuple[int, int], ...]:
    """Cheap change detector (mtime, size per file); the content hash is taken at load."""
    out = []
    for name in PACK_FILES:
        try:
            st = (pack_dir / name).stat()
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((-1, -1))
    return tuple(out)


def get_pack(pack_id: str, root: Path | None = None) -> model.Pack:
    """The pack with this id from ``root`` (default ``forms/``), reloaded when a file changes.

    Raises ``KeyError`` for an unknown id and :class:`PackError` for a broken pack.
    """
    base = Path(root) if root is not None else forms_dir()
    d = (base / pack_id).resolve()
    if not pack_id or "/" in pack_id or "\\" in pack_id or not (d / "pack.toml").exists():
        known = ", ".join(x.name for x in pack_dirs(base)) if base.is_dir() else "none"
        raise KeyError(f"unknown pack {pack_id!r} (known: {known or 'none'})")
    stamp = _stamp(d)
    hit = _cache.get(d)
    if hit and hit[0] == stamp:
        return hit[1]
    p = load_pack(d)
    _cache[d] = (stamp, p)
    return p
