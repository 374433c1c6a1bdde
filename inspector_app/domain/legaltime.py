"""Legal time: dates of facts and "today" are read in America/Sao_Paulo.

The DF and Juiz de Fora are both on Brasília time. A fact at 22:30 in Brasília is already
the next day in UTC; counting deadlines or refusing "future" facts from the UTC date would
be wrong for three hours every evening. Every legal date goes through :func:`legal_date`.
"""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

LEGAL_TZ = ZoneInfo("America/Sao_Paulo")

# How far ahead of this device's clock a fact may be dated (clocks drift; an agent types
# the minute). Beyond it the fact is "in the future" and refused.
FUTURE_TOLERANCE = dt.timedelta(minutes=15)


def legal_now() -> dt.datetime:
    return dt.datetime.now(LEGAL_TZ)


def legal_today() -> dt.date:
    return legal_now().date()


def legal_date(moment: dt.datetime) -> dt.date:
    """The calendar date of ``moment`` in Brasília (``moment`` must be aware)."""
    return moment.astimezone(LEGAL_TZ).date()
