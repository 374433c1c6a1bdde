"""``create_app(settings)``: the HQ FastAPI application.

The database must already be migrated (``inspector-hq init``); the app does not migrate on
start, so two servers never race to change the schema.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import Engine
from sqlalchemy.exc import DBAPIError, OperationalError

from inspector_app import __version__
from inspector_app.hq.api.deps import HQState
from inspector_app.hq.api.main import api_router, page_router
from inspector_app.hq.blobs import open_blob_store
from inspector_app.hq.console import install as install_console
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine
from inspector_app.hq.core.limits import DatabaseUnavailable, RequestGuard
from inspector_app.hq.devices import Device, device_for_token
from inspector_app.hq.ratelimit import ENROL_FAILURES, VERIFY, RateLimiter
from inspector_app.hq.verification import render_page
from inspector_app.sync.protocol import API_PREFIX, VerifyResult

log = logging.getLogger("inspector_app.hq")
LOG_LEVEL_ENV = "INSPECTOR_HQ_LOG_LEVEL"


def create_app(settings: Settings) -> FastAPI:
    engine = make_engine(settings.database_url)
    blobs = open_blob_store(settings)
    blobs.check()  # a folder HQ cannot write, a bucket it cannot reach: refuse to start
    app = FastAPI(
        title="Inspector HQ",
        version=__version__,
        description="Sede: cadastro de dispositivos, recebimento de autos (push), dados de "
        "referência (pull), arquivos por SHA-256 e verificação pública de autos.",
        # Off unless HQ_API_DOCS=1: the Swagger page loads its scripts from a CDN, and the
        # API's map is nobody's business outside (docs/HQ.md documents the API).
        openapi_url=f"{API_PREFIX}/openapi.json" if settings.api_docs else None,
        docs_url=f"{API_PREFIX}/docs" if settings.api_docs else None,
        redoc_url=None,
    )
    app.state.hq = HQState(
        settings=settings,
        engine=engine,
        blobs=blobs,
        enrol_limiter=RateLimiter(engine, ENROL_FAILURES, settings.enrol_failures_per_minute),
        verify_limiter=RateLimiter(engine, VERIFY, settings.verify_per_minute),
    )
    app.include_router(api_router)
    app.include_router(page_router)
    install_console(app)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(OperationalError, _database_unavailable)
    app.add_middleware(RequestGuard, settings=settings,
                       lookup_device=lambda token: _device_for_token(engine, token),
                       style_hashes=_page_style_hashes())
    return app


def _device_for_token(engine: Engine, token: str) -> Device | None:
    try:
        return device_for_token(engine, token)
    except OperationalError as exc:
        if _unavailable(exc):
            log.warning("database unavailable checking a device token: %s",
                        type(getattr(exc, "orig", exc)).__name__)
            raise DatabaseUnavailable from None
        raise


def _page_style_hashes() -> tuple[str, ...]:
    """The CSP hashes of the verify page's inline ``<style>`` block (the same on every page):
    the browser applies that style and no other."""
    page = render_page(VerifyResult(code="x", authentic=False))
    blocks = re.findall(r"<style>(.*?)</style>", page, flags=re.S)
    return tuple(base64.b64encode(hashlib.sha256(b.encode("utf-8")).digest()).decode("ascii")
                 for b in dict.fromkeys(blocks))


def create_app_from_env() -> FastAPI:
    """The app with settings from the environment (``DATABASE_URL``, ``HQ_BLOB_DIR``,
    ``INSPECTOR_HQ_DATA_DIR``): the factory each worker process of ``inspector-hq serve
    --workers N`` (or ``uvicorn --factory``) builds its app with."""
    from inspector_app.hq.logs import configure_serve_logging

    configure_serve_logging(os.environ.get(LOG_LEVEL_ENV, "info"))
    return create_app(Settings.from_env())


def _unavailable(exc: Exception) -> bool:
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    orig = getattr(exc, "orig", None)
    if type(orig).__module__.startswith("psycopg"):
        return True  # psycopg's OperationalError: connection lost, server shutting down
    text = str(orig).lower()
    return any(s in text for s in ("locked", "busy", "unable to open", "disk i/o"))


async def _database_unavailable(request: Request, exc: Exception) -> JSONResponse:
    """503 while the database is unreachable (restart, network, SQLite busy or locked):
    devices treat it as "HQ offline" and retry; nothing was committed. Logged without SQL
    parameters. Any other OperationalError (a missing table: a bug) stays a 500."""
    if not _unavailable(exc):
        raise exc
    log.warning("database unavailable on %s %s: %s", request.method, request.url.path,
                type(getattr(exc, "orig", exc)).__name__)
    return JSONResponse(status_code=503,
                        content={"detail": "Banco de dados da sede indisponível; tente de novo."},
                        headers={"Retry-After": "5"})


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 naming where and why, never echoing the input: a payload holds CPF and CNH
    numbers, and a lone surrogate in it would make the default answer fail to encode."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")),
               "type": str(e.get("type", ""))} for e in errors]
    return JSONResponse(status_code=422, content={"detail": detail})
