"""``create_app(settings)``: the HQ FastAPI application.

The database must already be migrated (``inspector-hq init``); the app does not migrate on
start, so two servers never race to change the schema.
"""

from __future__ import annotations

import logging
import os

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError

from inspector_app import __version__
from inspector_app.hq.api.deps import HQState
from inspector_app.hq.api.main import api_router, page_router
from inspector_app.hq.blobs import open_blob_store
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine
from inspector_app.hq.core.security import FailureLimiter
from inspector_app.sync.protocol import API_PREFIX

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
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs",
        redoc_url=None,
    )
    app.state.hq = HQState(
        settings=settings,
        engine=engine,
        blobs=blobs,
        enrol_limiter=FailureLimiter(settings.enrol_failures_per_minute),
    )
    app.include_router(api_router)
    app.include_router(page_router)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(OperationalError, _database_unavailable)
    return app


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
