"""The console's audit log: one append-only row per state-changing action (and per
download of personal data: a PDF, a CSV export). On PostgreSQL a trigger refuses UPDATE and
DELETE of ``audit_log`` (Alembic ``0006_i15a``); nothing in HQ rewrites it.

Every route that changes state calls :func:`record` in the transaction that makes the
change, so the change and its audit row commit together or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fastapi import Request
from sqlalchemy import Connection, insert

from inspector_app.hq.api.deps import client_address
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import audit_log

# Portuguese names of the actions, for the Auditoria page (routes of other areas add theirs
# with ``ACTION_LABELS.update``).
ACTION_LABELS: dict[str, str] = {
    "login": "Entrada no console",
    "login_failed": "Tentativa de entrada recusada",
    "logout": "Saída do console",
    "autos_csv": "Exportação de autos (CSV)",
    "auto_pdf": "Download do PDF do auto",
}


def record(conn: Connection, staff: Staff | None, action: str, target: str | None,
           detail: Mapping[str, Any] | None, request: Request | None, *,
           login: str | None = None) -> None:
    """Append one audit row: who (``staff``, or the ``login`` typed for a refused login),
    when (now, UTC), ``action``, its ``target``, a JSON ``detail`` and the client address
    (the peer, or the client a trusted proxy names)."""
    conn.execute(insert(audit_log).values(
        at=utc_now(),
        staff_id=staff.id if staff else None,
        staff_login=(staff.login if staff else (login or "?"))[:64],
        action=action[:60],
        target=target[:200] if target else None,
        detail=json.dumps(dict(detail or {}), ensure_ascii=False, sort_keys=True,
                          default=str),
        address=client_address(request)[:64] if request is not None else None,
    ))
