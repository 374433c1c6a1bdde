"""All API routes under ``/api/v1``; the public verify page sits outside it."""

from __future__ import annotations

from fastapi import APIRouter

from inspector_app.hq.api.routes import blobs, enrol, health, pull, push, verify
from inspector_app.sync.protocol import API_PREFIX

api_router = APIRouter(prefix=API_PREFIX)
api_router.include_router(health.router)
api_router.include_router(enrol.router)
api_router.include_router(push.router)
api_router.include_router(pull.router)
api_router.include_router(blobs.router)
api_router.include_router(verify.api_router)

page_router = verify.page_router
