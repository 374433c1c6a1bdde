"""GET /api/v1/pull: reference changes after a cursor, in server order, paginated."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Query

from inspector_app.hq.api.deps import DeviceDep, StateDep
from inspector_app.hq.devices import MAX_PENDING_REPORTED, mark_seen, note_contact
from inspector_app.hq.reference import pull_page
from inspector_app.sync.protocol import DEFAULT_PULL_LIMIT, MAX_PULL_LIMIT, ErrorBody, PullPage

router = APIRouter(tags=["sync"])
log = logging.getLogger("inspector_app.hq.pull")


@router.get(
    "/pull",
    response_model=PullPage,
    # ``snapshot`` only when true (set below): an older app forbids unknown fields.
    response_model_exclude_unset=True,
    responses={
        401: {"model": ErrorBody, "description": "missing or unknown device token"},
        403: {"model": ErrorBody, "description": "device revoked"},
    },
)
def get_pull(
    device: DeviceDep,
    state: StateDep,
    cursor: Annotated[int, Query(ge=0, le=2**62)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PULL_LIMIT)] = DEFAULT_PULL_LIMIT,
    tag: Annotated[str | None, Query(pattern=r"^[0-9a-f]{32}$")] = None,
    acked: Annotated[int | None, Query(ge=0, le=2**62)] = None,
    # Records the device still has to send after its push (optional: older devices omit
    # it); shown in the console's Painel beside the last contact.
    pending: Annotated[int | None, Query(ge=0, le=MAX_PENDING_REPORTED)] = None,
    snapshot: Annotated[bool, Query(description="the device takes a snapshot when its "
                                    "cursor is behind the log's compaction point")] = False,
) -> PullPage:
    if device.last_seen_at is None:
        mark_seen(state.engine, device.id)
    note_contact(state.engine, device.id, pending=pending)
    with state.engine.begin() as conn:
        page = pull_page(conn, device_id=device.id, cursor=cursor, limit=limit, tag=tag,
                         acked=acked, snapshots=snapshot)
    if page.snapshot:
        log.info("device %s is behind the pull log's compaction point (cursor %d): "
                 "answered snapshot", device.id, cursor)
    elif page.resync:
        # After a restore from a backup: the device offers every record again.
        log.warning("device %s is ahead of HQ (cursor %d, %s records acknowledged): "
                    "answered resync", device.id, cursor, acked)
    return PullPage(changes=page.changes, next_cursor=page.next_cursor, more=page.more,
                    resync=page.resync, **({"snapshot": True} if page.snapshot else {}))
