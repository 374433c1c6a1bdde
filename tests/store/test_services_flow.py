"""Use cases of ``services.py`` on a real store: login, inspections, sealing, retention, numbering."""

from __future__ import annotations

import datetime as dt
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from inspector_app import demo, services
from inspector_app.domain.identity import parse_plate
from inspector_app.services import ServiceError, Session
from inspector_app.store import inspections as repo
from inspector_app.store import numbering, reference
from inspector_app.store.db import Store, open_store
from inspector_app.store.numbering import NumbersExhaustedError
from inspector_app.store.sealing import SealedRecord
from inspector_app.store.verify import verify_store

REPO_ROOT = Path(__file__).resolve().parents[2]
PACK = "DF_STPCR"
PLACE = "Terminal Rural de Planaltina"
NARRATIVE = "Em fiscalização de rotina, constatei a irregularidade com o condutor presente."
# A scribble on the 600 × 200 signature pad.
STROKES = [[(20.0 + 6 * i, 100.0 + 40 * math.sin(i / 5)) for i in range(80)]]
# DF-SEG-01 (extintor): art. 29, VIII, retention required (art. 37, IV).
RETAINABLE_ITEM, RETAINABLE_RULE = "DF-SEG-01", "DF15154.29.VIII"
# DF-OPS-10: art. 29, IV, no retention.
PLAIN_ITEM = "DF-OPS-10"
FIELD_TABLES = ("inspections", "answers", "photos", "signatures", "records", "journal",
                "number_usage", "outbox", "print_log", "login_state")


# --- helpers ---------------------------------------------------------------------------------


def seeded_store(data_dir: Path) -> Store:
    store = open_store(data_dir)
    demo.seed_registry(store, vehicles=30, seed=1)
    return store


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    """A data folder with the demo registry, seeded once and copied per test (checkpointed)."""
    data_dir = tmp_path_factory.mktemp("template") / "data"
    store = seeded_store(data_dir)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return data_dir


def copy_store(template: Path, data_dir: Path) -> Store:
    shutil.copytree(template, data_dir)
    return open_store(data_dir)


def clean_plate(store: Store) -> str:
    """A DF_STPCR vehicle without registry warnings (insurance, vistoria, age all in order)."""
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? AND chassis_year >= ? ORDER BY id",
        [PACK, dt.date.today().year - 8],
    ).fetchall()
    for (plate,) in rows:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings:
            return str(plate)
    raise AssertionError(f"the demo registry has no {PACK} vehicle without warnings")


def login(store: Store, matricula: str) -> Session:
    return services.login(store=store, matricula=matricula, password=f"demo{matricula}")


def start(store: Store, session: Session, **overrides: Any) -> str:
    kwargs: dict[str, Any] = {
        "store": store, "session": session, "pack_id": PACK, "kind": "fiscalizacao",
        "location_type": "terminal", "place": PLACE, "plate": clean_plate(store),
    }
    kwargs.update(overrides)
    return services.start_inspection(**kwargs)


def sign(store: Store, inspection_id: str, *, driver: str | None = "signed",
         note: str = "") -> None:
    services.record_signature(store=store, inspection_id=inspection_id, role="agent",
                              status="signed", strokes=STROKES)
    if driver == "signed":
        services.record_signature(store=store, inspection_id=inspection_id, role="driver",
                                  status="signed", strokes=STROKES)
    elif driver is not None:
        services.record_signature(store=store, inspection_id=inspection_id, role="driver",
                                  status=driver, note=note)


def failed_inspection(store: Store, session: Session, item: str = PLAIN_ITEM,
                      **overrides: Any) -> str:
    """An open inspection with one failed item, signed by the agent and the driver."""
    inspection_id = start(store, session, **overrides)
    services.record_answer(store=store, inspection_id=inspection_id, item_id=item,
                           result="fail", note="Constatado na fiscalização.")
    sign(store, inspection_id)
    return inspection_id


def seal_one_auto(store: Store, session: Session, **seal: Any) -> services.SealResult:
    inspection_id = failed_inspection(store, session)
    return services.seal_inspection(store=store, session=session, inspection_id=inspection_id,
                                    narrative=NARRATIVE, **seal)


def seal_one_auto_with_retention(store: Store, session: Session) -> SealedRecord:
    inspection_id = failed_inspection(store, session, item=RETAINABLE_ITEM)
    result = services.seal_inspection(store=store, session=session, inspection_id=inspection_id,
                                      narrative=NARRATIVE, retain=True,
                                      retention_place="Pátio do terminal")
    termo = result.of_kind("termo_retencao")
    assert termo is not None
    return termo


def row_counts(store: Store) -> dict[str, int]:
    counts = {t: store.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
              for t in FIELD_TABLES}
    blobs = store.blob_dir
    counts["blob files"] = sum(1 for p in blobs.rglob("*") if p.is_file()) if blobs.exists() else 0
    return counts


def answer_log(store: Store, inspection_id: str) -> list[tuple[str, str, str]]:
    return [tuple(r) for r in store.conn.execute(
        "SELECT note, item_id, result FROM answers WHERE inspection_id = ? ORDER BY id",
        [inspection_id])]


@pytest.fixture
def store(template: Path, tmp_path: Path):
    s = copy_store(template, tmp_path / "data")
    yield s
    s.close()


@pytest.fixture
def inspector(store: Store) -> Session:
    return login(store, "1001")


@pytest.fixture
def desk(store: Store) -> Session:
    return login(store, "1003")


@pytest.fixture
def supervisor(store: Store) -> Session:
    return login(store, "1004")


# --- login -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("matricula", "role"),
    [("1001", "inspector"), ("1003", "retention_desk"), ("1004", "supervisor")],
)
def test_the_right_password_opens_a_session_with_the_inspectors_role(store, matricula, role):
    session = login(store, matricula)
    assert (session.matricula, session.role) == (matricula, role)
    assert session.name


def test_wrong_passwords_count_down_in_portuguese_and_the_fifth_locks_saying_to_wait(store):
    messages = []
    for _ in range(6):
        with pytest.raises(ServiceError) as err:
            services.login(store=store, matricula="1001", password="senha-errada")
        assert err.value.field == "password"
        messages.append(err.value.message_pt)
    assert messages[:4] == [
        "Senha incorreta. Restam 4 tentativas antes do bloqueio.",
        "Senha incorreta. Restam 3 tentativas antes do bloqueio.",
        "Senha incorreta. Restam 2 tentativas antes do bloqueio.",
        "Senha incorreta. Resta 1 tentativa antes do bloqueio.",
    ]
    assert messages[4] == "Senha incorreta. Acesso bloqueado por 30 s."
    assert messages[5].startswith("Acesso bloqueado por tentativas erradas. Tente novamente em")
    # While locked even the right password is refused.
    with pytest.raises(ServiceError, match="bloqueado"):
        login(store, "1001")


def test_the_lockout_survives_closing_and_reopening_the_store(template, tmp_path):
    t0 = dt.datetime(2026, 5, 4, 13, 0, tzinfo=dt.UTC)
    store = copy_store(template, tmp_path / "data")
    for _ in range(5):
        with pytest.raises(ServiceError):
            services.login(store=store, matricula="1001", password="errada", now=t0)
    store.close()

    store = open_store(tmp_path / "data")
    try:
        with pytest.raises(ServiceError) as err:
            services.login(store=store, matricula="1001", password="demo1001",
                           now=t0 + dt.timedelta(seconds=10))
        assert err.value.message_pt == (
            "Acesso bloqueado por tentativas erradas. Tente novamente em 20 s."
        )
        session = services.login(store=store, matricula="1001", password="demo1001",
                                 now=t0 + dt.timedelta(seconds=31))
        assert session.role == "inspector"
    finally:
        store.close()


# --- start_inspection ---------------------------------------------------------------------------


def registered_plate(store: Store, stored_kind: str) -> tuple[str, str]:
    """(plate, pack) of a registered vehicle whose plate is stored in ``stored_kind`` format
    and has a form in the other format."""
    for plate, pack_id in store.conn.execute(
        "SELECT plate, pack_id FROM ref_vehicles ORDER BY id"
    ).fetchall():
        parsed = parse_plate(plate)
        if parsed.kind == stored_kind and parsed.old() is not None:
            return plate, pack_id
    raise AssertionError(f"the demo registry has no {stored_kind} plate")


@pytest.mark.parametrize("stored_kind", ["old", "mercosul"])
def test_a_plate_typed_in_the_other_format_finds_the_registered_vehicle(
    store, inspector, stored_kind
):
    plate, pack_id = registered_plate(store, stored_kind)
    stored = parse_plate(plate)
    old = stored.old()
    assert old is not None
    typed = stored.mercosul() if stored_kind == "old" else f"{old[:3]}-{old[3:]}"
    assert typed.replace("-", "") != plate
    inspection_id = start(store, inspector, plate=typed, pack_id=pack_id)
    vehicle = repo.get_inspection(store, inspection_id).vehicle
    assert vehicle["registered"] is True
    assert (vehicle["plate"], vehicle["plate_key"]) == (plate, stored.canonical_key())
    assert vehicle["holder_name"] and vehicle["permit_number"]


def test_an_unknown_plate_is_inspected_and_flagged_as_not_registered(store, inspector):
    inspection_id = start(store, inspector, plate="ABC1D23",
                          vehicle={"chassis_year": 2020, "seats": 20})
    insp = repo.get_inspection(store, inspection_id)
    assert insp.vehicle["registered"] is False
    assert "holder_name" not in insp.vehicle
    assert (insp.plate, insp.vehicle["chassis_year"]) == ("ABC1D23", 2020)


# --- answers -------------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from inspector_app import services
    from inspector_app.store.db import open_store

    data_dir, plate, items = Path(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    store = open_store(data_dir)
    session = services.login(store=store, matricula="1001", password="demo1001")
    inspection_id = services.start_inspection(
        store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
        location_type="terminal", place="Terminal Rural de Planaltina", plate=plate)
    print("inspection", inspection_id, flush=True)
    n = 0
    while True:
        for item in items:
            result = ("ok", "fail", "na")[n % 3]
            services.record_answer(store=store, inspection_id=inspection_id, item_id=item,
                                   result=result, note=f"resposta {n}")
            print("answer", f"resposta {n}", item, result, flush=True)
            n += 1
    """
)
CHILD_ITEMS = ("DF-SEG-01", "DF-SEG-02", "DF-OPS-10", "DF-VIS-01", "DF-DOC-01")


def test_answers_printed_by_a_child_killed_mid_checklist_are_all_on_disk(store, tmp_path):
    """The crash in the middle of a checklist loses nothing the inspector saw saved."""
    plate = clean_plate(store)
    store.close()
    env = {k: v for k, v in os.environ.items() if k != "INSPECTOR_FORMS_DIR"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(tmp_path / "data"), plate, ",".join(CHILD_ITEMS)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        cwd=REPO_ROOT, env=env,
    )
    printed: list[tuple[str, str, str]] = []
    inspection_id = None
    try:
        assert child.stdout is not None
        while len(printed) < 23:  # stop in the middle of the fifth round of the checklist
            line = child.stdout.readline()
            assert line, f"child stopped early: {child.stderr.read() if child.stderr else ''}"
            word, rest = line.rstrip("\n").split(" ", 1)
            if word == "inspection":
                inspection_id = rest
            else:
                note_n, item, result = rest.rsplit(" ", 2)
                printed.append((note_n, item, result))
        os.kill(child.pid, signal.SIGKILL)  # while it is still answering
    finally:
        child.kill()
        child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL

    reopened = open_store(tmp_path / "data")
    try:
        assert reopened.conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert inspection_id is not None
        log = answer_log(reopened, inspection_id)
        assert log[: len(printed)] == printed  # every acknowledged answer, in order
        assert len(log) - len(printed) <= 1  # at most the one being written when killed
        current = repo.current_answers(reopened, inspection_id)
        last = {item: result for _note, item, result in log}
        assert {i: a.result for i, a in current.items()} == last
        assert repo.get_inspection(reopened, inspection_id).status == "open"
    finally:
        reopened.close()


def test_a_later_answer_replaces_the_current_one_and_the_log_keeps_both(store, inspector):
    inspection_id = start(store, inspector)
    services.record_answer(store=store, inspection_id=inspection_id, item_id=PLAIN_ITEM,
                           result="fail", note="primeira leitura")
    services.record_answer(store=store, inspection_id=inspection_id, item_id=PLAIN_ITEM,
                           result="ok", note="corrigido pelo agente")
    current = repo.current_answers(store, inspection_id)
    assert (current[PLAIN_ITEM].result, current[PLAIN_ITEM].note) == ("ok", "corrigido pelo agente")
    assert answer_log(store, inspection_id) == [
        ("primeira leitura", PLAIN_ITEM, "fail"), ("corrigido pelo agente", PLAIN_ITEM, "ok"),
    ]
    outcome = services.evaluate_inspection(store=store, inspection_id=inspection_id)
    assert outcome.infractions == ()


# --- sealing -------------------------------------------------------------------------------------


def test_sealing_is_refused_until_signatures_reasons_and_narrative_are_there(store, inspector):
    inspection_id = start(store, inspector)
    services.record_answer(store=store, inspection_id=inspection_id, item_id=RETAINABLE_ITEM,
                           result="fail")
    before = row_counts(store)

    def refusal(**kwargs: Any) -> tuple[str, str]:
        with pytest.raises(ServiceError) as err:
            services.seal_inspection(store=store, session=inspector,
                                     inspection_id=inspection_id, **kwargs)
        return err.value.field, err.value.message_pt

    assert refusal(narrative=NARRATIVE) == ("signature", "Falta a assinatura do agente.")
    sign(store, inspection_id, driver=None)
    field, message = refusal(narrative=NARRATIVE)
    assert field == "signature" and "assinatura do condutor" in message
    with pytest.raises(ServiceError) as err:
        services.record_signature(store=store, inspection_id=inspection_id, role="driver",
                                  status="refused", note="recusou")
    assert err.value.field == "note" and "pelo menos 10 caracteres" in err.value.message_pt
    services.record_signature(store=store, inspection_id=inspection_id, role="driver",
                              status="refused", note="Condutor recusou-se a assinar o auto.")
    assert refusal(narrative="   ") == ("narrative", "Descreva os fatos (narrativa do agente).")
    field, message = refusal(narrative=NARRATIVE, removed={RETAINABLE_RULE: "engano"})
    assert field == "removed" and "motivo para retirar" in message
    field, message = refusal(narrative=NARRATIVE, removed={"DF15154.29.I": "Não se aplica aqui."})
    assert field == "removed" and "não foi proposta" in message

    after = row_counts(store)
    assert after["records"] == before["records"] == 0
    assert repo.get_inspection(store, inspection_id).status == "open"
    result = services.seal_inspection(store=store, session=inspector,
                                      inspection_id=inspection_id, narrative=NARRATIVE)
    assert [r.kind for r in result.records] == ["auto_infracao"]
    assert result.records[0].envelope["body"]["signatures"]["driver"]["status"] == "refused"


def test_sealing_an_infraction_with_retention_at_a_terminal_writes_auto_and_termo_and_closes(
    store, inspector
):
    inspection_id = failed_inspection(store, inspector, item=RETAINABLE_ITEM)
    result = services.seal_inspection(
        store=store, session=inspector, inspection_id=inspection_id, narrative=NARRATIVE,
        retain=True, retention_place="Pátio do terminal",
    )
    auto, termo = result.of_kind("auto_infracao"), result.of_kind("termo_retencao")
    assert [r.kind for r in result.records] == ["auto_infracao", "termo_retencao"]
    assert auto is not None and termo is not None
    assert termo.envelope["refers_to"] == auto.id
    assert termo.envelope["body"]["grounds"] == ["DF15154.37.IV"]
    assert [i["rule_id"] for i in auto.envelope["body"]["outcome"]["infractions"]] == [
        RETAINABLE_RULE
    ]
    assert repo.get_inspection(store, inspection_id).status == "sealed"
    assert verify_store(store).problems == []
    assert services.vehicles_held(store=store)[0]["record_id"] == termo.id

    before = row_counts(store)
    for add in (
        lambda: services.record_answer(store=store, inspection_id=inspection_id,
                                       item_id=PLAIN_ITEM, result="fail"),
        lambda: services.record_signature(store=store, inspection_id=inspection_id,
                                          role="agent", status="signed", strokes=STROKES),
        lambda: services.seal_inspection(store=store, session=inspector,
                                         inspection_id=inspection_id, narrative=NARRATIVE),
    ):
        with pytest.raises(ServiceError) as err:
            add()
        assert err.value.field == "inspection_id"
        assert "já foi encerrada" in err.value.message_pt
    assert row_counts(store) == before


def test_retention_on_a_public_road_needs_a_justified_manifest_insecurity(store, inspector):
    inspection_id = failed_inspection(store, inspector, item=RETAINABLE_ITEM,
                                      location_type="via_publica", place="DF-130, km 3")
    seal = {"store": store, "session": inspector, "inspection_id": inspection_id,
            "narrative": NARRATIVE, "retain": True, "retention_place": "Acostamento da DF-130"}
    with pytest.raises(ServiceError) as err:
        services.seal_inspection(**seal)
    assert err.value.field == "retain"
    assert "art. 37, parágrafo único" in err.value.message_pt
    assert row_counts(store)["records"] == 0

    result = services.seal_inspection(
        **seal, insecurity_justification="Extintor ausente com 30 passageiros a bordo."
    )
    termo = result.of_kind("termo_retencao")
    assert termo is not None
    assert termo.envelope["body"]["insecurity_justification"].startswith("Extintor ausente")


def test_a_vistoria_without_failures_seals_an_approved_auto_vistoria(store, inspector):
    inspection_id = start(store, inspector, kind="vistoria", location_type="patio_vistoria",
                          place="Pátio de vistoria da SEMOB")
    for item in ("DF-SEG-01", "DF-SEG-02", "DF-DOC-01"):
        services.record_answer(store=store, inspection_id=inspection_id, item_id=item,
                               result="ok")
    sign(store, inspection_id, driver=None)
    result = services.seal_inspection(store=store, session=inspector,
                                      inspection_id=inspection_id)
    [record] = result.records
    assert record.kind == "auto_vistoria"
    assert record.envelope["body"]["result"] == "aprovado"
    assert verify_store(store).ok


def test_a_fiscalizacao_without_infractions_has_nothing_to_seal(store, inspector):
    inspection_id = start(store, inspector)
    services.record_answer(store=store, inspection_id=inspection_id, item_id=PLAIN_ITEM,
                           result="ok")
    sign(store, inspection_id, driver=None)
    with pytest.raises(ServiceError) as err:
        services.seal_inspection(store=store, session=inspector, inspection_id=inspection_id)
    assert err.value.field == "infractions"
    assert repo.get_inspection(store, inspection_id).status == "open"


def test_an_abandoned_inspection_is_kept_and_takes_no_more_answers(store, inspector):
    inspection_id = start(store, inspector)
    services.abandon_inspection(store=store, inspection_id=inspection_id,
                                reason="Veículo evadiu-se antes da vistoria.")
    insp = repo.get_inspection(store, inspection_id)
    assert insp.status == "abandoned"
    assert insp.facts["abandon_reason"] == "Veículo evadiu-se antes da vistoria."
    with pytest.raises(ServiceError) as err:
        services.record_answer(store=store, inspection_id=inspection_id, item_id=PLAIN_ITEM,
                               result="fail")
    assert err.value.field == "inspection_id"


# --- retention desk ---------------------------------------------------------------------------------


def test_a_vehicle_retained_after_sealing_is_held_until_released_under_art_38(
    store, inspector, desk
):
    auto = seal_one_auto(store, inspector).of_kind("auto_infracao")
    assert auto is not None
    assert services.vehicles_held(store=store) == []
    # DF-OPS-10 alone gives no retention ground: the auto cannot be retained.
    with pytest.raises(ServiceError, match="fundamento"):
        services.retain_vehicle(store=store, session=inspector, auto_id=auto.id, place="Pátio")

    inspection_id = failed_inspection(store, inspector, item=RETAINABLE_ITEM)
    sealed = services.seal_inspection(store=store, session=inspector,
                                      inspection_id=inspection_id, narrative=NARRATIVE)
    assert "Retenção exigida pela regra não foi aplicada pelo agente." in sealed.warnings
    retainable = sealed.of_kind("auto_infracao")
    assert retainable is not None
    termo = services.retain_vehicle(store=store, session=inspector, auto_id=retainable.id,
                                    place="Pátio do Terminal de Planaltina").records[0]
    assert (termo.kind, termo.envelope["refers_to"]) == ("termo_retencao", retainable.id)
    with pytest.raises(ServiceError, match="já tem"):
        services.retain_vehicle(store=store, session=inspector, auto_id=retainable.id,
                                place="Pátio")
    held = services.vehicles_held(store=store)
    assert [(h["record_id"], h["grounds"]) for h in held] == [(termo.id, ["DF15154.37.IV"])]

    release = {"store": store, "retention_id": termo.id}
    refusals = [
        ({"session": inspector, "fault_fixed": True, "rechecked_items": [RETAINABLE_ITEM]},
         "role"),
        ({"session": desk}, "conditions"),
        ({"session": desk, "fault_fixed": True}, "rechecked_items"),
    ]
    for kwargs, field in refusals:
        with pytest.raises(ServiceError) as err:
            services.release_vehicle(**release, **kwargs)
        assert err.value.field == field
    assert len(services.vehicles_held(store=store)) == 1

    result = services.release_vehicle(**release, session=desk, fault_fixed=True,
                                      rechecked_items=[RETAINABLE_ITEM])
    [liberacao] = result.records
    assert (liberacao.kind, liberacao.envelope["refers_to"]) == ("termo_liberacao", termo.id)
    # Payment is a warning, never a block (art. 38, III; SV 21).
    assert len(result.warnings) == 1 and "apenas aviso" in result.warnings[0]
    assert services.vehicles_held(store=store) == []
    with pytest.raises(ServiceError) as err:
        services.release_vehicle(**release, session=desk, fault_fixed=True,
                                 rechecked_items=[RETAINABLE_ITEM])
    assert err.value.field == "retention_id"
    assert verify_store(store).ok


def test_a_release_to_a_workshop_with_payment_informed_has_no_warning(store, inspector, desk):
    termo = seal_one_auto_with_retention(store, inspector)
    result = services.release_vehicle(
        store=store, session=desk, retention_id=termo.id, workshop="Oficina Boa Viagem",
        workshop_deadline="2026-06-30", payment_reference="DAR 2026/000123",
    )
    assert result.warnings == ()
    conditions = result.records[0].envelope["body"]["conditions"]
    assert (conditions["workshop"], conditions["payment_reference"]) == (
        "Oficina Boa Viagem", "DAR 2026/000123"
    )


def test_an_over_age_vehicle_is_released_only_with_a_termo_de_compromisso(
    store, inspector, desk
):
    """Art. 37, III retention (chassis beyond the STPCR age limit) needs art. 38 §único."""
    old = dt.date.today().year - 15
    inspection_id = start(store, inspector, plate="ABC1D23",
                          vehicle={"chassis_year": old, "body_year": old})
    sign(store, inspection_id)
    outcome = services.evaluate_inspection(store=store, inspection_id=inspection_id)
    assert [g.id for g in outcome.retention.grounds] == ["DF15154.37.III"]
    termo = services.seal_inspection(
        store=store, session=inspector, inspection_id=inspection_id, narrative=NARRATIVE,
        retain=True, retention_place="Pátio do terminal",
    ).of_kind("termo_retencao")
    assert termo is not None and termo.envelope["body"]["grounds"] == ["DF15154.37.III"]

    with pytest.raises(ServiceError) as err:
        services.release_vehicle(store=store, session=desk, retention_id=termo.id)
    assert err.value.field == "compromisso" and "termo de compromisso" in err.value.message_pt
    assert [h["record_id"] for h in services.vehicles_held(store=store)] == [termo.id]

    result = services.release_vehicle(store=store, session=desk, retention_id=termo.id,
                                      compromisso_signed=True, payment_reference="DAR 77")
    assert [r.kind for r in result.records] == ["termo_compromisso", "termo_liberacao"]
    assert {r.envelope["refers_to"] for r in result.records} == {termo.id}
    assert services.vehicles_held(store=store) == []
    assert verify_store(store).ok


# --- cancellation, lookup, prints ------------------------------------------------------------------


def test_only_a_supervisor_cancels_an_auto_with_a_reason_and_only_once(
    store, inspector, supervisor
):
    auto = seal_one_auto(store, inspector).of_kind("auto_infracao")
    assert auto is not None
    reason = "Placa digitada errada; auto refeito com a placa correta."
    for session, why, field in [(inspector, reason, "role"), (supervisor, "erro", "reason")]:
        with pytest.raises(ServiceError) as err:
            services.cancel_auto(password="demo1004", store=store, session=session, record_id=auto.id, reason=why)
        assert err.value.field == field
    [cancel] = services.cancel_auto(password="demo1004", store=store, session=supervisor, record_id=auto.id,
                                    reason=reason).records
    assert (cancel.kind, cancel.envelope["refers_to"]) == ("cancelamento", auto.id)
    body = cancel.envelope["body"]
    assert (body["cancelled_number"], body["cancelled_sha256"], body["reason"]) == (
        auto.display_number, auto.sha256, reason
    )
    with pytest.raises(ServiceError, match="já foi cancelado"):
        services.cancel_auto(password="demo1004", store=store, session=supervisor, record_id=auto.id, reason=reason)
    with pytest.raises(ServiceError, match="não pode ser cancelado"):
        services.cancel_auto(password="demo1004", store=store, session=supervisor, record_id=cancel.id, reason=reason)
    # The cancelled auto is still there, unchanged.
    assert services.find_record(store=store, number=auto.id).sha256 == auto.sha256
    assert verify_store(store).ok


@pytest.mark.parametrize(
    "how",
    ["printed number", "printed number in lower case", "verification code",
     "verification code in lower case", "record id"],
)
def test_find_record_by_printed_number_verification_code_or_id(template, tmp_path, how):
    store = copy_store(template, tmp_path / "data")
    try:
        numbering.add_range(store, series="SEMOB-A", first=1, last=50)
        auto = seal_one_auto(store, login(store, "1001")).of_kind("auto_infracao")
        assert auto is not None and auto.display_number == "SEMOB-A-000001"
        typed = {
            "printed number": "SEMOB-A-000001",
            "printed number in lower case": " semob-a-000001 ",
            "verification code": auto.verification_code,
            "verification code in lower case": auto.verification_code.lower(),
            "record id": auto.id,
        }[how]
        assert services.find_record(store=store, number=typed).id == auto.id
    finally:
        store.close()


def test_prints_are_logged_and_reprints_counted_per_copy(store, inspector, desk):
    auto = seal_one_auto(store, inspector).of_kind("auto_infracao")
    assert auto is not None
    first = services.log_print(store=store, session=inspector, record_id=auto.id, copy="1")
    again = [services.reprint(store=store, session=desk, record_id=auto.id) for _ in range(2)]
    other = services.log_print(store=store, session=inspector, record_id=auto.id, copy="2",
                               layout="80mm", printer="Térmica 80 mm")
    assert (first, again, other) == (0, [1, 2], 0)
    rows = store.conn.execute(
        "SELECT copy, layout, reprint_number, matricula FROM print_log ORDER BY id"
    ).fetchall()
    assert rows == [("1", "a4", 0, "1001"), ("1", "a4", 1, "1003"), ("1", "a4", 2, "1003"),
                    ("2", "80mm", 0, "1001")]


# --- numbering ---------------------------------------------------------------------------------------


def test_a_three_number_range_issues_three_autos_then_refuses_the_fourth_leaving_nothing_partial(
    template, tmp_path
):
    store = copy_store(template, tmp_path / "data")
    try:
        numbering.add_range(store, series="SEMOB-T", first=1, last=3)
        session = login(store, "1001")
        numbers = [seal_one_auto(store, session).records[0].display_number for _ in range(3)]
        assert numbers == ["SEMOB-T-000001", "SEMOB-T-000002", "SEMOB-T-000003"]
        assert [r.series for r in numbering.ranges(store)] == ["SEMOB-T"]  # no demo range

        fourth = failed_inspection(store, session)
        before = row_counts(store)
        with pytest.raises(NumbersExhaustedError) as err:
            services.seal_inspection(store=store, session=session, inspection_id=fourth,
                                     narrative=NARRATIVE)
        assert "Não há mais números de auto disponíveis" in err.value.message_pt
        assert "nada foi emitido" in err.value.message_pt
        assert row_counts(store) == before
        assert repo.get_inspection(store, fourth).status == "open"
        assert verify_store(store).problems == []

        # Once HQ assigns a new range the same inspection seals.
        numbering.add_range(store, series="SEMOB-T", first=4, last=10)
        result = services.seal_inspection(store=store, session=session, inspection_id=fourth,
                                          narrative=NARRATIVE)
        assert result.records[0].display_number == "SEMOB-T-000004"
        assert verify_store(store).ok
    finally:
        store.close()


def test_the_low_numbers_warning_appears_near_the_end_of_the_range(template, tmp_path):
    store = copy_store(template, tmp_path / "data")
    try:
        numbering.add_range(store, series="SEMOB-W", first=1, last=numbering.LOW_WATER + 2)
        session = login(store, "1001")
        first = seal_one_auto(store, session)
        assert not any("Restam" in w for w in first.warnings)  # 21 left
        assert numbering.low_numbers_warning(store) is None
        second = seal_one_auto(store, session)  # 20 left
        assert f"Restam apenas {numbering.LOW_WATER} números" in second.warnings[-1]
        for _ in range(numbering.LOW_WATER - 1):
            services.void_number(store=store, session=session,
                                 reason="Formulário em papel inutilizado.")
        assert numbering.low_numbers_warning(store) == (
            "Restam apenas 1 números de auto neste dispositivo: sincronize com a sede."
        )
        services.void_number(store=store, session=session, reason="Formulário inutilizado.")
        warning = numbering.low_numbers_warning(store)
        assert warning is not None and warning.startswith("Numeração esgotada")
    finally:
        store.close()


def test_void_number_seals_a_numero_anulado_and_keeps_the_accounting_without_gaps(
    template, tmp_path
):
    store = copy_store(template, tmp_path / "data")
    try:
        numbering.add_range(store, series="SEMOB-V", first=1, last=3)
        session = login(store, "1001")
        first = seal_one_auto(store, session).records[0]
        [void] = services.void_number(store=store, session=session,
                                      reason="Folha rasgada na impressora.").records
        third = seal_one_auto(store, session).records[0]
        assert (void.kind, void.display_number) == ("numero_anulado", "SEMOB-V-000002")
        assert void.envelope["body"]["reason"] == "Folha rasgada na impressora."
        usage = store.conn.execute(
            "SELECT number, status, record_id FROM number_usage ORDER BY number"
        ).fetchall()
        assert usage == [(1, "issued", first.id), (2, "voided", void.id), (3, "issued", third.id)]
        [status] = numbering.status(store)
        assert (status.issued, status.voided, status.remaining) == (2, 1, 0)
        report = verify_store(store)
        assert report.problems == []
        assert (report.numbers_issued, report.numbers_voided) == (2, 1)
    finally:
        store.close()


# --- bad input to every service -------------------------------------------------------------------


@dataclass
class World:
    store: Store
    inspector: Session
    desk: Session
    supervisor: Session
    open_id: str
    auto_id: str
    retention_id: str
    not_a_photo: Path


@pytest.fixture(scope="module")
def world(template, tmp_path_factory):
    base = tmp_path_factory.mktemp("world")
    store = copy_store(template, base / "data")
    inspector, desk, supervisor = (login(store, m) for m in ("1001", "1003", "1004"))
    open_id = start(store, inspector)  # one failed answer, no signature yet
    services.record_answer(store=store, inspection_id=open_id, item_id=RETAINABLE_ITEM,
                           result="fail")
    termo = seal_one_auto_with_retention(store, inspector)
    not_a_photo = base / "foto.jpg"
    not_a_photo.write_text("isto não é uma foto", encoding="utf-8")
    yield World(store, inspector, desk, supervisor, open_id, termo.envelope["refers_to"],
                termo.id, not_a_photo)
    store.close()


def _start(w: World, **overrides: Any) -> Any:
    return start(w.store, w.inspector, **overrides)


def _answer(w: World, **overrides: Any) -> Any:
    kwargs = {"store": w.store, "inspection_id": w.open_id, "item_id": PLAIN_ITEM,
              "result": "fail", **overrides}
    return services.record_answer(**kwargs)


def _signature(w: World, **overrides: Any) -> Any:
    kwargs = {"store": w.store, "inspection_id": w.open_id, "role": "driver",
              "status": "signed", "strokes": STROKES, **overrides}
    return services.record_signature(**kwargs)


def _release(w: World, **overrides: Any) -> Any:
    kwargs = {"store": w.store, "session": w.desk, "retention_id": w.retention_id, **overrides}
    return services.release_vehicle(**kwargs)


CPF_BAD = "123.456.789-00"
REASON = "Motivo com mais de dez caracteres."
BAD_INPUT: list[tuple[str, Callable[[World], Any], str, str]] = [
    ("login unknown matricula", lambda w: services.login(store=w.store, matricula="9999", password="x"), "matricula", "Matrícula não cadastrada ou inativa"),
    ("login inactive matricula", lambda w: services.login(store=w.store, matricula="1099", password="demo1099"), "matricula", "Matrícula não cadastrada ou inativa"),
    ("start invalid plate", lambda w: _start(w, plate="ABC12"), "plate", "Placa inválida"),
    ("start unknown pack", lambda w: _start(w, pack_id="XX_1999"), "pack", "Pacote de regulamentação desconhecido"),
    ("start bad kind", lambda w: _start(w, kind="ronda"), "kind", "Tipo de inspeção inválido"),
    ("start bad location_type", lambda w: _start(w, location_type="rodovia"), "location_type", "Tipo de local inválido"),
    ("start empty place", lambda w: _start(w, place="   "), "place", "Informe o local"),
    ("start latitude 91", lambda w: _start(w, latitude=91.0, longitude=-47.0), "latitude", "Latitude fora do intervalo"),
    ("start longitude -181", lambda w: _start(w, latitude=-15.6, longitude=-181.0), "longitude", "Longitude fora do intervalo"),
    ("start by the retention desk", lambda w: start(w.store, w.desk), "role", "não permite esta operação"),
    ("start unknown vehicle key", lambda w: _start(w, vehicle={"cor": "branca"}), "vehicle.cor", "Campo de veículo desconhecido"),
    ("start invalid driver cpf", lambda w: _start(w, driver={"name": "José", "cpf": CPF_BAD}), "driver.cpf", "CPF inválido"),
    ("answer unknown item", lambda w: _answer(w, item_id="DF-XXX-99"), "item_id", "não existe no pacote"),
    ("answer invalid result", lambda w: _answer(w, result="talvez"), "result", "Resposta inválida"),
    ("answer rule not of the item", lambda w: _answer(w, item_id=RETAINABLE_ITEM, rules=["DF15154.29.I"]), "rules", "não decorre do item"),
    ("answer unknown inspection", lambda w: _answer(w, inspection_id="nao-existe"), "inspection_id", "Inspeção não encontrada"),
    ("update empty place", lambda w: services.update_inspection(store=w.store, inspection_id=w.open_id, place=" "), "place", "Informe o local"),
    ("update invalid driver cpf", lambda w: services.update_inspection(store=w.store, inspection_id=w.open_id, driver={"cpf": CPF_BAD}), "driver.cpf", "CPF inválido"),
    ("photo of an unknown item", lambda w: services.attach_photo(store=w.store, inspection_id=w.open_id, source=w.not_a_photo, item_id="DF-XXX-99"), "item_id", "não existe no pacote"),
    ("photo that is not an image", lambda w: services.attach_photo(store=w.store, inspection_id=w.open_id, source=w.not_a_photo), "photo", ""),
    ("photo file missing", lambda w: services.attach_photo(store=w.store, inspection_id=w.open_id, source=w.not_a_photo.with_name("sumiu.jpg")), "photo", ""),
    ("signature of a witness", lambda w: _signature(w, role="testemunha"), "role", "agente ou do condutor"),
    ("signature bad status", lambda w: _signature(w, status="talvez"), "status", "inválida"),
    ("agent refusing to sign", lambda w: _signature(w, role="agent", status="refused", note=REASON), "status", "O agente deve assinar"),
    ("driver absent without note", lambda w: _signature(w, status="absent", note="saiu"), "note", "pelo menos 10 caracteres"),
    ("signature without strokes", lambda w: _signature(w, strokes=[]), "strokes", ""),
    ("evaluate unknown inspection", lambda w: services.evaluate_inspection(store=w.store, inspection_id="nao-existe"), "inspection_id", "Inspeção não encontrada"),
    ("seal by the retention desk", lambda w: services.seal_inspection(store=w.store, session=w.desk, inspection_id=w.open_id, narrative=NARRATIVE), "role", "não permite"),
    ("seal without the agent signature", lambda w: services.seal_inspection(store=w.store, session=w.inspector, inspection_id=w.open_id, narrative=NARRATIVE), "signature", "Falta a assinatura do agente"),
    ("retain by the retention desk", lambda w: services.retain_vehicle(store=w.store, session=w.desk, auto_id=w.auto_id, place="Pátio"), "role", "não permite"),
    ("retain a termo, not an auto", lambda w: services.retain_vehicle(store=w.store, session=w.inspector, auto_id=w.retention_id, place="Pátio"), "auto_id", "auto de infração"),
    ("retain an unknown auto", lambda w: services.retain_vehicle(store=w.store, session=w.inspector, auto_id="nao-existe", place="Pátio"), "record_id", "não encontrado"),
    ("retain an auto already retained", lambda w: services.retain_vehicle(store=w.store, session=w.inspector, auto_id=w.auto_id, place="Pátio"), "auto_id", "já tem"),
    ("abandon with a short reason", lambda w: services.abandon_inspection(store=w.store, inspection_id=w.open_id, reason="saiu"), "reason", "pelo menos 10 caracteres"),
    ("release by an inspector", lambda w: _release(w, session=w.inspector, fault_fixed=True, rechecked_items=["DF-SEG-01"]), "role", "não permite"),
    ("release without conditions", lambda w: _release(w), "conditions", "art. 38"),
    ("release fault fixed, nothing rechecked", lambda w: _release(w, fault_fixed=True), "rechecked_items", "itens verificados"),
    ("release of a vehicle not held", lambda w: _release(w, retention_id=w.auto_id, fault_fixed=True, rechecked_items=["DF-SEG-01"]), "retention_id", "não está retido"),
    ("cancel by an inspector", lambda w: services.cancel_auto(password="demo1004", store=w.store, session=w.inspector, record_id=w.auto_id, reason=REASON), "role", "não permite"),
    ("cancel with a short reason", lambda w: services.cancel_auto(password="demo1004", store=w.store, session=w.supervisor, record_id=w.auto_id, reason="erro"), "reason", "pelo menos 10 caracteres"),
    ("cancel an unknown record", lambda w: services.cancel_auto(password="demo1004", store=w.store, session=w.supervisor, record_id="nao-existe", reason=REASON), "record_id", "não encontrado"),
    ("void with a short reason", lambda w: services.void_number(store=w.store, session=w.inspector, reason="rasgou"), "reason", "pelo menos 10 caracteres"),
    ("void by the retention desk", lambda w: services.void_number(store=w.store, session=w.desk, reason=REASON), "role", "não permite"),
    ("print a third copy", lambda w: services.log_print(store=w.store, session=w.inspector, record_id=w.auto_id, copy="3"), "copy", "Via inválida"),
    ("print on A3", lambda w: services.log_print(store=w.store, session=w.inspector, record_id=w.auto_id, copy="1", layout="a3"), "layout", "Formato inválido"),
    ("print an unknown record", lambda w: services.log_print(store=w.store, session=w.inspector, record_id="nao-existe", copy="1"), "record_id", "não encontrado"),
    ("reprint an unknown record", lambda w: services.reprint(store=w.store, session=w.desk, record_id="nao-existe"), "record_id", "não encontrado"),
    ("find an unknown number", lambda w: services.find_record(store=w.store, number="SEMOB-A-999999"), "number", "Nenhum auto"),
]


@pytest.mark.parametrize(("call", "field", "says"), [row[1:] for row in BAD_INPUT],
                         ids=[row[0] for row in BAD_INPUT])
def test_bad_input_to_a_service_names_the_field_in_portuguese_and_writes_nothing(
    world, call, field, says
):
    before = row_counts(world.store)
    with pytest.raises(ServiceError) as err:
        call(world)
    assert err.value.field == field
    assert says in err.value.message_pt
    assert err.value.message_pt.strip()
    assert row_counts(world.store) == before
    assert repo.get_inspection(world.store, world.open_id).status == "open"


def test_find_records_by_plate_holder_or_day_and_the_read_services(tmp_path):
    """History search, day's work, pending count and print count go through services."""
    import datetime as _dt

    from inspector_app import demo, demo_autos, services
    from inspector_app.store import open_store

    store = open_store(tmp_path / "hist")
    try:
        demo.seed_registry(store, vehicles=20, seed=4)
        demo_autos.seed_autos(store, autos=3, seed=4)
        autos = store.conn.execute(
            "SELECT id, plate_key, holder_id, occurred_on FROM records "
            "WHERE kind = 'auto_infracao'"
        ).fetchall()
        rid, plate_key, holder_id, day = autos[0]
        assert rid in {r.id for r in services.find_records(store=store, plate=plate_key)}
        assert rid in {r.id for r in services.find_records(store=store, holder=holder_id)}
        assert rid in {r.id for r in services.find_records(
            store=store, day=_dt.date.fromisoformat(day))}
        with pytest.raises(services.ServiceError) as err:
            services.find_records(store=store)
        assert err.value.field == "search"
        with pytest.raises(services.ServiceError):
            services.find_records(store=store, plate="AB-12345")
        since = _dt.datetime.now(_dt.UTC) - _dt.timedelta(hours=1)
        total = store.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        assert len(services.records_sealed(store=store, since=since)) == total
        assert services.pending_sync_count(store=store) == total
        assert services.print_count(store=store, record_id=rid, copy="1") == 0
    finally:
        store.close()
