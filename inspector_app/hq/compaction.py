"""Keeping the pull log bounded by the law's windows, not by history (issue 19).

``inspector-hq compact`` (:func:`compact`), run by the administrator (a daily timer,
docs/hq-operations.md), does two things in one transaction holding the pull log's lock:

1. **expires** from the devices' copies the history rows outside every window of the law
   (:func:`expiry_cutoff`: the widest window any pack defines, art. 39, I and the 12-month
   reincidence, counted back from today, plus :data:`EXPIRY_GRACE_DAYS`): each gets a
   tombstone in the pull log, so every device deletes it. HQ keeps it in ``history_facts``:
   it is still a fact of the holder's history, and HQ's standing and report read it there;
2. **compacts** the log up to a floor, the last change older than ``keep_days`` (default
   :data:`DEFAULT_KEEP_DAYS`): an upsert that a later change of the same row superseded and
   every tombstone at or below the floor are deleted. What is left from 0 is a snapshot:
   the latest upsert of every live row, so a newly enrolled device downloads the registry
   and the history inside the windows, not every row ever published.

Cursors stay valid: a device at or past the floor misses nothing (the changes after the
floor are untouched). A device whose cursor is behind the floor may have missed tombstones
that are gone: ``pull_page`` answers it ``snapshot`` (``resync`` to an app that does not
know snapshots), and the device pulls from 0 and then deletes its rows the snapshot did not
name (``sync.client._pull_snapshot``), in one transaction. Each run is recorded in
``pull_compactions``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass

from sqlalchemy import (
    Connection,
    Engine,
    and_,
    bindparam,
    exists,
    func,
    insert,
    or_,
    select,
    update,
)

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.reference import lock_changes, row_json
from inspector_app.hq.standing import (
    DF_POINT_WINDOWS,
    horizon_months,
    timeless_rules,
    window_floor,
)
from inspector_app.hq.tables import changes, history_facts, pull_compactions, reference_rows

DEFAULT_KEEP_DAYS = 30
# Past the widest window, how long a history row stays on the devices: an auto dated a
# little late or a device clock a few days off still finds the rows it counts.
EXPIRY_GRACE_DAYS = 31
_CHUNK = 5000


@dataclass(frozen=True)
class CompactionResult:
    floor: int
    removed: int
    expired: int
    left: int

    def line(self) -> str:
        return (f"registro de alterações compactado até {self.floor}: {self.removed} "
                f"alterações removidas, {self.expired} linhas do histórico expiradas dos "
                f"dispositivos, {self.left} alterações restantes")


def widest_window_months(conn: Connection) -> int:
    """The widest window any published pack defines (``cassacao.point_windows``), the DF
    defaults and the reincidence window included."""
    widest = horizon_months(DF_POINT_WINDOWS)
    for (text,) in conn.execute(select(reference_rows.c.row).where(
            reference_rows.c.table_name == "parameters", reference_rows.c.deleted.is_(False))):
        row = json.loads(text)
        if row.get("name") != "cassacao.point_windows":
            continue
        try:
            windows = [(int(w["months"]), int(w["points"])) for w in json.loads(
                row["value_json"])]
        except (ValueError, TypeError, KeyError):
            continue
        widest = max(widest, horizon_months(windows))
    return widest


def expiry_cutoff(conn: Connection, today: dt.date) -> dt.date:
    """History dated before this day is outside every window for an auto of ``today``."""
    return window_floor(today, widest_window_months(conn)) - dt.timedelta(
        days=EXPIRY_GRACE_DAYS)


def compaction_floor(conn: Connection) -> int:
    """The latest compaction point (0: never compacted)."""
    return int(conn.execute(select(func.coalesce(func.max(pull_compactions.c.floor_seq), 0)))
               .scalar_one())


def _expire_history(conn: Connection, cutoff: dt.date, at: str) -> int:
    """Tombstone every live history row dated before ``cutoff`` (kept in history_facts),
    except the rows of rules that count whatever their date (art. 39 II,
    ``standing.timeless_rules``): the devices' engine counts those too."""
    timeless = timeless_rules(conn)
    keys = list(conn.execute(
        select(reference_rows.c.key).join(
            history_facts, and_(history_facts.c.key == reference_rows.c.key))
        .where(reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False),
               history_facts.c.date < cutoff.isoformat(),
               or_(history_facts.c.rule_id.is_(None),
                   history_facts.c.rule_id.not_in(timeless)))
        .order_by(reference_rows.c.key)).scalars())
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start:start + _CHUNK]
        seqs = [int(s) for s in conn.execute(
            insert(changes).returning(changes.c.seq, sort_by_parameter_order=True),
            [{"table_name": "history", "key": key, "op": "delete",
              "row": row_json({"id": key}), "device_id": None, "at": at} for key in chunk],
        ).scalars()]
        conn.execute(update(reference_rows).where(
            reference_rows.c.table_name == "history", reference_rows.c.key == bindparam("k")
        ).values(deleted=True, seq=bindparam("s")),
            [{"k": key, "s": seq} for key, seq in zip(chunk, seqs, strict=True)])
    return len(keys)


def compact(engine: Engine, *, keep_days: int = DEFAULT_KEEP_DAYS,
            today: dt.date | None = None, now: dt.datetime | None = None) -> CompactionResult:
    """Expire the history outside every window from the devices, then compact the pull log
    up to the last change older than ``keep_days``; one transaction."""
    if keep_days < 0:
        raise ValueError("keep_days must be >= 0")
    moment = now or dt.datetime.now(dt.UTC)
    with engine.begin() as conn:
        lock_changes(conn)
        at = utc_now()
        expired = _expire_history(conn, expiry_cutoff(conn, today or moment.date()), at)
        # Counted after the expiry: with ``keep_days`` 0 its own tombstones go at once.
        horizon = ((now or dt.datetime.now(dt.UTC)) - dt.timedelta(days=keep_days)).isoformat(
            timespec="microseconds")
        floor = int(conn.execute(select(func.coalesce(func.max(changes.c.seq), 0))
                                 .where(changes.c.at <= horizon)).scalar_one())
        floor = max(floor, compaction_floor(conn))
        superseded = exists().where(reference_rows.c.table_name == changes.c.table_name,
                                    reference_rows.c.key == changes.c.key,
                                    reference_rows.c.seq > changes.c.seq)
        removed = conn.execute(changes.delete().where(
            changes.c.seq <= floor, changes.c.device_id.is_(None),
            (changes.c.op == "delete") | superseded)).rowcount or 0
        conn.execute(insert(pull_compactions).values(floor_seq=floor, at=at, removed=removed,
                                                     expired=expired))
        left = int(conn.execute(select(func.count()).select_from(changes)).scalar_one())
    return CompactionResult(floor=floor, removed=int(removed), expired=expired, left=left)
