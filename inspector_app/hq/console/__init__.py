"""The HQ web console, served by the HQ app under ``/console`` (docs/ARCHITECTURE.md,
"The HQ console"; docs/hq-console.md).

Every module ``routes_*.py`` of this package that defines ``router`` (a FastAPI
``APIRouter`` with paths under ``/console``) is included by :func:`install`: an area is
added by adding its module and its templates, without editing this file.
"""

from __future__ import annotations

import importlib
import pkgutil

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from inspector_app.hq.console.auth import Forbidden, LoginRequired
from inspector_app.hq.console.templating import HERE, page_headers, render

PREFIX = "/console"


def route_modules() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(HERE)])
                  if m.name.startswith("routes_"))


def install(app: FastAPI) -> None:
    """Mount the console's static files and every ``routes_*`` router on ``app``."""
    app.mount(f"{PREFIX}/static", StaticFiles(directory=str(HERE / "static")),
              name="console-static")
    for name in route_modules():
        module = importlib.import_module(f"{__name__}.{name}")
        router = getattr(module, "router", None)
        if router is not None:
            app.include_router(router)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(LoginRequired, _login_required)
    app.add_exception_handler(Forbidden, _forbidden)


async def _http_error(request: Request, exc: Exception) -> Response:
    """A console path HQ has no page for: a Portuguese page (the API keeps its JSON)."""
    assert isinstance(exc, StarletteHTTPException)
    if not request.url.path.startswith(PREFIX + "/") or exc.status_code not in (404, 405):
        return await http_exception_handler(request, exc)
    from starlette.concurrency import run_in_threadpool

    from inspector_app.hq.console.auth import session_of

    session = await run_in_threadpool(session_of, request)
    title = "Página não encontrada" if exc.status_code == 404 else "Operação não permitida"
    message = ("Esta página não existe no console (ou ainda não foi instalada nesta sede)."
               if exc.status_code == 404 else "Esta página não aceita esta operação.")
    return await run_in_threadpool(
        lambda: render(request, "error.html", {"title": title, "message": message},
                       staff=session.staff if session else None,
                       status_code=exc.status_code))


async def _login_required(request: Request, exc: Exception) -> Response:
    if request.headers.get("hx-request"):
        # htmx follows no redirect into a fragment: send the whole page to the login.
        return Response(status_code=401, headers={"HX-Redirect": f"{PREFIX}/login"})
    target = request.url.path
    if request.url.query:
        target += "?" + request.url.query
    from urllib.parse import quote

    location = f"{PREFIX}/login"
    if request.method == "GET" and target.startswith(PREFIX) and target != location:
        location += "?next=" + quote(target, safe="")
    return RedirectResponse(location, status_code=303, headers=page_headers(request))


async def _forbidden(request: Request, exc: Exception) -> HTMLResponse:
    assert isinstance(exc, Forbidden)
    from starlette.concurrency import run_in_threadpool

    from inspector_app.hq.console.auth import session_of

    session = await run_in_threadpool(session_of, request)
    return await run_in_threadpool(
        lambda: render(request, "error.html", {"title": exc.title, "message": exc.message},
                       staff=session.staff if session else None, status_code=403))
