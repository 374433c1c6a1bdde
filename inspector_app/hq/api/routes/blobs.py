"""HEAD / PUT /api/v1/blobs/{sha256}: content-addressed files (photos, signatures, PDFs)."""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Path, Request, Response
from pydantic import BaseModel
from starlette.requests import ClientDisconnect

from inspector_app.hq.api.deps import DeviceDep, StateDep
from inspector_app.hq.blobs import BlobError
from inspector_app.sync.protocol import ErrorBody


class BlobRefused(BaseModel):
    """422: ``detail`` is a sentence when the body does not hash to its name, FastAPI's list
    of problems when the name itself is not a SHA-256."""

    detail: str | list[dict[str, Any]]


router = APIRouter(tags=["blobs"])
log = logging.getLogger("inspector_app.hq.blobs")

ShaPath = Annotated[str, Path(pattern=r"^[0-9a-f]{64}$", description="lowercase hex SHA-256")]


@router.head(
    "/blobs/{sha256}",
    responses={200: {"description": "HQ has the file"}, 404: {"description": "not here"},
               401: {"description": "missing or unknown device token (no body: HEAD)"},
               403: {"description": "device revoked (no body: HEAD)"}},
)
def head_blob(sha256: ShaPath, device: DeviceDep, state: StateDep) -> Response:
    size = state.blobs.size(sha256)
    if size is None:
        return Response(status_code=404)
    return Response(status_code=200, headers={"X-Blob-Size": str(size)})


@router.put(
    "/blobs/{sha256}",
    status_code=201,
    responses={
        200: {"description": "already here (nothing written)"},
        201: {"description": "stored"},
        401: {"model": ErrorBody},
        403: {"model": ErrorBody},
        413: {"model": ErrorBody, "description": "larger than the server accepts"},
        422: {"model": BlobRefused,
              "description": "body does not hash to the name (text), or a malformed name (list)"},
    },
)
async def put_blob(
    sha256: ShaPath, request: Request, device: DeviceDep, state: StateDep
) -> Response:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > state.settings.max_blob_bytes:
        raise HTTPException(status_code=413, detail="Arquivo maior que o limite da sede.")
    try:
        created = await state.blobs.put(
            sha256, request.stream(), max_bytes=state.settings.max_blob_bytes
        )
    except BlobError as exc:
        raise HTTPException(status_code=exc.status, detail=exc.detail) from None
    except ClientDisconnect:
        # The upload was cut short (nothing kept: the partial file is removed); the device
        # sends it again. Nobody is left to read an answer, and it is no server error.
        log.info("upload of %s from device %s cut short by the client", sha256[:12], device.id)
        return Response(status_code=400)
    return Response(status_code=201 if created else 200)
