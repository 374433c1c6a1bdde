"""Loading HQ's reference data from a file: CSV (one table per file) or JSON (many tables).

Until sync exists this is how a device gets its registry (``inspector registry import
FILE``). Every row is validated on its own: good rows are kept, bad rows are reported with
where they are (``vehicles.csv:12`` — the physical line — or ``vehicles[12]``), the field
and the reason, in Portuguese. A row replaces the stored row with the same id as a whole
(reference data belongs to HQ; the ``ref_*`` tables have no immutability triggers).

Each file is imported in one transaction: a crash or an error half-way leaves the data as
it was before the file. Accepted input:

* JSON: an object whose keys are among ``permit_holders``, ``lines``, ``vehicles``,
  ``drivers``, ``inspectors``, ``history``, ``parameters``, ``pack_versions``, each a list
  of objects; tables are loaded in that order whatever the key order, so a vehicle may name
  a holder defined in the same file.
* CSV (UTF-8, optional BOM; ``,`` or ``;``): the table is named by the ``table`` argument,
  else a first-line comment (``# table: vehicles``), else the file name (``vehicles.csv``,
  ``ref_vehicles.csv``); the header row follows. Empty cells are NULL.
* A folder: every ``*.csv`` and ``*.json`` in it, tables in dependency order, one
  transaction per file.

Caveat: inspectors must come with an argon2id ``password_hash`` made by HQ, at least as
costly as ``MINIMUM_PARAMETERS``; a row carrying a plain ``password`` is refused (and the
password is never echoed back).

Hostile files (issue 14, finding 13): CSV is streamed line by line (a line is at most
``MAX_LINE_CHARS``, a field at most the ``csv`` module's 131,072 characters); JSON is read
whole, so a file over ``MAX_JSON_BYTES`` is refused (CSV carries large registries); a JSON
object naming a key twice or nested beyond the parser's depth is refused as a whole. A row
whose id appeared before in the same import, or with a control character (NUL, ESC, C1),
or a bidirectional override in any text, is refused. At most ``MAX_LISTED`` errors and
warnings are listed; the rest are counted.
"""

from __future__ import annotations

import contextlib
import csv
import datetime as dt
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import argon2
from argon2.exceptions import InvalidHashError

from inspector_app.domain.bans import BanFieldError, ban_columns
from inspector_app.domain.calendar_exceptions import (
    CALENDAR_EXCEPTIONS_PARAMETER,
    parse_exceptions,
)
from inspector_app.domain.identity import (
    IdentityError,
    check_cnh,
    normalize_cnpj,
    normalize_cpf,
    normalize_renavam,
    parse_plate,
)
from inspector_app.domain.legaltime import legal_today
from inspector_app.domain.rowfields import FieldError as _FieldError
from inspector_app.domain.rowfields import choice as _choice
from inspector_app.domain.rowfields import flag as _bool
from inspector_app.domain.rowfields import identity as _identity
from inspector_app.domain.rowfields import integer as _int
from inspector_app.domain.rowfields import iso_date as _date
from inspector_app.domain.rowfields import required as _required
from inspector_app.domain.rowfields import text as _text
from inspector_app.packs import PackError, get_pack, pack_dirs
from inspector_app.security.passwords import ARGON2ID_PREFIX, MINIMUM_PARAMETERS
from inspector_app.store import dbapi
from inspector_app.store.db import Store, StoreError, translate_error, utc_now
from inspector_app.store.reference import PERMIT_STATUSES, TABLES

__all__ = [
    "TABLE_ORDER",
    "ImportReport",
    "RegistryImportError",
    "RowError",
    "import_registry",
]

# Dependency order: a row may refer only to tables before its own.
TABLE_ORDER = tuple(TABLES)

MAX_LINE_CHARS = 1024 * 1024
MAX_LINE_CHARS_PT = f"{MAX_LINE_CHARS:_}".replace("_", ".")
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_LISTED = 1000
# C0 controls but tab and line breaks (a route may span lines), DEL, C1 controls;
# bidirectional embeddings, overrides and isolates and the marks (a name shown or printed in
# another order than it was typed).
_FORBIDDEN_CHARS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# In a report line, line breaks are escaped too: one problem, one line.
_INVISIBLE_CHARS = re.compile(f"[\n\r{_FORBIDDEN_CHARS.pattern[1:-1]}]")

ProgressCallback = Callable[[str, int], None]
"""Called as ``progress(table, rows_done)`` after each row of a table (good or bad)."""


class RegistryImportError(StoreError):
    """The file as a whole cannot be imported (unreadable, unknown table, bad JSON)."""


@dataclass(frozen=True)
class RowError:
    """A rejected row (or, in ``warnings``, a kept row with a remark).

    ``where`` is ``"vehicles.csv:12"`` (file and physical line) or ``"vehicles[12]"``
    (JSON table and index); ``field`` is the column, empty when the whole row is concerned.
    """

    where: str
    field: str
    message: str

    def __str__(self) -> str:
        if self.field:
            return _visible(f"{self.where}: {self.field}: {self.message}")
        return _visible(f"{self.where}: {self.message}")


def _visible(text: str) -> str:
    """Control and bidirectional characters as ``\\uXXXX``: a report line cannot move the
    terminal's cursor, change its colours or reorder what follows."""
    return _INVISIBLE_CHARS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


@dataclass
class ImportReport:
    """What an import did: rows kept per table (short names), rows refused, remarks."""

    source: str
    imported: dict[str, int] = field(default_factory=dict)
    errors: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)
    # Errors and warnings beyond MAX_LISTED: counted, not kept.
    errors_unlisted: int = 0
    warnings_unlisted: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors

    def add_error(self, error: RowError) -> None:
        if len(self.errors) < MAX_LISTED:
            self.errors.append(error)
        else:
            self.errors_unlisted += 1

    def add_warning(self, warning: RowError) -> None:
        if len(self.warnings) < MAX_LISTED:
            self.warnings.append(warning)
        else:
            self.warnings_unlisted += 1

    def lines(self) -> list[str]:
        """A Portuguese summary for the CLI: counts, then each error and warning."""
        kept = ", ".join(f"{table}: {n}" for table, n in self.imported.items()) or "nenhuma"
        out = [f"{self.source}: linhas importadas – {kept}."]
        out += [f"ERRO {e}" for e in self.errors]
        if self.errors_unlisted:
            out.append(f"ERRO … e mais {self.errors_unlisted} erro(s) não listado(s).")
        out += [f"AVISO {w}" for w in self.warnings]
        if self.warnings_unlisted:
            out.append(f"AVISO … e mais {self.warnings_unlisted} aviso(s) não listado(s).")
        total = len(self.errors) + self.errors_unlisted
        if self.errors:
            out.append(f"{total} linha(s) recusada(s); as demais foram importadas.")
        return out


# --------------------------------------------------------------------------------------------
# Table specifications


@dataclass(frozen=True)
class _Spec:
    table: str
    columns: tuple[str, ...]
    pk: tuple[str, ...]
    # Input-only names accepted besides the columns (converted by the validator).
    aliases: tuple[str, ...] = ()

    @property
    def accepted(self) -> frozenset[str]:
        return frozenset(self.columns) | frozenset(self.aliases)


_SPECS: dict[str, _Spec] = {
    "permit_holders": _Spec(
        "ref_permit_holders",
        ("id", "kind", "name", "cpf", "cnpj", "permit_number", "permit_status",
         "permit_valid_until", "pack_id", "city", "ban_reason", "ban_from", "updated_at"),
        ("id",),
    ),
    "lines": _Spec(
        "ref_lines", ("id", "code", "name", "pack_id", "route", "updated_at"), ("id",)
    ),
    "vehicles": _Spec(
        "ref_vehicles",
        ("id", "plate", "plate_key", "renavam", "chassis", "make_model", "species",
         "fleet_number", "chassis_year", "body_year", "seats", "doors", "category", "uf",
         "holder_id", "line_id", "insurance_policy", "insurance_valid_until", "last_vistoria",
         "pack_id", "updated_at"),
        ("id",),
    ),
    "drivers": _Spec(
        "ref_drivers",
        ("id", "name", "cpf", "cnh", "cnh_category", "cnh_valid_until", "holder_id", "role",
         "registered", "updated_at"),
        ("id",),
    ),
    "inspectors": _Spec(
        "ref_inspectors",
        ("id", "matricula", "name", "role", "password_hash", "organ", "active", "updated_at"),
        ("id",),
        aliases=("password",),
    ),
    "history": _Spec(
        "ref_history",
        ("id", "holder_id", "plate_key", "rule_id", "date", "status", "points", "auto_number",
         "updated_at"),
        ("id",),
        aliases=("plate",),
    ),
    "parameters": _Spec(
        "ref_parameters", ("pack_id", "name", "value_json", "updated_at"), ("pack_id", "name"),
        aliases=("value",),
    ),
    "pack_versions": _Spec(
        "ref_pack_versions", ("pack_id", "version", "content_hash", "published_at"),
        ("pack_id", "version"),
    ),
}

_CNH_CATEGORIES = frozenset({"A", "B", "C", "D", "E", "AB", "AC", "AD", "AE"})
_INSPECTOR_ROLES = frozenset({"inspector", "retention_desk", "supervisor"})
_HISTORY_STATUSES = frozenset({"upheld", "pending", "cancelled"})
_PERMIT_ALIASES = {**{k: k for k in PERMIT_STATUSES}, **{v: k for k, v in PERMIT_STATUSES.items()}}


# --------------------------------------------------------------------------------------------
# Field readers: each returns the clean value or raises _FieldError


# --------------------------------------------------------------------------------------------
# Row validators


class _Context:
    """Per-import state: the store (to check references) and where warnings go."""

    def __init__(self, store: Store, report: ImportReport) -> None:
        self.store = store
        self.report = report
        self.where = ""
        self.now = utc_now()
        self.packs = frozenset(d.name for d in _safe_pack_dirs())
        self._rules: frozenset[str] | None = None

    def warn(self, field: str, message: str) -> None:
        self.report.add_warning(RowError(self.where, field, message))

    def exists(self, table: str, row_id: str) -> bool:
        sql = f"SELECT 1 FROM {table} WHERE id = ?"
        return self.store.conn.execute(sql, [row_id]).fetchone() is not None

    def other_id(self, table: str, column: str, value: str, row_id: str) -> str | None:
        found = self.store.conn.execute(
            f"SELECT id FROM {table} WHERE {column} = ? AND id <> ?", [value, row_id]
        ).fetchone()
        return None if found is None else str(found[0])

    def pack(self, row: Mapping[str, Any]) -> str:
        pack_id = _required(row, "pack_id")
        if self.packs and pack_id not in self.packs:
            self.warn(
                "pack_id",
                f"pacote {pack_id!r} desconhecido neste dispositivo "
                f"(conhecidos: {', '.join(sorted(self.packs))}); linha mantida.",
            )
        return pack_id

    def holder(self, row: Mapping[str, Any], *, required: bool = False) -> str | None:
        holder_id = _text(row, "holder_id", required=required)
        if holder_id is not None and not self.exists("ref_permit_holders", holder_id):
            raise _FieldError(
                "holder_id",
                f"permissionário {holder_id!r} não existe (nem no cadastro nem antes neste "
                "arquivo).",
            )
        return holder_id

    def known_rules(self) -> frozenset[str]:
        if self._rules is None:
            rules: set[str] = set()
            for pack_id in self.packs:
                try:
                    rules.update(get_pack(pack_id).rules)
                except (KeyError, PackError):  # a broken pack only weakens the check
                    continue
            self._rules = frozenset(rules)
        return self._rules


def _safe_pack_dirs() -> list[Path]:
    try:
        return pack_dirs()
    except OSError:
        return []


def _permit_holder(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    kind = _choice(row, "kind", ("pf", "pj"))
    cpf = _identity("cpf", normalize_cpf, _text(row, "cpf"))
    cnpj = _identity("cnpj", normalize_cnpj, _text(row, "cnpj"))
    if kind == "pf" and cpf is None:
        raise _FieldError("cpf", "pessoa física (kind=pf) exige CPF.")
    if kind == "pj" and cnpj is None:
        raise _FieldError("cnpj", "pessoa jurídica (kind=pj) exige CNPJ.")
    status = _required(row, "permit_status").lower()
    if status not in _PERMIT_ALIASES:
        raise _FieldError(
            "permit_status",
            f"situação {status!r} desconhecida; use {', '.join(PERMIT_STATUSES)} "
            f"({', '.join(PERMIT_STATUSES.values())}).",
        )
    return {
        "id": _required(row, "id"),
        "kind": kind,
        "name": _required(row, "name"),
        "cpf": cpf,
        "cnpj": cnpj,
        "permit_number": _required(row, "permit_number"),
        "permit_status": _PERMIT_ALIASES[status],
        "permit_valid_until": _date(row, "permit_valid_until"),
        "pack_id": ctx.pack(row),
        "city": _text(row, "city"),
        **_ban(row),
    }


def _ban(row: Mapping[str, Any]) -> dict[str, Any]:
    """Ban on a new permission (Decreto 15.154/1993 arts. 12 §ú, 39 §ú, 16 §2): the rule is
    ``domain.bans.ban_columns``, shared with the other registry import."""
    try:
        return ban_columns(_text(row, "ban_reason"), _date(row, "ban_from"), legal_today())
    except BanFieldError as exc:
        raise _FieldError(exc.field, exc.message) from None


def _line(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    return {
        "id": _required(row, "id"),
        "code": _required(row, "code"),
        "name": _required(row, "name"),
        "pack_id": ctx.pack(row),
        "route": _text(row, "route"),
    }


def _vehicle(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    vehicle_id = _required(row, "id")
    plate = _identity("plate", lambda t: parse_plate(t).text, _required(row, "plate"))
    assert plate is not None
    key = parse_plate(plate).canonical_key()
    given_key = _text(row, "plate_key")
    if given_key is not None:
        given = _identity("plate_key", lambda t: parse_plate(t).canonical_key(), given_key)
        if given != key:
            raise _FieldError(
                "plate_key", f"chave {given_key!r} não corresponde à placa {plate} ({key})."
            )
    other = ctx.other_id("ref_vehicles", "plate_key", key, vehicle_id)
    if other is not None:
        raise _FieldError("plate", f"placa {plate} já cadastrada para o veículo {other!r}.")
    line_id = _text(row, "line_id")
    if line_id is not None and not ctx.exists("ref_lines", line_id):
        raise _FieldError("line_id", f"linha {line_id!r} não existe.")
    year_max = dt.date.today().year + 1
    chassis_year = _int(row, "chassis_year", 1950, year_max)
    body_year = _int(row, "body_year", 1950, year_max)
    chassis = _text(row, "chassis")
    return {
        "id": vehicle_id,
        "plate": plate,
        "plate_key": key,
        "renavam": _identity("renavam", normalize_renavam, _text(row, "renavam")),
        "chassis": None if chassis is None else chassis.replace(" ", "").upper(),
        "make_model": _text(row, "make_model"),
        "species": _text(row, "species"),
        "fleet_number": _text(row, "fleet_number"),
        "chassis_year": chassis_year,
        "body_year": body_year,
        "seats": _int(row, "seats", 1, 200),
        "doors": _int(row, "doors", 0, 20),
        "category": _text(row, "category"),
        "uf": (_text(row, "uf") or "").upper() or None,
        "holder_id": ctx.holder(row),
        "line_id": line_id,
        "insurance_policy": _text(row, "insurance_policy"),
        "insurance_valid_until": _date(row, "insurance_valid_until"),
        "last_vistoria": _date(row, "last_vistoria"),
        "pack_id": ctx.pack(row),
    }


def _driver(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    cpf = _identity("cpf", normalize_cpf, _required(row, "cpf"))
    cnh_text = _text(row, "cnh")
    cnh = None
    if cnh_text is not None:
        try:
            check = check_cnh(cnh_text)
        except IdentityError as exc:
            raise _FieldError("cnh", exc.message) from None
        cnh = check.number
        if not check.valid:
            # HQ may hold old-model CNH or PGU numbers: kept, and the inspector will see it.
            ctx.warn("cnh", f"{check.message} Linha mantida.")
    category = _text(row, "cnh_category")
    if category is not None:
        category = category.upper()
        if category not in _CNH_CATEGORIES:
            raise _FieldError(
                "cnh_category",
                f"categoria {category!r} inválida; use {', '.join(sorted(_CNH_CATEGORIES))}.",
            )
    return {
        "id": _required(row, "id"),
        "name": _required(row, "name"),
        "cpf": cpf,
        "cnh": cnh,
        "cnh_category": category,
        "cnh_valid_until": _date(row, "cnh_valid_until"),
        "holder_id": ctx.holder(row),
        "role": _text(row, "role") or "motorista",
        "registered": _bool(row, "registered", 1),
    }


def _inspector(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    if _text(row, "password") is not None:
        raise _FieldError(
            "password",
            "senha em texto puro recusada: o cadastro deve trazer apenas password_hash "
            "argon2id gerado pela sede.",
        )
    password_hash = _required(row, "password_hash")
    if not password_hash.startswith(ARGON2ID_PREFIX):
        raise _FieldError(
            "password_hash", "não é um hash argon2id ($argon2id$…); outros formatos são recusados."
        )
    try:
        params = argon2.extract_parameters(password_hash)
    except (InvalidHashError, ValueError):
        raise _FieldError("password_hash", "hash argon2id malformado.") from None
    floor = MINIMUM_PARAMETERS
    if params.memory_cost < floor.memory_cost_kib or params.time_cost < floor.time_cost:
        raise _FieldError(
            "password_hash",
            f"hash argon2id fraco demais (m={params.memory_cost} KiB, t={params.time_cost}); "
            f"o mínimo é m={floor.memory_cost_kib} KiB, t={floor.time_cost}: a sede deve "
            "gerar o hash de novo.",
        )
    inspector_id = _required(row, "id")
    matricula = _required(row, "matricula")
    other = ctx.other_id("ref_inspectors", "matricula", matricula, inspector_id)
    if other is not None:
        raise _FieldError("matricula", f"matrícula {matricula} já pertence ao registro {other!r}.")
    return {
        "id": inspector_id,
        "matricula": matricula,
        "name": _required(row, "name"),
        "role": _choice(row, "role", _INSPECTOR_ROLES),
        "password_hash": password_hash,
        "organ": _text(row, "organ"),
        "active": _bool(row, "active", 1),
    }


def _history(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    plate_text = _text(row, "plate") or _text(row, "plate_key")
    name = "plate" if _text(row, "plate") is not None else "plate_key"
    key = _identity(name, lambda t: parse_plate(t).canonical_key(), plate_text)
    holder_id = ctx.holder(row)
    if holder_id is None and key is None:
        raise _FieldError("holder_id", "informe holder_id ou a placa (plate / plate_key).")
    rule_id = _required(row, "rule_id")
    known = ctx.known_rules()
    if known and rule_id not in known:
        ctx.warn("rule_id", f"regra {rule_id!r} não consta dos pacotes deste dispositivo.")
    status = _choice(row, "status", _HISTORY_STATUSES)
    date = _date(row, "date", required=True)
    return {
        "id": _required(row, "id"),
        "holder_id": holder_id,
        "plate_key": key,
        "rule_id": rule_id,
        "date": date,
        "status": status,
        "points": _int(row, "points", 0, 1000),
        "auto_number": _text(row, "auto_number"),
    }


def _parameter(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    raw = row.get("value_json")
    if raw is not None and not (isinstance(raw, str) and not raw.strip()):
        if not isinstance(raw, str):
            raise _FieldError("value_json", "esperado texto JSON.")
        try:
            json.loads(raw)
        except ValueError as exc:
            raise _FieldError("value_json", f"JSON inválido: {exc}.") from None
        value_json = raw.strip()
    elif "value" in row:
        value_json = json.dumps(row["value"], ensure_ascii=False)
    else:
        raise _FieldError("value_json", "campo obrigatório não informado.")
    if row.get("name") == CALENDAR_EXCEPTIONS_PARAMETER:
        try:
            parse_exceptions(json.loads(value_json))
        except ValueError as exc:
            raise _FieldError("value_json", str(exc)) from None
    return {"pack_id": ctx.pack(row), "name": _required(row, "name"), "value_json": value_json}


def _pack_version(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    content_hash = _required(row, "content_hash").lower()
    if not re.fullmatch(r"[0-9a-f]{64}", content_hash):
        raise _FieldError("content_hash", "esperado SHA-256 em hexadecimal (64 caracteres).")
    published = _text(row, "published_at")
    return {
        "pack_id": ctx.pack(row),
        "version": _required(row, "version"),
        "content_hash": content_hash,
        "published_at": published,
    }


_VALIDATORS: dict[str, Callable[[Mapping[str, Any], _Context], dict[str, Any]]] = {
    "permit_holders": _permit_holder,
    "lines": _line,
    "vehicles": _vehicle,
    "drivers": _driver,
    "inspectors": _inspector,
    "history": _history,
    "parameters": _parameter,
    "pack_versions": _pack_version,
}


# --------------------------------------------------------------------------------------------
# Writing


def _upsert_sql(spec: _Spec) -> str:
    cols = ", ".join(spec.columns)
    marks = ", ".join("?" for _ in spec.columns)
    updates = ", ".join(f"{c} = excluded.{c}" for c in spec.columns if c not in spec.pk)
    return (
        f"INSERT INTO {spec.table} ({cols}) VALUES ({marks}) "
        f"ON CONFLICT ({', '.join(spec.pk)}) DO UPDATE SET {updates}"
    )


def _load_rows(
    ctx: _Context,
    name: str,
    rows: Iterable[tuple[str, Mapping[str, Any]]],
    progress: ProgressCallback | None,
) -> None:
    """Validate and upsert ``(where, row)`` pairs of one table, inside the caller's
    transaction."""
    spec = _SPECS[name]
    validate = _VALIDATORS[name]
    sql = _upsert_sql(spec)
    conn = ctx.store.conn
    report = ctx.report
    report.imported.setdefault(name, 0)
    for done, (where, row) in enumerate(rows, start=1):
        ctx.where = where
        try:
            _check_characters(row)
            clean = validate(row, ctx)
            _first_time(ctx, name, spec, clean, where)
            if "updated_at" in spec.columns:
                clean["updated_at"] = _updated_at(row, ctx.now)
            conn.execute(sql, [clean.get(c) for c in spec.columns])
            report.imported[name] += 1
        except _FieldError as exc:
            report.add_error(RowError(where, exc.field, exc.message))
        except dbapi.IntegrityError as exc:
            if not conn.in_transaction:  # a trigger rolled everything back: stop here
                raise translate_error(exc) from exc
            report.add_error(RowError(where, "", f"recusada pelo banco de dados: {exc}."))
        if progress is not None:
            progress(name, done)


def _check_characters(row: Mapping[str, Any]) -> None:
    for column, value in row.items():
        if isinstance(value, str):
            bad = _FORBIDDEN_CHARS.search(value)
            if bad is not None:
                raise _FieldError(
                    str(column),
                    f"caractere de controle ou de direção de texto U+{ord(bad.group()):04X} "
                    "recusado (o texto seria mostrado ou impresso diferente do que é).",
                )


_SEEN_TABLE = "temp._registry_import_seen"


def _first_time(ctx: _Context, name: str, spec: _Spec, clean: Mapping[str, Any],
                where: str) -> None:
    """Refuse a row whose key came before in this import (it would silently replace it and
    be counted twice). Keys are kept in a temporary table, not in memory."""
    key = "\x1f".join(str(clean.get(c)) for c in spec.pk)
    conn = ctx.store.conn
    before = conn.execute(
        f"SELECT at FROM {_SEEN_TABLE} WHERE tbl = ? AND pk = ?", [name, key]
    ).fetchone()
    if before is not None:
        shown = "/".join(str(clean.get(c)) for c in spec.pk)
        raise _FieldError(
            spec.pk[0] if len(spec.pk) == 1 else "",
            f"{shown!r} repetido neste arquivo (já em {before[0]}); linha recusada.",
        )
    conn.execute(f"INSERT INTO {_SEEN_TABLE} (tbl, pk, at) VALUES (?, ?, ?)", [name, key, where])


def _updated_at(row: Mapping[str, Any], default: str) -> str:
    value = row.get("updated_at")
    if isinstance(value, str) and value.strip():
        return value.strip()
    return default


# --------------------------------------------------------------------------------------------
# Readers


def _table_name(text: str) -> str | None:
    name = text.strip().lower().replace("-", "_")
    name = name.removeprefix("ref_")
    if name in _SPECS:
        return name
    # "vehicles_2026-04" → vehicles (longest known name first)
    for known in sorted(_SPECS, key=len, reverse=True):
        if name.startswith(known):
            return known
    return None


def _comment_table(line: str) -> str | None:
    body = line.lstrip("#").strip()
    match = re.fullmatch(r"(?:table|tabela)\s*[:=]\s*(\S+)", body, flags=re.IGNORECASE)
    if match:
        return match.group(1)
    # "# vehicles" alone names the table too; any other comment is just a comment.
    return body if body.lower().removeprefix("ref_") in _SPECS else None


def _unreadable(path: Path, exc: OSError) -> RegistryImportError:
    return RegistryImportError(
        f"{path}: {exc}", f"{path.name}: não foi possível ler o arquivo ({exc.strerror})."
    )


def _not_utf8(path: Path, exc: UnicodeDecodeError) -> RegistryImportError:
    return RegistryImportError(
        f"{path}: not UTF-8 ({exc})",
        f"{path.name}: o arquivo não está em UTF-8 (byte {exc.start}). Salve-o como UTF-8.",
    )


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, exc) from None
    except OSError as exc:
        raise _unreadable(path, exc) from None


def _physical_lines(path: Path, fh: IO[str]) -> Iterator[str]:
    """The file's lines as an editor counts them (\\n, \\r\\n or \\r), read one at a time;
    a line longer than ``MAX_LINE_CHARS`` stops the file (it would be held whole)."""
    number = 0
    while True:
        try:
            line = fh.readline(MAX_LINE_CHARS + 1)
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, exc) from None
        except OSError as exc:
            raise _unreadable(path, exc) from None
        if not line:
            return
        number += 1
        if len(line) > MAX_LINE_CHARS:
            raise RegistryImportError(
                f"{path}:{number}: line longer than {MAX_LINE_CHARS} characters",
                f"{path.name}:{number}: linha com mais de {MAX_LINE_CHARS_PT} caracteres; "
                "arquivo recusado, nada dele foi gravado.",
            )
        yield line


def _csv_rows(
    path: Path, table: str | None, report: ImportReport
) -> tuple[str, Iterator[tuple[str, Mapping[str, Any]]]]:
    try:
        # newline="": universal newlines kept as written (str.splitlines would also split
        # on form feeds and U+2028 inside a field); csv sees every line terminator.
        fh = path.open(encoding="utf-8-sig", newline="")
    except OSError as exc:
        raise _unreadable(path, exc) from None
    lines = _physical_lines(path, fh)
    try:
        name, offset, header_line = _csv_head(path, table, lines)
    except BaseException:
        fh.close()
        raise
    if header_line is None:
        fh.close()
        return name, iter(())
    delimiter = ";" if header_line.count(";") > header_line.count(",") else ","
    reader = csv.reader(_chain(header_line, lines), delimiter=delimiter)
    header = [h.strip().lower() for h in next(reader)]
    header_no = offset + 1
    spec = _SPECS[name]
    where_header = f"{path.name}:{header_no}"
    for col in header:
        if col not in spec.accepted and col:
            report.add_warning(
                RowError(where_header, col, "coluna desconhecida, ignorada.")
            )
    missing = [c for c in _REQUIRED_COLUMNS[name] if c not in header]
    if missing:
        fh.close()
        report.add_error(
            RowError(
                where_header,
                ", ".join(missing),
                "coluna(s) obrigatória(s) ausente(s) no cabeçalho; nenhuma linha da tabela "
                "foi importada.",
            )
        )
        return name, iter(())

    def rows() -> Iterator[tuple[str, Mapping[str, Any]]]:
        consumed = reader.line_num  # physical lines read so far, header included
        try:
            while True:
                line_no = offset + consumed + 1
                try:
                    record = next(reader)
                except StopIteration:
                    return
                except csv.Error as exc:
                    raise RegistryImportError(
                        f"{path}:{line_no}: {exc}",
                        f"{path.name}:{line_no}: CSV ilegível ({exc}); arquivo recusado, "
                        "nada dele foi gravado.",
                    ) from None
                consumed = reader.line_num
                if not any(cell.strip() for cell in record):
                    continue
                if len(record) > len(header):
                    report.add_error(
                        RowError(
                            f"{path.name}:{line_no}",
                            "",
                            f"{len(record)} campos para {len(header)} colunas do cabeçalho.",
                        )
                    )
                    continue
                yield f"{path.name}:{line_no}", dict(zip(header, record, strict=False))
        finally:
            fh.close()

    return name, rows()


def _chain(first: str, rest: Iterator[str]) -> Iterator[str]:
    yield first
    yield from rest


def _csv_head(path: Path, table: str | None,
              lines: Iterator[str]) -> tuple[str, int, str | None]:
    """Leading comments and blank lines (the first comment may name the table): the table,
    how many lines came before the header, and the header line (None: no header)."""
    offset = 0
    named = None
    header_line = None
    for line in lines:
        stripped = line.strip()
        if stripped.startswith("#"):
            named = named or _comment_table(stripped)
        elif stripped:
            header_line = line
            break
        offset += 1
    chosen = table or named or path.stem
    name = _table_name(chosen)
    if name is None:
        raise RegistryImportError(
            f"{path}: cannot tell which table {chosen!r} is",
            f"{path.name}: tabela {chosen!r} desconhecida; indique-a com --table, com a "
            f"primeira linha '# table: vehicles' ou pelo nome do arquivo "
            f"({', '.join(_SPECS)}).",
        )
    return name, offset, header_line


_REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "permit_holders": ("id", "kind", "name", "permit_number", "permit_status", "pack_id"),
    "lines": ("id", "code", "name", "pack_id"),
    "vehicles": ("id", "plate", "pack_id"),
    "drivers": ("id", "name", "cpf"),
    "inspectors": ("id", "matricula", "name", "role"),
    "history": ("id", "rule_id", "date", "status"),
    "parameters": ("pack_id", "name"),
    "pack_versions": ("pack_id", "version", "content_hash"),
}


class _RepeatedKeyError(ValueError):
    pass


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _RepeatedKeyError(key)
        out[key] = value
    return out


def _json_tables(path: Path, report: ImportReport) -> list[tuple[str, list[tuple[str, Any]]]]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise _unreadable(path, exc) from None
    if size > MAX_JSON_BYTES:
        raise RegistryImportError(
            f"{path}: JSON file of {size} bytes is over the {MAX_JSON_BYTES} byte limit",
            f"{path.name}: arquivo JSON de {size // (1024 * 1024)} MiB; o limite é "
            f"{MAX_JSON_BYTES // (1024 * 1024)} MiB. Para cadastros grandes use CSV (uma "
            "tabela por arquivo, lido linha a linha).",
        )
    try:
        data = json.loads(_read_text(path), object_pairs_hook=_no_repeated_keys)
    except _RepeatedKeyError as exc:
        key = exc.args[0]
        where = (f"a tabela {key!r} aparece duas vezes" if key in _SPECS
                 else f"o campo {key!r} aparece duas vezes num mesmo objeto")
        raise RegistryImportError(
            f"{path}: key {key!r} appears twice in one object",
            f"{path.name}: {where}; arquivo recusado (só uma das ocorrências valeria).",
        ) from None
    except RecursionError:
        raise RegistryImportError(
            f"{path}: invalid JSON: nested too deeply",
            f"{path.name}: JSON aninhado demais; arquivo recusado.",
        ) from None
    except json.JSONDecodeError as exc:
        raise RegistryImportError(
            f"{path}: invalid JSON: {exc}",
            f"{path.name}: JSON inválido na linha {exc.lineno}, coluna {exc.colno}: {exc.msg}.",
        ) from None
    if not isinstance(data, dict):
        raise RegistryImportError(
            f"{path}: expected an object of tables",
            f"{path.name}: esperado um objeto com as tabelas ({', '.join(_SPECS)}).",
        )
    for key in data:
        if key not in _SPECS:
            report.add_error(
                RowError(key, "", f"tabela desconhecida, ignorada; use {', '.join(_SPECS)}.")
            )
    out = []
    for name in TABLE_ORDER:
        if name not in data:
            continue
        items = data[name]
        if not isinstance(items, list):
            report.add_error(RowError(name, "", "esperada uma lista de objetos."))
            continue
        out.append((name, [(f"{name}[{i}]", item) for i, item in enumerate(items)]))
    return out


def _json_rows(
    name: str, items: list[tuple[str, Any]], report: ImportReport
) -> Iterator[tuple[str, Mapping[str, Any]]]:
    unknown: set[str] = set()
    accepted = _SPECS[name].accepted
    for where, item in items:
        if not isinstance(item, dict):
            report.add_error(RowError(where, "", "esperado um objeto."))
            continue
        unknown.update(k for k in item if k not in accepted)
        yield where, item
    for key in sorted(unknown):
        report.add_warning(RowError(name, key, "campo desconhecido, ignorado."))


# --------------------------------------------------------------------------------------------
# Entry point


def _file_order(path: Path) -> tuple[int, str]:
    name = _table_name(path.stem)
    return (TABLE_ORDER.index(name) if name is not None else -1, path.name)


def import_registry(
    store: Store,
    path: Path,
    *,
    table: str | None = None,
    progress: ProgressCallback | None = None,
) -> ImportReport:
    """Import reference data from a CSV or JSON file (or a folder of them).

    ``table`` names the table of a CSV file (ignored for JSON); ``progress(table, n)`` is
    called after each row, good or bad.

    Returns the report; raises :class:`RegistryImportError` when a file as a whole cannot
    be read (nothing of that file is written) and :class:`StoreError` for a storage
    failure such as a full disk (the file's transaction is rolled back).
    """
    path = Path(path)
    store.require_writable()
    report = ImportReport(source=str(path))
    try:
        store.conn.execute(f"DROP TABLE IF EXISTS {_SEEN_TABLE}")
        store.conn.execute(
            f"CREATE TABLE {_SEEN_TABLE} (tbl TEXT NOT NULL, pk TEXT NOT NULL, at TEXT NOT "
            "NULL, PRIMARY KEY (tbl, pk)) WITHOUT ROWID"
        )
    except dbapi.Error as exc:
        raise translate_error(exc) from exc
    try:
        return _import_path(store, path, table, progress, report)
    finally:
        with contextlib.suppress(*dbapi.Error):
            store.conn.execute(f"DROP TABLE IF EXISTS {_SEEN_TABLE}")


def _import_path(store: Store, path: Path, table: str | None,
                 progress: ProgressCallback | None, report: ImportReport) -> ImportReport:
    if path.is_dir():
        files = sorted(
            (p for p in path.iterdir() if p.suffix.lower() in (".csv", ".json")), key=_file_order
        )
        if not files:
            raise RegistryImportError(
                f"{path}: no .csv or .json files", f"{path}: nenhum arquivo .csv ou .json."
            )
        for file in files:
            _import_file(store, file, None, progress, report)
        return report
    if not path.exists():
        raise RegistryImportError(f"{path}: no such file", f"{path}: arquivo não encontrado.")
    _import_file(store, path, table, progress, report)
    return report


def _import_file(
    store: Store,
    path: Path,
    table: str | None,
    progress: ProgressCallback | None,
    report: ImportReport,
) -> None:
    ctx = _Context(store, report)
    if path.suffix.lower() == ".json":
        loads = [
            (name, _json_rows(name, items, report)) for name, items in _json_tables(path, report)
        ]
    else:
        loads = [_csv_rows(path, table, report)]
    try:
        with store.atomic():
            for name, rows in loads:
                _load_rows(ctx, name, rows, progress)
            _mark(store)
    except dbapi.Error as exc:  # disk full, I/O error: the transaction is rolled back
        raise translate_error(exc) from exc


def _mark(store: Store) -> None:
    store.set_meta("registry_source", "import")
    store.set_meta("registry_updated_at", utc_now())
