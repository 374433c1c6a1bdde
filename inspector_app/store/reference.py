"""Reference data (owned by HQ), read-only: plate, driver and inspector lookups for the GUI.

The device never edits these tables except through :mod:`registry_import` (and, later,
sync). Plates are looked up by :meth:`Plate.canonical_key`, so ``ABC1234`` finds a vehicle
registered as ``ABC1C34`` and the reverse. Warnings are computed for a given date with the
parameters of the vehicle's regulation pack (vistoria period, maximum age); the rules
engine stays the authority on infractions, these are what the inspector sees first.
HQ's standing of a holder (``ref_standing``: points, reincidence, cassação proposal from
every device's autos) is read as HQ published it and labelled as HQ's wherever it is shown.
"""

from __future__ import annotations

import datetime as dt
import json
import time
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector_app.domain.bans import ban_warning
from inspector_app.domain.deadlines import add_months
from inspector_app.domain.identity import IdentityError, check_cnh, normalize_cpf, parse_plate
from inspector_app.domain.legaltime import legal_today
from inspector_app.domain.pack import Pack
from inspector_app.packs import PackError, get_pack
from inspector_app.store import dbapi
from inspector_app.store.db import Store

__all__ = [
    "PERMIT_STATUSES",
    "DriverView",
    "HolderView",
    "InspectorView",
    "LineView",
    "StandingView",
    "VehicleView",
    "counts",
    "find_driver",
    "find_inspector",
    "find_vehicle",
    "history_for",
    "search_vehicles",
    "standing_for",
]

# Permit status codes in ref_permit_holders.permit_status, with the Portuguese label.
PERMIT_STATUSES: dict[str, str] = {
    "active": "ativa",
    "suspended": "suspensa",
    "revoked": "cassada",
    "expired": "vencida",
}

# Short names (as in import files and counts) → table.
TABLES: dict[str, str] = {
    "permit_holders": "ref_permit_holders",
    "lines": "ref_lines",
    "vehicles": "ref_vehicles",
    "drivers": "ref_drivers",
    "inspectors": "ref_inspectors",
    "history": "ref_history",
    "parameters": "ref_parameters",
    "pack_versions": "ref_pack_versions",
}

# CNH categories that allow driving a vehicle with more than 8 passenger seats
# (CTB art. 143 IV: "D"; "E" includes D).
_CNH_PASSENGER_CATEGORIES = frozenset({"D", "E", "AD", "AE"})


def _date(value: object) -> dt.date | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def _br(date: dt.date) -> str:
    return date.strftime("%d/%m/%Y")


def _and(items: list[str]) -> str:
    """"a", "a e b", "a, b e c"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " e " + items[-1]


def _rows(store: Store, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    cursor = store.conn.execute(sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


@dataclass(frozen=True)
class HolderView:
    """The permissionário (pf) or operator company (pj) a vehicle or driver belongs to."""

    id: str
    kind: str
    name: str
    cpf: str | None
    cnpj: str | None
    permit_number: str
    permit_status: str
    permit_valid_until: dt.date | None
    pack_id: str
    city: str | None
    ban_reason: str | None = None
    ban_from: dt.date | None = None

    @property
    def document(self) -> str | None:
        """CPF for a person, CNPJ for a company (unformatted)."""
        return self.cpf if self.kind == "pf" else self.cnpj

    @property
    def permit_status_pt(self) -> str:
        return PERMIT_STATUSES.get(self.permit_status, self.permit_status)


@dataclass(frozen=True)
class LineView:
    id: str
    code: str
    name: str
    route: str | None

    def label(self) -> str:
        """"0.110 – Planaltina / Rodoviária"."""
        return f"{self.code} – {self.name}"


CASSACAO_DECISIONS_PT = {"instaurar": "processo de cassação instaurado pela autoridade",
                         "arquivar": "proposta arquivada pela autoridade"}


@dataclass(frozen=True)
class StandingView:
    """HQ's standing of a permit holder (or of a plate without a holder), as pulled into
    ``ref_standing``: HQ's figures from every device's autos, as of ``as_of``.

    Not the device's computation: the rules engine works from ``ref_history`` and the
    inspection at hand; this is shown beside it, labelled as HQ's.
    """

    key: str  # holder id, or "plate:<plate_key>"
    pack_id: str | None
    as_of: dt.date | None
    points: tuple[tuple[int, int], ...]  # (months, points), shortest window first
    reincidence: tuple[tuple[str, int], ...]  # (rule id, earlier occurrences in 12 months)
    cassacao_proposed: bool  # art. 39, I; a proposal for the authority, never a decision
    cassacao_citation: str | None = None  # "Decreto 15.154/1993, art. 39, I"
    cassacao_text: str | None = None  # "14 pontos em 4 meses (limite 12)"
    cassacao_provisional: bool = False  # rests on autos not yet upheld
    # Issue 15: HQ counts only upheld autos as definitive (``points``, ``reincidence``);
    # the points of autos still pending judgement and the reincidence counting them are
    # shown apart. The authority's decision on the proposal, when there is one.
    pending_points: tuple[tuple[int, int], ...] = ()
    provisional_reincidence: tuple[tuple[str, int], ...] = ()
    cassacao_decision: str | None = None  # "instaurar" | "arquivar"
    cassacao_decided_on: dt.date | None = None

    @property
    def plate_key(self) -> str | None:
        return self.key.removeprefix("plate:") if self.key.startswith("plate:") else None

    def text_pt(self) -> str:
        """One sentence in Portuguese saying this is HQ's standing and what it holds."""
        when = f"em {_br(self.as_of)}" if self.as_of else "data não informada"
        whose = f"placa {self.plate_key}, " if self.plate_key else ""
        parts = []
        if self.points:
            (months, first), *rest = self.points
            windows = [f"{first} {'ponto' if first == 1 else 'pontos'} em {months} meses"]
            windows += [f"{n} em {m} meses" for m, n in rest]
            parts.append(_and(windows))
        else:
            parts.append("pontos não informados")
        if any(n for _, n in self.pending_points):
            pending = [f"{n} em {m} meses" for m, n in self.pending_points]
            parts.append(f"pendentes de julgamento (provisórios): {_and(pending)}")
        if self.reincidence:
            rules = [f"{rule} ({n + 1} ocorrências)" for rule, n in self.reincidence]
            parts.append(f"reincidência (12 meses) em {_and(rules)}")
        else:
            parts.append("sem reincidência")
        extra = [(r, n) for r, n in self.provisional_reincidence
                 if (r, n) not in self.reincidence]
        if extra:
            rules = [f"{rule} ({n + 1} ocorrências)" for rule, n in extra]
            parts.append(f"reincidência provisória, com autos pendentes, em {_and(rules)}")
        if self.cassacao_proposed:
            text = "proposta de cassação"
            if self.cassacao_citation:
                text += f" ({self.cassacao_citation})"
            if self.cassacao_text:
                text += f": {self.cassacao_text}"
            if self.cassacao_provisional:
                text += " – provisória (inclui autos pendentes)"
            if self.cassacao_decision in CASSACAO_DECISIONS_PT:
                text += f"; {CASSACAO_DECISIONS_PT[self.cassacao_decision]}"
                if self.cassacao_decided_on:
                    text += f" em {_br(self.cassacao_decided_on)}"
            parts.append(text)
        else:
            parts.append("sem proposta de cassação")
        return f"Situação na sede ({whose}{when}): " + "; ".join(parts) + "."


@dataclass(frozen=True)
class VehicleView:
    """A registered vehicle with its holder, line and the warnings for ``checked_on``."""

    id: str
    plate: str
    plate_key: str
    renavam: str | None
    chassis: str | None
    make_model: str | None
    species: str | None
    fleet_number: str | None
    chassis_year: int | None
    body_year: int | None
    seats: int | None
    doors: int | None
    category: str | None
    uf: str | None
    insurance_policy: str | None
    insurance_valid_until: dt.date | None
    last_vistoria: dt.date | None
    vistoria_valid_until: dt.date | None
    pack_id: str
    updated_at: str
    holder: HolderView | None
    line: LineView | None
    checked_on: dt.date
    warnings: tuple[str, ...] = ()
    standing: StandingView | None = None  # HQ's, for the holder (or the plate without one)

    @property
    def plate_display(self) -> str:
        """"ABC-1234" for an old plate, "ABC1D23" for a Mercosul plate."""
        return parse_plate(self.plate).display()

    def case_vehicle(self) -> dict[str, object]:
        """The ``vehicle`` object of a rules-engine case (``inspector rules evaluate``)."""
        return {
            "plate": self.plate,
            "chassis_year": self.chassis_year,
            "body_year": self.body_year,
            "seats": self.seats,
            "doors": self.doors,
            "insurance_valid_until": _iso(self.insurance_valid_until),
            "last_vistoria": _iso(self.last_vistoria),
        }


@dataclass(frozen=True)
class DriverView:
    id: str
    name: str
    cpf: str
    cnh: str | None
    cnh_category: str | None
    cnh_valid_until: dt.date | None
    role: str
    registered: bool
    holder: HolderView | None
    checked_on: dt.date
    warnings: tuple[str, ...] = ()

    def case_driver(self) -> dict[str, object]:
        """The ``driver`` object of a rules-engine case."""
        out: dict[str, object] = {"cpf": self.cpf, "registered": self.registered, "name": self.name}
        if self.cnh is not None:
            out["cnh"] = self.cnh
        return out


@dataclass(frozen=True)
class InspectorView:
    id: str
    matricula: str
    name: str
    role: str
    organ: str | None
    active: bool
    password_hash: str = field(repr=False)


def _iso(date: dt.date | None) -> str | None:
    return None if date is None else date.isoformat()


# --------------------------------------------------------------------------------------------
# Holders, lines, warnings


def _holder(row: Mapping[str, Any]) -> HolderView:
    return HolderView(
        id=row["id"],
        kind=row["kind"],
        name=row["name"],
        cpf=row["cpf"],
        cnpj=row["cnpj"],
        permit_number=row["permit_number"],
        permit_status=row["permit_status"],
        permit_valid_until=_date(row["permit_valid_until"]),
        pack_id=row["pack_id"],
        city=row["city"],
        ban_reason=row.get("ban_reason"),
        ban_from=_date(row.get("ban_from")),
    )


def _load_holder(store: Store, holder_id: str | None) -> HolderView | None:
    if holder_id is None:
        return None
    rows = _rows(store, "SELECT * FROM ref_permit_holders WHERE id = ?", [holder_id])
    return _holder(rows[0]) if rows else None


def _load_line(store: Store, line_id: str | None) -> LineView | None:
    if line_id is None:
        return None
    rows = _rows(store, "SELECT id, code, name, route FROM ref_lines WHERE id = ?", [line_id])
    if not rows:
        return None
    r = rows[0]
    return LineView(id=r["id"], code=r["code"], name=r["name"], route=r["route"])


def _int_parameter(pack: Pack, name: str) -> int | None:
    parameter = pack.parameters.get(name)
    if parameter is None:
        return None
    value = parameter.value
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def _permit_warnings(holder: HolderView | None, today: dt.date) -> list[str]:
    if holder is None:
        return ["Permissionário não cadastrado para este veículo."]
    out = []
    if holder.permit_status != "active":
        out.append(
            f"Permissão {holder.permit_number} {holder.permit_status_pt}: "
            f"{holder.name} não está autorizado(a) a operar."
        )
    if holder.permit_valid_until is not None and today > holder.permit_valid_until:
        out.append(
            f"Permissão {holder.permit_number} vencida em {_br(holder.permit_valid_until)}."
        )
    ban = ban_warning(holder.ban_reason, holder.ban_from, today)
    if ban:
        out.append(ban)
    return out


# get_pack checks every pack file's mtime on each call (~0.3 ms, most of a lookup); plate
# lookups reuse its answer for a moment instead. A pack edited on disk is seen within
# _PACK_RECHECK_S seconds.
_PACK_RECHECK_S = 2.0
_pack_seen: dict[str, tuple[float, Pack | None]] = {}


def _load_pack(pack_id: str) -> Pack | None:
    now = time.monotonic()
    hit = _pack_seen.get(pack_id)
    if hit is not None and now - hit[0] < _PACK_RECHECK_S:
        return hit[1]
    try:
        pack: Pack | None = get_pack(pack_id)
    except (KeyError, PackError):
        pack = None
    _pack_seen[pack_id] = (now, pack)
    return pack


def _vehicle_view(store: Store, row: Mapping[str, Any], today: dt.date) -> VehicleView:
    holder = _load_holder(store, row["holder_id"])
    line = _load_line(store, row["line_id"])
    insurance = _date(row["insurance_valid_until"])
    last_vistoria = _date(row["last_vistoria"])
    pack = _load_pack(row["pack_id"])
    warnings: list[str] = []
    vistoria_until: dt.date | None = None

    if insurance is None:
        warnings.append("Seguro sem validade cadastrada.")
    elif today > insurance:
        warnings.append(f"Seguro vencido em {_br(insurance)}.")

    if pack is None:
        warnings.append(
            f"Pacote de regulamento {row['pack_id']} indisponível: vistoria e idade do "
            "veículo não verificadas."
        )
    else:
        months = _int_parameter(pack, "vistoria.period_months")
        if last_vistoria is None:
            warnings.append("Nenhuma vistoria registrada.")
        elif months is not None:
            vistoria_until = add_months(last_vistoria, months)
            if today > vistoria_until:
                warnings.append(
                    f"Vistoria vencida em {_br(vistoria_until)} (última em "
                    f"{_br(last_vistoria)}; periodicidade de {months} meses)."
                )
        # Age in calendar years, as the engine counts it (year of the fact − year made).
        for what, year, parameter in (
            ("do chassi", row["chassis_year"], "vehicle.max_age_chassis_years"),
            ("da carroceria", row["body_year"], "vehicle.max_age_body_years"),
        ):
            limit = _int_parameter(pack, parameter)
            if limit is not None and isinstance(year, int) and today.year - year > limit:
                warnings.append(
                    f"Idade {what} acima do limite: {today.year - year} anos "
                    f"(fabricação {year}; limite de {limit} anos)."
                )
    warnings.extend(_permit_warnings(holder, today))
    return VehicleView(
        id=row["id"],
        plate=row["plate"],
        plate_key=row["plate_key"],
        renavam=row["renavam"],
        chassis=row["chassis"],
        make_model=row["make_model"],
        species=row["species"],
        fleet_number=row["fleet_number"],
        chassis_year=row["chassis_year"],
        body_year=row["body_year"],
        seats=row["seats"],
        doors=row["doors"],
        category=row["category"],
        uf=row["uf"],
        insurance_policy=row["insurance_policy"],
        insurance_valid_until=insurance,
        last_vistoria=last_vistoria,
        vistoria_valid_until=vistoria_until,
        pack_id=row["pack_id"],
        updated_at=row["updated_at"],
        holder=holder,
        line=line,
        checked_on=today,
        warnings=tuple(warnings),
        standing=standing_for(store, holder_id=row["holder_id"], plate_key=row["plate_key"]),
    )


# --------------------------------------------------------------------------------------------
# HQ standing


def _json_value(text: object) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _standing(row: Mapping[str, Any]) -> StandingView:
    """A ``ref_standing`` row; a malformed JSON field reads as absent, never as an error."""
    def windows(column: str) -> tuple[tuple[int, int], ...]:
        out: list[tuple[int, int]] = []
        found = _json_value(row.get(column))
        for months, total in (found.items() if isinstance(found, dict) else ()):
            if str(months).isdigit() and (n := _count(total)) is not None:
                out.append((int(months), n))
        return tuple(sorted(out))

    def repeats(column: str) -> tuple[tuple[str, int], ...]:
        out: list[tuple[str, int]] = []
        found = _json_value(row.get(column))
        for rule, n_ in (found.items() if isinstance(found, dict) else ()):
            if (n := _count(n_)) is not None and n > 0:
                out.append((str(rule), n))
        return tuple(sorted(out))

    decided = _json_value(row.get("cassacao_decision_json"))
    decided = decided if isinstance(decided, dict) else {}
    found = _json_value(row["cassacao_json"])
    cassacao: dict[str, Any] = found if isinstance(found, dict) else {}

    def text(name: str) -> str | None:
        value = cassacao.get(name)
        return value if isinstance(value, str) and value else None

    return StandingView(
        key=row["id"],
        pack_id=row["pack_id"],
        as_of=_date(row["as_of"]),
        points=windows("points_json"),
        reincidence=repeats("reincidence_json"),
        cassacao_proposed=bool(row["cassacao_proposed"]),
        cassacao_citation=text("citation") or text("ground"),
        cassacao_text=text("text"),
        cassacao_provisional=cassacao.get("provisional") is True,
        pending_points=windows("pending_points_json"),
        provisional_reincidence=repeats("provisional_reincidence_json"),
        cassacao_decision=decided.get("decision") if isinstance(decided.get("decision"), str)
        else None,
        cassacao_decided_on=_date(decided.get("at")),
    )


def standing_for(
    store: Store, *, holder_id: str | None = None, plate_key: str | None = None
) -> StandingView | None:
    """HQ's standing of the permit holder; for a vehicle without a holder, of its plate
    (key ``plate:<plate_key>``, either plate format accepted). None when HQ has sent none."""
    if holder_id:
        key = holder_id
    elif plate_key:
        try:
            key = f"plate:{parse_plate(plate_key).canonical_key()}"
        except IdentityError:
            key = f"plate:{plate_key}"
    else:
        return None
    rows = _rows(store, "SELECT * FROM ref_standing WHERE id = ?", [key])
    return _standing(rows[0]) if rows else None


# --------------------------------------------------------------------------------------------
# Lookups


def find_vehicle(
    store: Store, plate_text: str, *, today: dt.date | None = None
) -> VehicleView | None:
    """The vehicle with this plate in either format, or None when it is not registered.

    Raises IdentityError (field "plate") for a malformed plate. ``warnings`` are computed
    for ``today`` (default: the device's date).
    """
    key = parse_plate(plate_text).canonical_key()
    rows = _rows(store, "SELECT * FROM ref_vehicles WHERE plate_key = ?", [key])
    if not rows:
        return None
    return _vehicle_view(store, rows[0], today or legal_today())


def _driver_view(
    store: Store, row: Mapping[str, Any], today: dt.date, extra: list[str]
) -> DriverView:
    holder = _load_holder(store, row["holder_id"])
    valid_until = _date(row["cnh_valid_until"])
    registered = bool(row["registered"])
    warnings = list(extra)
    if not registered:
        warnings.append("Condutor não cadastrado junto ao órgão gestor.")
    if row["cnh"] is None:
        warnings.append("CNH não cadastrada.")
    else:
        check = check_cnh(row["cnh"])
        if not check.valid and check.message:
            warnings.append(check.message)
    if valid_until is not None and today > valid_until:
        warnings.append(f"CNH vencida em {_br(valid_until)}.")
    category = row["cnh_category"]
    if category is not None and category.upper() not in _CNH_PASSENGER_CATEGORIES:
        warnings.append(
            f"CNH categoria {category}: transporte de passageiros exige categoria D "
            "(CTB art. 143, IV)."
        )
    if holder is not None and holder.permit_status != "active":
        warnings.append(f"Permissão do permissionário {holder.permit_status_pt}.")
    return DriverView(
        id=row["id"],
        name=row["name"],
        cpf=row["cpf"],
        cnh=row["cnh"],
        cnh_category=category,
        cnh_valid_until=valid_until,
        role=row["role"],
        registered=registered,
        holder=holder,
        checked_on=today,
        warnings=tuple(warnings),
    )


def find_driver(
    store: Store,
    *,
    cpf: str | None = None,
    cnh: str | None = None,
    today: dt.date | None = None,
) -> DriverView | None:
    """The driver with this CPF (preferred) or CNH number, or None.

    Raises IdentityError for a malformed CPF or CNH (a CNH failing only its check digit is
    still looked up). With both, the CPF decides and a CNH that differs from the registered
    one becomes a warning. A driver registered with several holders: the registered row
    first, then the most recently updated.
    """
    if cpf is None and cnh is None:
        raise ValueError("find_driver needs cpf or cnh")
    order = "ORDER BY registered DESC, updated_at DESC, id"
    cnh_number = check_cnh(cnh).number if cnh is not None else None
    extra: list[str] = []
    if cpf is not None:
        number = normalize_cpf(cpf)
        rows = _rows(store, f"SELECT * FROM ref_drivers WHERE cpf = ? {order}", [number])
        if rows and cnh_number is not None and rows[0]["cnh"] != cnh_number:
            extra.append(
                f"A CNH informada ({cnh_number}) difere da cadastrada para este CPF "
                f"({rows[0]['cnh'] or 'nenhuma'})."
            )
    else:
        rows = _rows(store, f"SELECT * FROM ref_drivers WHERE cnh = ? {order}", [cnh_number])
    if not rows:
        return None
    return _driver_view(store, rows[0], today or legal_today(), extra)


def history_for(
    store: Store, *, holder_id: str | None = None, plate_key: str | None = None
) -> list[dict[str, Any]]:
    """Infraction history rows shaped like a rules-engine case's ``history``, oldest first.

    Rows of the holder and rows of the plate (either format accepted; raises IdentityError
    for a malformed one) are merged without duplicates. ``points`` is left out when HQ did
    not record it (the engine then uses the group's base points); ``auto`` when unknown.
    """
    if holder_id is None and plate_key is None:
        raise ValueError("history_for needs holder_id or plate_key")
    clauses, params = [], []
    if holder_id is not None:
        clauses.append("SELECT * FROM ref_history WHERE holder_id = ?")
        params.append(holder_id)
    if plate_key is not None:
        clauses.append("SELECT * FROM ref_history WHERE plate_key = ?")
        params.append(parse_plate(plate_key).canonical_key())
    sql = " UNION ".join(clauses) + " ORDER BY date, id"
    out = []
    for r in _rows(store, sql, params):
        entry: dict[str, Any] = {"rule_id": r["rule_id"], "date": r["date"], "status": r["status"]}
        if r["points"] is not None:
            entry["points"] = r["points"]
        if r["auto_number"]:
            entry["auto"] = r["auto_number"]
        out.append(entry)
    return out


def find_inspector(store: Store, matricula: str) -> InspectorView | None:
    """The inspector with this matrícula (active or not: the caller decides), or None."""
    rows = _rows(store, "SELECT * FROM ref_inspectors WHERE matricula = ?", [matricula.strip()])
    if not rows:
        return None
    r = rows[0]
    return InspectorView(
        id=r["id"],
        matricula=r["matricula"],
        name=r["name"],
        role=r["role"],
        organ=r["organ"],
        active=bool(r["active"]),
        password_hash=r["password_hash"],
    )


def _fold(text: object) -> str:
    """Lowercase without accents: "Conceição" and "CONCEICAO" both give "conceicao"."""
    if not isinstance(text, str):
        return ""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _ensure_fold(conn: dbapi.Connection) -> None:
    conn.create_function("inspector_fold", 1, _fold, deterministic=True)


def _plate_key_prefix(text: str) -> str | None:
    """The canonical-key prefix for a typed plate prefix, or None if it cannot be one."""
    compact = "".join(c for c in text if c not in "- ").upper()
    if not compact or len(compact) > 7 or not compact.isascii() or not compact.isalnum():
        return None
    shapes = ("L", "L", "L", "D", "X", "D", "D")
    for ch, shape in zip(compact, shapes, strict=False):
        if (shape == "L" and not ch.isalpha()) or (shape == "D" and not ch.isdigit()):
            return None
    if len(compact) >= 5 and compact[4].isdigit():
        compact = compact[:4] + chr(ord("A") + int(compact[4])) + compact[5:]
    return compact


def search_vehicles(
    store: Store, text: str, limit: int = 20, *, today: dt.date | None = None
) -> list[VehicleView]:
    """Vehicles whose plate (either format) starts with ``text``, then vehicles whose
    holder has a name word starting with ``text`` (case and accents ignored)."""
    text = text.strip()
    if not text or limit < 1:
        return []
    day = today or legal_today()
    found: dict[str, dict[str, Any]] = {}
    key = _plate_key_prefix(text)
    if key is not None:
        for row in _rows(
            store,
            "SELECT * FROM ref_vehicles WHERE plate_key >= ? AND plate_key < ? "
            "ORDER BY plate_key LIMIT ?",
            [key, key + "\uffff", limit],
        ):
            found[row["id"]] = row
    if len(found) < limit:
        _ensure_fold(store.conn)
        for row in _rows(
            store,
            "SELECT v.* FROM ref_permit_holders h JOIN ref_vehicles v ON v.holder_id = h.id "
            "WHERE ' ' || inspector_fold(h.name) LIKE ? ESCAPE '\\' "
            "ORDER BY h.name, v.plate_key LIMIT ?",
            [f"% {_escape_like(_fold(text))}%", limit],
        ):
            found.setdefault(row["id"], row)
    return [_vehicle_view(store, row, day) for row in list(found.values())[:limit]]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def counts(store: Store) -> dict[str, int]:
    """Rows per reference table, by short name ("vehicles", "history", …)."""
    return {
        name: int(store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
        for name, table in TABLES.items()
    }
