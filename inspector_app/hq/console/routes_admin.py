"""Administração (administrador only): devices (enrolment code with its QR code,
revocation, last contact), number ranges, agents, registry import by upload (row errors
shown and downloadable as CSV), pack versions and dated parameters with their legal act.
Every action is written to the audit log; a refused form comes back with its values and
the reason in Portuguese (HTTP 422)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import Connection
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.console import admin as a
from inspector_app.hq.console import audit
from inspector_app.hq.console.auth import Forbidden, require_staff
from inspector_app.hq.console.painel import sync_by_device
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.console.templating import page_headers, render
from inspector_app.hq.core.limits import (
    IMPORT_PROBLEMS_SHOWN,
    MAX_CODE_TTL_MINUTES,
    MAX_RANGE_SIZE,
    MAX_REGISTRY_UPLOAD,
)
from inspector_app.hq.numbering import account
from inspector_app.hq.registry import COLUMNS

router = APIRouter(prefix="/console/admin", include_in_schema=False)
Admin = Annotated[Staff, Depends(require_staff("administrador"))]

audit.ACTION_LABELS.update({
    "enrolment_code": "Código de cadastro de dispositivo gerado",
    "device_revoked": "Dispositivo revogado",
    "range_allocated": "Faixa de numeração alocada",
    "agent_added": "Agente cadastrado",
    "agent_disabled": "Agente desativado",
    "agent_password": "Nova senha de agente",
    "registry_import": "Importação do cadastro",
    "registry_errors_csv": "Download dos erros da importação (CSV)",
    "pack_version": "Versão de regulamento publicada",
    "dated_value": "Parâmetro datado publicado",
    "calendar_exception": "Exceção de calendário publicada",
})
SECTIONS = [("dispositivos", "Dispositivos"), ("faixas", "Faixas de numeração"),
            ("agentes", "Agentes"), ("registro", "Importar cadastro"),
            ("parametros", "Regulamentos e parâmetros")]


def _page(request: Request, staff: Staff, name: str, context: dict[str, Any],
          status: int = 200) -> Response:
    return render(request, f"admin/{name}.html", {
        "sections": SECTIONS, "section": name, **context}, staff=staff, status_code=status)


def _done(request: Request, where: str, message: str) -> Response:
    from urllib.parse import quote

    return RedirectResponse(f"/console/admin/{where}?ok={quote(message)}", status_code=303,
                            headers=page_headers(request))


# What the audit log shows for each form field (Portuguese names and values, never keys).
FIELD_LABELS = {"regulamento": "regulamento", "versao": "versão", "hash": "SHA-256",
                "vigencia": "vigência", "tabela": "tabela", "valor": "valor", "data": "data",
                "tipo": "tipo", "descricao": "descrição", "ato_numero": "ato legal",
                "ato_data": "data do ato", "dispositivo": "dispositivo", "serie": "série",
                "tamanho": "quantidade", "primeiro": "do número", "ultimo": "até o número"}
VALUE_LABELS = {"tabela": a.DATED_TABLES, "tipo": a.CALENDAR_KINDS}


def _detail(values: dict[str, str]) -> dict[str, str]:
    return {FIELD_LABELS[k]: VALUE_LABELS.get(k, {}).get(v, v) for k, v in values.items()
            if k in FIELD_LABELS and v}


def _form_values(form: Any) -> dict[str, str]:
    return {k: v[:500] for k, v in form.items() if isinstance(v, str) and k != "csrf_token"}


def _auditor(staff: Staff, request: Request, action: str, target: str | None,
             detail: dict[str, Any]) -> Callable[[Connection], None]:
    return lambda conn: audit.record(conn, staff, action, target, detail, request)


def _audit_now(state: Any, staff: Staff, request: Request, action: str, target: str | None,
               detail: dict[str, Any]) -> None:
    with state.engine.begin() as conn:
        audit.record(conn, staff, action, target, detail, request)


def _ok(request: Request) -> str:
    value = request.query_params.get("ok", "")
    return value[:300]


@router.get("")
def admin_home(request: Request, staff: Admin) -> Response:
    return RedirectResponse("/console/admin/dispositivos", status_code=303,
                            headers=page_headers(request))


# --- devices ------------------------------------------------------------------------------------


def _devices(request: Request, state: StateDep, staff: Staff, status: int = 200,
             **context: Any) -> Response:
    return _page(request, staff, "dispositivos", {
        "devices": sync_by_device(state.engine), "ok": _ok(request),
        "max_size": MAX_RANGE_SIZE, "max_ttl": MAX_CODE_TTL_MINUTES, "form": {},
        **context}, status=status)


@router.get("/dispositivos")
def devices_page(request: Request, state: StateDep, staff: Admin) -> Response:
    return _devices(request, state, staff)


@router.post("/dispositivos/codigo")
async def new_code(request: Request, state: StateDep, staff: Admin) -> Response:
    form = await request.form()
    hq_url = state.settings.public_url or str(request.base_url).rstrip("/")

    def run() -> Response:
        try:
            made = a.new_enrolment(state.engine, hq_url=hq_url, series=form.get("serie"),
                                   range_size=form.get("tamanho"),
                                   ttl_minutes=form.get("validade"))
        except a.AdminError as exc:
            return _devices(request, state, staff, 422, error=str(exc),
                            form=_form_values(form))
        # The code itself is never logged: only what it allows.
        _audit_now(state, staff, request, "enrolment_code", None, {
            "série": made.series, "tamanho da faixa": made.range_size,
            "validade (min)": made.expires_minutes})
        return _page(request, staff, "codigo", {"made": made})

    return await run_in_threadpool(run)


@router.post("/dispositivos/{device_id}/revogar")
async def revoke(request: Request, state: StateDep, staff: Admin, device_id: str) -> Response:
    def run() -> Response:
        try:
            name = a.revoke(state.engine, device_id)
        except a.AdminError as exc:
            return _devices(request, state, staff, 422, error=str(exc))
        _audit_now(state, staff, request, "device_revoked", device_id, {"nome": name})
        return _done(request, "dispositivos", f"Dispositivo {name} revogado.")

    return await run_in_threadpool(run)


# --- number ranges --------------------------------------------------------------------------------


def _ranges(request: Request, state: StateDep, staff: Staff, status: int = 200,
            **context: Any) -> Response:
    return _page(request, staff, "faixas", {
        "ranges": account(state.engine, limit=200), "ok": _ok(request),
        "devices": [d for d in sync_by_device(state.engine) if not d.revoked_at],
        "max_size": MAX_RANGE_SIZE, "form": {}, **context}, status=status)


@router.get("/faixas")
def ranges_page(request: Request, state: StateDep, staff: Admin) -> Response:
    return _ranges(request, state, staff)


@router.post("/faixas")
async def allocate(request: Request, state: StateDep, staff: Admin) -> Response:
    form = await request.form()
    values = _form_values(form)

    def run() -> Response:
        try:
            made = a.allocate(state.engine, device_id=form.get("dispositivo"),
                              series=form.get("serie"), size=form.get("tamanho") or "",
                              first=form.get("primeiro") or "", last=form.get("ultimo") or "",
                              audit=lambda conn: audit.record(
                                  conn, staff, "range_allocated", values.get("dispositivo"),
                                  _detail(values), request))
        except a.AdminError as exc:
            return _ranges(request, state, staff, 422, error=str(exc), form=values)
        return _done(request, "faixas", f"Faixa {made.series} {made.first}–{made.last} "
                     "alocada; o dispositivo a recebe na próxima sincronização.")

    return await run_in_threadpool(run)


# --- agents ---------------------------------------------------------------------------------------


def _agents(request: Request, state: StateDep, staff: Staff, status: int = 200,
            **context: Any) -> Response:
    with state.engine.connect() as conn:
        agents = a.agents(conn)
    return _page(request, staff, "agentes", {
        "agents": agents, "roles": a.ROLE_LABELS, "ok": _ok(request), "form": {},
        **context}, status=status)


@router.get("/agentes")
def agents_page(request: Request, state: StateDep, staff: Admin) -> Response:
    return _agents(request, state, staff)


@router.post("/agentes")
async def add_agent(request: Request, state: StateDep, staff: Admin) -> Response:
    form = await request.form()

    def run() -> Response:
        try:
            a.add_agent(state.engine, matricula=form.get("matricula"), name=form.get("nome"),
                        role=form.get("papel"), password=form.get("senha"),
                        organ=form.get("orgao"))
        except a.AdminError as exc:
            values = {k: v for k, v in _form_values(form).items() if k != "senha"}
            return _agents(request, state, staff, 422, error=str(exc), form=values)
        mat = str(form.get("matricula")).strip()
        _audit_now(state, staff, request, "agent_added", mat, {
            "nome": str(form.get("nome"))[:200],
            "papel": a.ROLE_LABELS.get(str(form.get("papel")), "")})
        return _done(request, "agentes", f"Agente {mat} cadastrado; os dispositivos o "
                     "recebem na próxima sincronização.")

    return await run_in_threadpool(run)


@router.post("/agentes/{matricula}/desativar")
async def disable_agent(request: Request, state: StateDep, staff: Admin,
                        matricula: str) -> Response:
    def run() -> Response:
        try:
            a.disable_agent(state.engine, matricula)
        except a.AdminError as exc:
            return _agents(request, state, staff, 422, error=str(exc))
        _audit_now(state, staff, request, "agent_disabled", matricula[:40], {})
        return _done(request, "agentes", f"Agente {matricula[:40]} desativado.")

    return await run_in_threadpool(run)


@router.post("/agentes/{matricula}/senha")
async def agent_password(request: Request, state: StateDep, staff: Admin,
                         matricula: str) -> Response:
    form = await request.form()

    def run() -> Response:
        try:
            a.reset_agent_password(state.engine, matricula, form.get("senha"),
                                   form.get("confirmacao"))
        except a.AdminError as exc:
            return _agents(request, state, staff, 422, error=str(exc))
        _audit_now(state, staff, request, "agent_password", matricula[:40], {})
        return _done(request, "agentes", f"Nova senha do agente {matricula[:40]} definida; "
                     "vale nos dispositivos após a próxima sincronização.")

    return await run_in_threadpool(run)


# --- registry import ------------------------------------------------------------------------------


def _registry(request: Request, state: StateDep, staff: Staff, status: int = 200,
              **context: Any) -> Response:
    with state.engine.connect() as conn:
        recent = a.recent_imports(conn)
    return _page(request, staff, "registro", {
        "recent": recent, "tables": list(COLUMNS), "max_mib": MAX_REGISTRY_UPLOAD // 2**20,
        "shown": IMPORT_PROBLEMS_SHOWN, **context}, status=status)


@router.get("/registro")
def registry_page(request: Request, state: StateDep, staff: Admin) -> Response:
    return _registry(request, state, staff)


@router.post("/registro")
async def registry_upload(request: Request, state: StateDep, staff: Admin) -> Response:
    form = await request.form()
    upload = form.get("arquivo")
    if not isinstance(upload, UploadFile) or not upload.filename:
        return await run_in_threadpool(lambda: _registry(
            request, state, staff, 422, error="Escolha o arquivo do cadastro (.csv ou .json)."))
    data = await upload.read(MAX_REGISTRY_UPLOAD + 1)
    filename, table = upload.filename, form.get("tabela") or ""

    def run() -> Response:
        try:
            result = a.import_upload(
                state.engine, filename=filename, data=data, table=table,
                staff_login=staff.login,
                audit=lambda conn: audit.record(conn, staff, "registry_import",
                                                filename[:200], {"bytes": len(data)}, request))
        except a.AdminError as exc:
            return _registry(request, state, staff, 422, error=str(exc))
        return _registry(request, state, staff, result=result)

    return await run_in_threadpool(run)


@router.get("/registro/{import_id}/erros.csv")
def registry_errors(request: Request, state: StateDep, staff: Admin, import_id: int) -> Response:
    with state.engine.begin() as conn:
        found = a.import_problems(conn, import_id)
        if found is None:
            raise Forbidden("Importação inexistente.", title="Não encontrado")
        audit.record(conn, staff, "registry_errors_csv", str(import_id), {"arquivo": found[0]},
                     request)
    name = found[0].rsplit(".", 1)[0]
    return Response("\ufeff" + found[1], media_type="text/csv; charset=utf-8", headers={
        **page_headers(request),
        "Content-Disposition": f'attachment; filename="erros-{name}.csv"'})


# --- pack versions and dated parameters -----------------------------------------------------------


def _parameters(request: Request, state: StateDep, staff: Staff, status: int = 200,
                **context: Any) -> Response:
    with state.engine.connect() as conn:
        packs = a.known_packs(conn)
        tables = {p: {t: a.dated_table(conn, p, t) for t in a.DATED_TABLES} for p in packs}
        calendars = {p: a.calendar_exceptions(conn, p) for p in packs}
        versions = a.pack_versions(conn)
    return _page(request, staff, "parametros", {
        "packs": packs, "tables": tables, "calendars": calendars, "versions": versions,
        "table_labels": a.DATED_TABLES, "kinds": a.CALENDAR_KINDS, "ok": _ok(request),
        "form": {}, "which": "", **context}, status=status)


@router.get("/parametros")
def parameters_page(request: Request, state: StateDep, staff: Admin) -> Response:
    return _parameters(request, state, staff)


def _parameter_post(kind: str) -> Callable[..., Any]:
    async def handler(request: Request, state: StateDep, staff: Admin) -> Response:
        form = await request.form()
        values = _form_values(form)
        act_number, act_date = form.get("ato_numero"), form.get("ato_data")

        def run() -> Response:
            write = _auditor(staff, request, {"versao": "pack_version", "tabela": "dated_value",
                                              "calendario": "calendar_exception"}[kind],
                             values.get("regulamento"), _detail(values))
            try:
                if kind == "versao":
                    a.publish_pack_version(state.engine, pack_id=form.get("regulamento"),
                                           version=form.get("versao"),
                                           content_hash=form.get("hash"),
                                           from_date=form.get("vigencia"), audit=write,
                                           act_number=act_number, act_date=act_date)
                elif kind == "tabela":
                    a.set_dated_value(state.engine, pack_id=form.get("regulamento"),
                                      table=form.get("tabela"), from_date=form.get("vigencia"),
                                      value=form.get("valor"), audit=write,
                                      act_number=act_number, act_date=act_date)
                else:
                    a.add_calendar_exception(state.engine, pack_id=form.get("regulamento"),
                                             date=form.get("data"), kind=form.get("tipo"),
                                             name=form.get("descricao"), audit=write,
                                             act_number=act_number, act_date=act_date)
            except a.AdminError as exc:
                return _parameters(request, state, staff, 422, error=str(exc), form=values,
                                   which=kind)
            return _done(request, "parametros", "Publicado; os dispositivos recebem na "
                         "próxima sincronização.")

        return await run_in_threadpool(run)

    return handler


for _kind in ("versao", "tabela", "calendario"):
    router.add_api_route(f"/parametros/{_kind}", _parameter_post(_kind), methods=["POST"])
