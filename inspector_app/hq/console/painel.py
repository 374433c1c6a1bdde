"""The Painel's figures (issue 15 part C): pure SQLAlchemy over HQ's tables, no web.

* autos de infração of today and of this month (legal time, America/Sao_Paulo: the local
  date the fact's time carries) by órgão, agent and place from ``auto_index`` (filled at
  ingest, hq/autos_index.py) and by rule from ``record_rules`` (hq/record_facts.py);
* pending sync by device: last contact and the pending count each device reported on its
  last pull (``devices.note_contact``);
* numbers issued / voided / missing per range (``numbering.account``);
* suspected duplicates (``standing`` flags them at ingest), resolved here by a supervisor
  as distinct autos or as a duplicate, with a reason;
* vehicles held now (a termo de retenção without a termo de liberação or a cancelamento)
  and for how long.

Every function takes a connection (or the engine) and returns plain data the templates
print; a refused action raises :class:`PainelError` with a Portuguese message.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, and_, exists, func, select, update
from sqlalchemy.orm import aliased

from inspector_app.domain.legaltime import legal_today
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.core.limits import CONSOLE_PAGE, MAX_REASON_CHARS, MIN_REASON_CHARS
from inspector_app.hq.devices import list_devices
from inspector_app.hq.numbering import RangeAccount, account, count_ranges
from inspector_app.hq.reference import live_rows
from inspector_app.hq.tables import auto_index, record_rules, records, suspected_duplicates
from inspector_app.sync.protocol import display_number

AUTO = "auto_infracao"
TOP = 10
# A device not heard from for this long is shown as late (a shift and a half).
LATE_CONTACT = dt.timedelta(hours=18)
RESOLUTIONS = {"distinct": "autos distintos", "duplicate": "duplicidade confirmada"}
DUPLICATE_FILTERS = ("abertas", "resolvidas", "todas")


class PainelError(ValueError):
    """An action the Painel refuses; the message is for the screen (Portuguese)."""


@dataclass(frozen=True)
class Count:
    label: str
    n: int
    key: str | None = None


@dataclass(frozen=True)
class Breakdown:
    """The autos of one period and their counts by órgão, agent, rule and place (the
    :data:`TOP` largest of each, the rest summed in ``others``)."""

    title: str
    first: dt.date
    last: dt.date
    total: int
    by_organ: list[Count]
    by_agent: list[Count]
    by_rule: list[Count]
    by_place: list[Count]


def month_bounds(day: dt.date) -> tuple[dt.date, dt.date]:
    first = day.replace(day=1)
    following = (first + dt.timedelta(days=32)).replace(day=1)
    return first, following - dt.timedelta(days=1)


def _top(rows: Sequence[Any], label: Any = None) -> list[Count]:
    out = [Count(label(r.k) if label else (r.k or "não informado"), int(r.n), r.k)
           for r in rows[:TOP]]
    rest = sum(int(r.n) for r in rows[TOP:])
    if rest:
        out.append(Count("outros", rest))
    return out


def agent_names(conn: Connection) -> dict[str, str]:
    """Matrícula → name, from HQ's inspectors registry."""
    return {str(r["matricula"]): str(r.get("name") or "") for r in live_rows(conn, "inspectors")
            if r.get("matricula") is not None}


def breakdown(conn: Connection, title: str, first: dt.date, last: dt.date) -> Breakdown:
    """The autos de infração whose fact fell on ``first..last``."""
    period = and_(auto_index.c.kind == AUTO,
                  auto_index.c.occurred_at >= first.isoformat(),
                  auto_index.c.occurred_at < (last + dt.timedelta(days=1)).isoformat())

    def grouped(column: Any) -> list[Any]:
        return list(conn.execute(
            select(column.label("k"), func.count().label("n")).where(period)
            .group_by(column).order_by(func.count().desc(), column)).all())

    organs = grouped(auto_index.c.organ)
    total = sum(int(r.n) for r in organs)
    names = agent_names(conn)
    rules = conn.execute(
        select(record_rules.c.rule_id.label("k"), func.count().label("n"))
        .where(record_rules.c.occurred_on.between(first.isoformat(), last.isoformat()))
        .group_by(record_rules.c.rule_id)
        .order_by(func.count().desc(), record_rules.c.rule_id)).all()
    return Breakdown(
        title=title, first=first, last=last, total=total, by_organ=_top(organs),
        by_agent=_top(grouped(auto_index.c.agent_matricula),
                      lambda m: "não informado" if m is None else
                      (f"{names[m]} ({m})" if names.get(m) else f"matrícula {m}")),
        by_rule=_top(list(rules)), by_place=_top(grouped(auto_index.c.place)))


def autos_today_and_month(conn: Connection,
                          today: dt.date | None = None) -> tuple[Breakdown, Breakdown]:
    day = today or legal_today()
    first, last = month_bounds(day)
    return (breakdown(conn, f"Hoje, {day:%d/%m/%Y}", day, day),
            breakdown(conn, f"Mês de {_MONTHS[day.month - 1]} de {day.year}", first, last))


_MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
           "setembro", "outubro", "novembro", "dezembro")


# --- pending sync by device -------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSync:
    id: str
    name: str
    enrolled_at: str
    revoked_at: str | None
    last_contact_at: str | None
    pending_reported: int | None
    pending_reported_at: str | None
    late: bool


def _parse(at: str | None) -> dt.datetime | None:
    if not at:
        return None
    try:
        return dt.datetime.fromisoformat(at)
    except ValueError:
        return None


def sync_by_device(engine: Engine, now: dt.datetime | None = None) -> list[DeviceSync]:
    """Every device not revoked first, those with the most pending records first, then the
    longest silent; revoked ones last."""
    moment = now or dt.datetime.now(dt.UTC)
    out = []
    for d in list_devices(engine):
        contact = _parse(d.last_contact_at or d.last_seen_at)
        out.append(DeviceSync(
            id=d.id, name=d.name, enrolled_at=d.enrolled_at, revoked_at=d.revoked_at,
            last_contact_at=d.last_contact_at or d.last_seen_at,
            pending_reported=d.pending_reported, pending_reported_at=d.pending_reported_at,
            late=d.revoked_at is None and (contact is None or moment - contact > LATE_CONTACT)))
    out.sort(key=lambda s: (s.revoked_at is not None, -(s.pending_reported or 0),
                            s.last_contact_at or ""))
    return out


# --- numbering --------------------------------------------------------------------------------


def numbering_page(engine: Engine, page: int = 1) -> tuple[list[RangeAccount], int]:
    """One page of ranges with their accounting, and the number of ranges."""
    page = max(1, page)
    with engine.connect() as conn:
        total = count_ranges(conn)
    return account(engine, limit=CONSOLE_PAGE, offset=(page - 1) * CONSOLE_PAGE), total


# --- suspected duplicates ---------------------------------------------------------------------


@dataclass(frozen=True)
class AutoRef:
    id: str
    number: str | None
    verification_code: str
    device_id: str
    agent_matricula: str | None
    place: str | None
    created_at: str


@dataclass(frozen=True)
class Duplicate:
    id: int
    plate_key: str
    rule_id: str
    occurred_on: str
    flagged_at: str
    auto: AutoRef | None
    other: AutoRef | None
    resolution: str | None
    resolution_reason: str | None
    resolved_by: str | None
    resolved_at: str | None

    @property
    def resolution_label(self) -> str:
        return RESOLUTIONS.get(self.resolution or "", "em aberto")


def _auto_ref(row: Any, prefix: str) -> AutoRef | None:
    rid = getattr(row, f"{prefix}id")
    if rid is None:
        return None
    return AutoRef(id=rid, number=display_number(getattr(row, f"{prefix}series"),
                                                 getattr(row, f"{prefix}number")),
                   verification_code=getattr(row, f"{prefix}code"),
                   device_id=getattr(row, f"{prefix}device"),
                   agent_matricula=getattr(row, f"{prefix}agent"),
                   place=getattr(row, f"{prefix}place"),
                   created_at=getattr(row, f"{prefix}created"))


def _duplicates_query(which: str) -> Any:
    if which not in DUPLICATE_FILTERS:
        raise PainelError(f"filtro {which!r} desconhecido; use {', '.join(DUPLICATE_FILTERS)}.")
    a, b = aliased(records), aliased(records)
    ia, ib = aliased(auto_index), aliased(auto_index)
    cols = []
    for prefix, t, i in (("a_", a, ia), ("b_", b, ib)):
        cols += [t.c.id.label(f"{prefix}id"), t.c.series.label(f"{prefix}series"),
                 t.c.number.label(f"{prefix}number"),
                 t.c.verification_code.label(f"{prefix}code"),
                 t.c.device_id.label(f"{prefix}device"),
                 i.c.agent_matricula.label(f"{prefix}agent"), i.c.place.label(f"{prefix}place"),
                 t.c.created_at.label(f"{prefix}created")]
    d = suspected_duplicates
    query = (select(d, *cols)
             .outerjoin(a, a.c.id == d.c.record_id)
             .outerjoin(ia, ia.c.record_id == d.c.record_id)
             .outerjoin(b, b.c.id == d.c.other_record_id)
             .outerjoin(ib, ib.c.record_id == d.c.other_record_id))
    if which == "abertas":
        query = query.where(d.c.resolution.is_(None))
    elif which == "resolvidas":
        query = query.where(d.c.resolution.is_not(None))
    return query


def _duplicate(row: Any) -> Duplicate:
    return Duplicate(id=int(row.id), plate_key=row.plate_key, rule_id=row.rule_id,
                     occurred_on=row.occurred_on, flagged_at=row.flagged_at,
                     auto=_auto_ref(row, "a_"), other=_auto_ref(row, "b_"),
                     resolution=row.resolution, resolution_reason=row.resolution_reason,
                     resolved_by=row.resolved_by, resolved_at=row.resolved_at)


def duplicates(conn: Connection, which: str = "abertas", page: int = 1
               ) -> tuple[list[Duplicate], int]:
    """One page of suspected duplicates (``abertas``, ``resolvidas`` or ``todas``), oldest
    first, and how many there are."""
    query = _duplicates_query(which)
    total = int(conn.execute(select(func.count()).select_from(query.subquery())).scalar_one())
    rows = conn.execute(query.order_by(suspected_duplicates.c.id)
                        .limit(CONSOLE_PAGE).offset((max(1, page) - 1) * CONSOLE_PAGE)).all()
    return [_duplicate(r) for r in rows], total


def get_duplicate(conn: Connection, duplicate_id: int) -> Duplicate | None:
    row = conn.execute(_duplicates_query("todas")
                       .where(suspected_duplicates.c.id == duplicate_id)).first()
    return None if row is None else _duplicate(row)


def clean_reason(reason: object) -> str:
    """A reason typed by a person: text, :data:`MIN_REASON_CHARS` to
    :data:`MAX_REASON_CHARS` characters, no control characters."""
    if not isinstance(reason, str):
        raise PainelError("Informe o motivo.")
    text = " ".join(reason.split()) if "\n" not in reason else reason.strip()
    if any((ord(c) < 32 and c not in "\n\t") or ord(c) == 127 for c in text):
        raise PainelError("O motivo contém caracteres de controle; digite-o de novo.")
    if len(text) < MIN_REASON_CHARS:
        raise PainelError(f"Informe o motivo (pelo menos {MIN_REASON_CHARS} caracteres).")
    if len(text) > MAX_REASON_CHARS:
        raise PainelError(f"O motivo passa de {MAX_REASON_CHARS} caracteres; resuma-o.")
    return text


def resolve_duplicate(engine: Engine, duplicate_id: object, *, resolution: object,
                      reason: object, staff_login: str,
                      audit: Callable[[Connection, Duplicate], None] | None = None
                      ) -> Duplicate:
    """Record a supervisor's decision on a suspected duplicate: ``distinct`` (two autos of
    two facts) or ``duplicate`` (one fact written twice; the auto stays on file and follows
    the legal process, where the julgador cancels it). Decided once: a second decision is
    refused, naming who decided. ``audit`` runs in the decision's transaction."""
    try:
        ident = int(str(duplicate_id))
    except ValueError:
        raise PainelError("Suspeita de duplicidade inexistente.") from None
    if resolution not in RESOLUTIONS:
        raise PainelError("Escolha: autos distintos ou duplicidade confirmada.")
    text = clean_reason(reason)
    with engine.begin() as conn:
        current = get_duplicate(conn, ident)
        if current is None:
            raise PainelError("Suspeita de duplicidade inexistente.")
        done = conn.execute(
            update(suspected_duplicates)
            .where(suspected_duplicates.c.id == ident, suspected_duplicates.c.resolution.is_(None))
            .values(resolution=resolution, resolution_reason=text, resolved_by=staff_login,
                    resolved_at=utc_now())).rowcount
        if done != 1:
            raise PainelError(f"Esta suspeita já foi resolvida por {current.resolved_by} em "
                              f"{(current.resolved_at or '')[:10]} "
                              f"({current.resolution_label}).")
        found = get_duplicate(conn, ident)
        assert found is not None
        if audit is not None:
            audit(conn, found)  # in the transaction of the decision
    return found


# --- vehicles held ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Held:
    record_id: str
    number: str | None
    plate: str
    place: str | None
    device_id: str
    since: str
    held_for: dt.timedelta

    @property
    def held_for_text(self) -> str:
        return duration_text(self.held_for)


def duration_text(delta: dt.timedelta) -> str:
    minutes = max(0, int(delta.total_seconds()) // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days} d {hours} h"
    return f"{hours} h {mins:02d} min" if hours else f"{mins} min"


def vehicles_held(conn: Connection, now: dt.datetime | None = None,
                  limit: int = CONSOLE_PAGE) -> tuple[list[Held], int]:
    """Termos de retenção HQ holds without a termo de liberação or a cancelamento referring
    to them (the device's ``services.vehicles_held`` rule), longest held first, and how
    many there are."""
    moment = now or dt.datetime.now(dt.UTC)
    x = aliased(records)
    held = and_(records.c.kind == "termo_retencao",
                ~exists().where(x.c.refers_to == records.c.id,
                                x.c.kind.in_(("termo_liberacao", "cancelamento"))))
    total = int(conn.execute(select(func.count()).select_from(records).where(held))
                .scalar_one())
    rows = conn.execute(select(records.c.id, records.c.series, records.c.number,
                               records.c.plate_key, records.c.device_id,
                               records.c.created_at, records.c.payload)
                        .where(held).order_by(records.c.created_at, records.c.id)
                        .limit(limit)).all()
    out = []
    for r in rows:
        plate, place = r.plate_key or "", None
        try:
            body = json.loads(r.payload).get("body") or {}
            plate = str((body.get("vehicle") or {}).get("plate") or plate)
            found = body.get("place")
            place = found[:200] if isinstance(found, str) and found.strip() else None
        except (ValueError, AttributeError):
            pass
        since = _parse(r.created_at) or moment
        out.append(Held(record_id=r.id, number=display_number(r.series, r.number),
                        plate=plate, place=place, device_id=r.device_id, since=r.created_at,
                        held_for=moment - since))
    return out, total
