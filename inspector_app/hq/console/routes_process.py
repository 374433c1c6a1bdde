"""The legal process after the auto (queues per step, each auto's process page and its acts)
and the cassação queue. Rules: ``domain/process.py``; storage: ``hq/process.py``.

Roles: every staff member reads; a ``supervisor`` registers defence, notification, appeal,
payment and dívida ativa; a ``julgador`` judges, decides appeals and cassação proposals.
A POST from another role is refused (403) even when forged, and every act is audited in the
transaction that records it.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import AsyncIterator
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from inspector_app.domain import process as rules_
from inspector_app.domain.fieldtext import DateTextError, parse_date_br
from inspector_app.domain.legaltime import legal_today
from inspector_app.domain.process import ProcessError
from inspector_app.hq import process as hq_process
from inspector_app.hq.api.deps import StateDep, client_address
from inspector_app.hq.blobs import BlobError
from inspector_app.hq.console import audit
from inspector_app.hq.console.auth import Forbidden, require_staff
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.console.templating import page_headers, render

router = APIRouter(prefix="/console", include_in_schema=False)
AnyStaff = Annotated[Staff, Depends(require_staff())]
Actor = Annotated[Staff, Depends(require_staff("supervisor", "julgador"))]
Judge = Annotated[Staff, Depends(require_staff("julgador"))]
_ID = re.compile(r"^[0-9a-f-]{36}$")

audit.ACTION_LABELS.update({
    f"processo_{kind}": f"Processo: {label}" for kind, label in rules_.EVENT_LABELS.items()})
audit.ACTION_LABELS.update({
    "processo_anexo": "Processo: download de anexo",
    "cassacao_decisao": "Cassação: decisão sobre a proposta",
})

STEP_TABS = {
    rules_.AUTUADO: "Prazo de defesa",
    rules_.DEFESA: "A julgar",
    rules_.JULGADO: "A notificar",
    rules_.NOTIFICADO: "Prazo de recurso e pagamento",
    rules_.RECURSO: "Recursos a decidir",
    rules_.MANTIDO: "Pagamento após recurso",
}
MAX_FILES = 5
MAX_FILE_BYTES = 10 * 1024 * 1024
ACCEPTED = {b"%PDF-": "application/pdf", b"\x89PNG": "image/png", b"\xff\xd8\xff": "image/jpeg"}
FORM_FIELDS = ("on", "channel", "result", "reasons", "notified_on", "amount", "reference",
               "notes")


def _context(view: hq_process.ProcessView, staff: Staff) -> dict[str, Any]:
    return {
        "v": view, "today": view.today, "steps": rules_.STEP_LABELS,
        "events_labels": rules_.EVENT_LABELS, "channels": rules_.CHANNELS,
        "notice_channels": rules_.NOTICE_CHANNELS, "results": rules_.RESULTS,
        "final_results": rules_.FINAL_RESULTS,
        "can": {kind: hq_process.may_record(staff.role, kind) for kind in view.allowed},
        "form": {}, "error": None, "error_kind": None,
    }


def _not_found(request: Request, staff: Staff) -> Response:
    return render(request, "error.html", {
        "title": "Auto não encontrado", "message": "A sede não tem um auto com este "
        "identificador.", "back": "/console/processos"}, staff=staff, status_code=404)


@router.get("/processos")
def queues(request: Request, state: StateDep, staff: AnyStaff,
           etapa: str = rules_.AUTUADO) -> Response:
    step = etapa if etapa in STEP_TABS else rules_.AUTUADO
    today = legal_today()
    with state.engine.connect() as conn:
        rows = hq_process.queue(conn, step, today)
        counts = hq_process.queue_counts(conn)
    return render(request, "process/queue.html", {
        "tabs": STEP_TABS, "step": step, "rows": rows, "counts": counts, "today": today,
        "step_label": rules_.STEP_LABELS[step]}, staff=staff)


@router.get("/processos/{record_id}")
def process_page(request: Request, state: StateDep, staff: AnyStaff,
                 record_id: str) -> Response:
    if not _ID.match(record_id):
        return _not_found(request, staff)
    with state.engine.connect() as conn:
        view = hq_process.view(conn, record_id, legal_today())
    if view is None:
        return _not_found(request, staff)
    return render(request, "process/detail.html", _context(view, staff), staff=staff)


def _date(value: object, label: str) -> dt.date:
    """A date typed dd/mm/aaaa (the console's one date format; ISO also read)."""
    text = str(value or "").strip()
    try:
        found = dt.date.fromisoformat(text) if "-" in text[:5] else parse_date_br(text)
    except (ValueError, DateTextError) as exc:
        detail = exc.args[0] if isinstance(exc, DateTextError) else "use dd/mm/aaaa"
        raise ProcessError("on", f"{label}: {detail}") from None
    if found is None:
        raise ProcessError("on", f"{label}: informe a data (dd/mm/aaaa).")
    return found


def _cents(value: object) -> int:
    text = str(value or "").strip().replace("R$", "").replace(" ", "")
    if "," in text:
        text = text.replace(".", "").replace(",", ".")
    try:
        amount = Decimal(text)
    except InvalidOperation:
        raise ProcessError("amount", "Valor pago: use o formato 1.234,56.") from None
    if amount != amount.quantize(Decimal("0.01")) or not 0 < amount < Decimal(10**9):
        raise ProcessError("amount", "Valor pago: informe um valor maior que zero, em reais "
                                     "e centavos.")
    return int(amount * 100)


def _data_of(kind: str, form: dict[str, str]) -> dict[str, Any]:
    """The event's fields from the form (checked again by the domain rules)."""
    keep = {
        rules_.EV_DEFESA: ("channel", "notes"),
        rules_.EV_JULGAMENTO: ("result", "reasons"),
        rules_.EV_NOTIFICACAO: ("channel", "notes"),
        rules_.EV_RECURSO: ("channel", "notes"),
        rules_.EV_DECISAO_FINAL: ("result", "reasons", "notified_on"),
        rules_.EV_PAGAMENTO: ("reference", "notes"),
        rules_.EV_DIVIDA_ATIVA: ("notes",),
    }[kind]
    data: dict[str, Any] = {k: form[k].strip() for k in keep if form.get(k, "").strip()}
    if len(data.get("notes", "")) > rules_.MAX_TEXT:
        raise ProcessError("notes", f"Observações: no máximo {rules_.MAX_TEXT} caracteres.")
    if kind == rules_.EV_PAGAMENTO:
        data["amount_cents"] = _cents(form.get("amount"))
    if kind == rules_.EV_DECISAO_FINAL and data.get("notified_on"):
        data["notified_on"] = _date(data["notified_on"], "Ciência da decisão").isoformat()
    return data


async def _one(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _store_files(state: StateDep, files: list[UploadFile]) -> list[tuple[str, str, str,
                                                                               int]]:
    """Put each uploaded file in the BlobStore (named by its SHA-256): PDF, PNG or JPEG,
    at most :data:`MAX_FILES` of :data:`MAX_FILE_BYTES`."""
    chosen = [f for f in files if f.filename]
    if len(chosen) > MAX_FILES:
        raise ProcessError("files", f"Anexos: no máximo {MAX_FILES} arquivos por ato.")
    stored = []
    for upload in chosen:
        data = await upload.read(MAX_FILE_BYTES + 1)
        name = re.sub(r"[^\w.\- ()]", "_", (upload.filename or "anexo"))[:120] or "anexo"
        if len(data) > MAX_FILE_BYTES:
            raise ProcessError("files", f"Anexo {name}: maior que 10 MiB.")
        if not data:
            raise ProcessError("files", f"Anexo {name}: arquivo vazio.")
        ctype = next((t for magic, t in ACCEPTED.items() if data.startswith(magic)), None)
        if ctype is None:
            raise ProcessError("files", f"Anexo {name}: envie PDF, PNG ou JPEG.")
        sha = hashlib.sha256(data).hexdigest()
        try:
            await state.blobs.put(sha, _one(data), max_bytes=MAX_FILE_BYTES)
        except BlobError as exc:
            raise ProcessError("files", f"Anexo {name}: não foi possível guardar "
                                        f"({exc.detail}).") from None
        stored.append((sha, name, ctype, len(data)))
    return stored


@router.post("/processos/{record_id}/{kind}")
async def record_act(request: Request, state: StateDep, staff: Actor, record_id: str,
                     kind: str) -> Response:
    if not _ID.match(record_id) or kind not in rules_.EVENTS:
        return _not_found(request, staff)
    if not hq_process.may_record(staff.role, kind):
        raise Forbidden("Seu perfil não permite registrar esta etapa: "
                        + ("só um julgador julga." if kind in hq_process.JUDGE_EVENTS
                           else "só um supervisor registra."))
    form_data = await request.form()
    form = {k: str(form_data.get(k) or "") for k in FORM_FIELDS}
    files = [f for f in form_data.getlist("files") if isinstance(f, UploadFile)]
    today = legal_today()
    address = client_address(request)
    try:
        on = _date(form["on"], "Data")
        data = _data_of(kind, form)
        stored = await _store_files(state, files) if kind in (
            rules_.EV_DEFESA, rules_.EV_RECURSO) else []

        def write() -> hq_process.ProcessView:
            with state.engine.begin() as conn:
                view = hq_process.record_event(
                    conn, record_id, kind, on, data, actor=staff.login, role=staff.role,
                    address=address, today=today, attachments=stored)
                audit.record(conn, staff, f"processo_{kind}", view.auto.number, {
                    "data": on.isoformat(), "etapa": view.state.step,
                    **{k: v for k, v in data.items() if k != "reasons"},
                    **({"fundamentacao": data["reasons"][:200]} if "reasons" in data else {}),
                    "anexos": [s[0] for s in stored]}, request)
                return view

        await run_in_threadpool(write)
    except ProcessError as exc:
        message = exc.message_pt

        def again() -> Response:
            with state.engine.connect() as conn:
                view = hq_process.view(conn, record_id, today)
            if view is None:
                return _not_found(request, staff)
            ctx = _context(view, staff)
            ctx.update(form=form, error=message, error_kind=kind)
            return render(request, "process/detail.html", ctx, staff=staff, status_code=400)

        return await run_in_threadpool(again)
    return RedirectResponse(f"/console/processos/{record_id}?feito={kind}", status_code=303,
                            headers=page_headers(request))


@router.get("/processos/{record_id}/anexo/{attachment_id}")
def attachment(request: Request, state: StateDep, staff: AnyStaff, record_id: str,
               attachment_id: int) -> Response:
    if not _ID.match(record_id):
        return _not_found(request, staff)
    with state.engine.connect() as conn:
        view = hq_process.view(conn, record_id, legal_today())
    found = None
    if view is not None:
        found = next((a for e in view.events for a in e.attachments if a.id == attachment_id),
                     None)
    if view is None or found is None:
        return _not_found(request, staff)
    try:
        data = state.blobs.read(found.sha256)
    except (OSError, KeyError):
        return _not_found(request, staff)
    if hashlib.sha256(data).hexdigest() != found.sha256:
        return render(request, "error.html", {
            "title": "Arquivo corrompido", "message": "O conteúdo deste anexo não confere com "
            "o SHA-256 registrado. Ele não foi entregue; avise o administrador da sede.",
            "back": f"/console/processos/{record_id}"}, staff=staff, status_code=500)
    with state.engine.begin() as conn:
        audit.record(conn, staff, "processo_anexo", view.auto.number,
                     {"arquivo": found.filename, "sha256": found.sha256}, request)
    return Response(data, media_type=found.content_type, headers={
        **page_headers(request), "X-Content-SHA256": found.sha256,
        "Content-Disposition": f'attachment; filename="{found.filename}"'})


# --- cassação --------------------------------------------------------------------------------


@router.get("/cassacao")
def cassacao(request: Request, state: StateDep, staff: AnyStaff) -> Response:
    with state.engine.connect() as conn:
        cases = hq_process.cassacao_queue(conn)
    return render(request, "process/cassacao.html", {
        "cases": cases, "actions": hq_process.CASSACAO_ACTIONS,
        "can_decide": staff.role in hq_process.CASSACAO_ROLES, "error": None,
        "error_key": None, "form": {}}, staff=staff)


@router.post("/cassacao/decidir")
async def cassacao_decide(request: Request, state: StateDep, staff: Judge) -> Response:
    form_data = await request.form()
    holder = str(form_data.get("holder_key") or "")
    decision = str(form_data.get("decision") or "")
    reasons = str(form_data.get("reasons") or "")

    def write() -> None:
        with state.engine.begin() as conn:
            hq_process.decide_cassacao(conn, holder, decision, reasons, actor=staff.login,
                                       role=staff.role)
            audit.record(conn, staff, "cassacao_decisao", holder,
                         {"decisao": decision, "fundamentacao": reasons.strip()[:200]}, request)

    try:
        await run_in_threadpool(write)
    except ProcessError as exc:
        message = exc.message_pt

        def again() -> Response:
            with state.engine.connect() as conn:
                cases = hq_process.cassacao_queue(conn)
            return render(request, "process/cassacao.html", {
                "cases": cases, "actions": hq_process.CASSACAO_ACTIONS,
                "can_decide": True, "error": message, "error_key": holder,
                "form": {"decision": decision, "reasons": reasons}}, staff=staff,
                status_code=400)

        return await run_in_threadpool(again)
    return RedirectResponse("/console/cassacao?feito=1", status_code=303,
                            headers=page_headers(request))
