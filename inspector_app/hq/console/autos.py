"""The Autos area's reads: the filtered, paginated table (``auto_index``) and one auto's
page (its signed payload, files, signature status and linked records).

Pagination is by bounded offset over an index that matches every filter's order
(``occurred_at`` descending, then the record id): page 1,000 of 50 reads 50,000 index
entries (an index-only scan), then the table's 50 rows of the page. The total is counted
up to :data:`COUNT_CAP`.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Select, func, select

from inspector_app.domain.documents import RECORD_KIND_LABELS
from inspector_app.domain.identity import IdentityError, parse_plate
from inspector_app.hq.autos_index import INDEXED_KINDS, STATUS_CANCELLED, STATUS_VALID, search_text
from inspector_app.hq.tables import auto_index, devices, record_blobs, records
from inspector_app.hq.verification import normalize_verify_code
from inspector_app.security.records import verify_record
from inspector_app.sync.protocol import blobs_of_envelope, display_number

PAGE_SIZE = 50
MAX_OFFSET = 100_000  # beyond page 2,000 the person is asked to narrow the filters
COUNT_CAP = 10_000
CSV_MAX_ROWS = 200_000
STATUS_LABELS = {STATUS_VALID: "Válido", STATUS_CANCELLED: "Cancelado"}
KIND_LABELS = {k: RECORD_KIND_LABELS[k] for k in INDEXED_KINDS}
_NUMBER = re.compile(r"^\s*(?:([A-Za-z][A-Za-z0-9-]*?)[\s-]+)?0*([0-9]{1,15})\s*$")
_RULE = re.compile(r"^[A-Za-z0-9_.:-]{1,80}$")


class FilterError(ValueError):
    """A filter that cannot be applied: ``field`` and a Portuguese message."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name
        self.message = message


@dataclass(frozen=True)
class AutoFilters:
    numero: str = ""
    codigo: str = ""
    placa: str = ""
    titular: str = ""
    agente: str = ""
    regra: str = ""
    de: str = ""
    ate: str = ""
    situacao: str = ""
    tipo: str = ""

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> AutoFilters:
        names = cls.__dataclass_fields__
        return cls(**{k: str(query.get(k, "")).strip()[:200] for k in names})

    def as_query(self) -> dict[str, str]:
        return {k: v for k, v in self.__dict__.items() if v}

    def active(self) -> bool:
        return bool(self.as_query())


def _date(value: str, name: str, label: str) -> str:
    for fmt in ("%Y-%m-%d", "%d/%m/%Y"):
        try:
            return dt.datetime.strptime(value, fmt).date().isoformat()
        except ValueError:
            continue
    raise FilterError(name, f"{label}: data inválida ({value[:20]}); use dd/mm/aaaa.")


def conditions(f: AutoFilters) -> list[Any]:
    """SQL conditions for ``f``; FilterError names a filter that makes no sense."""
    c = auto_index.c
    where: list[Any] = []
    if f.numero:
        m = _NUMBER.match(f.numero)
        if not m:
            raise FilterError("numero", "Número: use o número do auto, como AI-000123 ou 123.")
        where.append(c.number == int(m.group(2)))
        if m.group(1):
            where.append(c.series == m.group(1).upper())
    if f.codigo:
        where.append(c.verification_code == normalize_verify_code(f.codigo))
    if f.placa:
        try:
            plate = parse_plate(f.placa)
        except IdentityError as exc:
            raise FilterError("placa", str(exc.args[-1]) if exc.args else "Placa inválida.") \
                from None
        keys = {plate.canonical_key(), plate.text}
        if plate.old():
            keys.add(str(plate.old()))
        where.append(c.plate_key.in_(sorted(keys)))
    if f.titular:
        where.append(c.holder_search.contains(search_text(f.titular), autoescape=True))
    if f.agente:
        if f.agente.isdigit():
            where.append(c.agent_matricula == f.agente)
        else:
            where.append(func.lower(c.agent_name).contains(f.agente.lower(), autoescape=True))
    if f.regra:
        if not _RULE.match(f.regra):
            raise FilterError("regra", "Regra: informe o código da regra, como DF_STPCR.art22.")
        where.append(c.rule_ids.contains(f" {f.regra} ", autoescape=True))
    start = end = None
    if f.de:
        start = _date(f.de, "de", "Data inicial")
        where.append(c.occurred_at >= start)
    if f.ate:
        end = _date(f.ate, "ate", "Data final")
        next_day = (dt.date.fromisoformat(end) + dt.timedelta(days=1)).isoformat()
        where.append(c.occurred_at < next_day)
    if start and end and start > end:
        raise FilterError("ate", "A data final é anterior à data inicial.")
    if f.situacao:
        if f.situacao not in STATUS_LABELS:
            raise FilterError("situacao", "Situação desconhecida.")
        where.append(c.status == f.situacao)
    if f.tipo:
        if f.tipo not in KIND_LABELS:
            raise FilterError("tipo", "Tipo de documento desconhecido.")
        where.append(c.kind == f.tipo)
    return where


def _ordered(query: Select[Any]) -> Select[Any]:
    return query.order_by(auto_index.c.occurred_at.desc(), auto_index.c.record_id.desc())


@dataclass
class AutosPage:
    rows: list[dict[str, Any]]
    page: int
    total: int
    total_capped: bool
    has_next: bool
    error: FilterError | None = None
    too_deep: bool = False
    pages: int = 0


def list_autos(conn: Connection, f: AutoFilters, page: int = 1,
               page_size: int = PAGE_SIZE) -> AutosPage:
    try:
        where = conditions(f)
    except FilterError as exc:
        return AutosPage([], 1, 0, False, False, error=exc)
    page = max(1, page)
    offset = (page - 1) * page_size
    if offset > MAX_OFFSET:
        return AutosPage([], page, 0, False, False, too_deep=True)
    # Deferred join: the offset walks the ordering index alone (an index-only scan of
    # (occurred_at, record_id)), then only the page's rows are read from the table.
    keys = _ordered(select(auto_index.c.record_id, auto_index.c.occurred_at).where(*where)) \
        .limit(page_size + 1).offset(offset).subquery()
    query = (select(auto_index).join(keys, keys.c.record_id == auto_index.c.record_id)
             .order_by(keys.c.occurred_at.desc(), keys.c.record_id.desc()))
    rows = [dict(r._mapping) for r in conn.execute(query)]
    capped = select(auto_index.c.record_id).where(*where).limit(COUNT_CAP + 1).subquery()
    total = int(conn.execute(select(func.count()).select_from(capped)).scalar_one())
    for row in rows:
        row["display_number"] = display_number(row["series"], row["number"]) or "—"
        row["status_label"] = STATUS_LABELS.get(row["status"], row["status"])
        row["kind_label"] = KIND_LABELS.get(row["kind"], row["kind"])
        row["rules"] = (row["rule_ids"] or "").split()
    result = AutosPage(rows[:page_size], page, min(total, COUNT_CAP), total > COUNT_CAP,
                       len(rows) > page_size)
    result.pages = -(-result.total // page_size) if not result.total_capped else 0
    return result


CSV_COLUMNS = [("display_number", "Número"), ("kind_label", "Documento"),
               ("verification_code", "Código de verificação"), ("occurred_at", "Data e hora"),
               ("plate", "Placa"), ("holder_name", "Autuado"),
               ("holder_document", "CPF/CNPJ do autuado"), ("agent_matricula", "Matrícula"),
               ("agent_name", "Agente"), ("rule_ids", "Regras"), ("organ", "Órgão"),
               ("status_label", "Situação"), ("place", "Local"), ("received_at", "Recebido em")]


def _cell(value: object) -> str:
    text = "" if value is None else str(value).strip()
    # A cell a spreadsheet would run as a formula is written as text.
    if text[:1] in ("=", "+", "-", "@", "\t", "\r"):
        text = "'" + text
    return text


def csv_rows(conn: Connection, f: AutoFilters) -> Iterator[list[str]]:
    """The header, then every auto matching ``f`` (at most :data:`CSV_MAX_ROWS`)."""
    where = conditions(f)
    yield [label for _, label in CSV_COLUMNS]
    query = _ordered(select(auto_index).where(*where)).limit(CSV_MAX_ROWS)
    for r in conn.execution_options(yield_per=2000).execute(query):
        row = dict(r._mapping)
        row["display_number"] = display_number(row["series"], row["number"]) or ""
        row["status_label"] = STATUS_LABELS.get(row["status"], row["status"])
        row["kind_label"] = KIND_LABELS.get(row["kind"], row["kind"])
        yield [_cell(row.get(key)) for key, _ in CSV_COLUMNS]


def count_matching(conn: Connection, f: AutoFilters) -> int:
    capped = select(auto_index.c.record_id).where(*conditions(f)).limit(CSV_MAX_ROWS)
    return int(conn.execute(select(func.count()).select_from(capped.subquery())).scalar_one())


# --- one auto -------------------------------------------------------------------------------


@dataclass
class FileRef:
    sha256: str
    label: str
    kind: str  # "photo", "signature", "pdf"
    thumb: str | None = None
    role: str = ""
    note: str = ""
    status: str = ""


@dataclass
class AutoDetail:
    record: dict[str, Any]
    envelope: dict[str, Any]
    body: dict[str, Any]
    index: dict[str, Any]
    device_name: str
    signature_ok: bool
    status: str
    cancelled_by: dict[str, Any] | None
    linked: list[dict[str, Any]] = field(default_factory=list)
    photos: list[FileRef] = field(default_factory=list)
    signatures: list[FileRef] = field(default_factory=list)
    pdfs: list[FileRef] = field(default_factory=list)


def _m(value: object) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


SIGNATURE_ROLES = {"agent": "Agente", "driver": "Condutor", "receiver": "Recebedor",
                   "witness": "Testemunha", "supervisor": "Supervisor"}
SIGNATURE_STATUS = {"signed": "Assinou", "refused": "Recusou-se a assinar",
                    "absent": "Ausente", "unable": "Impossibilitado de assinar"}


def files_of(conn: Connection, record_id: str) -> set[str]:
    """The SHA-256s of the files linked to a record when it was accepted."""
    return set(conn.execute(select(record_blobs.c.sha256)
                            .where(record_blobs.c.record_id == record_id)).scalars())


def load_auto(conn: Connection, record_id: str, *, pdf_of: Any = None) -> AutoDetail | None:
    """The auto ``record_id`` (None when HQ holds no auto by that id). ``pdf_of(sha)``
    tells whether a linked file is a PDF (the files named by the payload are photos and
    signature images; any other linked file that is a PDF is the document as printed)."""
    row = conn.execute(select(records, devices.c.name.label("device_name"),
                              devices.c.public_key)
                       .join(devices, devices.c.id == records.c.device_id)
                       .where(records.c.id == record_id,
                              records.c.kind.in_(INDEXED_KINDS))).first()
    if row is None:
        return None
    index = conn.execute(select(auto_index).where(auto_index.c.record_id == record_id)).first()
    envelope = json.loads(row.payload)
    body = _m(envelope.get("body"))
    signature_ok = verify_record(base64.b64decode(row.public_key), row.payload.encode("utf-8"),
                                 row.signature)
    linked = _linked(conn, record_id, row.device_id)
    cancelled = next((x for x in linked if x["kind"] == "cancelamento"
                      and x["refers_to"] == record_id), None)
    detail = AutoDetail(record=dict(row._mapping), envelope=envelope, body=body,
                        index=dict(index._mapping) if index else {},
                        device_name=row.device_name, signature_ok=signature_ok,
                        status=STATUS_CANCELLED if cancelled else STATUS_VALID,
                        cancelled_by=cancelled, linked=linked)
    named: set[str] = set()
    for n, photo in enumerate(body.get("photos") or [], start=1):
        p = _m(photo)
        full = p.get("working_sha256") or p.get("original_sha256")
        if isinstance(full, str):
            detail.photos.append(FileRef(full, str(p.get("name") or f"Foto {n}"), "photo",
                                         thumb=p.get("thumb_sha256") or full,
                                         note=str(p.get("item_id") or "")))
            named |= {s for s in (p.get("original_sha256"), p.get("working_sha256"),
                                  p.get("thumb_sha256")) if isinstance(s, str)}
    for role, sig in _m(body.get("signatures")).items():
        s = _m(sig)
        sha = s.get("png_sha256")
        detail.signatures.append(FileRef(
            sha if isinstance(sha, str) else "", SIGNATURE_ROLES.get(role, role), "signature",
            role=role, note=str(s.get("note") or ""),
            status=SIGNATURE_STATUS.get(str(s.get("status")), str(s.get("status") or ""))))
    named |= set(blobs_of_envelope(envelope))
    for sha in sorted(files_of(conn, record_id) - named):
        if pdf_of is None or pdf_of(sha):
            detail.pdfs.append(FileRef(sha, "PDF assinado pelo dispositivo", "pdf"))
    return detail


def _linked(conn: Connection, record_id: str, device_id: str) -> list[dict[str, Any]]:
    """Records that refer to the auto (termos, cancelamento), and those that refer to
    them (a termo de liberação of its termo de retenção), oldest first. Only the issuing
    device's count (as /verify: ingest accepts no other)."""
    found: list[dict[str, Any]] = []
    frontier = [record_id]
    for _ in range(3):
        if not frontier:
            break
        rows = list(conn.execute(select(records).where(records.c.refers_to.in_(frontier),
                                                       records.c.device_id == device_id)
                                 .order_by(records.c.created_at)))
        frontier = []
        for r in rows:
            env = json.loads(r.payload)
            body = _m(env.get("body"))
            found.append({"id": r.id, "kind": r.kind, "refers_to": r.refers_to,
                          "label": RECORD_KIND_LABELS.get(r.kind, r.kind),
                          "number": display_number(r.series, r.number) or "—",
                          "created_at": r.created_at, "code": r.verification_code,
                          "reason": str(body.get("reason") or ""),
                          "supervisor": _m(body.get("supervisor")).get("name"),
                          "place": body.get("place")})
            frontier.append(r.id)
    return found


def coordinates(body: Mapping[str, Any]) -> tuple[float, float] | None:
    loc = _m(body.get("location"))
    try:
        lat, lon = float(str(loc.get("latitude"))), float(str(loc.get("longitude")))
    except ValueError:
        return None
    if not (-90 <= lat <= 90 and -180 <= lon <= 180):
        return None
    return lat, lon




