"""Content-addressed files (photos, signatures, PDFs) under /api/v1/blobs.

``POST /blobs/missing`` (which of these does HQ lack?) and ``POST /blobs/bundle`` (many files
in one request) are what the device's sync uses; ``HEAD``/``PUT /blobs/{sha256}`` handle one
file at a time (tools, tests, a hand upload).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

import anyio.to_thread
from fastapi import APIRouter, HTTPException, Path, Request, Response
from pydantic import BaseModel
from starlette.requests import ClientDisconnect

from inspector_app.hq import blob_index
from inspector_app.hq.api.deps import DeviceDep, HQState, StateDep
from inspector_app.hq.blob_quota import Quota, record_uploads
from inspector_app.hq.blobs import BlobError
from inspector_app.hq.devices import Device
from inspector_app.sync.protocol import (
    BUNDLE_MEDIA_TYPE,
    MAX_BUNDLE_PARTS,
    BlobMissing,
    BlobQuery,
    BundlePart,
    BundleResponse,
    ErrorBody,
)


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
    size = blob_index.size(state.engine, state.blobs, sha256)
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
    here = await anyio.to_thread.run_sync(blob_index.missing, state.engine, state.blobs,
                                          [sha256])
    if here:  # not here: a new file counts against the device's quota
        quota = await anyio.to_thread.run_sync(_quota, state, device)
        size = int(declared) if declared and declared.isdigit() else \
            state.settings.max_blob_bytes
        reason = quota.admit(sha256, size)
        if reason is not None:
            raise HTTPException(status_code=413, detail=f"Arquivo recusado: {reason}.")
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
    # Visible now, stored by this request or found there: in HQ's list of files.
    stored_size = await anyio.to_thread.run_sync(state.blobs.size, sha256)
    await anyio.to_thread.run_sync(blob_index.note, state.engine, [(sha256, stored_size)])
    if created:
        await anyio.to_thread.run_sync(record_uploads, state.engine, device.id,
                                       [(sha256, stored_size or 0)])
    return Response(status_code=201 if created else 200)


def _quota(state: HQState, device: Device) -> Quota:
    return Quota.load(state.engine, device.id, max_bytes=state.settings.blob_quota_bytes,
                      max_files=state.settings.blob_quota_files)


@router.post(
    "/blobs/missing",
    response_model=BlobMissing,
    responses={400: {"model": ErrorBody, "description": "the body is not JSON"},
               401: {"model": ErrorBody}, 403: {"model": ErrorBody}},
)
def blobs_missing(body: BlobQuery, device: DeviceDep, state: StateDep) -> BlobMissing:
    """The files of the list HQ does not have, in the order asked, without repeats."""
    return BlobMissing(missing=blob_index.missing(state.engine, state.blobs, body.sha256))


@router.post(
    "/blobs/bundle",
    response_model=BundleResponse,
    responses={
        400: {"model": ErrorBody, "description": "empty, not framed as a bundle, truncated, "
              f"or more than {MAX_BUNDLE_PARTS} files (whole files before the fault are kept)"},
        401: {"model": ErrorBody},
        403: {"model": ErrorBody},
        413: {"model": ErrorBody, "description": "larger than the server accepts"},
    },
    openapi_extra={"requestBody": {"required": True, "content": {
        BUNDLE_MEDIA_TYPE: {"schema": {"type": "string", "format": "binary"}}},
        "description": "files one after another, each preceded by the ASCII line "
                       "'<sha256> <size>\\n'"}},
)
async def post_bundle(request: Request, device: DeviceDep,
                      state: StateDep) -> BundleResponse | Response:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > state.settings.max_bundle_bytes:
        raise HTTPException(status_code=413, detail="Pacote maior que o limite da sede.")
    quota = await anyio.to_thread.run_sync(_quota, state, device)
    sizes: dict[str, int] = {}
    visible: dict[str, int | None] = {}

    def admit(sha: str, size: int) -> str | None:
        reason = quota.admit(sha, size)
        if reason is None:
            sizes[sha] = size
        return reason

    try:
        parts = await state.blobs.put_bundle(
            _limited(request, state.settings.max_bundle_bytes),
            max_bytes=state.settings.max_blob_bytes, max_parts=MAX_BUNDLE_PARTS, admit=admit,
            visible=visible)
    except BlobError as exc:
        raise HTTPException(status_code=exc.status, detail=exc.detail) from None
    except ClientDisconnect:
        log.info("bundle from device %s cut short by the client (whole files kept)", device.id)
        return Response(status_code=400)
    finally:
        # Whatever was stored is listed and charged, even when the request broke off after it.
        await anyio.to_thread.run_sync(blob_index.note, state.engine, list(visible.items()))
        stored = [(sha, size) for sha, size in sizes.items() if sha in visible]
        await anyio.to_thread.run_sync(record_uploads, state.engine, device.id, stored)
    return BundleResponse(parts=[BundlePart(sha256=sha, status=status, reason=reason)
                                 for sha, status, reason in parts])


async def _limited(request: Request, limit: int) -> AsyncIterator[bytes]:
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BlobError(413, "Pacote maior que o limite da sede.")
        yield chunk
