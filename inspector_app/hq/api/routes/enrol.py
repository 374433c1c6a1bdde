"""POST /api/v1/enrol: a device trades a one-time code and its public key for a token."""

from __future__ import annotations

import math

from fastapi import APIRouter, HTTPException, Request

from inspector_app.hq.api.deps import StateDep, client_address
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
    """A valid code enrols even from an address that has failed (many devices may sit
    behind one proxy): a blocked address's *wrong* codes are answered 429 with Retry-After.
    What defeats guessing is the code itself (80 random bits, valid for an hour, single
    use); the limit keeps a noisy client's failures from passing unnoticed."""
    address = client_address(request)
    wait = state.enrol_limiter.blocked_for(address)
    try:
        answer = enrol(state.engine, body, address=address)
    except EnrolError as exc:
        if not exc.counts:
            raise HTTPException(status_code=exc.status, detail=exc.detail) from None
        state.enrol_limiter.hit(address)
        if wait > 0:
            raise HTTPException(
                status_code=429,
                detail="Muitas tentativas de cadastro com código inválido; aguarde um minuto.",
                headers={"Retry-After": str(math.ceil(wait))},
            ) from None
        raise HTTPException(status_code=exc.status, detail=exc.detail) from None
    # The address printed on documents and in their QR: HQ's public URL when configured
    # (HQ_PUBLIC_URL), else the address this device reached HQ at.
    public = state.settings.public_url or str(request.base_url)
    return answer.model_copy(update={"public_url": public.rstrip("/")})
