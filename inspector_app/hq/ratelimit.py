"""Rate limits counted in the database: failed enrolments and public verifications per
client address (the address ``RequestGuard`` resolved: the peer, or the client a trusted
proxy names).

Each counted event is a row of ``rate_events``; an address is blocked while it has
``limit`` events in the last ``window`` seconds. In the database, not in memory, so the
limit is the same behind ``inspector-hq serve --workers N`` and across HQ instances on one
database. Rows older than the window are deleted as new ones arrive.
"""

from __future__ import annotations

import datetime as dt
import random

from sqlalchemy import Engine, delete, func, insert, select

from inspector_app.hq.tables import rate_events

ENROL_FAILURES = "enrol_failure"
VERIFY = "verify"
_PRUNE_EVERY = 50  # on average, one insert in this many also deletes every expired row


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="microseconds")


class RateLimiter:
    def __init__(self, engine: Engine, bucket: str, limit: int, window: float = 60.0) -> None:
        self.engine = engine
        self.bucket = bucket
        self.limit = limit
        self.window = window

    def blocked_for(self, address: str) -> float:
        """Seconds until ``address`` is under the limit again (0 when it is now)."""
        now = dt.datetime.now(dt.UTC)
        since = _iso(now - dt.timedelta(seconds=self.window))
        with self.engine.connect() as conn:
            count, oldest = conn.execute(
                select(func.count(), func.min(rate_events.c.at)).where(
                    rate_events.c.bucket == self.bucket,
                    rate_events.c.address == address[:64],
                    rate_events.c.at > since)).one()
        if count < self.limit or oldest is None:
            return 0.0
        frees_at = dt.datetime.fromisoformat(oldest) + dt.timedelta(seconds=self.window)
        return max(0.001, (frees_at - now).total_seconds())

    def hit(self, address: str) -> None:
        """Count one event for ``address``."""
        now = dt.datetime.now(dt.UTC)
        since = _iso(now - dt.timedelta(seconds=self.window))
        with self.engine.begin() as conn:
            conn.execute(insert(rate_events).values(
                bucket=self.bucket, address=address[:64], at=_iso(now)))
            expired = (rate_events.c.bucket == self.bucket) & (rate_events.c.at <= since)
            if random.random() >= 1 / _PRUNE_EVERY:
                expired &= rate_events.c.address == address[:64]
            conn.execute(delete(rate_events).where(expired))

    def take(self, address: str) -> float:
        """Count one event unless blocked: 0 when counted, else the seconds to wait."""
        wait = self.blocked_for(address)
        if wait == 0:
            self.hit(address)
        return wait
