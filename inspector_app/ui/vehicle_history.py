"""What is known about a vehicle before inspecting it: its earlier inspections and sealed
records on this device and, once a sync brought them, HQ's infraction history of the plate
and HQ's standing (points, reincidence, cassação proposal) of its holder or plate.

Nothing here asks HQ: it reads what the pull log already put in the store (``ref_history``,
``ref_standing``), so it works offline and says which part comes from HQ. Qt-free: the
vehicle step calls :func:`load` on the store worker and shows :func:`to_html`.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html import escape
from typing import Any

from inspector_app.domain.identity import IdentityError, parse_plate
from inspector_app.ui.queries import RecordSummary, find_records

INSPECTION_STATUS = {"open": "em aberto", "sealed": "selada", "abandoned": "encerrada sem auto"}
KIND = {"vistoria": "Vistoria", "fiscalizacao": "Fiscalização"}
HQ_STATUS = {"upheld": "mantido", "pending": "pendente de julgamento", "cancelled": "cancelado"}
LIMIT = 10


@dataclass(frozen=True)
class EarlierInspection:
    started_at: str
    kind: str
    status: str
    place: str
    matricula: str


@dataclass(frozen=True)
class HqEntry:
    date: str
    rule_id: str
    article: str
    status: str
    auto_number: str | None


@dataclass(frozen=True)
class VehicleHistory:
    plate: str
    inspections: tuple[EarlierInspection, ...]
    records: tuple[RecordSummary, ...]
    hq_entries: tuple[HqEntry, ...]
    standing: Any = None  # reference.StandingView when HQ sent one and the card lacks it

    @property
    def empty(self) -> bool:
        return not (self.inspections or self.records or self.hq_entries or self.standing)


def load(store: Any, plate_text: str, *, view: Any = None) -> VehicleHistory | None:
    """The vehicle's history (None for text that is not a plate). ``view``: the registry's
    VehicleView, whose card already shows the holder's standing."""
    from inspector_app.packs import get_pack
    from inspector_app.store import reference

    try:
        plate = parse_plate(plate_text)
    except IdentityError:
        return None
    key = plate.canonical_key()
    rows = store.conn.execute(
        "SELECT started_at, kind, status, place, matricula FROM inspections "
        "WHERE plate_key = ? AND status <> 'sealed' ORDER BY started_at DESC LIMIT ?",
        [key, LIMIT]).fetchall()  # a sealed one is listed as its records
    inspections = tuple(EarlierInspection(*r) for r in rows)
    records = tuple(find_records(store, plate=plate.display())[:LIMIT])
    articles: dict[str, str] = {}
    if view is not None:
        try:
            articles = {rid: rule.article for rid, rule in get_pack(view.pack_id).rules.items()}
        except Exception:
            articles = {}
    hq = store.conn.execute(
        "SELECT date, rule_id, status, auto_number FROM ref_history WHERE plate_key = ? "
        "ORDER BY date DESC, id LIMIT ?", [key, LIMIT]).fetchall()
    hq_entries = tuple(HqEntry(d, r, articles.get(r, ""), s, n) for d, r, s, n in hq)
    standing = None
    if view is None or view.standing is None:
        holder = view.holder.id if view is not None and view.holder is not None else None
        standing = reference.standing_for(store, holder_id=holder, plate_key=key)
    return VehicleHistory(plate.display(), inspections, records, hq_entries, standing)


def _br(iso: str) -> str:
    """``2026-05-04`` → ``04/05/2026``; a timestamp in the device's local time."""
    try:
        if "T" in iso:
            moment = dt.datetime.fromisoformat(iso)
            if moment.tzinfo is not None:
                moment = moment.astimezone()
            return moment.strftime("%d/%m/%Y %H:%M")
        return dt.date.fromisoformat(iso[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return iso


def to_html(history: VehicleHistory | None) -> str:
    if history is None:
        return ""
    if history.empty:
        return (f"<p style='color:#5f6368'><b>Histórico do veículo {escape(history.plate)}"
                "</b>: nenhuma inspeção ou auto neste dispositivo e nenhum registro da sede "
                "recebido na sincronização.</p>")
    parts = [f"<p><b>Histórico do veículo {escape(history.plate)}</b></p>"]
    if history.records:
        items = "".join(
            f"<li>{escape(_br(r.created_at))} – {escape(r.kind_label)} n.º "
            f"{escape(r.number)}{' – <b>CANCELADO</b>' if r.cancelled else ''}"
            f"{' – ' + escape(r.place) if r.place else ''}</li>" for r in history.records)
        parts.append(f"<p>Registros selados neste dispositivo:</p><ul>{items}</ul>")
    if history.inspections:
        items = "".join(
            f"<li>{escape(_br(i.started_at))} – {escape(KIND.get(i.kind, i.kind))}, "
            f"{escape(INSPECTION_STATUS.get(i.status, i.status))} – {escape(i.place)} "
            f"(matrícula {escape(i.matricula)})</li>" for i in history.inspections)
        parts.append(f"<p>Inspeções sem auto neste dispositivo:</p><ul>{items}</ul>")
    if history.hq_entries:
        items = "".join(
            f"<li>{escape(_br(e.date))} – {escape(e.rule_id)}"
            f"{' (' + escape(e.article) + ')' if e.article else ''} – "
            f"{escape(HQ_STATUS.get(e.status, e.status))}"
            f"{' – auto ' + escape(e.auto_number) if e.auto_number else ''}</li>"
            for e in history.hq_entries)
        parts.append("<p>Infrações registradas na sede (recebidas na última sincronização):"
                     f"</p><ul>{items}</ul>")
    if history.standing is not None:
        color = "#b3261e" if history.standing.cassacao_proposed else "#5f6368"
        parts.append(f"<p style='color:{color}'>{escape(history.standing.text_pt())}</p>")
    return "".join(parts)
