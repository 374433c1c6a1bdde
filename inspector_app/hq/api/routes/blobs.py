"""HEAD / PUT /api/v1/blobs/{sha256}: content-addressed files (photos, signatures, PDFs)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Request, Response

from inspector_app.hq.api.deps import DeviceDep, StateDep
from inspector_app.hq.blobs import BlobError
from inspector_app.sync.protocol import ErrorBody

router = APIRouter(tags=["blobs"])

ShaPath = Annotated[str, Path(pattern=r"^[0-9a-f]{64}$", description="lowercase hex SHA-256")]


@router.head(
    "/blobs/{sha256}",
    responses={200: {"description": "HQ has the file"}, 404: {"description": "not here"}},
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
        422: {"model": ErrorBody, "description": "body does not hash to the name"},
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
    return Response(status_code=201 if created else 200)
