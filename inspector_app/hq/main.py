"""``create_app(settings)``: the HQ FastAPI application.

The database must already be migrated (``inspector-hq init``); the app does not migrate on
start, so two servers never race to change the schema.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from inspector_app import __version__
from inspector_app.hq.api.deps import HQState
from inspector_app.hq.api.main import api_router, page_router
from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine
from inspector_app.hq.core.security import FailureLimiter
from inspector_app.sync.protocol import API_PREFIX


def create_app(settings: Settings) -> FastAPI:
    engine = make_engine(settings.database_url)
    settings.blob_dir.mkdir(parents=True, exist_ok=True)
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
        blobs=BlobStore(settings.blob_dir),
        enrol_limiter=FailureLimiter(settings.enrol_failures_per_minute),
    )
    app.include_router(api_router)
    app.include_router(page_router)
    app.add_exception_handler(RequestValidationError, _validation_error)
    return app


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    """422 naming where and why, never echoing the input: a payload holds CPF and CNH
    numbers, and a lone surrogate in it would make the default answer fail to encode."""
    errors = exc.errors() if isinstance(exc, RequestValidationError) else []
    detail = [{"loc": list(e.get("loc", ())), "msg": str(e.get("msg", "")),
               "type": str(e.get("type", ""))} for e in errors]
    return JSONResponse(status_code=422, content={"detail": detail})
