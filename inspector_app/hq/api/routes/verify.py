"""Public verification: ``GET /verify/{code}`` (HTML page from the QR code) and
``GET /api/v1/verify/{code}`` (JSON). No token: anyone holding the paper may check it."""

from __future__ import annotations

import math
from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, JSONResponse

from inspector_app.hq.api.deps import HQState, StateDep, client_address
from inspector_app.hq.verification import render_busy_page, render_page, verify_code
from inspector_app.sync.protocol import ErrorBody, VerifyResult

CodePath = Annotated[str, Path(min_length=1, max_length=40)]

api_router = APIRouter(tags=["verification"])
page_router = APIRouter(tags=["verification"])
BUSY = "Muitas consultas deste endereço; aguarde um minuto e tente de novo."


def _wait(request: Request, state: HQState) -> int:
    """Seconds the client must wait (0: go ahead, this lookup counted): at most
    ``verify_per_minute`` lookups a minute per address, so nobody walks the code space."""
    return math.ceil(state.verify_limiter.take(client_address(request)))


@api_router.get(
    "/verify/{code}",
    response_model=VerifyResult,
    responses={404: {"model": VerifyResult, "description": "no record with this code"},
               429: {"model": ErrorBody, "description": "too many lookups from this address"}},
)
def get_verify_json(code: CodePath, request: Request,
                    state: StateDep) -> VerifyResult | JSONResponse:
    wait = _wait(request, state)
    if wait:
        raise HTTPException(status_code=429, detail=BUSY, headers={"Retry-After": str(wait)})
    result = verify_code(state.engine, code)
    if not result.authentic:
        return JSONResponse(status_code=404, content=result.model_dump())
    return result


@page_router.get(
    "/verify/{code}",
    response_class=HTMLResponse,
    responses={404: {"description": "no authentic record with this code (an HTML page)",
                     "content": {"text/html": {"schema": {"type": "string"}}}},
               429: {"description": "too many lookups from this address (an HTML page)",
                     "content": {"text/html": {"schema": {"type": "string"}}}}},
)
def get_verify_page(code: CodePath, request: Request, state: StateDep) -> HTMLResponse:
    wait = _wait(request, state)
    if wait:
        return HTMLResponse(render_busy_page(), status_code=429,
                            headers={"Retry-After": str(wait)})
    result = verify_code(state.engine, code)
    return HTMLResponse(render_page(result), status_code=200 if result.authentic else 404)
