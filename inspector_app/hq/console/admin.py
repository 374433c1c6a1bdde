"""The Administração area's services (issue 15 part C): pure SQLAlchemy over HQ's modules,
no web. Every function checks what a form sent as hostile (wrong types, sizes, dates such
as 2099) against the limits in ``hq/core/limits.py`` and raises :class:`AdminError` with a
Portuguese message; nothing is written when it refuses.

* devices: an enrolment code shown with its QR code (``sync.protocol.enrolment_uri``:
  the HQ address and the code, which the desktop reads from a photo), revocation
  (``hq/devices.py``);
* number ranges: allocation (``hq/numbering.py``) and usage;
* agents: add, disable, reset password (``hq/inspectors.py``: the registry's
  ``inspectors`` table, argon2id, published to devices);
* registry import of an uploaded file (``hq/registry.py``), its row errors kept as a CSV;
* pack versions in force and the dated parameters – tariff (``tables.tariff_brl``),
  minimum wage (``tables.minimum_wage_brl``), calendar exceptions
  (``calendar.exceptions``) – each value with the legal act that set it, published to
  devices through the pull log (the ``parameters`` and ``pack_versions`` reference tables).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import segno
from sqlalchemy import Connection, Engine, insert, select

from inspector_app.domain.calendar_exceptions import (
    CALENDAR_EXCEPTIONS_PARAMETER,
    parse_exceptions,
)
from inspector_app.domain.legaltime import legal_today
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.core.limits import (
    EARLIEST_LEGAL_YEAR,
    IMPORT_PROBLEMS_SHOWN,
    MAX_CODE_TTL_MINUTES,
    MAX_IMPORT_PROBLEMS_KEPT,
    MAX_MONEY,
    MAX_RANGE_SIZE,
    MAX_REGISTRY_UPLOAD,
    PARAMETER_DAYS_AHEAD,
)
from inspector_app.hq.devices import DeviceError, create_enrolment_code, get_device, revoke_device
from inspector_app.hq.inspectors import (
    add_inspector,
    disable_inspector,
    list_inspectors,
    reset_inspector_password,
)
from inspector_app.hq.numbering import (
    AllocatedRange,
    RangeError,
    account,
    allocate_next,
    allocate_range,
)
from inspector_app.hq.reference import current_row, live_rows
from inspector_app.hq.registry import (
    COLUMNS,
    INSPECTOR_ROLES,
    ImportReport,
    RegistryError,
    import_registry,
    publish_row,
)
from inspector_app.hq.tables import registry_imports
from inspector_app.sync.protocol import NUMBER_MAX, SERIES_PATTERN, enrolment_uri

ROLE_LABELS = {"inspector": "agente", "retention_desk": "balcão de retenção",
               "supervisor": "supervisor"}
PACK_ID_PATTERN = r"[A-Z][A-Z0-9_]{1,39}"
DATED_TABLES = {"tariff_brl": "Tarifa de referência (R$)",
                "minimum_wage_brl": "Salário mínimo (R$)"}
CALENDAR_KINDS = {"closed": "sem expediente", "early_close": "encerra mais cedo",
                  "late_open": "abre mais tarde"}
MAX_TEXT = 300


# Called with the connection of the change, so its audit row commits with it.
Audit = Callable[[Connection], None] | None


def _audit(conn: Connection, audit: Audit) -> None:
    if audit is not None:
        audit(conn)


class AdminError(ValueError):
    """A form the administrator sent that cannot be done; the message is for the screen."""


# --- field readers ----------------------------------------------------------------------------


def text_field(value: object, label: str, *, required: bool = True,
               max_chars: int = MAX_TEXT) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise AdminError(f"Informe {label}.")
        return ""
    if not isinstance(value, str):
        raise AdminError(f"{label[0].upper()}{label[1:]}: valor inválido.")
    text = " ".join(value.split())
    if any(ord(c) < 32 or ord(c) == 127 or 0x202A <= ord(c) <= 0x202E
           or 0x2066 <= ord(c) <= 0x2069 for c in value if c not in "\t\n\r"):
        raise AdminError(f"{label[0].upper()}{label[1:]}: caracteres de controle recusados.")
    if len(text) > max_chars:
        raise AdminError(f"{label[0].upper()}{label[1:]}: no máximo {max_chars} caracteres.")
    return text


def int_field(value: object, label: str, low: int, high: int) -> int:
    text = value.strip() if isinstance(value, str) else value
    if isinstance(text, bool) or not isinstance(text, int | str) or (
            isinstance(text, str) and not re.fullmatch(r"\d{1,19}", text)):
        raise AdminError(f"{label}: informe um número inteiro de {low} a {high}.")
    number = int(text)
    if not low <= number <= high:
        raise AdminError(f"{label}: informe um número inteiro de {low} a {high}.")
    return number


def date_field(value: object, label: str, *, low: dt.date, high: dt.date) -> dt.date:
    """A date typed dd/mm/aaaa or sent by a date input (aaaa-mm-dd), within low..high."""
    if not isinstance(value, str) or not value.strip():
        raise AdminError(f"Informe {label}.")
    text = value.strip()
    try:
        if re.fullmatch(r"\d{2}/\d{2}/\d{4}", text):
            day = dt.datetime.strptime(text, "%d/%m/%Y").date()
        elif re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            day = dt.date.fromisoformat(text)
        else:
            raise ValueError
    except ValueError:
        raise AdminError(f"{label[0].upper()}{label[1:]}: data inválida (use dd/mm/aaaa).") \
            from None
    if not low <= day <= high:
        raise AdminError(f"{label[0].upper()}{label[1:]}: {day:%d/%m/%Y} fora do período "
                         f"aceito ({low:%d/%m/%Y} a {high:%d/%m/%Y}).")
    return day


def pack_field(value: object) -> str:
    text = text_field(value, "o regulamento", max_chars=40).upper()
    if not re.fullmatch(PACK_ID_PATTERN, text):
        raise AdminError("Regulamento inválido (ex.: DF_STPCR).")
    return text


@dataclass(frozen=True)
class LegalAct:
    """The act that set a value: its number (``Decreto nº 45.123``) and date."""

    number: str
    date: dt.date

    @property
    def text(self) -> str:
        return f"{self.number}, de {self.date:%d/%m/%Y}"


def legal_act(number: object, date: object, today: dt.date | None = None) -> LegalAct:
    """Number and date of the legal act, both required; an act is dated in the past."""
    day = today or legal_today()
    return LegalAct(text_field(number, "o número do ato legal (ex.: Decreto nº 45.123)",
                               max_chars=120),
                    date_field(date, "a data do ato legal",
                               low=dt.date(EARLIEST_LEGAL_YEAR, 1, 1), high=day))


# --- devices ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Enrolment:
    code: str
    uri: str
    hq_url: str
    series: str
    range_size: int
    expires_minutes: int
    qr_svg: str

    @property
    def qr_png(self) -> bytes:
        out = io.BytesIO()
        segno.make(self.uri, error="m").save(out, kind="png", scale=8, border=4)
        return out.getvalue()


def qr_svg(data: str) -> str:
    """An inline SVG QR code (black on white, 4-module quiet zone) with a title."""
    out = io.BytesIO()
    segno.make(data, error="m").save(out, kind="svg", scale=6, border=4, xmldecl=False,
                                     svgns=True, title="Código QR de cadastro",
                                     svgclass="qr", lineclass=None)
    return out.getvalue().decode("utf-8")


def new_enrolment(engine: Engine, *, hq_url: str, series: object = "AI",
                  range_size: object = 1000, ttl_minutes: object = 60) -> Enrolment:
    """A one-time enrolment code with its QR code carrying the HQ address."""
    series_text = text_field(series, "a série", max_chars=40)
    if not re.fullmatch(SERIES_PATTERN, series_text):
        raise AdminError("Série inválida: use letras, dígitos, '.', '_' ou '-' (até 40).")
    size = int_field(range_size, "Tamanho da faixa", 1, MAX_RANGE_SIZE)
    ttl = int_field(ttl_minutes, "Validade (minutos)", 1, MAX_CODE_TTL_MINUTES)
    if not hq_url.startswith(("https://", "http://")):
        raise AdminError("Endereço da sede inválido: configure HQ_PUBLIC_URL.")
    try:
        code = create_enrolment_code(engine, ttl_minutes=ttl, series=series_text,
                                     range_size=size)
    except DeviceError as exc:
        raise AdminError(str(exc)) from None
    uri = enrolment_uri(hq_url.rstrip("/"), code)
    return Enrolment(code=code, uri=uri, hq_url=hq_url.rstrip("/"), series=series_text,
                     range_size=size, expires_minutes=ttl, qr_svg=qr_svg(uri))


def revoke(engine: Engine, device_id: object) -> str:
    """Revoke a device; returns its name."""
    ident = text_field(device_id, "o dispositivo", max_chars=36)
    device = get_device(engine, ident)
    if device is None:
        raise AdminError("Dispositivo inexistente.")
    if device.revoked:
        raise AdminError(f"O dispositivo {device.name} já foi revogado em "
                         f"{device.revoked_at[:10] if device.revoked_at else ''}.")
    revoke_device(engine, ident)
    return device.name


# --- number ranges ----------------------------------------------------------------------------


def allocate(engine: Engine, *, device_id: object, series: object, size: object = "",
             first: object = "", last: object = "", audit: Audit = None) -> AllocatedRange:
    """A new range for a device: ``size`` numbers after every range of the series, or
    exactly ``first..last``."""
    ident = text_field(device_id, "o dispositivo", max_chars=36)
    series_text = text_field(series, "a série", max_chars=40)
    explicit = any(isinstance(v, str) and v.strip() for v in (first, last))
    with engine.begin() as conn:
        try:
            if explicit:
                low = int_field(first, "Primeiro número", 1, NUMBER_MAX)
                high = int_field(last, "Último número", 1, NUMBER_MAX)
                if high < low or high - low + 1 > MAX_RANGE_SIZE:
                    raise AdminError(f"Faixa inválida: o último número deve ser ≥ o primeiro, "
                                     f"no máximo {MAX_RANGE_SIZE} números.")
                made = allocate_range(conn, device_id=ident, series=series_text, first=low,
                                      last=high)
            else:
                count = int_field(size, "Tamanho da faixa", 1, MAX_RANGE_SIZE)
                made = allocate_next(conn, device_id=ident, series=series_text, size=count)
            _audit(conn, audit)
            return made
        except RangeError as exc:
            raise AdminError(_sentence(str(exc))) from None


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def device_usage(engine: Engine, device_id: str) -> list[Any]:
    return account(engine, device_id=device_id)


# --- agents -----------------------------------------------------------------------------------


def agents(conn: Connection) -> list[dict[str, Any]]:
    return list_inspectors(conn)


def add_agent(engine: Engine, *, matricula: object, name: object, role: object,
              password: object, organ: object = "") -> str:
    mat = text_field(matricula, "a matrícula", max_chars=40)
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,40}", mat):
        raise AdminError("Matrícula inválida: use letras, dígitos, '.', '_' ou '-'.")
    full_name = text_field(name, "o nome", max_chars=200)
    if role not in INSPECTOR_ROLES:
        raise AdminError("Escolha o papel do agente.")
    if not isinstance(password, str) or len(password) > 200:
        raise AdminError("Senha inválida.")
    organ_text = text_field(organ, "o órgão", required=False, max_chars=40) or None
    with engine.connect() as conn:
        if any(r.get("matricula") == mat for r in live_rows(conn, "inspectors")):
            raise AdminError(f"Já existe agente com a matrícula {mat}: use “Nova senha” ou "
                             "“Desativar”.")
    try:
        return add_inspector(engine, matricula=mat, name=full_name, role=str(role),
                             password=password, organ=organ_text)
    except RegistryError as exc:
        raise AdminError(_sentence(str(exc))) from None


def disable_agent(engine: Engine, matricula: object) -> None:
    mat = text_field(matricula, "a matrícula", max_chars=40)
    try:
        if not disable_inspector(engine, matricula=mat):
            raise AdminError(f"O agente {mat} já está desativado.")
    except RegistryError as exc:
        raise AdminError(_sentence(str(exc))) from None


def reset_agent_password(engine: Engine, matricula: object, password: object,
                         confirmation: object) -> None:
    mat = text_field(matricula, "a matrícula", max_chars=40)
    if not isinstance(password, str) or len(password) > 200:
        raise AdminError("Senha inválida.")
    if password != confirmation:
        raise AdminError("A confirmação não confere com a nova senha.")
    try:
        reset_inspector_password(engine, matricula=mat, password=password)
    except RegistryError as exc:
        raise AdminError(_sentence(str(exc))) from None


# --- registry import --------------------------------------------------------------------------


@dataclass(frozen=True)
class ImportResult:
    id: int
    filename: str
    published: dict[str, int]
    unchanged: int
    errors: list[tuple[str, str, str]]
    warnings: list[tuple[str, str, str]]
    error_count: int
    warning_count: int


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def problems_csv(report: ImportReport) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter=";", lineterminator="\r\n")
    writer.writerow(["tipo", "local", "campo", "mensagem"])
    rows = [("erro", e) for e in report.errors] + [("aviso", w) for w in report.warnings]
    for kind, problem in rows[:MAX_IMPORT_PROBLEMS_KEPT]:
        writer.writerow([kind, _cell(problem.where), _cell(problem.field),
                         _cell(problem.message)])
    if len(rows) > MAX_IMPORT_PROBLEMS_KEPT:
        writer.writerow(["aviso", "", "", f"mais {len(rows) - MAX_IMPORT_PROBLEMS_KEPT} "
                         "problema(s) não listados"])
    return out.getvalue()


def _safe_filename(name: object) -> str:
    if not isinstance(name, str) or not name.strip():
        raise AdminError("Escolha o arquivo do cadastro (.csv ou .json).")
    base = re.split(r"[\\/]", name.strip())[-1]
    stem, dot, ext = base.rpartition(".")
    if not dot or ext.lower() not in ("csv", "json"):
        raise AdminError("O arquivo deve ser .csv ou .json.")
    clean = re.sub(r"[^A-Za-z0-9_-]+", "_", stem).strip("_")[:80] or "cadastro"
    return f"{clean}.{ext.lower()}"


def import_upload(engine: Engine, *, filename: object, data: object, table: object = "",
                  staff_login: str, audit: Audit = None) -> ImportResult:
    """Import an uploaded registry file (at most :data:`MAX_REGISTRY_UPLOAD` bytes): good
    rows published, bad rows listed with their line and reason; the result and its
    problems CSV are kept in ``registry_imports``."""
    safe = _safe_filename(filename)
    if not isinstance(data, bytes):
        raise AdminError("Arquivo inválido.")
    if not data.strip():
        raise AdminError("O arquivo enviado está vazio.")
    if len(data) > MAX_REGISTRY_UPLOAD:
        raise AdminError(f"O arquivo passa de {MAX_REGISTRY_UPLOAD // (1024 * 1024)} MiB; "
                         "divida-o em partes.")
    chosen = text_field(table, "a tabela", required=False, max_chars=40) or None
    if chosen is not None and chosen not in COLUMNS:
        raise AdminError("Tabela desconhecida.")
    with tempfile.TemporaryDirectory(prefix="hq-registry-") as folder:
        path = Path(folder) / safe
        path.write_bytes(data)
        try:
            report = import_registry(engine, path, table=chosen)
        except RegistryError as exc:
            raise AdminError(_sentence(str(exc))) from None
    published = {t: n for t, n in report.published.items() if n}
    summary = {"published": published, "unchanged": report.unchanged}
    with engine.begin() as conn:
        ident = conn.execute(insert(registry_imports).values(
            at=utc_now(), staff_login=staff_login[:80], filename=safe, size=len(data),
            sha256=hashlib.sha256(data).hexdigest(), published=sum(published.values()),
            unchanged=sum(report.unchanged.values()), error_count=len(report.errors),
            warning_count=len(report.warnings), summary=json.dumps(summary),
            problems_csv=problems_csv(report))).inserted_primary_key
        _audit(conn, audit)
    assert ident is not None
    return ImportResult(
        id=int(ident[0]), filename=safe, published=published,
        unchanged=sum(report.unchanged.values()),
        errors=[(e.where, e.field, e.message) for e in report.errors[:IMPORT_PROBLEMS_SHOWN]],
        warnings=[(w.where, w.field, w.message)
                  for w in report.warnings[:IMPORT_PROBLEMS_SHOWN]],
        error_count=len(report.errors), warning_count=len(report.warnings))


def import_problems(conn: Connection, import_id: object) -> tuple[str, str] | None:
    """(file name, problems CSV) of an earlier import, None when there is none."""
    try:
        ident = int(str(import_id))
    except ValueError:
        return None
    row = conn.execute(select(registry_imports.c.filename, registry_imports.c.problems_csv)
                       .where(registry_imports.c.id == ident)).first()
    return None if row is None else (row.filename, row.problems_csv)


def recent_imports(conn: Connection, limit: int = 10) -> list[Any]:
    return list(conn.execute(select(registry_imports).order_by(registry_imports.c.id.desc())
                             .limit(limit)).all())


# --- pack versions and dated parameters -------------------------------------------------------


def _bounds(today: dt.date) -> tuple[dt.date, dt.date]:
    return dt.date(EARLIEST_LEGAL_YEAR, 1, 1), today + dt.timedelta(days=PARAMETER_DAYS_AHEAD)


def pack_versions(conn: Connection, today: dt.date | None = None) -> list[dict[str, Any]]:
    """Every published pack version, the one in force per pack marked (the latest whose
    date has come)."""
    day = (today or legal_today()).isoformat()
    rows = sorted(live_rows(conn, "pack_versions"),
                  key=lambda r: (r["pack_id"], str(r.get("published_at") or ""), r["version"]))
    in_force: dict[str, dict[str, Any]] = {}
    for r in rows:
        if str(r.get("published_at") or "")[:10] <= day:
            in_force[r["pack_id"]] = r
    return [{**r, "in_force": in_force.get(r["pack_id"]) is r} for r in rows]


def publish_pack_version(engine: Engine, *, pack_id: object, version: object,
                         content_hash: object, from_date: object, act_number: object,
                         act_date: object, today: dt.date | None = None,
                         audit: Audit = None) -> dict[str, Any]:
    day = today or legal_today()
    low, high = _bounds(day)
    row = {"pack_id": pack_field(pack_id),
           "version": text_field(version, "a versão", max_chars=40),
           "content_hash": text_field(content_hash, "o hash do conteúdo", max_chars=64).lower(),
           "published_at": date_field(from_date, "a data de vigência", low=low,
                                      high=high).isoformat()}
    if not re.fullmatch(r"[0-9a-f]{64}", row["content_hash"]):
        raise AdminError("Hash do conteúdo: esperado SHA-256 em hexadecimal (64 caracteres).")
    act = legal_act(act_number, act_date, day)
    # Devices store the four columns they know and drop the act's (kept here for the screen).
    row.update(act_number=act.number, act_date=act.date.isoformat())
    with engine.begin() as conn:
        if current_row(conn, "pack_versions", f"{row['pack_id']}|{row['version']}"):
            raise AdminError(f"A versão {row['version']} de {row['pack_id']} já foi publicada.")
        publish_row(conn, "pack_versions", row)
        _audit(conn, audit)
    return row


def dated_table(conn: Connection, pack_id: str, table: str) -> list[dict[str, Any]]:
    row = current_row(conn, "parameters", f"{pack_id}|tables.{table}")
    if row is None:
        return []
    try:
        value = json.loads(row["value_json"])
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def known_packs(conn: Connection) -> list[str]:
    found = {r["pack_id"] for r in live_rows(conn, "pack_versions")}
    found |= {r["pack_id"] for r in live_rows(conn, "parameters")}
    return sorted(found | {"DF_STPCR", "DF_STPA", "JF_1972"})


def set_dated_value(engine: Engine, *, pack_id: object, table: object, from_date: object,
                    value: object, act_number: object, act_date: object,
                    today: dt.date | None = None, audit: Audit = None) -> list[dict[str, Any]]:
    """Add (or replace, for the same start date) a dated value of the tariff or minimum
    wage table with its legal act; the whole table is published again."""
    day = today or legal_today()
    pack = pack_field(pack_id)
    if table not in DATED_TABLES:
        raise AdminError("Escolha a tabela: tarifa ou salário mínimo.")
    low, high = _bounds(day)
    start = date_field(from_date, "a data de início da vigência", low=low, high=high)
    raw = text_field(value, "o valor", max_chars=20).replace("R$", "").strip()
    if "," in raw:
        raw = raw.replace(".", "").replace(",", ".")
    try:
        amount = Decimal(raw)
    except InvalidOperation:
        raise AdminError("Valor inválido (ex.: 5,50).") from None
    if not amount.is_finite() or amount <= 0 or amount > MAX_MONEY or \
            amount != amount.quantize(Decimal("0.01")):
        raise AdminError(f"Valor inválido: maior que zero, até {MAX_MONEY:,} e com no máximo "
                         "2 casas decimais.".replace(",", "."))
    act = legal_act(act_number, act_date, day)
    entry = {"from": start.isoformat(), "value": f"{amount:.2f}", "basis": act.text,
             "act_number": act.number, "act_date": act.date.isoformat()}
    with engine.begin() as conn:
        rows = [r for r in dated_table(conn, pack, str(table)) if r.get("from") != entry["from"]]
        rows = sorted([*rows, entry], key=lambda r: str(r.get("from")))
        publish_row(conn, "parameters", {"pack_id": pack, "name": f"tables.{table}",
                                         "value_json": json.dumps(rows, ensure_ascii=False)})
        _audit(conn, audit)
    return rows


def calendar_exceptions(conn: Connection, pack_id: str) -> list[dict[str, Any]]:
    row = current_row(conn, "parameters", f"{pack_id}|{CALENDAR_EXCEPTIONS_PARAMETER}")
    if row is None:
        return []
    try:
        value = json.loads(row["value_json"])
    except ValueError:
        return []
    return value if isinstance(value, list) else []


def add_calendar_exception(engine: Engine, *, pack_id: object, date: object, kind: object,
                           name: object, act_number: object, act_date: object,
                           today: dt.date | None = None,
                           audit: Audit = None) -> list[dict[str, Any]]:
    """A ponto facultativo or reduced expediente decreed for a day, with its act; devices
    count deadlines with it (``store/calendar_ref.py``)."""
    day = today or legal_today()
    pack = pack_field(pack_id)
    low, high = _bounds(day)
    when = date_field(date, "a data", low=max(low, dt.date(2000, 1, 1)), high=high)
    if kind not in CALENDAR_KINDS:
        raise AdminError("Escolha o tipo: sem expediente, encerra mais cedo ou abre mais tarde.")
    label = text_field(name, "a descrição (ex.: Ponto facultativo – Carnaval)")
    act = legal_act(act_number, act_date, day)
    entry = {"date": when.isoformat(), "kind": kind, "name": label, "decree": act.text}
    with engine.begin() as conn:
        rows = [r for r in calendar_exceptions(conn, pack) if r.get("date") != entry["date"]]
        rows = sorted([*rows, entry], key=lambda r: str(r.get("date")))
        try:
            parse_exceptions(rows)
        except ValueError as exc:
            raise AdminError(str(exc)) from None
        publish_row(conn, "parameters", {"pack_id": pack, "name": CALENDAR_EXCEPTIONS_PARAMETER,
                                         "value_json": json.dumps(rows, ensure_ascii=False)})
        _audit(conn, audit)
    return rows
