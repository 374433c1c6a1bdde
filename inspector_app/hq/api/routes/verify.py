"""Public verification: ``GET /verify/{code}`` (HTML page from the QR code) and
``GET /api/v1/verify/{code}`` (JSON). No token: anyone holding the paper may check it."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import HTMLResponse, JSONResponse

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.verification import render_page, verify_code
from inspector_app.sync.protocol import VerifyResult

CodePath = Annotated[str, Path(min_length=1, max_length=40)]

api_router = APIRouter(tags=["verification"])
page_router = APIRouter(tags=["verification"])


@api_router.get(
    "/verify/{code}",
    response_model=VerifyResult,
    responses={404: {"model": VerifyResult, "description": "no record with this code"}},
)
def get_verify_json(code: CodePath, state: StateDep) -> VerifyResult | JSONResponse:
    result = verify_code(state.engine, code)
    if not result.authentic:
        return JSONResponse(status_code=404, content=result.model_dump())
    return result


@page_router.get(
    "/verify/{code}",
    response_class=HTMLResponse,
    responses={404: {"description": "no authentic record with this code (an HTML page)",
                     "content": {"text/html": {"schema": {"type": "string"}}}}},
)
def get_verify_page(code: CodePath, state: StateDep) -> HTMLResponse:
    result = verify_code(state.engine, code)
    return HTMLResponse(render_page(result), status_code=200 if result.authentic else 404)
