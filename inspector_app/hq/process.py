"""HQ runs the process after each auto: acts recorded, deadlines, queues, cassação decisions.

The rules are pure (``domain/process.py``); this module stores every act in
``process_events`` (append-only, attachments in ``process_attachments`` with their bytes in
the BlobStore), keeps ``process_state`` (step and nearest deadline, for the queues) in the
same transaction, and lets the decisions reach the devices through the pull log: a
judgement or final decision sets the status of the auto's ``history`` rows (``upheld`` /
``cancelled``) and republishes the holder's ``standing`` (hq/standing.py: only upheld autos
count as definitive). Deadlines use the device's calendar (``process_calendar``).

Who may do what (checked here and by the console's routes): a ``julgador`` judges and
decides appeals; a ``supervisor`` registers the other acts; ``consulta`` only reads.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, and_, insert, select, update

from inspector_app.domain import process as rules_
from inspector_app.domain.deadlines import BusinessCalendar
from inspector_app.domain.process import (
    Deadline,
    Event,
    ProcessError,
    ProcessRules,
    ProcessState,
)
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.process_calendar import calendar_of
from inspector_app.hq.reference import current_row, history_holder_key, lock_holders, upsert_tables
from inspector_app.hq.standing import STANDING_TABLE, _standings
from inspector_app.hq.tables import (
    cassacao_decisions,
    process_attachments,
    process_events,
    process_state,
    records,
    reference_rows,
)
from inspector_app.sync.protocol import display_number

JUDGE_ROLES = frozenset({"julgador"})
REGISTER_ROLES = frozenset({"supervisor"})
JUDGE_EVENTS = frozenset({rules_.EV_JULGAMENTO, rules_.EV_DECISAO_FINAL})

CASSACAO_DECISIONS = {
    "instaurar": "Processo de cassação instaurado",
    "arquivar": "Proposta arquivada pela autoridade",
}
CASSACAO_ACTIONS = {"instaurar": "Instaurar o processo de cassação",
                    "arquivar": "Arquivar a proposta"}
CASSACAO_ROLES = frozenset({"julgador"})


def may_record(role: str, kind: str) -> bool:
    return role in (JUDGE_ROLES if kind in JUDGE_EVENTS else REGISTER_ROLES)


@dataclass(frozen=True)
class Auto:
    """What the process pages show of an auto HQ holds."""

    id: str
    number: str
    verification_code: str
    occurred_on: dt.date
    plate: str
    holder_key: str | None
    holder_id: str | None
    holder_name: str
    pack_id: str | None
    infractions: tuple[Mapping[str, Any], ...]
    outcome: Mapping[str, Any] | None
    cancelled_in_field: str | None  # the cancelamento's number, when a supervisor cancelled it


@dataclass(frozen=True)
class Attachment:
    id: int
    sha256: str
    filename: str
    content_type: str
    size: int


@dataclass(frozen=True)
class RecordedEvent:
    id: int
    kind: str
    on: dt.date
    data: Mapping[str, Any]
    actor: str
    actor_role: str
    address: str | None
    at: str
    attachments: tuple[Attachment, ...] = ()

    @property
    def label(self) -> str:
        return rules_.EVENT_LABELS.get(self.kind, self.kind)


@dataclass(frozen=True)
class ProcessView:
    auto: Auto
    rules: ProcessRules
    calendar: BusinessCalendar
    state: ProcessState
    deadlines: tuple[Deadline, ...]
    events: tuple[RecordedEvent, ...]
    today: dt.date
    allowed: tuple[str, ...] = field(default_factory=tuple)

    @property
    def presumed(self) -> tuple[str, ...]:
        """The presumed rules behind the deadlines shown, in legal Portuguese."""
        return tuple(dict.fromkeys(d.rule.printed for d in self.deadlines if d.rule.presumed))


def _date(value: object) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _auto_from(row: Any, conn: Connection) -> Auto | None:
    try:
        envelope = json.loads(row.payload)
    except ValueError:
        return None
    found = envelope.get("body") if isinstance(envelope, dict) else None
    body: dict[str, Any] = found if isinstance(found, dict) else {}
    outcome = body.get("outcome") if isinstance(body.get("outcome"), dict) else None
    occurred = _date(envelope.get("occurred_on"))
    if occurred is None:
        return None
    holder_id = envelope.get("holder_id") if isinstance(envelope.get("holder_id"), str) else None
    plate_key = envelope.get("plate_key") if isinstance(envelope.get("plate_key"), str) else None
    found_vehicle = body.get("vehicle")
    vehicle: dict[str, Any] = found_vehicle if isinstance(found_vehicle, dict) else {}
    name = ""
    if holder_id:
        holder = current_row(conn, "permit_holders", holder_id)
        name = str(holder.get("name") or "") if holder else ""
    autuado = outcome.get("autuado") if outcome else None
    if not name and isinstance(autuado, dict):
        name = str(autuado.get("name") or "")
    infractions = tuple(i for i in (outcome or {}).get("infractions") or ()
                        if isinstance(i, dict))
    cancelled = conn.execute(
        select(records.c.series, records.c.number).where(
            records.c.kind == "cancelamento", records.c.refers_to == row.id)).first()
    pack = outcome.get("pack") if outcome else None
    return Auto(
        id=row.id, number=display_number(row.series, row.number) or row.id[:8],
        verification_code=row.verification_code, occurred_on=occurred,
        plate=str(vehicle.get("plate") or plate_key or ""),
        holder_key=history_holder_key({"holder_id": holder_id, "plate_key": plate_key}),
        holder_id=holder_id, holder_name=name or "(não identificado)",
        pack_id=pack if isinstance(pack, str) else None, infractions=infractions,
        outcome=outcome,
        cancelled_in_field=(display_number(cancelled.series, cancelled.number) or "sem número")
        if cancelled else None,
    )


def auto_of(conn: Connection, record_id: str, *, lock: bool = False) -> Auto | None:
    query = select(records).where(records.c.id == record_id,
                                  records.c.kind == "auto_infracao")
    if lock and conn.dialect.name == "postgresql":
        query = query.with_for_update()
    row = conn.execute(query).first()
    return _auto_from(row, conn) if row is not None else None


def _events(conn: Connection, record_id: str) -> list[RecordedEvent]:
    rows = conn.execute(select(process_events).where(process_events.c.record_id == record_id)
                        .order_by(process_events.c.id)).all()
    files: dict[int, list[Attachment]] = {}
    if rows:
        for a in conn.execute(select(process_attachments).where(
                process_attachments.c.event_id.in_([r.id for r in rows]))
                .order_by(process_attachments.c.id)):
            files.setdefault(a.event_id, []).append(
                Attachment(a.id, a.sha256, a.filename, a.content_type, a.size))
    return [RecordedEvent(r.id, r.kind, dt.date.fromisoformat(r.on), json.loads(r.data),
                          r.actor, r.actor_role, r.address, r.at, tuple(files.get(r.id, ())))
            for r in rows]


def _build(conn: Connection, auto: Auto, events: Sequence[RecordedEvent],
           today: dt.date) -> ProcessView:
    rules = ProcessRules.from_outcome(auto.outcome)
    cal = calendar_of(conn, auto.pack_id, auto.occurred_on)
    state = rules_.replay(auto.occurred_on, [Event(e.kind, e.on, e.data) for e in events],
                          rules, cal, today=today)
    if state.events and (state.events[-1].on.year > auto.occurred_on.year):
        cal = calendar_of(conn, auto.pack_id, state.events[-1].on)
    allowed = () if auto.cancelled_in_field else rules_.allowed_events(state)
    return ProcessView(auto, rules, cal, state, rules_.deadlines(state, rules, cal),
                       tuple(events), today, allowed)


def view(conn: Connection, record_id: str, today: dt.date) -> ProcessView | None:
    auto = auto_of(conn, record_id)
    if auto is None:
        return None
    return _build(conn, auto, _events(conn, record_id), today)


def record_event(conn: Connection, record_id: str, kind: str, on: dt.date,
                 data: Mapping[str, Any], *, actor: str, role: str, address: str | None,
                 today: dt.date,
                 attachments: Sequence[tuple[str, str, str, int]] = ()) -> ProcessView:
    """Record one act of the process (checked by the domain rules), in the caller's
    transaction; publishes the auto's history status and the holder's standing when the
    decision changes them. ``attachments``: (sha256, file name, content type, size) of
    files already in the BlobStore."""
    if not may_record(role, kind):
        raise ProcessError("role", "Seu perfil não permite registrar esta etapa: "
                           + ("só um julgador julga." if kind in JUDGE_EVENTS
                              else "só um supervisor registra."))
    auto = auto_of(conn, record_id, lock=True)
    if auto is None:
        raise ProcessError("record", "Auto de infração não encontrado.")
    if auto.cancelled_in_field:
        raise ProcessError("record", f"O auto foi cancelado em campo (cancelamento "
                                     f"{auto.cancelled_in_field}): não há processo a seguir.")
    if auto.holder_key:
        lock_holders(conn, [auto.holder_key])
    before = _build(conn, auto, _events(conn, record_id), today)
    cal = before.calendar
    state = rules_.apply(before.state, Event(kind, on, dict(data)), before.rules, cal,
                         today=today)
    at = utc_now()
    event_id = conn.execute(insert(process_events).values(
        record_id=record_id, kind=kind, on=on.isoformat(),
        data=json.dumps(dict(data), ensure_ascii=False, sort_keys=True, default=str),
        actor=actor, actor_role=role, address=address, at=at)).inserted_primary_key
    assert event_id is not None
    if attachments:
        conn.execute(insert(process_attachments), [
            {"event_id": int(event_id[0]), "sha256": sha, "filename": name[:200],
             "content_type": ctype[:100], "size": size}
            for sha, name, ctype, size in attachments])
    after = _build(conn, auto, _events(conn, record_id), today)
    nearest = after.deadlines[0] if after.deadlines else None
    values = {"step": state.step, "next_kind": nearest.kind if nearest else None,
              "next_due": nearest.due.isoformat() if nearest else None,
              "holder_key": auto.holder_key, "updated_at": at}
    if conn.execute(update(process_state).where(process_state.c.record_id == record_id)
                    .values(**values)).rowcount == 0:
        conn.execute(insert(process_state).values(record_id=record_id, **values))
    if state.history_status != before.state.history_status:
        _publish_status(conn, auto, state.history_status, at)
    return after


def _publish_status(conn: Connection, auto: Auto, status: str, now: str) -> None:
    """Set the auto's ``history`` rows to ``status`` and republish the holder's standing."""
    keys = [f"{auto.id}:{i}" for i in range(len(auto.infractions))]
    history = []
    for (text,) in conn.execute(select(reference_rows.c.row).where(
            reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False),
            reference_rows.c.key.in_(keys)).order_by(reference_rows.c.key)):
        row = json.loads(text)
        if row.get("status") != status:
            history.append({**row, "status": status, "updated_at": now})
    tables: list[tuple[str, list[dict[str, Any]]]] = [("history", history)]
    if auto.holder_key:
        tables.append((STANDING_TABLE, _standings(conn, {auto.holder_key: _pack_of(conn, auto)},
                                                  history)))
    upsert_tables(conn, tables)


def _pack_of(conn: Connection, auto: Auto) -> str | None:
    if auto.holder_id:
        holder = current_row(conn, "permit_holders", auto.holder_id)
        if holder and isinstance(holder.get("pack_id"), str):
            return str(holder["pack_id"])
    return auto.pack_id


# --- queues ----------------------------------------------------------------------------------

QUEUE_STEPS = (rules_.AUTUADO, rules_.DEFESA, rules_.JULGADO, rules_.NOTIFICADO, rules_.RECURSO,
               rules_.MANTIDO)


@dataclass(frozen=True)
class QueueRow:
    auto: Auto
    step: str
    deadline: Deadline | None


def queue(conn: Connection, step: str, today: dt.date, *, limit: int = 200) -> list[QueueRow]:
    """The autos at ``step``, nearest deadline first (at most ``limit``)."""
    if step not in QUEUE_STEPS:
        raise ProcessError("step", "Etapa desconhecida.")
    if step == rules_.AUTUADO:
        # No act recorded yet: every auto not cancelled in the field; the defence deadline
        # follows the auto's date, so the oldest come first.
        cancelled = select(records.c.refers_to).where(records.c.kind == "cancelamento",
                                                      records.c.refers_to.is_not(None))
        rows = conn.execute(
            select(records).outerjoin(process_state, process_state.c.record_id == records.c.id)
            .where(and_(records.c.kind == "auto_infracao", process_state.c.record_id.is_(None),
                        records.c.id.not_in(cancelled)))
            .order_by(records.c.occurred_on, records.c.received_at).limit(limit)).all()
        found = []
        for row in rows:
            auto = _auto_from(row, conn)
            if auto is not None:
                v = _build(conn, auto, [], today)
                found.append(QueueRow(auto, step, v.deadlines[0] if v.deadlines else None))
    else:
        ids = list(conn.execute(select(process_state.c.record_id).where(
            process_state.c.step == step).order_by(process_state.c.next_due.nulls_last(),
                                                   process_state.c.record_id).limit(limit))
                   .scalars())
        found = []
        for record_id in ids:
            seen = view(conn, record_id, today)
            if seen is not None:
                found.append(QueueRow(seen.auto, step,
                                      seen.deadlines[0] if seen.deadlines else None))
    far = dt.date.max
    return sorted(found, key=lambda r: r.deadline.due if r.deadline else far)


def queue_counts(conn: Connection) -> dict[str, int]:
    from sqlalchemy import func

    counts = dict(conn.execute(select(process_state.c.step, func.count())
                               .group_by(process_state.c.step)).all())
    cancelled = select(records.c.refers_to).where(records.c.kind == "cancelamento",
                                                  records.c.refers_to.is_not(None))
    counts[rules_.AUTUADO] = int(conn.execute(
        select(func.count()).select_from(records).outerjoin(
            process_state, process_state.c.record_id == records.c.id)
        .where(records.c.kind == "auto_infracao", process_state.c.record_id.is_(None),
               records.c.id.not_in(cancelled))).scalar_one())
    return {step: int(counts.get(step, 0)) for step in QUEUE_STEPS}


# --- cassação ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CassacaoCase:
    holder_key: str
    holder_name: str
    permit_number: str
    standing: Mapping[str, Any]
    proposal: Mapping[str, Any]
    autos: tuple[Mapping[str, Any], ...]  # the live history rows behind it, newest first
    decision: Mapping[str, Any] | None

    def _windows(self, column: str) -> list[tuple[int, int]]:
        try:
            found = json.loads(self.standing.get(column) or "{}")
        except ValueError:
            return []
        return sorted((int(m), int(n)) for m, n in found.items() if str(m).isdigit())

    @property
    def points(self) -> list[tuple[int, int]]:
        return self._windows("points_json")

    @property
    def pending(self) -> list[tuple[int, int]]:
        return self._windows("pending_points_json")


def _holder(conn: Connection, key: str) -> tuple[str, str]:
    if key.startswith("plate:"):
        return f"Placa {key.removeprefix('plate:')} (sem permissionário)", ""
    row = current_row(conn, "permit_holders", key)
    if row is None:
        return f"Permissionário {key} (não cadastrado na sede)", ""
    return str(row.get("name") or key), str(row.get("permit_number") or "")


def latest_decisions(conn: Connection, keys: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The latest cassação decision of each holder (as published in its standing)."""
    found: dict[str, dict[str, Any]] = {}
    if not keys:
        return found
    for row in conn.execute(select(cassacao_decisions).where(
            cassacao_decisions.c.holder_key.in_(list(keys)))
            .order_by(cassacao_decisions.c.id)):
        found[row.holder_key] = {"decision": row.decision,
                                 "label": CASSACAO_DECISIONS.get(row.decision, row.decision),
                                 "reasons": row.reasons, "at": row.at, "by": row.actor,
                                 "proposal": json.loads(row.proposal)}
    return found


def cassacao_queue(conn: Connection) -> list[CassacaoCase]:
    """Holders whose standing proposes cassação (art. 39), definitive proposals first."""
    proposed = []
    for (text,) in conn.execute(select(reference_rows.c.row).where(
            reference_rows.c.table_name == STANDING_TABLE,
            reference_rows.c.deleted.is_(False))):
        row = json.loads(text)
        if row.get("cassacao_proposed") and row.get("cassacao_json"):
            proposed.append(row)
    decisions = latest_decisions(conn, [r["id"] for r in proposed])
    cases = []
    for row in proposed:
        autos = sorted((h for h in _history_of(conn, row["id"]) if h.get("status") != "cancelled"),
                       key=lambda h: (str(h.get("date")), str(h.get("id"))), reverse=True)
        name, permit = _holder(conn, row["id"])
        cases.append(CassacaoCase(row["id"], name, permit, row, json.loads(row["cassacao_json"]),
                                  tuple(autos), decisions.get(row["id"])))
    return sorted(cases, key=lambda c: (bool(c.proposal.get("provisional")),
                                        c.decision is not None, c.holder_name))


def _history_of(conn: Connection, holder_key: str) -> list[dict[str, Any]]:
    return [json.loads(text) for (text,) in conn.execute(
        select(reference_rows.c.row).where(reference_rows.c.table_name == "history",
                                           reference_rows.c.deleted.is_(False),
                                           reference_rows.c.holder_key == holder_key))]


def decide_cassacao(conn: Connection, holder_key: str, decision: str, reasons: str, *,
                    actor: str, role: str) -> dict[str, Any]:
    """Record the authority's decision on a holder's cassação proposal and publish it in
    the holder's ``standing`` row (pull log)."""
    if role not in CASSACAO_ROLES:
        raise ProcessError("role", "Seu perfil não permite decidir propostas de cassação.")
    if decision not in CASSACAO_DECISIONS:
        raise ProcessError("decision", "Decisão: escolha uma das opções.")
    text = reasons.strip()
    if len(text) < rules_.MIN_REASONS:
        raise ProcessError("reasons", f"Fundamentação: escreva ao menos {rules_.MIN_REASONS} "
                                      "caracteres.")
    if len(text) > rules_.MAX_TEXT:
        raise ProcessError("reasons", f"Fundamentação: no máximo {rules_.MAX_TEXT} caracteres.")
    lock_holders(conn, [holder_key])
    standing = current_row(conn, STANDING_TABLE, holder_key)
    if not standing or not standing.get("cassacao_proposed") or not standing.get("cassacao_json"):
        raise ProcessError("holder", "Não há proposta de cassação para este permissionário.")
    autos = [h.get("auto_number") or h.get("id") for h in _history_of(conn, holder_key)
             if h.get("status") != "cancelled"]
    conn.execute(insert(cassacao_decisions).values(
        holder_key=holder_key, decision=decision, reasons=text,
        proposal=standing["cassacao_json"], autos=json.dumps(sorted(set(map(str, autos)))),
        actor=actor, at=utc_now()))
    holder = None if holder_key.startswith("plate:") else current_row(conn, "permit_holders",
                                                                      holder_key)
    pack = holder.get("pack_id") if holder else standing.get("pack_id")
    upsert_tables(conn, [(STANDING_TABLE, _standings(conn, {holder_key: pack}, []))])
    return latest_decisions(conn, [holder_key])[holder_key]
