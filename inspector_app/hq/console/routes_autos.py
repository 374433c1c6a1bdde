"""Autos: the searchable table (with CSV export) and each auto's page with its files."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import logging
import re
from collections.abc import Iterator
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy import select

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.console import audit
from inspector_app.hq.console.auth import Forbidden, require_staff
from inspector_app.hq.console.autos import (
    CSV_MAX_ROWS,
    KIND_LABELS,
    PAGE_SIZE,
    STATUS_LABELS,
    AutoFilters,
    FilterError,
    coordinates,
    count_matching,
    csv_rows,
    files_of,
    list_autos,
    load_auto,
)
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.console.templating import page_headers, render
from inspector_app.hq.tables import records
from inspector_app.sync.protocol import blobs_of_envelope, display_number

log = logging.getLogger("inspector_app.hq.console")
router = APIRouter(prefix="/console", include_in_schema=False)
AnyStaff = Annotated[Staff, Depends(require_staff())]
_SHA = re.compile(r"^[0-9a-f]{64}$")
_ID = re.compile(r"^[0-9a-f-]{36}$")


def _filters(request: Request) -> AutoFilters:
    return AutoFilters.from_query(dict(request.query_params))


@router.get("/autos")
def autos_table(request: Request, state: StateDep, staff: AnyStaff,
                pagina: Annotated[int, Query(ge=1, le=1_000_000)] = 1) -> Response:
    filters = _filters(request)
    with state.engine.connect() as conn:
        result = list_autos(conn, filters, pagina)
    query = filters.as_query()
    template = "autos/_table.html" if request.headers.get("hx-request") else "autos/list.html"
    return render(request, template, {
        "f": filters, "result": result, "query": query, "page_size": PAGE_SIZE,
        "kinds": KIND_LABELS, "statuses": STATUS_LABELS}, staff=staff)


@router.get("/autos.csv")
def autos_csv(request: Request, state: StateDep, staff: AnyStaff) -> Response:
    filters = _filters(request)
    with state.engine.begin() as conn:
        try:
            count = count_matching(conn, filters)
        except FilterError as exc:
            raise Forbidden(exc.message, title="Filtro inválido") from None
        audit.record(conn, staff, "autos_csv", None,
                     {"filtros": filters.as_query(), "linhas": count}, request)

    def stream() -> Iterator[bytes]:
        yield "\ufeff".encode()  # spreadsheets then read the file as UTF-8
        with state.engine.connect() as conn:
            buffer = io.StringIO()
            writer = csv.writer(buffer, delimiter=";", lineterminator="\r\n")
            for n, row in enumerate(csv_rows(conn, filters)):
                writer.writerow(row)
                if n % 500 == 0:
                    yield buffer.getvalue().encode("utf-8")
                    buffer.seek(0)
                    buffer.truncate()
            yield buffer.getvalue().encode("utf-8")

    headers = {**page_headers(request),
               "Content-Disposition": 'attachment; filename="autos.csv"',
               "X-Rows-Limit": str(CSV_MAX_ROWS)}
    return StreamingResponse(stream(), media_type="text/csv; charset=utf-8", headers=headers)


def _not_found(request: Request, staff: Staff, what: str = "Auto não encontrado") -> Response:
    return render(request, "error.html", {
        "title": what, "message": "A sede não tem um auto com este identificador.",
        "back": "/console/autos"}, staff=staff, status_code=404)


def _is_pdf(blobs: BlobStore, sha: str) -> bool:
    try:
        return blobs.read(sha)[:5] == b"%PDF-"
    except (OSError, KeyError):
        return False


@router.get("/autos/{record_id}")
def auto_page(request: Request, state: StateDep, staff: AnyStaff, record_id: str) -> Response:
    if not _ID.match(record_id):
        return _not_found(request, staff)
    with state.engine.connect() as conn:
        detail = load_auto(conn, record_id, pdf_of=lambda sha: _is_pdf(state.blobs, sha))
    if detail is None:
        return _not_found(request, staff)
    point = coordinates(detail.body)
    rec = detail.record
    return render(request, "autos/detail.html", {
        "a": detail, "number": display_number(rec["series"], rec["number"]) or "—",
        "kind_label": KIND_LABELS.get(rec["kind"], rec["kind"]),
        "status_label": STATUS_LABELS[detail.status], "point": point,
        "tile_url": state.settings.console_tile_url,
        "infractions": (detail.body.get("outcome") or {}).get("infractions") or [],
    }, staff=staff)


def _checked_bytes(state: StateDep, record_id: str, sha: str) -> bytes | None:
    """The file ``sha`` of the auto ``record_id``, its SHA-256 checked again as it is read
    (None: not a file of this auto, or not at HQ). A file whose bytes no longer hash to
    its name is never served."""
    if not _ID.match(record_id) or not _SHA.match(sha):
        return None
    with state.engine.connect() as conn:
        if sha not in files_of(conn, record_id):
            return None
    try:
        data = state.blobs.read(sha)
    except (OSError, KeyError):
        return None
    if hashlib.sha256(data).hexdigest() != sha:
        log.error("blob %s of record %s does not hash to its name: not served", sha, record_id)
        raise _Corrupt()
    return data


class _Corrupt(Exception):
    pass


def _media_type(data: bytes) -> str:
    if data.startswith(b"\x89PNG"):
        return "image/png"
    if data.startswith(b"\xff\xd8"):
        return "image/jpeg"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return "application/octet-stream"


def _corrupt_page(request: Request, staff: Staff) -> Response:
    return render(request, "error.html", {
        "title": "Arquivo corrompido",
        "message": "O conteúdo deste arquivo não confere com o SHA-256 registrado pelo "
        "dispositivo. Ele não foi exibido; avise o administrador da sede.",
        "back": "/console/autos"}, staff=staff, status_code=500)


@router.get("/autos/{record_id}/arquivo/{sha}")
def auto_file(request: Request, state: StateDep, staff: AnyStaff, record_id: str,
              sha: str) -> Response:
    try:
        data = _checked_bytes(state, record_id, sha)
    except _Corrupt:
        return _corrupt_page(request, staff)
    media = _media_type(data) if data is not None else ""
    if data is None or not media.startswith("image/"):
        return _not_found(request, staff, "Arquivo não encontrado")
    return Response(data, media_type=media, headers={
        **page_headers(request), "Cache-Control": "private, max-age=86400, immutable",
        "X-Content-SHA256": sha})


@router.get("/autos/{record_id}/pdf/{sha}")
def auto_pdf(request: Request, state: StateDep, staff: AnyStaff, record_id: str,
             sha: str) -> Response:
    try:
        data = _checked_bytes(state, record_id, sha)
    except _Corrupt:
        return _corrupt_page(request, staff)
    if data is None or _media_type(data) != "application/pdf":
        return _not_found(request, staff, "PDF não encontrado")
    with state.engine.begin() as conn:
        row = conn.execute(select(records.c.series, records.c.number, records.c.payload)
                           .where(records.c.id == record_id)).one()
        if sha in blobs_of_envelope(json.loads(row.payload)):
            return _not_found(request, staff, "PDF não encontrado")
        number = display_number(row.series, row.number) or record_id
        audit.record(conn, staff, "auto_pdf", number, {"sha256": sha}, request)
    return Response(data, media_type="application/pdf", headers={
        **page_headers(request),
        "Content-Disposition": f'attachment; filename="{number}.pdf"',
        "X-Content-SHA256": sha})
