"""Use cases shared by the GUI and the command line.

Small verb-named functions with keyword-only arguments; callers never touch SQL, packs or
the engine directly. Every function either completes or leaves nothing half-written, and
raises :class:`ServiceError` (``message_pt`` for the screen) for input it cannot take.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inspector_app.calendars import calendar_around
from inspector_app.domain.case import Case, CaseError, parse_case
from inspector_app.domain.deadlines import add_months
from inspector_app.domain.documents import RECORD_KIND_LABELS
from inspector_app.domain.engine import Outcome, evaluate
from inspector_app.domain.identity import IdentityError, parse_plate
from inspector_app.domain.legaltime import legal_today
from inspector_app.domain.pack import LOCATION_TYPES, Pack
from inspector_app.packs import PackError, get_pack
from inspector_app.security.login import LoginPolicy, LoginState, attempt_login, can
from inspector_app.store import inspections as repo
from inspector_app.store import numbering
from inspector_app.store.db import Store, StoreError, utc_now
from inspector_app.store.sealing import (
    RecordDraft,
    SealedRecord,
    load_record,
    new_record_id,
    seal_records,
)

if TYPE_CHECKING:
    from inspector_app.store.reference import StandingView

MIN_REASON = 10
BRASILIA = dt.timezone(dt.timedelta(hours=-3), "UTC-03:00")
KIND_LABELS = {kind: label.lower() for kind, label in RECORD_KIND_LABELS.items()}


class ServiceError(ValueError):
    """Input a use case cannot take: ``field`` names it, ``message_pt`` explains it."""

    def __init__(self, field: str, message_pt: str) -> None:
        self.field = field
        self.message_pt = message_pt
        super().__init__(f"{field}: {message_pt}")


class ServiceProblems(ServiceError):
    """Several problems found at once: ``problems`` lists every (field, message); ``field``
    and ``message_pt`` describe them all (the first field is where the focus goes)."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = tuple(problems)
        super().__init__(self.problems[0][0], " ".join(m for _f, m in self.problems))


def _raise_problems(problems: Sequence[tuple[str, str]]) -> None:
    if len(problems) == 1:
        raise ServiceError(*problems[0])
    if problems:
        raise ServiceProblems(problems)


# --- rules engine ---------------------------------------------------------------------------


def evaluate_case(*, data: object, forms_root: Path | None = None) -> Outcome:
    """Evaluate a case given in the JSON shape of ``inspector rules evaluate``.

    Raises :class:`CaseError` for invalid input (unknown pack too) and ``PackError`` when
    the pack itself is broken.
    """
    case = parse_case(data, now=dt.datetime.now(dt.UTC))
    return evaluate_parsed(case=case, forms_root=forms_root)


def evaluate_parsed(*, case: Case, forms_root: Path | None = None,
                    store: Store | None = None) -> Outcome:
    """Evaluate ``case``; with ``store``, the calendar also applies the dated exceptions
    HQ published for the pack (pull log, held offline)."""
    try:
        pack = get_pack(case.pack_id, forms_root)
    except KeyError as exc:
        raise CaseError("pack", str(exc.args[0]), code="pack", pt=f"regulamento {case.pack_id}"
                        " desconhecido") from None
    exceptions: tuple[Any, ...] = ()
    warnings: tuple[str, ...] = ()
    if store is not None:
        from inspector_app.store.calendar_ref import calendar_exceptions

        exceptions, warnings = calendar_exceptions(store, pack.id)
    outcome = evaluate(pack, case, calendar_around(pack, case.date, exceptions))
    if warnings:
        outcome = dataclasses.replace(outcome, warnings=(*outcome.warnings, *warnings))
    return outcome


def _pack(pack_id: str) -> Pack:
    try:
        return get_pack(pack_id)
    except KeyError:
        raise ServiceError("pack", f"Pacote de regulamentação desconhecido: {pack_id}.") from None
    except PackError as exc:
        raise ServiceError("pack", f"Pacote {pack_id} com problemas: {exc}") from None


def _reason(field: str, reason: str | None, what: str) -> str:
    text = (reason or "").strip()
    if len(text) < MIN_REASON:
        raise ServiceError(field, f"Informe {what} (pelo menos {MIN_REASON} caracteres).")
    return text


# --- login ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    matricula: str
    name: str
    role: str
    organ: str | None = None


def _load_login_state(store: Store, matricula: str) -> LoginState:
    row = store.conn.execute(
        "SELECT failures, locked_until, last_success_at, last_online_auth_at, "
        "highest_clock_seen FROM login_state WHERE matricula = ?",
        [matricula],
    ).fetchone()
    if row is None:
        return LoginState()

    def ts(value: str | None) -> dt.datetime | None:
        return dt.datetime.fromisoformat(value) if value else None

    return LoginState(int(row[0]), ts(row[1]), ts(row[2]), ts(row[3]), ts(row[4]))


def _save_login_state(store: Store, matricula: str, state: LoginState) -> None:
    def ts(value: dt.datetime | None) -> str | None:
        return value.isoformat() if value else None

    store.require_writable()
    store.conn.execute(
        "INSERT INTO login_state(matricula, failures, locked_until, last_success_at, "
        "last_online_auth_at, highest_clock_seen) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(matricula) DO UPDATE SET failures = excluded.failures, "
        "locked_until = excluded.locked_until, last_success_at = excluded.last_success_at, "
        "last_online_auth_at = excluded.last_online_auth_at, "
        "highest_clock_seen = excluded.highest_clock_seen",
        [matricula, state.failures, ts(state.locked_until), ts(state.last_success_at),
         ts(state.last_online_auth_at), ts(state.highest_clock_seen)],
    )


def login(
    *, store: Store, matricula: str, password: str, now: dt.datetime | None = None,
    policy: LoginPolicy | None = None,
) -> Session:
    """Offline login against the inspectors of the reference data (argon2id hashes).

    Raises :class:`ServiceError` with the Portuguese reason (wrong password with the attempts
    left, lockout with the time to wait, stale offline login, clock set back).
    """
    row = store.conn.execute(
        "SELECT name, role, password_hash, active, organ FROM ref_inspectors "
        "WHERE matricula = ?",
        [matricula.strip()],
    ).fetchone()
    if row is None or not row[3]:
        raise ServiceError("matricula", "Matrícula não cadastrada ou inativa neste dispositivo.")
    name, role, password_hash, _active, organ = row
    when = now or dt.datetime.now(dt.UTC)
    result = attempt_login(
        state=_load_login_state(store, matricula),
        policy=policy or LoginPolicy(),
        password_hash=password_hash,
        password=password,
        now=when,
    )
    if not store.readonly:
        # A read-only store (failed integrity check) still lets people in to read it;
        # only the lockout counter cannot be kept there.
        _save_login_state(store, matricula, result.state)
    if not result.ok:
        raise ServiceError("password", result.message_pt)
    return Session(matricula=matricula, name=name, role=role, organ=organ)


def reauthenticate(*, store: Store, session: Session, password: str,
                   now: dt.datetime | None = None) -> None:
    """Ask the signed-in person's password again before a signing act (a supervisor's
    cancellation): the same check and lockout counter as the login. Raises
    :class:`ServiceError` (field ``password``) when it is wrong or missing."""
    if not password:
        raise ServiceError("password", "Digite a sua senha para confirmar este ato.")
    try:
        again = login(store=store, matricula=session.matricula, password=password, now=now)
    except ServiceError as exc:
        raise ServiceError("password", f"Senha não confirmada: {exc.message_pt}") from None
    if again.role != session.role:
        raise ServiceError("password", "O perfil desta matrícula mudou: entre de novo.")


# --- packs and numbering by órgão ------------------------------------------------------------


@dataclass(frozen=True)
class PackOffer:
    """The packs offered to the signed-in inspector (their órgão's) and the one preselected."""

    listings: tuple[Any, ...]
    preselected: str | None
    # pack id → the "start of the day's operation" question, or None when the pack has no
    # ground that depends on it (never a DF-only checkbox for a Juiz de Fora inspection)
    start_of_operation: Mapping[str, str | None] = dataclasses.field(default_factory=dict)


def packs_for_session(*, session: Session | None) -> PackOffer:
    """Packs of the inspector's órgão (a Juiz de Fora inspector sees JF_1972 preselected,
    never a DF pack); the first in force is preselected, else the first."""
    from inspector_app.domain.organs import (
        PackChoice,
        packs_for_organ,
        start_of_operation_label,
    )
    from inspector_app.packs import list_packs

    good = [listing for listing in list_packs() if not listing.problems]
    choices = [PackChoice(listing.id, get_pack(listing.id).meta.jurisdiction, listing.organ)
               for listing in good]
    offered = packs_for_organ(session.organ if session else None, choices)
    listings = tuple(listing for listing in good if listing.id in offered)
    in_force = [listing.id for listing in listings if listing.status == "in_force"]
    first = in_force[0] if in_force else (listings[0].id if listings else None)
    questions = {listing.id: start_of_operation_label(
        get_pack(listing.id).measure.grounds.values()) for listing in listings}
    return PackOffer(listings, first, questions)


def prepare_demo_numbering(*, store: Store) -> list[str]:
    """Demo setup: the device id and a demo number range per jurisdiction of the packs
    installed (each órgão its own series), so nothing claims the numbering is exhausted
    before the first seal. Returns the series created."""
    from inspector_app.packs import list_packs
    from inspector_app.store.sealing import ensure_device

    store.require_writable()
    ensure_device(store)
    jurisdictions = [get_pack(listing.id).meta.jurisdiction
                     for listing in list_packs() if not listing.problems]
    with store.atomic():
        made = numbering.ensure_demo_ranges(store, jurisdictions)
    return [r.series for r in made]


def _require(session: Session, action: str) -> None:
    if not can(session.role, action):
        raise ServiceError(
            "role", f"Seu perfil ({session.role}) não permite esta operação ({action})."
        )


# --- inspections -------------------------------------------------------------------------------


def _inspection(store: Store, inspection_id: str) -> repo.InspectionRow:
    try:
        return repo.get_inspection(store, inspection_id)
    except StoreError as exc:
        raise ServiceError("inspection_id", exc.message_pt) from None


def _open_inspection(store: Store, inspection_id: str) -> repo.InspectionRow:
    """The inspection while it is open; a sealed or abandoned one takes nothing more."""
    try:
        return repo.require_open(store, inspection_id)
    except StoreError as exc:
        raise ServiceError("inspection_id", exc.message_pt) from None


def _vehicle_snapshot(store: Store, plate_text: str | None,
                      manual: Mapping[str, Any] | None) -> dict[str, Any]:
    from inspector_app.store import reference

    snapshot: dict[str, Any] = {}
    if plate_text:
        try:
            plate = parse_plate(plate_text)
        except IdentityError as exc:
            raise ServiceError("plate", exc.message) from None
        snapshot.update(plate=plate.display(), plate_key=plate.canonical_key())
        view = reference.find_vehicle(store, plate_text)
        if view is not None:
            snapshot.update(_facts_of(view))
            snapshot["registered"] = True
        else:
            snapshot["registered"] = False
    for key, value in (manual or {}).items():
        if key not in ("chassis_year", "body_year", "seats", "doors", "make_model", "renavam",
                       "fleet_number", "insurance_valid_until", "last_vistoria",
                       "holder_name", "holder_document"):
            raise ServiceError(f"vehicle.{key}", f"Campo de veículo desconhecido: {key}.")
        if key in ("holder_name", "holder_document") and snapshot.get(key):
            continue  # the registry's permit holder is the autuado, never a typed one
        snapshot[key] = value
    _check_typed_identity(snapshot, manual or {})
    return snapshot


def unregistered_vehicle_problems(*, vehicle: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every problem with an unregistered vehicle's identification and owner as typed from
    the CRLV (the autuado of any auto): ``(field, Portuguese message)``, none when fine."""
    from inspector_app.domain.desk import autuado_problems

    return autuado_problems({**vehicle, "registered": False})


def _check_typed_identity(snapshot: dict[str, Any], typed: Mapping[str, Any]) -> None:
    """A RENAVAM or owner's CPF/CNPJ typed from the CRLV is checked (check digits) and
    kept normalized; a wrong one is refused at once, with its field."""
    from inspector_app.domain.desk import parse_document
    from inspector_app.domain.identity import normalize_renavam

    if typed.get("renavam"):
        try:
            snapshot["renavam"] = normalize_renavam(str(typed["renavam"]))
        except IdentityError as exc:
            raise ServiceError("vehicle.renavam", exc.message) from None
    if typed.get("holder_document") and snapshot.get("holder_document") == \
            typed["holder_document"]:
        try:
            snapshot["holder_document"] = parse_document(str(typed["holder_document"]))[1]
        except IdentityError as exc:
            raise ServiceError("vehicle.holder_document", exc.message) from None
    if typed.get("holder_name") and snapshot.get("holder_name") == typed["holder_name"]:
        snapshot["holder_name"] = " ".join(str(typed["holder_name"]).split())


def _facts_of(view: Any) -> dict[str, Any]:
    """The registry's vehicle as a JSON snapshot (sealed with the record, so a reprint
    years later shows the vehicle as it was)."""

    def iso(value: dt.date | None) -> str | None:
        return value.isoformat() if value else None

    holder, line = view.holder, view.line
    return {
        "id": view.id, "plate": view.plate, "plate_key": view.plate_key,
        "renavam": view.renavam, "chassis": view.chassis, "make_model": view.make_model,
        "species": view.species, "fleet_number": view.fleet_number,
        "chassis_year": view.chassis_year, "body_year": view.body_year, "seats": view.seats,
        "doors": view.doors, "category": view.category, "uf": view.uf,
        "insurance_valid_until": iso(view.insurance_valid_until),
        "last_vistoria": iso(view.last_vistoria),
        "holder_id": holder.id if holder else None,
        "holder_name": holder.name if holder else None,
        "holder_document": (holder.cpf or holder.cnpj) if holder else None,
        "permit_number": holder.permit_number if holder else None,
        "permit_status": holder.permit_status if holder else None,
        "line_code": line.code if line else None, "line_name": line.name if line else None,
        "registry_warnings": list(view.warnings),
    }


def start_inspection(
    *,
    store: Store,
    session: Session,
    pack_id: str,
    kind: str,
    location_type: str,
    place: str,
    plate: str | None = None,
    vehicle: Mapping[str, Any] | None = None,
    driver: Mapping[str, Any] | None = None,
    occurred_at: str | None = None,
    latitude: float | None = None,
    longitude: float | None = None,
    start_of_operation: bool = False,
    manifest_insecurity: bool = False,
    facts: Mapping[str, Any] | None = None,
) -> str:
    """Open an inspection; its header is on disk when this returns. Returns its id."""
    _require(session, "start_inspection")
    pack = _pack(pack_id)
    if kind not in ("vistoria", "fiscalizacao"):
        raise ServiceError("kind", "Tipo de inspeção inválido (vistoria ou fiscalização).")
    if location_type not in LOCATION_TYPES:
        raise ServiceError("location_type", "Tipo de local inválido.")
    if not place.strip():
        raise ServiceError("place", "Informe o local da inspeção (endereço ou referência).")
    if latitude is not None and not -90 <= latitude <= 90:
        raise ServiceError("latitude", "Latitude fora do intervalo -90..90.")
    if longitude is not None and not -180 <= longitude <= 180:
        raise ServiceError("longitude", "Longitude fora do intervalo -180..180.")
    when = occurred_at or dt.datetime.now(dt.UTC).astimezone().isoformat(timespec="seconds")
    snapshot = _vehicle_snapshot(store, plate, vehicle)
    inspection_id = str(uuid.uuid4())
    probe = {
        "pack": pack.id, "occurred_at": when, "location_type": location_type,
        "vehicle": {k: v for k, v in snapshot.items() if k in _CASE_VEHICLE},
        "driver": {k: v for k, v in (driver or {}).items() if k in _CASE_DRIVER},
        "facts": dict(facts or {}),
    }
    try:
        parse_case(probe, now=dt.datetime.now(dt.UTC))
    except CaseError as exc:
        raise ServiceError(exc.field, exc.message_pt) from None
    repo.create_inspection(store, {
        "id": inspection_id, "pack_id": pack.id, "pack_version": pack.meta.version,
        "pack_hash": pack.content_hash, "kind": kind, "matricula": session.matricula,
        "started_at": utc_now(), "occurred_at": when, "location_type": location_type,
        "place": place.strip(), "latitude": latitude, "longitude": longitude,
        "vehicle_id": snapshot.get("id"), "plate": snapshot.get("plate"),
        "plate_key": snapshot.get("plate_key"), "vehicle": snapshot,
        "driver": dict(driver or {}), "facts": dict(facts or {}),
        "start_of_operation": start_of_operation, "manifest_insecurity": manifest_insecurity,
    })
    return inspection_id


_CASE_VEHICLE = ("plate", "chassis_year", "body_year", "seats", "doors",
                 "insurance_valid_until", "last_vistoria")
_CASE_DRIVER = ("cpf", "cnh", "registered", "name", "cnh_override_reason")


def record_answer(
    *, store: Store, inspection_id: str, item_id: str, result: str, note: str = "",
    rules: Sequence[str] = (), value: object = None,
) -> None:
    """Save one checklist answer now (a crash right after loses nothing)."""
    insp = _open_inspection(store, inspection_id)
    pack = _pack(insp.pack_id)
    item = pack.items.get(item_id)
    if item is None:
        raise ServiceError("item_id", f"Item {item_id} não existe no pacote {pack.id}.")
    if result not in ("ok", "fail", "na"):
        raise ServiceError("result", "Resposta inválida: conforme, não conforme ou não se aplica.")
    bad = [r for r in rules if r not in item.allowed_rules]
    if bad:
        raise ServiceError(
            "rules", f"Infração {bad[0]} não decorre do item {item_id}."
        )
    repo.add_answer(store, inspection_id, item_id, result, rules=tuple(rules), note=note,
                    value=value)


def update_inspection(*, store: Store, inspection_id: str, driver: Mapping[str, Any] | None = None,
                      facts: Mapping[str, Any] | None = None, place: str | None = None,
                      start_of_operation: bool | None = None,
                      manifest_insecurity: bool | None = None) -> None:
    insp = _open_inspection(store, inspection_id)
    changes: dict[str, Any] = {}
    if driver is not None:
        changes["driver"] = dict(driver)
    if facts is not None:
        changes["facts"] = dict(facts)
    if place is not None:
        if not place.strip():
            raise ServiceError("place", "Informe o local da inspeção.")
        changes["place"] = place.strip()
    if start_of_operation is not None:
        changes["start_of_operation"] = int(start_of_operation)
    if manifest_insecurity is not None:
        changes["manifest_insecurity"] = int(manifest_insecurity)
    if changes:
        probe = _case_data(store, dataclasses.replace(insp, **{
            k: v for k, v in changes.items() if k in ("driver", "facts")}))
        try:
            parse_case(probe, now=dt.datetime.now(dt.UTC))
        except CaseError as exc:
            raise ServiceError(exc.field, exc.message_pt) from None
        repo.update_open(store, inspection_id, changes)


_AUTUADO_KEYS = ("make_model", "renavam", "holder_name", "holder_document")


def identify_autuado(*, store: Store, inspection_id: str, vehicle: Mapping[str, Any]) -> None:
    """Complete an open inspection's autuado and vehicle identification when sealing found
    them missing: the owner from the CRLV, RENAVAM and make/model of an unregistered
    vehicle, or the permit holder a registered vehicle's registry lacks (never replacing
    what the registry says). Typed values are checked (check digits) and kept normalized."""
    insp = _open_inspection(store, inspection_id)
    registered = bool(insp.vehicle.get("registered"))
    snapshot = dict(insp.vehicle)
    typed: dict[str, Any] = {}
    for key, value in vehicle.items():
        if key not in _AUTUADO_KEYS:
            raise ServiceError(f"vehicle.{key}", f"Campo de veículo desconhecido: {key}.")
        text = str(value or "").strip()
        if not text:
            continue
        if registered and snapshot.get(key):
            continue  # the registry's data stands
        typed[key] = text
        snapshot[key] = text
    _check_typed_identity(snapshot, typed)
    repo.update_open(store, inspection_id, {"vehicle": snapshot})


def attach_photo(*, store: Store, inspection_id: str, source: Path,
                 item_id: str | None = None) -> int:
    """Import a photo (EXIF orientation applied, original kept, hashes of both)."""
    from inspector_app.media.photos import PhotoError, import_photo

    insp = _open_inspection(store, inspection_id)
    if item_id is not None and item_id not in _pack(insp.pack_id).items:
        raise ServiceError("item_id", f"Item {item_id} não existe no pacote.")
    try:
        files = import_photo(Path(source), store.blob_dir)
    except PhotoError as exc:
        raise ServiceError("photo", exc.message_pt) from None
    except OSError as exc:
        raise ServiceError("photo", f"Não foi possível ler a foto: {exc.strerror}.") from None
    return repo.add_photo(store, inspection_id, {
        "item_id": item_id, "original_sha256": files.original_sha256,
        "working_sha256": files.working_sha256, "thumb_sha256": files.thumb_sha256,
        "original_name": Path(source).name, "width": files.width, "height": files.height,
        "taken_at": files.taken_at,
    })


def remove_photo(*, store: Store, inspection_id: str, photo_id: int) -> None:
    """Take a photo out of an open inspection (a photo taken by mistake); the sealed record
    will not name it. Once sealed, photos are part of the legal record and stay."""
    insp = repo.get_inspection(store, inspection_id) if _exists(store, inspection_id) else None
    if insp is None:
        raise ServiceError("inspection_id", "Inspeção não encontrada.")
    if insp.status == "sealed":
        raise ServiceError("photo", "A inspeção já foi selada: suas fotos fazem parte do "
                                    "registro e não podem ser removidas.")
    if insp.status != "open":
        raise ServiceError("photo", "A inspeção foi encerrada: suas fotos não podem mais "
                                    "ser alteradas.")
    if not any(p.id == photo_id for p in repo.photos(store, inspection_id)):
        raise ServiceError("photo", "Foto não encontrada nesta inspeção (já removida?).")
    repo.remove_photo(store, inspection_id, photo_id)


def _exists(store: Store, inspection_id: str) -> bool:
    return store.conn.execute("SELECT 1 FROM inspections WHERE id = ?",
                              [inspection_id]).fetchone() is not None


def record_signature(
    *, store: Store, inspection_id: str, role: str, status: str,
    strokes: Sequence[Sequence[tuple[float, float]]] | None = None,
    size: tuple[int, int] = (600, 200), note: str = "",
) -> None:
    """Signature of the agent or the driver, or the driver's refusal/absence with a note."""
    from inspector_app.media.signatures import SignatureError, save_signature_png

    _open_inspection(store, inspection_id)
    if role not in ("agent", "driver"):
        raise ServiceError("role", "Assinatura do agente ou do condutor.")
    if status not in ("signed", "refused", "absent"):
        raise ServiceError("status", "Situação da assinatura inválida.")
    if role == "agent" and status != "signed":
        raise ServiceError("status", "O agente deve assinar o auto.")
    png_sha = None
    if status == "signed":
        try:
            png_sha, _path = save_signature_png(
                [list(s) for s in strokes or []], width=size[0], height=size[1],
                blob_dir=store.blob_dir,
            )
        except SignatureError as exc:
            raise ServiceError("strokes", exc.message_pt) from None
        except ValueError as exc:
            raise ServiceError("strokes", f"Traço de assinatura inválido: {exc}.") from None
    else:
        what = "recusa" if status == "refused" else "ausência"
        note = _reason("note", note, f"a observação do agente sobre a {what} do condutor")
    repo.add_signature(store, inspection_id, role, status, png_sha, note)


def _history(store: Store, insp: repo.InspectionRow) -> list[dict[str, Any]]:
    from inspector_app.store import reference

    holder = insp.vehicle.get("holder_id")
    rows = reference.history_for(store, holder_id=holder, plate_key=insp.plate_key)
    cutoff = insp.occurred_at[:10]
    return [r for r in rows if str(r["date"]) <= cutoff]


def _case_data(store: Store, insp: repo.InspectionRow,
               extra: Sequence[str] = ()) -> dict[str, Any]:
    answers = repo.current_answers(store, insp.id)
    checklist = {
        a.item_id: ({"result": a.result, "rules": list(a.rules)} if a.rules else a.result)
        for a in answers.values()
    }
    return {
        "pack": insp.pack_id, "occurred_at": insp.occurred_at,
        "location_type": insp.location_type, "start_of_operation": insp.start_of_operation,
        "manifest_insecurity": insp.manifest_insecurity,
        "vehicle": {k: v for k, v in insp.vehicle.items() if k in _CASE_VEHICLE and v is not None},
        "driver": {k: v for k, v in insp.driver.items() if k in _CASE_DRIVER and v is not None},
        "checklist": checklist, "infractions": list(extra), "facts": insp.facts,
        "history": _history(store, insp),
        **_historical_use(insp.pack_id),
    }


TRAINING_REEVALUATION = (
    "treinamento e demonstração"
)


def _historical_use(pack_id: str) -> dict[str, Any]:
    """A revoked pack used on the device is a historical re-evaluation (training and
    demonstration): the case says so, and the outcome and documents print it."""
    try:
        pack = get_pack(pack_id)
    except (KeyError, PackError):
        return {}
    if pack.meta.status != "historical" or pack.meta.effective_until is None:
        return {}
    return {"historical_reevaluation": {"reason": TRAINING_REEVALUATION}}


def hq_standing(*, store: Store, inspection_id: str) -> StandingView | None:
    """HQ's standing of the inspected vehicle's permit holder, or of its plate when it has
    none; None when HQ has sent none. Shown beside the engine's outcome, which does not
    use it."""
    from inspector_app.store import reference

    insp = _inspection(store, inspection_id)
    return reference.standing_for(store, holder_id=insp.vehicle.get("holder_id"),
                                  plate_key=insp.plate_key)


def evaluate_inspection(*, store: Store, inspection_id: str,
                        added: Sequence[str] = ()) -> Outcome:
    """What the regulation says about the answers so far (the result screen)."""
    insp = _inspection(store, inspection_id)
    try:
        return evaluate_parsed(
            case=parse_case(_case_data(store, insp, added), now=dt.datetime.now(dt.UTC)),
            store=store,
        )
    except CaseError as exc:
        raise ServiceError(exc.field, exc.message_pt) from None


def _review_of(insp: repo.InspectionRow, outcome: Outcome, infractions: Sequence[Any], *,
               retain: bool, retention_place: str, narrative: str) -> dict[str, Any]:
    from inspector_app.domain.review import build_review, review_digest

    content = build_review(
        vehicle=insp.vehicle, driver=insp.driver,
        infractions=[i.as_json() for i in infractions],
        measure=outcome.retention.as_json(), retain=retain,
        retention_place=retention_place, narrative=narrative,
        withdrawal=outcome.withdrawal.as_json() if outcome.withdrawal else None)
    return {**content, "digest": review_digest(content)}


def review_inspection(
    *, store: Store, inspection_id: str, removed: Mapping[str, str] | None = None,
    added: Sequence[str] = (), retain: bool = False, retention_place: str = "",
    narrative: str = "",
) -> dict[str, Any]:
    """What the driver reviews before signing (autuado, driver, each infraction with its
    description, totals, measures, narrative) and its ``digest``; sealing with that digest
    refuses when what would be sealed differs."""
    insp = _inspection(store, inspection_id)
    outcome = evaluate_inspection(store=store, inspection_id=inspection_id, added=added)
    infractions = [i for i in outcome.infractions if i.rule_id not in (removed or {})]
    return _review_of(insp, outcome, infractions, retain=retain,
                      retention_place=retention_place, narrative=narrative)


@dataclass(frozen=True)
class SealResult:
    records: tuple[SealedRecord, ...]
    outcome: Outcome | None
    warnings: tuple[str, ...]

    def of_kind(self, kind: str) -> SealedRecord | None:
        return next((r for r in self.records if r.kind == kind), None)


def seal_inspection(
    *,
    store: Store,
    session: Session,
    inspection_id: str,
    narrative: str = "",
    removed: Mapping[str, str] | None = None,
    added: Sequence[str] = (),
    retain: bool = False,
    retention_place: str = "",
    insecurity_justification: str = "",
    reviewed_digest: str | None = None,
    witness: Mapping[str, Any] | None = None,
) -> SealResult:
    """Seal the inspection's documents in one transaction and close it.

    ``witness``: an optional testemunha (name, CPF, document, ``signature`` strokes) who
    signs every auto and termo of the act.

    ``reviewed_digest`` is the digest of the review the driver saw before signing
    (:func:`review_inspection`): when given, sealing refuses if the content to be sealed
    differs from it; the review is sealed with the documents either way.

    Removing a proposed infraction needs a reason; adding one comes from the catalogue.
    A retention needs grounds and a place where the law allows it (art. 37 §único) or a
    justified manifest insecurity.
    """
    _require(session, "seal_inspection")
    insp = _open_inspection(store, inspection_id)
    removed = dict(removed or {})
    outcome = evaluate_inspection(store=store, inspection_id=inspection_id, added=added)
    proposed = {i.rule_id for i in outcome.infractions}
    for rule_id, why in removed.items():
        if rule_id not in proposed:
            raise ServiceError("removed", f"{rule_id} não foi proposta pelo sistema.")
        removed[rule_id] = _reason("removed", why, f"o motivo para retirar {rule_id}")
    infractions = [i for i in outcome.infractions if i.rule_id not in removed]
    signatures = repo.current_signatures(store, inspection_id)
    if "agent" not in signatures:
        raise ServiceError("signature", "Falta a assinatura do agente.")
    if infractions and "driver" not in signatures:
        raise ServiceError(
            "signature",
            "Falta a assinatura do condutor, ou o registro de que se recusou a assinar / "
            "estava ausente (com observação).",
        )
    if infractions and not narrative.strip():
        raise ServiceError("narrative", "Descreva os fatos (narrativa do agente).")
    if infractions:  # no auto de infração without an identified autuado and vehicle
        from inspector_app.domain.desk import autuado_problems

        _raise_problems(autuado_problems(insp.vehicle))
    warnings = list(outcome.warnings)
    retention = outcome.retention
    if retain:
        grounds = retention.grounds or retention.possible_grounds
        if not grounds:
            raise ServiceError("retain", "Não há fundamento de retenção para este caso.")
        if retention.allowed_here is False and not insecurity_justification.strip():
            raise ServiceError(
                "retain",
                "A retenção não pode ser feita neste local (somente em terminais ou pontos de "
                "controle, art. 37, parágrafo único), salvo insegurança manifesta justificada.",
            )
        if not retention_place.strip():
            raise ServiceError("retention_place", "Informe onde o veículo fica retido.")
        if insecurity_justification.strip():
            warnings = [w for w in warnings if not w.startswith("A retenção não pode")]
    elif retention.required:
        warnings.append("Retenção exigida pela regra não foi aplicada pelo agente.")
    review = _review_of(insp, outcome, infractions, retain=retain,
                        retention_place=retention_place, narrative=narrative)
    if reviewed_digest is not None and reviewed_digest != review["digest"]:
        raise ServiceError(
            "review",
            "O conteúdo do auto mudou depois da revisão com o condutor. Volte, mostre a "
            "revisão de novo ao condutor e colha a assinatura sobre o conteúdo atual.")
    witness_person, witness_sig = _witness(store, witness)
    pack = _pack(insp.pack_id)
    photos = repo.photos(store, inspection_id)
    answers = repo.current_answers(store, inspection_id)
    base = {
        "pack": {"id": pack.id, "version": insp.pack_version, "hash": insp.pack_hash,
                 "status": pack.meta.status, "organ": pack.meta.organ,
                 "organ_name": pack.meta.organ_name, "jurisdiction": pack.meta.jurisdiction},
        "agent": {"matricula": session.matricula, "name": session.name},
        "occurred_at": insp.occurred_at,
        "location": {"type": insp.location_type, "place": insp.place,
                     "latitude": None if insp.latitude is None else f"{insp.latitude:.6f}",
                     "longitude": None if insp.longitude is None else f"{insp.longitude:.6f}"},
        "vehicle": insp.vehicle,
        "driver": insp.driver,
        "facts": {k: (str(v) if isinstance(v, float) else v) for k, v in insp.facts.items()},
        "inspection_kind": insp.kind,
        "answers": {a.item_id: {"result": a.result, "rules": list(a.rules), "note": a.note,
                                "label": pack.items[a.item_id].label,
                                "section": pack.items[a.item_id].section,
                                "answered_at": a.answered_at} for a in answers.values()},
        "photos": [{"item_id": p.item_id, "original_sha256": p.original_sha256,
                    "working_sha256": p.working_sha256, "thumb_sha256": p.thumb_sha256,
                    "name": p.original_name} for p in photos],
        "signatures": {**{role: {"status": s.status, "png_sha256": s.png_sha256,
                                 "note": s.note, "signed_at": s.signed_at}
                          for role, s in signatures.items()},
                       **({"witness": witness_sig} if witness_sig else {})},
        **({"witness": witness_person} if witness_person else {}),
        "narrative": narrative.strip(),
        "retained": retain,
        "retention_place": retention_place.strip() if retain else "",
        "review": {**review, "shown_to_driver": reviewed_digest is not None},
    }
    common = {"inspection_id": inspection_id, "plate_key": insp.plate_key,
              "holder_id": insp.vehicle.get("holder_id"), "occurred_on": insp.occurred_at[:10]}
    outcome_json = outcome.as_json()
    outcome_json["infractions"] = [i.as_json() for i in infractions]
    drafts: list[RecordDraft] = []
    if insp.kind == "vistoria":
        period = outcome.vistoria.period_months
        due = (add_months(outcome.occurred_on, period).isoformat()
               if period and not infractions else None)
        drafts.append(RecordDraft("auto_vistoria", {
            **base, "result": "reprovado" if infractions else "aprovado",
            "next_vistoria_due": due,
            "outcome": outcome_json, "removed": removed, "added": list(added),
        }, **common))
    auto_id = new_record_id()
    if infractions:
        drafts.append(RecordDraft("auto_infracao", {
            **base, "outcome": outcome_json, "removed": removed, "added": list(added),
        }, record_id=auto_id, **common))
    if retain:
        drafts.append(RecordDraft("termo_retencao", {
            **base,
            "grounds": [g.id for g in (retention.grounds or retention.possible_grounds)],
            "retention": retention.as_json(), "place": retention_place.strip(),
            "insecurity_justification": insecurity_justification.strip(),
        }, refers_to=auto_id if infractions else None, **common))
    if not drafts:
        raise ServiceError(
            "infractions", "Nada a selar: fiscalização sem infrações não gera auto."
        )
    sealed = seal_records(store, drafts, close_inspection=inspection_id)
    low = numbering.low_numbers_warning(store)
    if low:
        warnings.append(low)
    return SealResult(tuple(sealed), outcome, tuple(warnings))


def retain_vehicle(
    *, store: Store, session: Session, auto_id: str, place: str,
    insecurity_justification: str = "",
) -> SealResult:
    """Termo de retenção for an auto de infração already sealed (retention decided after).

    Grounds and the location rule come from the auto's sealed outcome (art. 37 and §único).
    """
    _require(session, "retain_vehicle")
    auto = _record_or_error(store, auto_id)
    if auto.kind != "auto_infracao":
        raise ServiceError("auto_id", "A retenção se vincula a um auto de infração.")
    linked = store.conn.execute(
        "SELECT kind FROM records WHERE refers_to = ? AND kind IN "
        "('termo_retencao', 'cancelamento')", [auto_id]
    ).fetchone()
    if linked:
        raise ServiceError("auto_id", f"Este auto já tem {KIND_LABELS[linked[0]]}.")
    body = auto.envelope["body"]
    retention = body["outcome"]["retention"]
    grounds = retention["grounds"] or [g["id"] for g in retention["possible_grounds"]]
    if not grounds:
        raise ServiceError("auto_id", "O auto não tem fundamento de retenção.")
    if retention["allowed_here"] is False and not insecurity_justification.strip():
        raise ServiceError(
            "retain",
            "A retenção não pode ser feita neste local (art. 37, parágrafo único), salvo "
            "insegurança manifesta justificada.",
        )
    if not place.strip():
        raise ServiceError("place", "Informe onde o veículo fica retido.")
    env = auto.envelope
    sealed = seal_records(store, [RecordDraft("termo_retencao", {
        **{k: body[k] for k in ("pack", "occurred_at", "location", "vehicle", "driver")},
        "agent": {"matricula": session.matricula, "name": session.name},
        "auto_number": auto.display_number, "grounds": grounds, "retention": retention,
        "place": place.strip(), "insecurity_justification": insecurity_justification.strip(),
    }, refers_to=auto_id, inspection_id=env.get("inspection_id"),
        plate_key=env.get("plate_key"), holder_id=env.get("holder_id"),
        occurred_on=env.get("occurred_on"))])
    return SealResult(tuple(sealed), None, ())


def abandon_inspection(*, store: Store, inspection_id: str, reason: str) -> None:
    """Close an open inspection without documents (kept, never deleted)."""
    _open_inspection(store, inspection_id)
    why = _reason("reason", reason, "o motivo do abandono")
    facts = {**_inspection(store, inspection_id).facts}
    repo.update_open(store, inspection_id, {"status": "abandoned", "sealed_at": utc_now(),
                                            "facts": {**facts, "abandon_reason": why}})


# --- retention desk, cancellation, reprint ------------------------------------------------------


_HELD_WHERE = (
    "r.kind = 'termo_retencao' AND NOT EXISTS (SELECT 1 FROM records x WHERE "
    "x.refers_to = r.id AND x.kind IN ('termo_liberacao', 'cancelamento'))"
)


def _held_row(rec: SealedRecord) -> dict[str, Any]:
    body = rec.envelope["body"]
    return {"record_id": rec.id, "number": rec.display_number,
            "plate": body["vehicle"].get("plate"), "place": body.get("place"),
            "grounds": body.get("grounds", []), "retained_at": rec.created_at}


def vehicles_held(*, store: Store, after: tuple[str, str] | None = None,
                  limit: int | None = None) -> list[dict[str, Any]]:
    """Termos de retenção without a termo de liberação (vehicles still held), oldest first.

    Paged (issue 17): ``limit`` rows after the key ``after`` = (created_at, id) of the last
    row of the previous page. The query walks the termos by ``idx_records_kind`` and probes
    ``idx_records_refers`` per termo; only the rows of the page are decoded."""
    where, params = _HELD_WHERE, list[Any]()
    if after is not None:
        where += " AND (r.created_at, r.id) > (?, ?)"
        params.extend(after)
    sql = f"SELECT r.id FROM records r WHERE {where} ORDER BY r.created_at, r.id"
    if limit is not None:
        sql += " LIMIT ?"
        params.append(int(limit))
    rows = store.conn.execute(sql, params).fetchall()
    return [_held_row(load_record(store, rid)) for (rid,) in rows]


def held_count(*, store: Store) -> int:
    """How many vehicles are held (one indexed query; nothing decoded)."""
    row = store.conn.execute(f"SELECT COUNT(*) FROM records r WHERE {_HELD_WHERE}").fetchone()
    return int(row[0])


def held_record(*, store: Store, retention_id: str) -> dict[str, Any] | None:
    """The held-vehicle row of one termo de retenção, or None once released or cancelled."""
    row = store.conn.execute(f"SELECT r.id FROM records r WHERE r.id = ? AND {_HELD_WHERE}",
                             [retention_id]).fetchone()
    return None if row is None else _held_row(load_record(store, str(row[0])))


def _retention_sources(store: Store, retention: SealedRecord) -> tuple[dict[str, Any],
                                                                        dict[str, Any]]:
    """(answers, outcome) of the auto a termo de retenção was sealed with."""
    body = retention.envelope["body"]
    answers, outcome = body.get("answers"), body.get("outcome")
    ref = retention.envelope.get("refers_to")
    if (answers is None or outcome is None) and ref:
        auto = load_record(store, str(ref)).envelope["body"]
        answers = auto.get("answers") if answers is None else answers
        outcome = auto.get("outcome") if outcome is None else outcome
    return dict(answers or {}), dict(outcome or {})


def release_faults(*, store: Store, retention_id: str) -> list[Any]:
    """The faults that grounded a retention, each to be checked again before a release for
    "falta sanada" (art. 38, I): ``domain.desk.Fault`` (item id or ground, label)."""
    from inspector_app.domain.desk import faults_to_recheck

    retention = _record_or_error(store, retention_id)
    body = retention.envelope["body"]
    answers, _outcome = _retention_sources(store, retention)
    pack = _pack(body["pack"]["id"])
    failed = {}
    for item_id, answer in sorted(answers.items()):
        if answer.get("result") != "fail":
            continue
        item = pack.items.get(item_id)
        label = f"{answer.get('label') or (item.label if item else item_id)} ({item_id})"
        failed[item_id] = (label, (item.retention + item.retention_possible) if item else ())
    info = body.get("retention") or {}
    labels = {d["id"]: f"{d['citation']} – {d['description']}"
              for d in [*info.get("details", []), *info.get("possible_grounds", [])]}
    return faults_to_recheck(list(body.get("grounds", [])), failed, labels)


def _desk_signature(store: Store, given: Mapping[str, Any] | None, *, field: str,
                    who: str, may_refuse: bool) -> dict[str, Any]:
    """A signature drawn at the desk (strokes on the pad) or, where allowed, a refusal
    with the agent's note; the PNG is kept with the record's files."""
    from inspector_app.media.signatures import SignatureError, save_signature_png

    sig = dict(given or {})
    status = sig.get("status", "signed")
    now = utc_now()
    if status == "refused" and may_refuse:
        note = _reason(field, str(sig.get("note") or ""), f"a observação sobre a recusa {who}")
        return {"status": "refused", "png_sha256": None, "note": note, "signed_at": now}
    if status != "signed":
        raise ServiceError(field, f"Falta a assinatura {who}.")
    strokes = [list(stroke) for stroke in sig.get("strokes") or []]
    if not strokes:
        raise ServiceError(field, f"Falta a assinatura {who}: assine no quadro"
                           + (" ou registre a recusa." if may_refuse else "."))
    width, height = sig.get("size") or (600, 200)
    try:
        png_sha, _path = save_signature_png(strokes, width=int(width), height=int(height),
                                            blob_dir=store.blob_dir)
    except SignatureError as exc:
        raise ServiceError(field, exc.message_pt) from None
    except ValueError as exc:
        raise ServiceError(field, f"Traço de assinatura inválido: {exc}.") from None
    return {"status": "signed", "png_sha256": png_sha, "note": "", "signed_at": now}


def _witness(store: Store, witness: Mapping[str, Any] | None) -> tuple[dict[str, Any] | None,
                                                                       dict[str, Any] | None]:
    """(person, signature) of an optional witness (testemunha): name, CPF, document and
    a signature drawn on the pad; (None, None) when there is none."""
    from inspector_app.domain.desk import normalized_person, person_problems

    if not witness or not any(str(witness.get(k) or "").strip()
                              for k in ("name", "cpf", "document")):
        return None, None
    _raise_problems(person_problems(witness, field="witness", who="a testemunha"))
    signature = _desk_signature(store, witness.get("signature"), field="witness.signature",
                                who="da testemunha", may_refuse=False)
    return normalized_person(witness), signature


def release_vehicle(
    *,
    store: Store,
    session: Session,
    retention_id: str,
    fault_fixed: bool = False,
    rechecked_items: Sequence[str] = (),
    workshop: str = "",
    workshop_deadline: str | None = None,
    payment_reference: str = "",
    compromisso_signed: bool = False,
    note: str = "",
    receiver: Mapping[str, Any] | None = None,
    receiver_signature: Mapping[str, Any] | None = None,
    agent_signature: Mapping[str, Any] | None = None,
    witness: Mapping[str, Any] | None = None,
) -> SealResult:
    """Termo de liberação under art. 38 (I fault fixed, II to a workshop, III payment —
    a warning only, never a block); over-age retention needs a termo de compromisso (§único).

    "Falta sanada" (I) only when every fault that grounded the retention was checked again
    (:func:`release_faults`; a partial re-check is refused). The termo names who received
    the vehicle (name, valid CPF, document) with their signature or refusal, the
    infractions by description and article, and carries the releasing agent's signature
    (and an optional witness's).
    """
    from inspector_app.domain.desk import normalized_person, person_problems, release_problems

    _require(session, "release_vehicle")
    held = held_record(store=store, retention_id=retention_id)
    if held is None:
        raise ServiceError("retention_id", "Este veículo não está retido (ou já foi liberado).")
    retention = load_record(store, retention_id)
    grounds = held["grounds"]
    over_age = any(g.endswith(".37.III") for g in grounds)
    if not (fault_fixed or workshop.strip() or over_age):
        raise ServiceError(
            "conditions",
            "Liberação exige falta sanada e verificada (art. 38, I) ou encaminhamento a "
            "oficina (art. 38, II).",
        )
    faults = release_faults(store=store, retention_id=retention_id)
    if fault_fixed and not rechecked_items and faults:
        raise ServiceError("rechecked_items", "Informe os itens verificados novamente.")
    if fault_fixed:
        _raise_problems(release_problems(faults, rechecked_items))
    if over_age and not compromisso_signed:
        raise ServiceError(
            "compromisso",
            "Veículo retido por idade: a liberação exige termo de compromisso de não voltar a "
            "operá-lo (art. 38, parágrafo único).",
        )
    _raise_problems(person_problems(receiver or {}, field="receiver",
                                    who="o recebedor do veículo"))
    received_by = normalized_person(receiver or {})
    receiver_sig = _desk_signature(store, receiver_signature, field="receiver_signature",
                                   who="do recebedor do veículo", may_refuse=True)
    agent_sig = _desk_signature(store, agent_signature, field="agent_signature",
                                who="do agente que libera o veículo", may_refuse=False)
    witness_person, witness_sig = _witness(store, witness)
    warnings = []
    if not payment_reference.strip():
        warnings.append(
            "Pagamento de multas e despesas não informado (art. 38, III): apenas aviso — a "
            "liberação não depende de pagamento (SV 21; STJ Súm. 510)."
        )
    env = retention.envelope
    _answers, outcome = _retention_sources(store, retention)
    infractions = [{"rule_id": i.get("rule_id"), "article": i.get("article"),
                    "description": i.get("description")}
                   for i in outcome.get("infractions", [])]
    done = set(rechecked_items)
    signatures = {"agent": agent_sig, "receiver": receiver_sig}
    if witness_sig is not None:
        signatures["witness"] = witness_sig
    common = {"plate_key": env["plate_key"], "holder_id": env["holder_id"],
              "occurred_on": legal_today().isoformat(), "refers_to": retention_id}
    auto_ref = env.get("refers_to")
    auto_number = (load_record(store, auto_ref).display_number
                   if isinstance(auto_ref, str) and auto_ref else None)
    body = {
        "pack": env["body"].get("pack"),
        "retention_number": retention.display_number,
        "auto_number": auto_number,  # the termo cites the auto it relates to (issue 12)
        "vehicle": env["body"]["vehicle"], "agent": {"matricula": session.matricula,
                                                     "name": session.name},
        "conditions": {"fault_fixed": fault_fixed, "rechecked_items": list(rechecked_items),
                       "workshop": workshop.strip(), "workshop_deadline": workshop_deadline,
                       "payment_reference": payment_reference.strip()},
        "faults": [{"key": f.key, "label": f.label, "rechecked": f.key in done}
                   for f in faults],
        "grounds": list(grounds),
        "infractions": infractions,
        "receiver": received_by,
        "signatures": signatures,
        "note": note.strip(), "warnings": warnings,
    }
    if witness_person is not None:
        body["witness"] = witness_person
    drafts = [RecordDraft("termo_liberacao", body, **common)]
    if over_age:
        drafts.insert(0, RecordDraft("termo_compromisso", {
            **body, "commitment": "O permissionário compromete-se a não voltar a operar o "
            "veículo no serviço (art. 38, parágrafo único)."}, **common))
    sealed = seal_records(store, drafts)
    return SealResult(tuple(sealed), None, tuple(warnings))


def _record_or_error(store: Store, record_id: str) -> SealedRecord:
    try:
        return load_record(store, record_id)
    except StoreError:
        raise ServiceError("record_id", "Auto ou termo não encontrado.") from None


def find_record(*, store: Store, number: str) -> SealedRecord:
    """A record by its printed number (``SERIES-000123``), verification code or id."""
    text = number.strip().upper()
    row = None
    printed = re.fullmatch(r"(.+)-(\d{1,9})", text)
    if printed:
        row = store.conn.execute(
            "SELECT id FROM records WHERE series = ? AND number = ?",
            [printed.group(1), int(printed.group(2))],
        ).fetchone()
    if row is None:
        row = store.conn.execute(
            "SELECT id FROM records WHERE verification_code = ? OR id = ?",
            [text, number.strip().lower()],
        ).fetchone()
    if row is None:
        raise ServiceError("number", f"Nenhum auto com o número ou código {number}.")
    return load_record(store, str(row[0]))


def find_records(
    *, store: Store, plate: str | None = None, holder: str | None = None,
    day: dt.date | None = None, limit: int = 200,
) -> list[SealedRecord]:
    """Sealed records by vehicle (either plate format), permit holder (id, name or document)
    and/or the day of the fact; newest first. At least one criterion is required."""
    where, params = [], []
    if plate:
        try:
            where.append("plate_key = ?")
            params.append(parse_plate(plate).canonical_key())
        except IdentityError as exc:
            raise ServiceError("plate", exc.message) from None
    if holder:
        text = holder.strip()
        digits = re.sub(r"[^0-9A-Za-z]", "", text).upper()
        ids = [r[0] for r in store.conn.execute(
            "SELECT id FROM ref_permit_holders WHERE id = ? OR name LIKE ? OR cpf = ? "
            "OR cnpj = ?", [text, f"%{text}%", digits, digits]).fetchall()]
        if not ids:
            return []
        where.append(f"holder_id IN ({', '.join('?' for _ in ids)})")
        params.extend(ids)
    if day:
        where.append("occurred_on = ?")
        params.append(day.isoformat())
    if not where:
        raise ServiceError("search", "Informe placa, permissionário ou data para pesquisar.")
    rows = store.conn.execute(
        f"SELECT id FROM records WHERE {' AND '.join(where)} "
        "ORDER BY occurred_on DESC, created_at DESC LIMIT ?",
        [*params, limit],
    ).fetchall()
    return [load_record(store, str(r[0])) for r in rows]


def search_records(
    *, store: Store, plate: str | None = None, limit: int = 50
) -> list[SealedRecord]:
    """Sealed records of a vehicle (either plate format), newest first."""
    return find_records(store=store, plate=plate, limit=limit) if plate else []


def records_sealed(*, store: Store, since: dt.datetime) -> list[SealedRecord]:
    """Records sealed on this device at or after ``since`` (aware), newest first."""
    stamp = since.astimezone(dt.UTC).isoformat(timespec="microseconds")
    rows = store.conn.execute(
        "SELECT id FROM records WHERE created_at >= ? ORDER BY created_at DESC", [stamp]
    ).fetchall()
    return [load_record(store, str(r[0])) for r in rows]


@dataclass(frozen=True)
class Cancellation:
    """The record that cancelled another: shown and printed with the cancelled one."""

    record_id: str
    number: str
    created_at: str
    reason: str

    def as_mark(self) -> dict[str, str]:
        return {"number": self.number, "created_at": self.created_at}


def cancellation_of(*, store: Store, record_id: str) -> Cancellation | None:
    """The cancelamento that refers to ``record_id``, or None while it stands."""
    row = store.conn.execute(
        "SELECT id FROM records WHERE kind = 'cancelamento' AND refers_to = ? "
        "ORDER BY journal_seq LIMIT 1", [record_id]).fetchone()
    if row is None:
        return None
    cancel = load_record(store, str(row[0]))
    return Cancellation(cancel.id, cancel.display_number, cancel.created_at,
                        str(cancel.envelope.get("body", {}).get("reason", "")))


def cancelled_record_ids(*, store: Store, among: Sequence[str] | None = None) -> set[str]:
    """Ids of cancelled records; with ``among``, only those of these ids (one indexed probe
    each – a list screen never reads every cancellation of the store)."""
    if among is None:
        rows = store.conn.execute(
            "SELECT refers_to FROM records WHERE kind = 'cancelamento' AND refers_to IS NOT NULL"
        ).fetchall()
        return {str(r[0]) for r in rows}
    found: set[str] = set()
    ids = list(among)
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found.update(str(r[0]) for r in store.conn.execute(
            "SELECT DISTINCT refers_to FROM records WHERE kind = 'cancelamento' AND "
            f"refers_to IN ({', '.join('?' for _ in chunk)})", chunk))
    return found


def pending_sync_count(*, store: Store) -> int:
    """Records sealed here and not yet acknowledged by HQ."""
    row = store.conn.execute("SELECT COUNT(*) FROM outbox WHERE acked_at IS NULL").fetchone()
    return int(row[0])


def print_count(*, store: Store, record_id: str, copy: str) -> int:
    """How many times this copy was printed: the next print's reprint number."""
    row = store.conn.execute(
        "SELECT COUNT(*) FROM print_log WHERE record_id = ? AND copy = ?", [record_id, copy]
    ).fetchone()
    return int(row[0])


def cancel_auto(*, store: Store, session: Session, record_id: str, reason: str,
                password: str) -> SealResult:
    """Cancel a sealed document by a new linked record (supervisor, with a reason).

    A signing act: the supervisor's password is asked again at that moment
    (:func:`reauthenticate`; a wrong one counts towards the login lockout)."""
    _require(session, "cancel_auto")
    why = _reason("reason", reason, "o motivo do cancelamento")
    target = _record_or_error(store, record_id)
    reauthenticate(store=store, session=session, password=password)
    if target.kind in ("cancelamento", "numero_anulado"):
        raise ServiceError("record_id", "Este registro não pode ser cancelado.")
    done = store.conn.execute(
        "SELECT 1 FROM records WHERE refers_to = ? AND kind = 'cancelamento'", [record_id]
    ).fetchone()
    if done:
        raise ServiceError("record_id", "Este auto já foi cancelado.")
    env = target.envelope
    sealed = seal_records(store, [RecordDraft("cancelamento", {
        "pack": env.get("body", {}).get("pack"),
        "cancelled_number": target.display_number, "cancelled_kind": target.kind,
        "cancelled_sha256": target.sha256, "reason": why,
        "supervisor": {"matricula": session.matricula, "name": session.name,
                       "reauthenticated": True},
    }, refers_to=record_id, plate_key=env.get("plate_key"), holder_id=env.get("holder_id"),
        occurred_on=legal_today().isoformat())])
    return SealResult(tuple(sealed), None, ())


def void_number(*, store: Store, session: Session, reason: str) -> SealResult:
    """Void the next number of the talonário (e.g. a spoiled paper form), with a reason."""
    _require(session, "seal_inspection")
    why = _reason("reason", reason, "o motivo da anulação do número")
    sealed = seal_records(store, [RecordDraft("numero_anulado", {
        "reason": why, "agent": {"matricula": session.matricula, "name": session.name}})])
    return SealResult(tuple(sealed), None, ())


def log_print(*, store: Store, session: Session, record_id: str, copy: str,
              layout: str = "a4", printer: str | None = None) -> int:
    """Log a print of a sealed document; returns the reprint number (0 = first print)."""
    _require(session, "reprint")
    _record_or_error(store, record_id)
    if copy not in ("1", "2"):
        raise ServiceError("copy", "Via inválida (1ª ou 2ª).")
    if layout not in ("a4", "80mm"):
        raise ServiceError("layout", "Formato inválido (A4 ou 80 mm).")
    store.require_writable()
    with store.atomic():
        row = store.conn.execute(
            "SELECT COUNT(*) FROM print_log WHERE record_id = ? AND copy = ?", [record_id, copy]
        ).fetchone()
        reprint_number = int(row[0])
        store.conn.execute(
            "INSERT INTO print_log(record_id, copy, layout, reprint_number, matricula, "
            "printed_at, printer) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [record_id, copy, layout, reprint_number, session.matricula, utc_now(), printer],
        )
    return reprint_number


def reprint(*, store: Store, session: Session, record_id: str, copy: str = "1",
            layout: str = "a4") -> int:
    """Print again ("2ª VIA – reimpressão n.º k"): logged and counted; returns k.

    k is 0 when the document had never been printed (then it is the first print).
    """
    return log_print(store=store, session=session, record_id=record_id, copy=copy,
                     layout=layout)


# --- documents -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RenderedDocument:
    record: SealedRecord
    pdf: bytes
    pdf_sha256: str
    reprint_number: int
    signed: bool


def render_record(
    *, store: Store, record_id: str, layout: str = "a4", copy: str = "1",
    reprint_number: int | None = None, sign: bool = True, channel: str = "cli",
    target: str | None = None, matricula: str = "cli",
    deliver: Callable[[bytes], object] | None = None,
) -> RenderedDocument:
    """The next output of a sealed record (``inspector render``): rendered only from the
    record, PAdES-signed with the device certificate, counted in the one output counter
    (documents.outputs: the same as the printer and "Salvar PDF") and archived.

    ``deliver(pdf)`` (e.g. writing the file) runs before the output is counted: when it
    raises, nothing is counted. ``reprint_number`` is accepted for old callers only; the
    counter decides it."""
    from inspector_app.documents import outputs
    from inspector_app.documents.pades import sign_pdf
    from inspector_app.security.certificates import load_or_create_device_certificate
    from inspector_app.store.sealing import device_key

    record = _record_or_error(store, record_id)
    if layout not in ("a4", "80mm"):
        raise ServiceError("layout", "Formato inválido (A4 ou 80 mm).")
    if copy not in ("1", "2"):
        raise ServiceError("copy", "Via inválida (1ª ou 2ª).")
    out = outputs.prepare_output(store, record.id, copy=copy, layout=layout)
    demo = (record.series or "").startswith("DEMO-")
    if sign and store.meta("document_signature") == "p256":
        # For readers without EdDSA (Acrobat, poppler's pdfsig): documents.pades_p256.
        from inspector_app.documents.pades_p256 import load_or_create_p256, sign_pdf_p256

        pack = record.envelope.get("body", {}).get("pack") or {}
        key_pem, cert = load_or_create_p256(
            store.data_dir, device_id=store.meta("device_id") or "dispositivo",
            organ=str(pack.get("organ") or "Fiscalização"), demo=demo)
        out = outputs.with_pdf(out, sign_pdf_p256(
            out.pdf, key_pem=key_pem, certificate_der=cert,
            signed_at=dt.datetime.now(BRASILIA),
            location=str(record.envelope.get("body", {}).get("location", {})
                         .get("place", ""))))
    elif sign:
        key = device_key(store)
        pack = record.envelope.get("body", {}).get("pack") or {}
        certificate = load_or_create_device_certificate(
            store.data_dir / "device_certificate.pem", key,
            device_id=store.meta("device_id") or key.device_key_id,
            organ=str(pack.get("organ") or "Fiscalização"), demo=demo,
        )
        out = outputs.with_pdf(out, sign_pdf(
            out.pdf, key=key, certificate_der=certificate,
            signed_at=dt.datetime.now(BRASILIA),
            location=str(record.envelope.get("body", {}).get("location", {})
                         .get("place", ""))))
    if deliver is not None:
        deliver(out.pdf)
    done = outputs.log_output(store, out, matricula=matricula, channel=channel,
                              target=target)
    assert done.pdf_sha256 is not None
    return RenderedDocument(record, done.pdf, done.pdf_sha256, done.reprint_number, sign)
