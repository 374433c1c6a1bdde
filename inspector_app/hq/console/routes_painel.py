"""Painel: today's and this month's autos (charts as SVG), pending sync by device,
numbering per range, suspected duplicates (resolved by a supervisor) and vehicles held.
Any staff member sees it; only supervisors and administrators resolve duplicates."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response
from sqlalchemy import Connection

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.console import audit
from inspector_app.hq.console import painel as p
from inspector_app.hq.console.auth import Forbidden, require_staff
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.console.svg import bar_chart
from inspector_app.hq.console.templating import page_headers, render
from inspector_app.hq.core.limits import CONSOLE_PAGE, MAX_REASON_CHARS

router = APIRouter(prefix="/console", include_in_schema=False)
AnyStaff = Annotated[Staff, Depends(require_staff())]
Resolver = Annotated[Staff, Depends(require_staff("supervisor", "administrador"))]
RESOLVERS = ("supervisor", "administrador")

audit.ACTION_LABELS.update({"duplicate_resolved": "Suspeita de duplicidade resolvida"})


def _charts(b: p.Breakdown) -> dict[str, object]:
    return {name: bar_chart(f"{title} – {b.title}", [(c.label, c.n) for c in counts])
            for name, title, counts in (("organ", "Por órgão", b.by_organ),
                                        ("agent", "Por agente", b.by_agent),
                                        ("rule", "Por regra", b.by_rule),
                                        ("place", "Por local", b.by_place))}


@router.get("/painel")
def painel_page(request: Request, state: StateDep, staff: AnyStaff) -> Response:
    with state.engine.connect() as conn:
        today, month = p.autos_today_and_month(conn)
        open_duplicates = p.duplicates(conn, "abertas")[1]
        held, held_total = p.vehicles_held(conn)
    devices = p.sync_by_device(state.engine)
    ranges, ranges_total = p.numbering_page(state.engine, 1)
    return render(request, "painel/painel.html", {
        "periods": [(today, _charts(today)), (month, _charts(month))],
        "devices": devices, "held": held, "held_total": held_total,
        "open_duplicates": open_duplicates, "ranges": ranges, "ranges_total": ranges_total,
        "page_size": CONSOLE_PAGE}, staff=staff)


@router.get("/painel/numeracao")
def numbering_page(request: Request, state: StateDep, staff: AnyStaff,
                   pagina: Annotated[int, Query(ge=1, le=1_000_000)] = 1) -> Response:
    ranges, total = p.numbering_page(state.engine, pagina)
    return render(request, "painel/numeracao.html", {
        "ranges": ranges, "total": total, "pagina": pagina, "page_size": CONSOLE_PAGE},
        staff=staff)


def _duplicates_page(request: Request, state: StateDep, staff: Staff, filtro: str,
                     pagina: int, *, error: str = "", error_id: int | None = None,
                     form: dict[str, str] | None = None, status: int = 200) -> Response:
    if filtro not in p.DUPLICATE_FILTERS:
        raise Forbidden("Filtro desconhecido.", title="Filtro inválido")
    with state.engine.connect() as conn:
        rows, total = p.duplicates(conn, filtro, pagina)
    return render(request, "painel/duplicidades.html", {
        "rows": rows, "total": total, "filtro": filtro, "pagina": pagina,
        "filters": p.DUPLICATE_FILTERS, "page_size": CONSOLE_PAGE,
        "can_resolve": staff.role in RESOLVERS, "resolutions": p.RESOLUTIONS,
        "error": error, "error_id": error_id, "form": form or {},
        "max_reason": MAX_REASON_CHARS}, staff=staff, status_code=status)


@router.get("/painel/duplicidades")
def duplicates_page(request: Request, state: StateDep, staff: AnyStaff,
                    filtro: str = "abertas",
                    pagina: Annotated[int, Query(ge=1, le=1_000_000)] = 1) -> Response:
    return _duplicates_page(request, state, staff, filtro, pagina)


@router.post("/painel/duplicidades/{duplicate_id}")
async def resolve(request: Request, state: StateDep, staff: Resolver,
                  duplicate_id: int) -> Response:
    form = await request.form()
    resolution, reason = form.get("resolucao"), form.get("motivo")
    from starlette.concurrency import run_in_threadpool

    def write_audit(conn: Connection, done: p.Duplicate) -> None:
        audit.record(conn, staff, "duplicate_resolved", f"suspeita {done.id}",
                     {"resolução": p.RESOLUTIONS[done.resolution or ""],
                      "placa": done.plate_key, "regra": done.rule_id, "dia": done.occurred_on,
                      "autos": [a.number or a.id for a in (done.auto, done.other) if a],
                      "motivo": done.resolution_reason}, request)

    try:
        await run_in_threadpool(lambda: p.resolve_duplicate(
            state.engine, duplicate_id, resolution=resolution, reason=reason,
            staff_login=staff.login, audit=write_audit))
    except p.PainelError as exc:
        message = str(exc)
        return await run_in_threadpool(lambda: _duplicates_page(
            request, state, staff, "abertas", 1, error=message, error_id=duplicate_id,
            form={"resolucao": str(resolution or ""), "motivo": str(reason or "")[:2000]},
            status=422))
    return RedirectResponse(f"/console/painel/duplicidades?filtro=resolvidas#d{duplicate_id}",
                            status_code=303, headers=page_headers(request))
