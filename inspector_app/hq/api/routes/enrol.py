"""POST /api/v1/enrol: a device trades a one-time code and its public key for a token."""

from __future__ import annotations

import math

from fastapi import APIRouter, HTTPException, Request

from inspector_app.hq.api.deps import StateDep
from inspector_app.hq.devices import EnrolError, enrol
from inspector_app.sync.protocol import EnrolRequest, EnrolResponse, ErrorBody

router = APIRouter(tags=["enrolment"])


@router.post(
    "/enrol",
    response_model=EnrolResponse,
    responses={
        400: {"model": ErrorBody,
              "description": "code unknown, expired or already used; or a body not JSON"},
        409: {"model": ErrorBody, "description": "this public key is already enrolled"},
        429: {"model": ErrorBody, "description": "too many failed attempts from this address"},
    },
)
def post_enrol(body: EnrolRequest, request: Request, state: StateDep) -> EnrolResponse:
    address = request.client.host if request.client else "unknown"
    wait = state.enrol_limiter.blocked_for(address)
    if wait > 0:
        raise HTTPException(
            status_code=429,
            detail="Muitas tentativas de cadastro com código inválido; aguarde um minuto.",
            headers={"Retry-After": str(math.ceil(wait))},
        )
    try:
        answer = enrol(state.engine, body, address=address)
    except EnrolError as exc:
        if exc.counts:
            state.enrol_limiter.fail(address)
        raise HTTPException(status_code=exc.status, detail=exc.detail) from None
    # The address printed on documents and in their QR: HQ's public URL when configured
    # (HQ_PUBLIC_URL), else the address this device reached HQ at.
    public = state.settings.public_url or str(request.base_url)
    return answer.model_copy(update={"public_url": public.rstrip("/")})
