"""Auditoria: the audit log, newest first, for administrators only."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from sqlalchemy import func, select

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.console.audit import ACTION_LABELS
from inspector_app.hq.console.auth import require_staff
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.console.templating import render
from inspector_app.hq.tables import audit_log

router = APIRouter(prefix="/console", include_in_schema=False)
PAGE = 100


def describe(detail: object) -> str:
    """A detail JSON as a reader sees it: ``chave: valor; …`` (nested objects inline)."""
    if isinstance(detail, dict):
        if not detail:
            return "nenhum"
        return "; ".join(f"{k}: {describe(v)}" for k, v in detail.items())
    if isinstance(detail, list):
        return ", ".join(describe(v) for v in detail) or "nenhum"
    return str(detail)


@router.get("/auditoria")
def audit_page(request: Request, state: StateDep,
               staff: Annotated[Staff, Depends(require_staff("administrador"))],
               quem: Annotated[str, Query(max_length=64)] = "",
               acao: Annotated[str, Query(max_length=60)] = "",
               antes: Annotated[int | None, Query(ge=1)] = None) -> Response:
    query = select(audit_log).order_by(audit_log.c.id.desc()).limit(PAGE + 1)
    if quem.strip():
        query = query.where(audit_log.c.staff_login == quem.strip().lower())
    if acao:
        query = query.where(audit_log.c.action == acao)
    if antes is not None:
        query = query.where(audit_log.c.id < antes)
    with state.engine.connect() as conn:
        rows = list(conn.execute(query))
        total = conn.execute(select(func.count()).select_from(audit_log)).scalar_one()
    more = len(rows) > PAGE
    entries = []
    for row in rows[:PAGE]:
        try:
            detail = json.loads(row.detail)
        except ValueError:
            detail = {}
        entries.append({"id": row.id, "at": row.at, "login": row.staff_login,
                        "action": ACTION_LABELS.get(row.action, row.action),
                        "target": row.target or "", "address": row.address or "",
                        "detail": describe(detail)})
    return render(request, "auditoria.html", {
        "entries": entries, "total": total, "quem": quem, "acao": acao,
        "actions": sorted(ACTION_LABELS.items(), key=lambda kv: kv[1]),
        "next_before": rows[PAGE - 1].id if more else None}, staff=staff)
