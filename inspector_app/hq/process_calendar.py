"""The business-day calendar HQ counts a process's deadlines with: the device's own.

The same pack calendar (``inspector_app.calendars``: national + DF/MG holidays, the pack's
days, its pontos facultativos rule) plus the dated exceptions HQ itself publishes in the
``parameters`` reference table (``<pack>|calendar.exceptions``), exactly what a device
applies offline. This module is the one place HQ reads the regulation packs: the
import-linter contract "HQ never imports the device side" names it as its only exception
(``pyproject.toml``), so every other HQ module stays off the pack loader.
"""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import Connection

from inspector_app.calendars import calendar_around
from inspector_app.domain.calendar_exceptions import (
    CALENDAR_EXCEPTIONS_PARAMETER,
    parse_exceptions,
)
from inspector_app.domain.deadlines import BusinessCalendar
from inspector_app.domain.pack import CalendarException
from inspector_app.hq.reference import current_row
from inspector_app.packs import PackError, get_pack

# An auto whose pack HQ does not have (a newer device): weekends only, and the page says so.
WEEKENDS_ONLY = BusinessCalendar(version="sem-calendario-do-regulamento")


def hq_exceptions(conn: Connection, pack_id: str) -> tuple[CalendarException, ...]:
    row = current_row(conn, "parameters", f"{pack_id}|{CALENDAR_EXCEPTIONS_PARAMETER}")
    if row is None:
        return ()
    try:
        return parse_exceptions(json.loads(row["value_json"]), source="hq")
    except (ValueError, KeyError, TypeError):
        return ()  # refused at import (registry.py); never stops a deadline


def calendar_of(conn: Connection, pack_id: str | None, on: dt.date) -> BusinessCalendar:
    """The calendar of ``pack_id`` around ``on`` (a year before to two after)."""
    if not pack_id:
        return WEEKENDS_ONLY
    try:
        pack = get_pack(pack_id)
    except (PackError, KeyError, OSError, ValueError):
        return WEEKENDS_ONLY
    return calendar_around(pack, on, hq_exceptions(conn, pack_id))
