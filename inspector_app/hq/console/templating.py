"""Rendering the console's pages: one Jinja2 environment (autoescaped), the context every
page gets (the staff member, the CSRF token, the navigation), the console's own
Content-Security-Policy and the 403 page."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates

from inspector_app.hq.api.deps import get_state
from inspector_app.hq.console.staff import Staff

HERE = Path(__file__).resolve().parent
templates = Jinja2Templates(directory=str(HERE / "templates"))

# The areas of the navigation: (path, label, roles that see it; empty = every role).
NAV: list[tuple[str, str, tuple[str, ...]]] = [
    ("/console/painel", "Painel", ()),
    ("/console/autos", "Autos", ()),
    ("/console/processos", "Processos", ()),
    ("/console/cassacao", "Cassação", ()),
    ("/console/admin", "Administração", ("administrador",)),
    ("/console/auditoria", "Auditoria", ("administrador",)),
]

_BRASILIA = dt.timezone(dt.timedelta(hours=-3))


def br_datetime(value: str | None) -> str:
    """An ISO timestamp as dd/mm/aaaa hh:mm in Brasília time ("—" when empty)."""
    if not value:
        return "—"
    try:
        moment = dt.datetime.fromisoformat(value)
    except ValueError:
        return value
    if moment.tzinfo is not None:
        moment = moment.astimezone(_BRASILIA)
    return moment.strftime("%d/%m/%Y %H:%M")


def br_date(value: str | None) -> str:
    if not value:
        return "—"
    try:
        return dt.date.fromisoformat(value[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return value


def br_int(value: int) -> str:
    return f"{value:,}".replace(",", ".")


templates.env.filters["br_datetime"] = br_datetime
templates.env.filters["br_date"] = br_date
templates.env.filters["br_int"] = br_int


def content_security_policy(tile_url: str = "") -> str:
    """Only the console's own files; map tiles from the configured tile server."""
    img = "'self' data: blob:"
    if tile_url:
        parts = urlsplit(tile_url.replace("{s}", "a"))
        host = parts.netloc.replace("a.", "*.", 1) if "{s}" in tile_url else parts.netloc
        img += f" {parts.scheme}://{host}"
    return (f"default-src 'self'; script-src 'self'; style-src 'self'; img-src {img}; "
            "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
            "form-action 'self'; frame-ancestors 'none'")


def page_headers(request: Request) -> dict[str, str]:
    settings = get_state(request).settings
    return {"Content-Security-Policy": content_security_policy(settings.console_tile_url),
            "Cache-Control": "no-store"}


def render(request: Request, name: str, context: dict[str, Any] | None = None, *,
           staff: Staff | None = None, status_code: int = 200) -> HTMLResponse:
    """The page ``name`` (a template under ``console/templates``) for ``staff``."""
    from inspector_app.hq.console.auth import session_of

    session = session_of(request) if staff is not None else None
    nav = [(path, label) for path, label, roles in NAV
           if staff is not None and (not roles or staff.role in roles)]
    ctx = {"staff": staff, "csrf_token": session.csrf_token if session else "",
           "nav": nav, "current": request.url.path, **(context or {})}
    response = templates.TemplateResponse(request, name, ctx, status_code=status_code,
                                          headers=page_headers(request))
    return response
