"""The registry at HQ: importing reference data from CSV or JSON, row by row, and deleting
rows (published as tombstones).

Same file formats as the device's ``inspector registry import`` (the rows HQ publishes are
what devices store): a CSV names its table by ``--table``, a first-line comment
(``# table: vehicles``) or the file name; a JSON file is an object of tables; a folder is
every ``.csv`` and ``.json`` in it, tables in dependency order. Every row is validated on its
own with ``domain.identity`` (plates, CPF, CNPJ, CNH, RENAVAM): good rows are kept, bad rows
are reported with ``file:line``, field and reason, in Portuguese, never echoing a CPF or
CNH. Each file is one transaction. A row identical to the current one (``updated_at`` aside)
publishes nothing.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine

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
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.reference import (
    current_row,
    delete_row,
    history_holder_key,
    live_rows,
    upsert_row,
)
from inspector_app.hq.standing import publish_standings
from inspector_app.sync.protocol import REFERENCE_KEYS

TABLE_ORDER = ("permit_holders", "lines", "vehicles", "drivers", "inspectors", "history",
               "parameters", "pack_versions")

PERMIT_STATUSES = {"active": "ativa", "suspended": "suspensa", "revoked": "cassada",
                   "expired": "vencida"}
INSPECTOR_ROLES = frozenset({"inspector", "retention_desk", "supervisor"})
_HISTORY_STATUSES = frozenset({"upheld", "pending", "cancelled"})
_CNH_CATEGORIES = frozenset({"A", "B", "C", "D", "E", "AB", "AC", "AD", "AE"})
ARGON2ID_PREFIX = "$argon2id$"

# Columns of each table's rows as devices store them (``updated_at`` is added by HQ).
COLUMNS: dict[str, tuple[str, ...]] = {
    "permit_holders": ("id", "kind", "name", "cpf", "cnpj", "permit_number", "permit_status",
                       "permit_valid_until", "pack_id", "city", "ban_reason", "ban_from"),
    "lines": ("id", "code", "name", "pack_id", "route"),
    "vehicles": ("id", "plate", "plate_key", "renavam", "chassis", "make_model", "species",
                 "fleet_number", "chassis_year", "body_year", "seats", "doors", "category",
                 "uf", "holder_id", "line_id", "insurance_policy", "insurance_valid_until",
                 "last_vistoria", "pack_id"),
    "drivers": ("id", "name", "cpf", "cnh", "cnh_category", "cnh_valid_until", "holder_id",
                "role", "registered"),
    "inspectors": ("id", "matricula", "name", "role", "password_hash", "organ", "active"),
    "history": ("id", "holder_id", "plate_key", "rule_id", "date", "status", "points",
                "auto_number"),
    "parameters": ("pack_id", "name", "value_json"),
    "pack_versions": ("pack_id", "version", "content_hash", "published_at"),
}
_WITH_UPDATED_AT = frozenset(TABLE_ORDER) - {"pack_versions"}
_EXTRA_INPUT = {"inspectors": {"password"}, "history": {"plate"}, "parameters": {"value"}}
_REQUIRED_HEADER: dict[str, tuple[str, ...]] = {
    "permit_holders": ("id", "kind", "name", "permit_number", "permit_status", "pack_id"),
    "lines": ("id", "code", "name", "pack_id"),
    "vehicles": ("id", "plate", "pack_id"),
    "drivers": ("id", "name", "cpf"),
    "inspectors": ("id", "matricula", "name", "role"),
    "history": ("id", "rule_id", "date", "status"),
    "parameters": ("pack_id", "name"),
    "pack_versions": ("pack_id", "version", "content_hash"),
}


# Reference tables HQ publishes but never takes from a file: they are HQ's own results.
NOT_IMPORTED: dict[str, str] = {
    "standing": "a situação dos permissionários (pontos, reincidência, cassação) é calculada "
                "pela sede a partir dos autos recebidos e não se importa nem se apaga por "
                "arquivo",
}


def _not_imported(text: str) -> str | None:
    """Why ``text`` names a table that cannot be imported (None for any other name)."""
    return NOT_IMPORTED.get(text.strip().lower().replace("-", "_").removeprefix("ref_"))


class RegistryError(ValueError):
    """A file (or request) that cannot be used as a whole; nothing of it was written."""


@dataclass(frozen=True)
class RowError:
    where: str
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.field}: {self.message}" if self.field else (
            f"{self.where}: {self.message}")


@dataclass
class ImportReport:
    source: str
    published: dict[str, int] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    errors: list[RowError] = field(default_factory=list)
    warnings: list[RowError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def lines(self) -> list[str]:
        kept = ", ".join(f"{t}: {n}" for t, n in self.published.items()) or "nenhuma"
        same = sum(self.unchanged.values())
        out = [f"{self.source}: linhas publicadas – {kept}; sem alteração: {same}."]
        out += [f"ERRO {e}" for e in self.errors]
        out += [f"AVISO {w}" for w in self.warnings]
        if self.errors:
            out.append(f"{len(self.errors)} linha(s) recusada(s); as demais foram importadas.")
        return out


# --- field readers ----------------------------------------------------------------------------


# --- row validators ---------------------------------------------------------------------------


class _Context:
    def __init__(self, conn: Connection, report: ImportReport) -> None:
        self.conn = conn
        self.report = report
        self.where = ""
        self._unique: dict[tuple[str, str], dict[str, str]] = {}

    def warn(self, name: str, message: str) -> None:
        self.report.warnings.append(RowError(self.where, name, message))

    def exists(self, table: str, key: str) -> bool:
        return current_row(self.conn, table, key) is not None

    def holder(self, row: Mapping[str, Any], *, required: bool = False) -> str | None:
        holder_id = _text(row, "holder_id", required=required)
        if holder_id is not None and not self.exists("permit_holders", holder_id):
            raise _FieldError("holder_id", f"permissionário {holder_id!r} não existe.")
        return holder_id

    def owner(self, table: str, column: str, value: str) -> str | None:
        """Id of the live row of ``table`` whose ``column`` is ``value`` (index built once)."""
        index = self._unique.get((table, column))
        if index is None:
            index = {str(r[column]): str(r["id"]) for r in live_rows(self.conn, table)
                     if r.get(column) is not None}
            self._unique[(table, column)] = index
        return index.get(value)

    def claim(self, table: str, column: str, value: str, row_id: str) -> None:
        self.owner(table, column, value)
        self._unique[(table, column)][value] = row_id


def _ban(row: Mapping[str, Any]) -> dict[str, Any]:
    """Ban on a new permission (Decreto 15.154/1993 arts. 12 §ú, 39 §ú, 16 §2): the rule is
    ``domain.bans.ban_columns``, shared with the other registry import."""
    try:
        return ban_columns(_text(row, "ban_reason"), _date(row, "ban_from"), legal_today())
    except BanFieldError as exc:
        raise _FieldError(exc.field, exc.message) from None


def _permit_holder(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    kind = _choice(row, "kind", frozenset({"pf", "pj"}))
    cpf = _identity("cpf", normalize_cpf, _text(row, "cpf"))
    cnpj = _identity("cnpj", normalize_cnpj, _text(row, "cnpj"))
    if kind == "pf" and cpf is None:
        raise _FieldError("cpf", "pessoa física (kind=pf) exige CPF.")
    if kind == "pj" and cnpj is None:
        raise _FieldError("cnpj", "pessoa jurídica (kind=pj) exige CNPJ.")
    status = _required(row, "permit_status").lower()
    aliases = {**{k: k for k in PERMIT_STATUSES}, **{v: k for k, v in PERMIT_STATUSES.items()}}
    if status not in aliases:
        raise _FieldError("permit_status", f"situação {status!r} desconhecida; use "
                          f"{', '.join(PERMIT_STATUSES)}.")
    return {"id": _required(row, "id"), "kind": kind, "name": _required(row, "name"),
            "cpf": cpf, "cnpj": cnpj, "permit_number": _required(row, "permit_number"),
            "permit_status": aliases[status],
            "permit_valid_until": _date(row, "permit_valid_until"),
            **_ban(row),
            "pack_id": _required(row, "pack_id"), "city": _text(row, "city")}


def _line(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    return {"id": _required(row, "id"), "code": _required(row, "code"),
            "name": _required(row, "name"), "pack_id": _required(row, "pack_id"),
            "route": _text(row, "route")}


def _vehicle(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    vehicle_id = _required(row, "id")
    try:
        plate = parse_plate(_required(row, "plate"))
    except IdentityError as exc:
        raise _FieldError("plate", exc.message) from None
    key = plate.canonical_key()
    given = _text(row, "plate_key")
    if given is not None and _identity(
        "plate_key", lambda t: parse_plate(t).canonical_key(), given
    ) != key:
        raise _FieldError("plate_key", f"chave {given!r} não corresponde à placa {plate.text}.")
    other = ctx.owner("vehicles", "plate_key", key)
    if other is not None and other != vehicle_id:
        raise _FieldError("plate", f"placa {plate.text} já cadastrada para o veículo {other!r}.")
    line_id = _text(row, "line_id")
    if line_id is not None and not ctx.exists("lines", line_id):
        raise _FieldError("line_id", f"linha {line_id!r} não existe.")
    year_max = dt.date.today().year + 1
    chassis = _text(row, "chassis")
    clean = {
        "id": vehicle_id, "plate": plate.text, "plate_key": key,
        "renavam": _identity("renavam", normalize_renavam, _text(row, "renavam")),
        "chassis": None if chassis is None else chassis.replace(" ", "").upper(),
        "make_model": _text(row, "make_model"), "species": _text(row, "species"),
        "fleet_number": _text(row, "fleet_number"),
        "chassis_year": _int(row, "chassis_year", 1950, year_max),
        "body_year": _int(row, "body_year", 1950, year_max),
        "seats": _int(row, "seats", 1, 200), "doors": _int(row, "doors", 0, 20),
        "category": _text(row, "category"), "uf": (_text(row, "uf") or "").upper() or None,
        "holder_id": ctx.holder(row), "line_id": line_id,
        "insurance_policy": _text(row, "insurance_policy"),
        "insurance_valid_until": _date(row, "insurance_valid_until"),
        "last_vistoria": _date(row, "last_vistoria"), "pack_id": _required(row, "pack_id"),
    }
    ctx.claim("vehicles", "plate_key", key, vehicle_id)
    return clean


def _driver(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    cpf = _identity("cpf", normalize_cpf, _required(row, "cpf"))
    cnh = None
    cnh_text = _text(row, "cnh")
    if cnh_text is not None:
        try:
            check = check_cnh(cnh_text)
        except IdentityError as exc:
            raise _FieldError("cnh", exc.message) from None
        cnh = check.number
        if not check.valid:
            ctx.warn("cnh", f"{check.message} Linha mantida.")
    category = _text(row, "cnh_category")
    if category is not None and category.upper() not in _CNH_CATEGORIES:
        raise _FieldError("cnh_category", f"categoria {category!r} inválida.")
    return {"id": _required(row, "id"), "name": _required(row, "name"), "cpf": cpf, "cnh": cnh,
            "cnh_category": category.upper() if category else None,
            "cnh_valid_until": _date(row, "cnh_valid_until"), "holder_id": ctx.holder(row),
            "role": _text(row, "role") or "motorista", "registered": _bool(row, "registered", 1)}


def _inspector(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    if _text(row, "password") is not None:
        raise _FieldError("password", "senha em texto puro recusada: use password_hash "
                          "argon2id (ou `inspector-hq inspector add`).")
    password_hash = _required(row, "password_hash")
    if not password_hash.startswith(ARGON2ID_PREFIX):
        raise _FieldError("password_hash", "não é um hash argon2id ($argon2id$…).")
    inspector_id = _required(row, "id")
    matricula = _required(row, "matricula")
    other = ctx.owner("inspectors", "matricula", matricula)
    if other is not None and other != inspector_id:
        raise _FieldError("matricula", f"matrícula {matricula} já pertence a {other!r}.")
    clean = {"id": inspector_id, "matricula": matricula, "name": _required(row, "name"),
             "role": _choice(row, "role", INSPECTOR_ROLES), "password_hash": password_hash,
             "organ": _text(row, "organ"), "active": _bool(row, "active", 1)}
    ctx.claim("inspectors", "matricula", matricula, inspector_id)
    return clean


def _history(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    name = "plate" if _text(row, "plate") is not None else "plate_key"
    key = _identity(name, lambda t: parse_plate(t).canonical_key(), _text(row, name))
    holder_id = ctx.holder(row)
    if holder_id is None and key is None:
        raise _FieldError("holder_id", "informe holder_id ou a placa (plate / plate_key).")
    return {"id": _required(row, "id"), "holder_id": holder_id, "plate_key": key,
            "rule_id": _required(row, "rule_id"), "date": _date(row, "date", required=True),
            "status": _choice(row, "status", _HISTORY_STATUSES),
            "points": _int(row, "points", 0, 1000), "auto_number": _text(row, "auto_number")}


def _parameter(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    raw = row.get("value_json")
    if isinstance(raw, str) and raw.strip():
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
    return {"pack_id": _required(row, "pack_id"), "name": _required(row, "name"),
            "value_json": value_json}


def _pack_version(row: Mapping[str, Any], ctx: _Context) -> dict[str, Any]:
    content_hash = _required(row, "content_hash").lower()
    if not re.fullmatch(r"[0-9a-f]{64}", content_hash):
        raise _FieldError("content_hash", "esperado SHA-256 em hexadecimal (64 caracteres).")
    return {"pack_id": _required(row, "pack_id"), "version": _required(row, "version"),
            "content_hash": content_hash, "published_at": _text(row, "published_at")}


_VALIDATORS: dict[str, Callable[[Mapping[str, Any], _Context], dict[str, Any]]] = {
    "permit_holders": _permit_holder, "lines": _line, "vehicles": _vehicle, "drivers": _driver,
    "inspectors": _inspector, "history": _history, "parameters": _parameter,
    "pack_versions": _pack_version,
}


def publish_row(conn: Connection, table: str, row: Mapping[str, Any], *,
                updated_at: str | None = None) -> bool:
    """Publish ``row`` unless it equals the current one (``updated_at`` aside)."""
    clean = dict(row)
    current = current_row(conn, table, "|".join(str(clean[c]) for c in REFERENCE_KEYS[table]))
    if current is not None:
        current.pop("updated_at", None)
        if current == clean:
            return False
    if table in _WITH_UPDATED_AT:
        clean["updated_at"] = updated_at or utc_now()
    return upsert_row(conn, table, clean) is not None


# --- readers ----------------------------------------------------------------------------------


def _table_name(text: str) -> str | None:
    name = text.strip().lower().replace("-", "_").removeprefix("ref_")
    if name in COLUMNS:
        return name
    return next((t for t in sorted(COLUMNS, key=len, reverse=True) if name.startswith(t)), None)


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RegistryError(
            f"{path.name}: o arquivo não está em UTF-8 (byte {exc.start})."
        ) from None
    except OSError as exc:
        raise RegistryError(
            f"{path.name}: não foi possível ler o arquivo ({exc.strerror})."
        ) from None


Rows = Iterator[tuple[str, Mapping[str, Any]]]


def _csv(path: Path, table: str | None, report: ImportReport) -> list[tuple[str, Rows]]:
    lines = _read_text(path).splitlines(keepends=True)
    offset, named = 0, None
    while offset < len(lines):
        stripped = lines[offset].strip()
        if stripped and not stripped.startswith("#"):
            break
        comment = stripped.lstrip("#").strip()
        match = re.fullmatch(r"(?:table|tabela)\s*[:=]\s*(\S+)", comment, flags=re.IGNORECASE)
        named = named or (match.group(1) if match else None)
        offset += 1
    chosen = table or named or path.stem
    if (why := _not_imported(chosen)) is not None:
        raise RegistryError(f"{path.name}: tabela {chosen!r}: {why}.")
    name = _table_name(chosen)
    if name is None:
        raise RegistryError(f"{path.name}: tabela {chosen!r} desconhecida; use --table, "
                            f"'# table: …' ou o nome do arquivo ({', '.join(COLUMNS)}).")
    if offset >= len(lines):
        return [(name, iter(()))]
    header_line = lines[offset]
    reader = csv.reader(lines[offset:],
                        delimiter=";" if header_line.count(";") > header_line.count(",") else ",")
    header = [h.strip().lower() for h in next(reader)]
    where_header = f"{path.name}:{offset + 1}"
    for col in header:
        if col and col not in COLUMNS[name] and col not in _EXTRA_INPUT.get(name, set()) | {
                "updated_at"}:
            report.warnings.append(RowError(where_header, col, "coluna desconhecida, ignorada."))
    missing = [c for c in _REQUIRED_HEADER[name] if c not in header]
    if missing:
        report.errors.append(RowError(where_header, ", ".join(missing),
                                      "coluna(s) obrigatória(s) ausente(s); nenhuma linha da "
                                      "tabela foi importada."))
        return [(name, iter(()))]

    def rows() -> Rows:
        consumed = reader.line_num
        for record in reader:
            line_no = offset + consumed + 1
            consumed = reader.line_num
            if not any(cell.strip() for cell in record):
                continue
            if len(record) > len(header):
                report.errors.append(RowError(f"{path.name}:{line_no}", "",
                                              f"{len(record)} campos para {len(header)} colunas."))
                continue
            yield f"{path.name}:{line_no}", dict(zip(header, record, strict=False))

    return [(name, rows())]


def _json(path: Path, report: ImportReport) -> list[tuple[str, Rows]]:
    try:
        data = json.loads(_read_text(path))
    except json.JSONDecodeError as exc:
        raise RegistryError(
            f"{path.name}: JSON inválido na linha {exc.lineno}: {exc.msg}."
        ) from None
    if not isinstance(data, dict):
        raise RegistryError(f"{path.name}: esperado um objeto com as tabelas.")
    for key in data:
        if (why := _not_imported(key)) is not None:
            report.errors.append(RowError(key, "", f"{why}; ignorada."))
        elif key not in COLUMNS:
            report.errors.append(RowError(key, "", "tabela desconhecida, ignorada."))
    out: list[tuple[str, Rows]] = []
    for name in TABLE_ORDER:
        items = data.get(name)
        if items is None:
            continue
        if not isinstance(items, list):
            report.errors.append(RowError(name, "", "esperada uma lista de objetos."))
            continue

        def rows(name: str = name, items: list[Any] = items) -> Rows:
            for i, item in enumerate(items):
                if isinstance(item, dict):
                    yield f"{name}[{i}]", item
                else:
                    report.errors.append(RowError(f"{name}[{i}]", "", "esperado um objeto."))

        out.append((name, rows()))
    return out


# --- entry points -----------------------------------------------------------------------------


def import_registry(engine: Engine, path: Path, *, table: str | None = None) -> ImportReport:
    """Import (and publish) reference data from a CSV or JSON file, or a folder of them."""
    path = Path(path)
    report = ImportReport(source=str(path))
    if path.is_dir():
        files = sorted((p for p in path.iterdir() if p.suffix.lower() in (".csv", ".json")),
                       key=lambda p: (TABLE_ORDER.index(n) if (n := _table_name(p.stem)) else -1,
                                      p.name))
        if not files:
            raise RegistryError(f"{path}: nenhum arquivo .csv ou .json.")
        for file in files:
            _import_file(engine, file, None, report)
    elif not path.exists():
        raise RegistryError(f"{path}: arquivo não encontrado.")
    else:
        _import_file(engine, path, table, report)
    return report


def _import_file(engine: Engine, path: Path, table: str | None, report: ImportReport) -> None:
    loads = _json(path, report) if path.suffix.lower() == ".json" else _csv(path, table, report)
    with engine.begin() as conn:
        ctx = _Context(conn, report)
        holders: set[str] = set()  # whose history changed: their standing is recomputed
        for name, rows in loads:
            report.published.setdefault(name, 0)
            report.unchanged.setdefault(name, 0)
            for where, row in rows:
                ctx.where = where
                try:
                    clean = _VALIDATORS[name](row, ctx)
                except _FieldError as exc:
                    report.errors.append(RowError(where, exc.field, exc.message))
                    continue
                before = current_row(conn, name, clean["id"]) if name == "history" else None
                stamp = _text(row, "updated_at")
                if publish_row(conn, name, clean, updated_at=stamp):
                    report.published[name] += 1
                    if name == "history":
                        holders.update(k for k in (history_holder_key(clean),
                                                   before and history_holder_key(before)) if k)
                else:
                    report.unchanged[name] += 1
        _restate(conn, holders)


def _restate(conn: Connection, holders: set[str]) -> None:
    """Recompute the standing of ``holders`` after an administrator changed their history
    (an auto upheld or cancelled by the authority, a past infraction imported), with the
    point windows of the holder's pack (a plate without a holder: the default windows)."""
    if not holders:
        return
    packs: dict[str, str | None] = {}
    for key in holders:
        holder = None if key.startswith("plate:") else current_row(conn, "permit_holders", key)
        packs[key] = holder.get("pack_id") if holder else None
    publish_standings(conn, packs)


# Who may point at a row: deleting it while they do would orphan them on every device.
_REFERRERS = {
    "permit_holders": (("vehicles", "holder_id"), ("drivers", "holder_id"),
                       ("history", "holder_id")),
    "lines": (("vehicles", "line_id"),),
}


def delete_reference(engine: Engine, table: str, key: str) -> None:
    """Delete row ``key`` of ``table`` (a tombstone every device applies)."""
    if (why := _not_imported(table)) is not None:
        raise RegistryError(f"tabela {table!r}: {why}.")
    if table not in COLUMNS:
        raise RegistryError(f"tabela {table!r} desconhecida; use {', '.join(COLUMNS)}.")
    with engine.begin() as conn:
        if current_row(conn, table, key) is None:
            raise RegistryError(f"{table}: não há linha com a chave {key!r}.")
        for other, column in _REFERRERS.get(table, ()):
            user = next((r["id"] for r in live_rows(conn, other) if r.get(column) == key), None)
            if user is not None:
                raise RegistryError(f"{table} {key!r} ainda é referido por {other} {user!r}; "
                                    "apague ou altere esse registro antes.")
        gone = current_row(conn, table, key) if table == "history" else None
        delete_row(conn, table, key)
        if gone is not None and (holder := history_holder_key(gone)) is not None:
            _restate(conn, {holder})
