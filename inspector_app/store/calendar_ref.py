"""Calendar exceptions HQ published for a pack (``ref_parameters`` row
``calendar.exceptions``, pulled through the pull log), applied by the device offline.

A malformed row (an HQ of another version, a hand-edited store) never blocks an evaluation:
it is ignored and the outcome warns that the pack calendar alone was used.
"""

from __future__ import annotations

import json

from inspector_app.domain.calendar_exceptions import (
    CALENDAR_EXCEPTIONS_PARAMETER,
    parse_exceptions,
)
from inspector_app.domain.pack import CalendarException
from inspector_app.store.db import Store


def calendar_exceptions(
    store: Store, pack_id: str
) -> tuple[tuple[CalendarException, ...], tuple[str, ...]]:
    """(exceptions, warnings) for ``pack_id``."""
    row = store.conn.execute(
        "SELECT value_json FROM ref_parameters WHERE pack_id = ? AND name = ?",
        [pack_id, CALENDAR_EXCEPTIONS_PARAMETER],
    ).fetchone()
    if row is None:
        return (), ()
    try:
        return parse_exceptions(json.loads(row[0]), source="hq"), ()
    except ValueError as exc:
        return (), (
            f"Exceções de calendário publicadas pela sede ignoradas ({exc}); prazos contados "
            "com o calendário do regulamento.",
        )
