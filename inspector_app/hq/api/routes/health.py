"""GET /api/v1/health: the server answers and reaches its database."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text
from sqlalchemy.exc import SQLAlchemyError

from inspector_app.hq.api.deps import StateDep
from inspector_app.sync.protocol import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health, responses={503: {"model": Health}})
def get_health(state: StateDep) -> Health | JSONResponse:
    try:
        with state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        body = Health(status="degraded", database=type(exc).__name__)
        return JSONResponse(status_code=503, content=body.model_dump())
    return Health(status="ok", database="ok")
