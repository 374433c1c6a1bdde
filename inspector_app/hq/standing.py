"""HQ's view of each permit holder from the full history: points, reincidence, cassação.

After each accepted ``auto_infracao`` HQ appends its infractions to the ``history``
reference table (status ``pending``, points as the engine computed them in the sealed
outcome); a ``cancelamento`` of that auto marks them ``cancelled``; an administrator may
change them through the registry (``registry._restate``). Then the holder's
standing is recomputed and published in the
``standing`` reference table through the same pull log (``changes``). Devices keep it in
``ref_standing`` (store migration ``0004_standing``) and show it, labelled as HQ's with its
``as_of`` date, beside their own computation; their rules engine does not read it. An
older device that does not know ``standing`` skips it (``sync.client._apply_change``). It
is never imported from a registry file (``registry.NOT_IMPORTED``).

Cassação (Decreto 15.154/1993, art. 39, I) uses the pack parameter
``cassacao.point_windows`` as HQ publishes it in the ``parameters`` reference table for the
auto's pack; when HQ has not imported it, the DF windows below (12 points in 4 months, 18 in
8, 22 in 12). HQ may not import the pack loader (import-linter), so the pack files are not
read here. A proposal is only a proposal: the authority decides.

Also here: the same plate with the same rule on the same day in autos from two different
devices is written to ``suspected_duplicates`` for ``inspector-hq report``, once per auto
(against the earliest autos received for that plate and day, a bounded set).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, func, insert, select, tuple_
from sqlalchemy import text as sql_text

from inspector_app.domain.deadlines import WINDOW_LAST_DAY_INCLUDED, add_months, within_window
from inspector_app.hq.reference import (
    current_row,
    history_holder_key,
    lock_holders,
    record_history_facts,
    upsert_tables,
)
from inspector_app.hq.tables import (
    cassacao_decisions,
    history_facts,
    records,
    reference_rows,
    suspected_duplicates,
)
from inspector_app.sync.protocol import display_number

STANDING_TABLE = "standing"
DF_POINT_WINDOWS: tuple[tuple[int, int], ...] = ((4, 12), (8, 18), (12, 22))
REINCIDENCE_MONTHS = 12


def infractions_of(envelope: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The infractions of a sealed auto's outcome (rule_id and points), well-formed only."""
    body = envelope.get("body")
    outcome = body.get("outcome") if isinstance(body, Mapping) else None
    found = outcome.get("infractions") if isinstance(outcome, Mapping) else None
    if not isinstance(found, list):
        return []
    out = []
    for inf in found:
        if isinstance(inf, Mapping) and isinstance(inf.get("rule_id"), str):
            points = inf.get("points")
            out.append({"rule_id": inf["rule_id"],
                        "points": points if isinstance(points, int) else 0})
    return out


def _pack_id(envelope: Mapping[str, Any]) -> str | None:
    body = envelope.get("body")
    outcome = body.get("outcome") if isinstance(body, Mapping) else None
    pack = outcome.get("pack") if isinstance(outcome, Mapping) else None
    return pack if isinstance(pack, str) else None


def point_windows(conn: Connection, pack_id: str | None) -> tuple[tuple[int, int], ...]:
    """(months, points) pairs: the published pack parameter, else the DF defaults."""
    if pack_id:
        row = current_row(conn, "parameters", f"{pack_id}|cassacao.point_windows")
        if row is not None:
            try:
                value = json.loads(row["value_json"])
                return tuple((int(w["months"]), int(w["points"])) for w in value)
            except (ValueError, TypeError, KeyError):
                pass
    return DF_POINT_WINDOWS


def _histories_of(conn: Connection, holder_keys: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The live history rows of each holder (``reference_rows.holder_key``, indexed)."""
    found: dict[str, list[dict[str, Any]]] = {key: [] for key in holder_keys}
    keys = list(found)
    for start in range(0, len(keys), 500):
        for holder_key, text in conn.execute(
            select(reference_rows.c.holder_key, reference_rows.c.row).where(
                reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False),
                reference_rows.c.holder_key.in_(keys[start:start + 500]))
        ):
            found[holder_key].append(json.loads(text))
    return found


def compute_standing(history: Sequence[Mapping[str, Any]], windows: Sequence[tuple[int, int]],
                     *, holder_key: str, pack_id: str | None,
                     as_of: dt.date | None = None) -> dict[str, Any]:
    """Points per window, reincidence per rule and the art. 39 proposal, as of the latest
    history date (or ``as_of``).

    Only upheld entries (the auto judged and kept, issue 15) are definitive: they make
    ``points_json``, ``reincidence_json`` and a definitive proposal. Pending entries are
    shown apart (``pending_points_json``, ``provisional_reincidence_json`` counting them
    too) and a proposal that needs them is marked provisional. Cancelled entries count for
    nothing."""
    live = [h for h in history if h.get("status") != "cancelled"]
    dates = [dt.date.fromisoformat(str(h["date"])) for h in live]
    end = as_of or (max(dates) if dates else dt.date.today())

    def inside(months: int) -> list[Mapping[str, Any]]:
        # The engine's one window rule (Lei 9.784/1999 art. 66 §3, windows.boundary default):
        # an entry dated exactly ``months`` before ``end`` is still inside.
        return [h for h, d in zip(live, dates, strict=True)
                if d <= end and within_window(d, months, end, WINDOW_LAST_DAY_INCLUDED)]

    points: dict[str, int] = {}
    pending_points: dict[str, int] = {}
    definitive: dict[str, Any] | None = None
    provisional: dict[str, Any] | None = None
    for months, threshold in windows:
        rows = inside(months)
        upheld = sum(int(h.get("points") or 0) for h in rows if _definitive(h))
        pending = sum(int(h.get("points") or 0) for h in rows if not _definitive(h))
        points[str(months)], pending_points[str(months)] = upheld, pending
        if definitive is None and upheld >= threshold:
            definitive = _points_proposal(upheld, months, threshold, provisional=False)
        if provisional is None and pending and upheld + pending >= threshold:
            provisional = _points_proposal(upheld + pending, months, threshold,
                                           provisional=True)
    proposal = definitive or provisional
    if proposal is None:
        proposal = _drunkenness_proposal(live)
    recent = inside(REINCIDENCE_MONTHS)
    reincidence = _repeats([h for h in recent if _definitive(h)])
    provisional_reincidence = _repeats(recent)
    return {
        "id": holder_key, "pack_id": pack_id, "as_of": end.isoformat(),
        "points_json": json.dumps(points, sort_keys=True),
        "pending_points_json": json.dumps(pending_points, sort_keys=True),
        "reincidence_json": json.dumps(reincidence, sort_keys=True),
        "provisional_reincidence_json": json.dumps(provisional_reincidence, sort_keys=True),
        "cassacao_proposed": proposal is not None,
        "cassacao_json": json.dumps(proposal, sort_keys=True, ensure_ascii=False)
        if proposal else None,
        "windows_json": json.dumps([list(w) for w in windows]),
    }


def _points_proposal(total: int, months: int, threshold: int, *,
                     provisional: bool) -> dict[str, Any]:
    return {"ground": "DF15154.39.I",
            "text": f"{total} pontos em {months} meses (limite {threshold})",
            "provisional": provisional, "citation": "Decreto 15.154/1993, art. 39, I"}


def _definitive(entry: Mapping[str, Any]) -> bool:
    """An entry counts as definitive once the authority upheld its auto."""
    return entry.get("status") == "upheld"


def _repeats(entries: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Earlier occurrences per rule among ``entries`` (rules seen more than once)."""
    per_rule: dict[str, int] = {}
    for h in entries:
        per_rule[str(h["rule_id"])] = per_rule.get(str(h["rule_id"]), 0) + 1
    return {rule: n - 1 for rule, n in sorted(per_rule.items()) if n > 1}


# Art. 39 II: drunkenness or drugs proven "após duas autuações pelo mesmo motivo" (gap G16:
# the second upheld auto under art. 30 XI, no time window; pending ones make it provisional).
DRUNKENNESS_RULE = "DF15154.30.XI"


def _drunkenness_proposal(live: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    rows = [h for h in live if h.get("rule_id") == DRUNKENNESS_RULE]
    autos = {str(h.get("auto_number") or h.get("id")) for h in rows}
    if len(autos) < 2:
        return None
    upheld = {str(h.get("auto_number") or h.get("id")) for h in rows if _definitive(h)}
    return {"ground": "DF15154.39.II", "text": f"{len(autos)} autuações por embriaguez",
            "provisional": len(upheld) < 2, "citation": "Decreto 15.154/1993, art. 39, II"}


def publish_standings(conn: Connection, holders: Mapping[str, str | None]) -> list[int]:
    """Recompute and publish the standing of each holder (key → pack id)."""
    lock_holders(conn, holders)
    return upsert_tables(conn, [(STANDING_TABLE, _standings(conn, holders, []))])


def _standings(conn: Connection, holders: Mapping[str, str | None],
               pending: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The standing of each holder, with ``pending`` history rows about to be published
    (they become HQ's facts first: a new row adds its contribution, a known one whose status
    changed replaces its old one). Each holder's standing is computed by
    :func:`compute_standing` from only the rows inside the widest window of its pack
    (:func:`_window_histories`), which gives the same result as its whole history
    (``tests/hq/test_hq_standing_window.py``). A handful of statements for all the holders,
    whatever their history holds. The caller holds the holders' locks."""
    record_history_facts(conn, pending)
    keys = sorted(holders)
    windows: dict[str | None, tuple[tuple[int, int], ...]] = {}
    for key in keys:
        pack_id = holders[key]
        if pack_id not in windows:
            windows[pack_id] = point_windows(conn, pack_id)
    found = _window_histories(conn, {key: horizon_months(windows[holders[key]])
                                     for key in keys})
    rows = []
    for key in keys:
        end, history = found[key]
        rows.append(compute_standing(history, windows[holders[key]], holder_key=key,
                                     pack_id=holders[key], as_of=end))
    decided = cassacao_decision_columns(conn, keys)
    return [{**row, "cassacao_decision_json": decided.get(row["id"])} for row in rows]


def cassacao_decision_columns(conn: Connection, keys: Sequence[str]) -> dict[str, str]:
    """The authority's latest decision on each holder's cassação proposal (hq/process.py,
    table ``cassacao_decisions``) as the JSON its ``standing`` row publishes."""
    found: dict[str, str] = {}
    for start in range(0, len(keys), 500):
        for row in conn.execute(select(cassacao_decisions).where(
                cassacao_decisions.c.holder_key.in_(list(keys[start:start + 500])))
                .order_by(cassacao_decisions.c.id)):
            found[row.holder_key] = json.dumps(
                {"decision": row.decision, "at": row.at[:10], "reasons": row.reasons,
                 "ground": json.loads(row.proposal).get("ground")},
                sort_keys=True, ensure_ascii=False)
    return found


# History statuses that count for nothing in a standing (compute_standing skips them): the
# latest date of any other row is the date a standing is as of.
UNCOUNTED_STATUSES = ("cancelled",)


def horizon_months(windows: Sequence[tuple[int, int]]) -> int:
    """The widest window a standing looks back: the pack's point windows (art. 39, I) and
    the reincidence window, in months."""
    return max([REINCIDENCE_MONTHS, *(months for months, _ in windows)])


def window_floor(end: dt.date, months: int) -> dt.date:
    """A day on or before the first day a window of ``months`` ending on ``end`` can hold
    (``within_window``, art. 66 §3): a few days of margin for the months' different
    lengths; :func:`compute_standing` draws the exact boundary."""
    return add_months(end, -months) - dt.timedelta(days=4)


def standing_end(history: Sequence[Mapping[str, Any]]) -> dt.date | None:
    """The date a standing of ``history`` is as of: its latest counted row's."""
    dates = [str(h["date"])[:10] for h in history if h.get("status") not in UNCOUNTED_STATUSES]
    return dt.date.fromisoformat(max(dates)) if dates else None


def timeless_rules(conn: Connection) -> tuple[str, ...]:
    """The rules whose autos count for cassação whatever their date – art. 39 II, two
    autuações for drunkenness or drugs with no time window (gap G16): the DF rule and every
    published pack's ``cassacao.drunkenness_rule``. Their history is read beyond the widest
    window (:func:`_window_histories`) and never expired from the devices, whose engine
    counts it too (``domain.engine``, art. 39 II)."""
    found = {DRUNKENNESS_RULE}
    for (text,) in conn.execute(select(reference_rows.c.row).where(
            reference_rows.c.table_name == "parameters", reference_rows.c.deleted.is_(False),
            reference_rows.c.key.like("%|cassacao.drunkenness_rule"))):
        try:
            value = json.loads(json.loads(text)["value_json"])
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(value, str) and value:
            found.add(value)
    return tuple(sorted(found))


def rows_in_horizon(history: Sequence[Mapping[str, Any]], months: int,
                    timeless: Sequence[str] = (DRUNKENNESS_RULE,),
                    ) -> tuple[dt.date | None, list[Mapping[str, Any]]]:
    """Pure form of what :func:`_window_histories` reads for one holder: the standing's end
    and the rows dated from :func:`window_floor` on, with the rows of ``timeless`` rules
    whatever their date."""
    end = standing_end(history)
    if end is None:
        return None, []
    floor = window_floor(end, months).isoformat()
    return end, [h for h in history
                 if str(h["date"])[:10] >= floor or h.get("rule_id") in timeless]


def _window_histories(conn: Connection, horizons: Mapping[str, int]
                      ) -> dict[str, tuple[dt.date | None, list[dict[str, Any]]]]:
    """Per holder (key → widest window in months): the date its standing is as of and the
    history rows inside that window, from ``history_facts``. On PostgreSQL two statements
    for all the holders: the latest counted date of each (one index probe each, newest
    first), then each one's rows from its window's floor (an index range each). On SQLite
    the same two per holder. Then, for all of them, the rows of the timeless rules
    (:func:`timeless_rules`, art. 39 II) dated before the window: one statement, an index
    range on (holder, rule) each, a handful of rows at most."""
    found: dict[str, tuple[dt.date | None, list[dict[str, Any]]]] = {
        key: (None, []) for key in horizons}
    keys = sorted(horizons)
    if not keys:
        return found
    if conn.dialect.name == "postgresql":
        ends = {str(k): dt.date.fromisoformat(str(d)) for k, d in conn.execute(
            sql_text(_PG_ENDS), {"keys": keys, "uncounted": list(UNCOUNTED_STATUSES)})
            if d is not None}
        held = sorted(ends)
        rows: dict[str, list[dict[str, Any]]] = {key: [] for key in held}
        if held:
            for key, text in conn.execute(sql_text(_PG_WINDOWS), {
                    "keys": held,
                    "floors": [window_floor(ends[k], horizons[k]).isoformat() for k in held]}):
                rows[str(key)].append(json.loads(text))
    else:
        f = history_facts.c
        ends, rows = {}, {}
        for key in keys:
            end = conn.execute(select(f.date).where(
                f.holder_key == key, f.status.is_(None) | f.status.not_in(UNCOUNTED_STATUSES))
                .order_by(f.date.desc()).limit(1)).scalar_one_or_none()
            if end is None:
                continue
            ends[key] = dt.date.fromisoformat(str(end))
            rows[key] = [json.loads(t) for t in conn.execute(
                select(f.row).where(f.holder_key == key,
                                    f.date >= window_floor(ends[key], horizons[key])
                                    .isoformat()).order_by(f.date, f.key)).scalars()]
    if ends:
        timeless = timeless_rules(conn)
        f = history_facts.c
        older: dict[str, list[dict[str, Any]]] = {key: [] for key in ends}
        for key, text, date in conn.execute(
                select(f.holder_key, f.row, f.date).where(
                    f.holder_key.in_(sorted(ends)), f.rule_id.in_(timeless))
                .order_by(f.holder_key, f.date, f.key)):
            if date < window_floor(ends[key], horizons[key]).isoformat():  # else read above
                older[key].append(json.loads(text))
        rows = {key: older[key] + rows[key] for key in ends}
    for key, end in ends.items():
        found[key] = (end, rows[key])
    return found


_PG_ENDS = """
SELECT k, (SELECT f.date FROM history_facts f
           WHERE f.holder_key = k
             AND (f.status IS NULL OR f.status <> ALL(CAST(:uncounted AS text[])))
           ORDER BY f.date DESC LIMIT 1)
FROM unnest(CAST(:keys AS text[])) AS k
"""
_PG_WINDOWS = """
SELECT f.holder_key, f.row
FROM unnest(CAST(:keys AS text[]), CAST(:floors AS text[])) AS w(k, floor)
JOIN history_facts f ON f.holder_key = w.k AND f.date >= w.floor
ORDER BY f.holder_key, f.date, f.key
"""


def standing_of(conn: Connection, holder_key: str) -> dict[str, Any] | None:
    found = conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == STANDING_TABLE, reference_rows.c.key == holder_key,
            reference_rows.c.deleted.is_(False))
    ).scalar_one_or_none()
    if found is None:
        return None
    value: dict[str, Any] = json.loads(found)
    return value


@dataclass(frozen=True)
class _Auto:
    """What HQ's bookkeeping needs of an accepted auto de infração."""

    id: str
    number: str | None
    infractions: list[dict[str, Any]]
    date: str
    holder_id: str | None
    plate_key: str | None
    pack_id: str | None

    @property
    def holder_key(self) -> str | None:
        return history_holder_key({"holder_id": self.holder_id, "plate_key": self.plate_key})


def _auto(envelope: Mapping[str, Any]) -> _Auto | None:
    infractions = infractions_of(envelope)
    if not infractions:
        return None
    try:
        date = dt.date.fromisoformat(str(envelope.get("occurred_on"))[:10]).isoformat()
    except ValueError:
        return None
    holder_id, plate_key = envelope.get("holder_id"), envelope.get("plate_key")
    return _Auto(id=str(envelope["id"]),
                 number=display_number(envelope.get("series"), envelope.get("number")),
                 infractions=infractions, date=date,
                 holder_id=holder_id if isinstance(holder_id, str) else None,
                 plate_key=plate_key if isinstance(plate_key, str) else None,
                 pack_id=_pack_id(envelope))


def on_accepted(conn: Connection, envelope: Mapping[str, Any], device_id: str,
                now: str) -> None:
    """Update history, standing and duplicate flags for a record just stored."""
    on_accepted_batch(conn, [envelope], device_id, now)


def on_accepted_batch(conn: Connection, envelopes: Sequence[Mapping[str, Any]],
                      device_id: str, now: str) -> None:
    """Update history, standing and duplicate flags for records of one device just stored
    together, with a handful of statements for the whole batch.

    The holders' locks (:func:`lock_holders`) are taken before their history is read, so a
    standing counts every auto committed before it; the pull log's lock only at the very
    end, around the writes (:func:`upsert_tables`), so concurrent batches wait on it briefly."""
    autos, cancelled_autos = _affected(conn, envelopes)
    if not autos and not cancelled_autos:
        return
    _flag_duplicates(conn, autos, device_id, now)
    touched: dict[str, str | None] = {}
    for auto in [*autos, *cancelled_autos]:
        if auto.holder_key is not None:
            touched.setdefault(auto.holder_key, auto.pack_id)
    lock_holders(conn, touched)
    history: list[dict[str, Any]] = []
    if autos:
        cancelled_already = set(conn.execute(
            select(records.c.refers_to).where(records.c.kind == "cancelamento",
                                              records.c.refers_to.in_([a.id for a in autos]))
        ).scalars())
        for auto in autos:
            status = "cancelled" if auto.id in cancelled_already else "pending"
            history += [{"id": f"{auto.id}:{index}", "holder_id": auto.holder_id,
                         "plate_key": auto.plate_key, "rule_id": inf["rule_id"],
                         "date": auto.date, "status": status, "points": inf["points"],
                         "auto_number": auto.number, "updated_at": now}
                        for index, inf in enumerate(auto.infractions)]
    history += _cancelled_history(conn, cancelled_autos, now)
    standings = _standings(conn, touched, history) if touched else []
    upsert_tables(conn, [("history", history), (STANDING_TABLE, standings)])


def lock_holders_of(conn: Connection, envelopes: Sequence[Mapping[str, Any]]) -> None:
    """Take, at once and in one order, the locks of every holder whose standing these
    records may change: for a path that then handles them one at a time (each taking the
    pull log's lock), so it never waits for a holder's lock while holding that one."""
    autos, cancelled_autos = _affected(conn, envelopes)
    lock_holders(conn, {a.holder_key for a in [*autos, *cancelled_autos]
                        if a.holder_key is not None})


def _affected(conn: Connection,
              envelopes: Sequence[Mapping[str, Any]]) -> tuple[list[_Auto], list[_Auto]]:
    """The autos among ``envelopes`` (with infractions), and the autos HQ holds that the
    cancelamentos among them cancel."""
    autos = [a for a in (_auto(e) for e in envelopes if e.get("kind") == "auto_infracao")
             if a is not None]
    cancelled = [str(e["refers_to"]) for e in envelopes
                 if e.get("kind") == "cancelamento" and isinstance(e.get("refers_to"), str)]
    return autos, _held_autos(conn, cancelled)


def _held_autos(conn: Connection, auto_ids: Sequence[str]) -> list[_Auto]:
    """The autos among ``auto_ids`` HQ holds (those a cancelamento of the batch cancels)."""
    if not auto_ids:
        return []
    found = []
    for (payload,) in conn.execute(
        select(records.c.payload).where(records.c.id.in_(auto_ids),
                                        records.c.kind == "auto_infracao")
    ):
        auto = _auto(json.loads(payload))
        if auto is not None:
            found.append(auto)
    return found


def _cancelled_history(conn: Connection, autos: Sequence[_Auto],
                       now: str) -> list[dict[str, Any]]:
    """The live history rows of ``autos`` not yet cancelled, marked ``cancelled``."""
    keys = [f"{auto.id}:{index}" for auto in autos for index in range(len(auto.infractions))]
    if not keys:
        return []
    out = []
    for (text,) in conn.execute(
        select(reference_rows.c.row).where(
            reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False),
            reference_rows.c.key.in_(keys)).order_by(reference_rows.c.key)
    ):
        row = json.loads(text)
        if row.get("status") != "cancelled":
            out.append({**row, "status": "cancelled", "updated_at": now})
    return out


# How many earlier autos of a (plate, day) from other devices a new auto is compared with:
# the earliest ones received. Bounds the work and the rows whatever a device pushes (two
# devices sending 500 autos each for one plate and day once made a million flags).
MAX_DUPLICATE_CANDIDATES = 20


def _flag_duplicates(conn: Connection, autos: Sequence[_Auto], device_id: str,
                     now: str) -> None:
    """Flag each auto, once, whose plate, day and a rule match an auto from another device:
    one row naming the earliest such auto (of the first :data:`MAX_DUPLICATE_CANDIDATES`
    received for that plate and day) and the first rule they share."""
    with_plate = [a for a in autos if a.plate_key]
    if not with_plate:
        return
    pairs = sorted({(a.plate_key, a.date) for a in with_plate})
    others: dict[tuple[str, str], list[tuple[str, str, set[str]]]] = {}
    for other in _duplicate_candidates(conn, pairs, device_id):
        try:
            envelope = json.loads(other.payload)
        except ValueError:
            continue
        others.setdefault((other.plate_key, other.occurred_on), []).append(
            (other.id, other.device_id, {i["rule_id"] for i in infractions_of(envelope)}))
    rows = []
    for auto in with_plate:
        assert auto.plate_key is not None
        rules = {i["rule_id"] for i in auto.infractions}
        for other_id, other_device, other_rules in others.get((auto.plate_key, auto.date), []):
            shared = sorted(rules & other_rules)
            if shared:
                rows.append({"plate_key": auto.plate_key, "rule_id": shared[0],
                             "occurred_on": auto.date, "record_id": auto.id,
                             "device_id": device_id, "other_record_id": other_id,
                             "other_device_id": other_device, "flagged_at": now})
                break
    if rows:
        conn.execute(insert(suspected_duplicates), rows)


_PG_DUPLICATE_CANDIDATES = """
SELECT r.id, r.device_id, r.payload, r.plate_key, r.occurred_on
FROM unnest(CAST(:plates AS text[]), CAST(:days AS text[])) AS p(plate, day)
CROSS JOIN LATERAL (
    SELECT id, device_id, payload, plate_key, occurred_on, received_at FROM records
    WHERE kind = 'auto_infracao' AND plate_key = p.plate AND occurred_on = p.day
      AND device_id <> :device
    ORDER BY received_at, id LIMIT :n) AS r
ORDER BY r.plate_key, r.occurred_on, r.received_at, r.id
"""


def _duplicate_candidates(conn: Connection, pairs: Sequence[tuple[str | None, str]],
                          device_id: str) -> Any:
    """The first :data:`MAX_DUPLICATE_CANDIDATES` autos received from other devices for
    each (plate, day), in that order. On PostgreSQL one index range per pair on
    ``ix_records_plate_key_occurred_on`` (issue 19: never a scan of the plate's other days
    or of the table, whatever the planner thinks of a small one)."""
    if conn.dialect.name == "postgresql":
        return conn.execute(sql_text(_PG_DUPLICATE_CANDIDATES), {
            "plates": [p for p, _ in pairs], "days": [d for _, d in pairs],
            "device": device_id, "n": MAX_DUPLICATE_CANDIDATES})
    ranked = select(
        records.c.id, records.c.device_id, records.c.payload, records.c.plate_key,
        records.c.occurred_on,
        func.row_number().over(partition_by=(records.c.plate_key, records.c.occurred_on),
                               order_by=(records.c.received_at, records.c.id)).label("n"),
    ).where(
        records.c.kind == "auto_infracao",
        tuple_(records.c.plate_key, records.c.occurred_on).in_(pairs),
        records.c.device_id != device_id,
    ).subquery()
    return conn.execute(select(ranked).where(ranked.c.n <= MAX_DUPLICATE_CANDIDATES)
                        .order_by(ranked.c.plate_key, ranked.c.occurred_on, ranked.c.n))


def count_suspected_duplicates(conn: Connection) -> int:
    return int(conn.execute(select(func.count()).select_from(suspected_duplicates))
               .scalar_one())


def list_suspected_duplicates(conn: Connection, *, limit: int | None = None,
                              offset: int = 0) -> list[dict[str, Any]]:
    """The flags in the order they were raised, ``limit`` of them from ``offset``."""
    query = select(suspected_duplicates).order_by(suspected_duplicates.c.id).offset(offset)
    if limit is not None:
        query = query.limit(limit)
    return [dict(r._mapping) for r in conn.execute(query)]
