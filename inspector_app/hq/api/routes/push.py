"""POST /api/v1/push: sealed records in, one answer per record out."""

from __future__ import annotations

import logging
import threading
from collections import Counter

from fastapi import APIRouter

from inspector_app.hq.api.deps import DeviceDep, StateDep
from inspector_app.hq.devices import note_contact
from inspector_app.hq.ingest import ingest
from inspector_app.sync.protocol import ErrorBody, PushRequest, PushResponse

router = APIRouter(tags=["sync"])
log = logging.getLogger("inspector_app.hq.push")
# Batches checked and stored at once in this process. More request threads than this wait
# here instead of contending for the interpreter: a batch holding the pull log's lock then
# gets the CPU back promptly after each database round trip (``make bench``: HQ ingest).
MAX_CONCURRENT_INGESTS = 2
_INGESTING = threading.BoundedSemaphore(MAX_CONCURRENT_INGESTS)


@router.post(
    "/push",
    response_model=PushResponse,
    responses={
        400: {"model": ErrorBody, "description": "the body is not JSON (not even UTF-8)"},
        401: {"model": ErrorBody, "description": "missing or unknown device token"},
        403: {"model": ErrorBody, "description": "device revoked"},
    },
)
def post_push(body: PushRequest, device: DeviceDep, state: StateDep) -> PushResponse:
    with _INGESTING:
        results = ingest(state.engine, device, body.records, state.blobs)
    note_contact(state.engine, device.id)
    counts = Counter(r.status for r in results)
    # Counts only: never a payload (it holds CPF and CNH numbers).
    log.info("push from device %s: %s", device.id, dict(sorted(counts.items())))
    return PushResponse(results=results)
