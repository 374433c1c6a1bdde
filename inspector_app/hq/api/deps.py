"""Shared dependencies: the app's state and the authenticated device."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy import Engine

from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.limits import CLIENT_SCOPE_KEY, DEVICE_SCOPE_KEY
from inspector_app.hq.devices import Device, device_for_token
from inspector_app.hq.ratelimit import RateLimiter


@dataclass
class HQState:
    settings: Settings
    engine: Engine
    blobs: BlobStore
    enrol_limiter: RateLimiter
    verify_limiter: RateLimiter


def get_state(request: Request) -> HQState:
    state: HQState = request.app.state.hq
    return state


StateDep = Annotated[HQState, Depends(get_state)]

_bearer = HTTPBearer(auto_error=False, description="device token from enrolment")


def current_device(
    request: Request,
    state: StateDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Device:
    """The device whose bearer token came with the request: 401 unknown, 403 revoked.
    ``RequestGuard`` already checked it before the body was read (and left it in the
    scope); the lookup here serves an app run without the guard."""
    checked = request.scope.get(DEVICE_SCOPE_KEY)
    if isinstance(checked, Device) and not checked.revoked:
        return checked
    unauthorized = HTTPException(
        status_code=401, detail="Token de dispositivo ausente ou inválido.",
        headers={"WWW-Authenticate": "Bearer"},
    )
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise unauthorized
    device = device_for_token(state.engine, credentials.credentials)
    if device is None:
        raise unauthorized
    if device.revoked:
        raise HTTPException(status_code=403, detail="Dispositivo revogado pela sede.")
    return device


DeviceDep = Annotated[Device, Depends(current_device)]


def client_address(request: Request) -> str:
    """The address rate limits count: the peer, or the client a trusted proxy names
    (``RequestGuard`` resolved it; ``scope["client"]`` holds the same)."""
    resolved = request.scope.get(CLIENT_SCOPE_KEY)
    if isinstance(resolved, str):
        return resolved
    return request.client.host if request.client else "unknown"
