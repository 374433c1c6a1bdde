"""Issue 11, the desk and sealing made legally sound, on real SQLite stores through the
services: re-authentication, release (art. 38), autuado, review = sealed."""

from __future__ import annotations

import datetime as dt
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector_app import demo, services
from inspector_app.services import ServiceError, Session
from inspector_app.store import reference
from inspector_app.store.db import Store, open_store

PACK = "DF_STPCR"
PLACE = "Terminal Rodoviário de Planaltina – plataforma B"
NARRATIVE = "Em fiscalização de rotina no terminal, constatei a irregularidade descrita."
STROKES = [[(20.0 + 6 * i, 100.0 + 40 * math.sin(i / 5)) for i in range(80)]]
REASON = "Placa digitada errada; auto refeito com a placa correta."


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("desk-template") / "data"
    store = open_store(data_dir)
    demo.seed_registry(store, vehicles=30, seed=1)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return data_dir


@pytest.fixture
def store(template: Path, tmp_path: Path):
    shutil.copytree(template, tmp_path / "data")
    opened = open_store(tmp_path / "data")
    yield opened
    opened.close()


def login(store: Store, matricula: str) -> Session:
    return services.login(store=store, matricula=matricula, password=f"demo{matricula}")


def clean_plate(store: Store, pack: str = PACK) -> str:
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? AND chassis_year >= ? ORDER BY id",
        [pack, dt.date.today().year - 8]).fetchall()
    for (plate,) in rows:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings:
            return str(plate)
    raise AssertionError("no clean vehicle")


def sign(store: Store, inspection_id: str) -> None:
    for role in ("agent", "driver"):
        services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                  status="signed", strokes=STROKES)


def inspection(store: Store, session: Session, fails: tuple[str, ...] = ("DF-SEG-02",),
               **start: Any) -> str:
    kwargs: dict[str, Any] = {"pack_id": PACK, "kind": "fiscalizacao",
                              "location_type": "terminal", "place": PLACE,
                              "plate": clean_plate(store)}
    kwargs.update(start)
    iid = services.start_inspection(store=store, session=session, **kwargs)
    for item in fails:
        services.record_answer(store=store, inspection_id=iid, item_id=item, result="fail",
                               note="Constatado na fiscalização.")
    return iid


def seal_auto(store: Store, session: Session, **seal: Any) -> services.SealResult:
    iid = inspection(store, session)
    sign(store, iid)
    return services.seal_inspection(store=store, session=session, inspection_id=iid,
                                    narrative=NARRATIVE, **seal)


def count(store: Store, kind: str) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM records WHERE kind = ?",
                              [kind]).fetchone()[0]


# --- cancellation: the supervisor's password asked again ------------------------------------


@pytest.mark.parametrize(
    ("password", "fragment", "why"),
    [
        ("", "Digite a sua senha", "no password: the act is not confirmed"),
        ("demo1001", "Senha não confirmada: Senha incorreta", "another person's password"),
        ("errada", "Senha não confirmada: Senha incorreta", "wrong password"),
    ],
)
def test_a_cancellation_without_the_supervisors_password_is_refused_and_seals_nothing(
        store, password, fragment, why):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    with pytest.raises(ServiceError) as err:
        services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                             reason=REASON, password=password)
    assert err.value.field == "password", why
    assert fragment in err.value.message_pt, err.value.message_pt
    assert count(store, "cancelamento") == 0
    assert services.cancellation_of(store=store, record_id=auto.id) is None


def test_a_wrong_password_at_cancellation_counts_towards_the_login_lockout(store):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    with pytest.raises(ServiceError):
        services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                             reason=REASON, password="errada")
    failures = store.conn.execute(
        "SELECT failures FROM login_state WHERE matricula = '1004'").fetchone()[0]
    assert failures == 1


def test_the_supervisors_own_password_seals_the_cancellation_and_says_so(store):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    [cancel] = services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                                    reason=REASON, password="demo1004").records
    assert cancel.envelope["body"]["supervisor"] == {
        "matricula": "1004", "name": "Luíza Helena Magalhães", "reauthenticated": True}
    found = services.cancellation_of(store=store, record_id=auto.id)
    assert (found.number, found.created_at) == (cancel.display_number, cancel.created_at)


# --- release (art. 38): every fault re-checked, who received it, signatures ------------------

RECEIVER = {"name": "Sebastião Ferreira Lima", "cpf": "169.440.601-67",
            "document": "CNH 01234567890"}
SIGNED = {"strokes": STROKES}
FAULTS = ("DF-SEG-01", "DF-SEG-02", "DF-SEG-03")


def retained(store: Store, fails: tuple[str, ...] = FAULTS) -> Any:
    inspector = login(store, "1001")
    iid = inspection(store, inspector, fails=fails)
    sign(store, iid)
    result = services.seal_inspection(store=store, session=inspector, inspection_id=iid,
                                      narrative=NARRATIVE, retain=True,
                                      retention_place="Pátio do terminal")
    return result.of_kind("termo_retencao")


def release(store: Store, termo: Any, **kwargs: Any) -> services.SealResult:
    args: dict[str, Any] = {"fault_fixed": True, "receiver": RECEIVER,
                            "receiver_signature": SIGNED, "agent_signature": SIGNED}
    args.update(kwargs)
    return services.release_vehicle(store=store, session=login(store, "1003"),
                                    retention_id=termo.id, **args)


def test_the_faults_to_recheck_are_every_failed_item_that_grounded_the_retention(store):
    termo = retained(store)
    faults = services.release_faults(store=store, retention_id=termo.id)
    keys = [f.key for f in faults]
    assert "DF-SEG-01" in keys and "DF-SEG-02" in keys, faults
    assert all(f.label.endswith(f"({f.key})") for f in faults if not f.key.startswith("g"))


@pytest.mark.parametrize("left_out", [0, 1, -1])
def test_art_38_i_a_partial_recheck_is_refused_and_the_vehicle_stays_held(store, left_out):
    """Art. 38, I: released for "falta sanada" only when the faults are corrected; 3 of 4
    ticked released it before issue 11 (and the termo listed only the 3)."""
    termo = retained(store)
    keys = [f.key for f in services.release_faults(store=store, retention_id=termo.id)]
    partial = [k for i, k in enumerate(keys) if i != (left_out % len(keys))]
    with pytest.raises(ServiceError) as err:
        release(store, termo, rechecked_items=partial)
    assert err.value.field == "rechecked_items"
    assert err.value.message_pt.startswith("Liberação por falta sanada (art. 38, I) só quando "
                                           "todas as faltas")
    assert count(store, "termo_liberacao") == 0
    assert [h["record_id"] for h in services.vehicles_held(store=store)] == [termo.id]


def test_art_38_i_every_fault_rechecked_releases_and_the_termo_says_what_and_who(store):
    termo = retained(store)
    faults = services.release_faults(store=store, retention_id=termo.id)
    [termo_lib] = release(store, termo, rechecked_items=[f.key for f in faults]).records
    body = termo_lib.envelope["body"]
    assert body["receiver"] == {"name": "Sebastião Ferreira Lima", "cpf": "16944060167",
                                "document": "CNH 01234567890"}
    assert all(f["rechecked"] for f in body["faults"]) and len(body["faults"]) == len(faults)
    assert {i["rule_id"] for i in body["infractions"]} >= {"DF15154.29.XIII"}
    assert all(i["description"] and i["article"] for i in body["infractions"])
    assert body["signatures"]["agent"]["status"] == "signed"
    assert body["signatures"]["agent"]["png_sha256"]
    assert body["signatures"]["receiver"]["status"] == "signed"
    assert services.vehicles_held(store=store) == []

    from inspector_app.documents import render_document
    from inspector_app.sync.protocol import blobs_of_envelope

    # The signatures travel to HQ with the record.
    assert body["signatures"]["receiver"]["png_sha256"] in blobs_of_envelope(termo_lib.envelope)
    import io

    from pypdf import PdfReader
    pdf = render_document(termo_lib, blob_dir=store.blob_dir)
    text = " ".join(" ".join(p.extract_text().split())
                    for p in PdfReader(io.BytesIO(pdf)).pages)
    for inf in body["infractions"]:
        assert inf["description"] in text and inf["article"] in text
    for fault in faults:
        assert fault.label in text
    assert "Sebastião Ferreira Lima – CPF 169.440.601-67 – documento apresentado: CNH " \
        "01234567890" in text
    assert "Recebedor do veículo" in text and "Agente de fiscalização" in text


@pytest.mark.parametrize(
    ("changes", "field", "fragment", "article"),
    [
        ({"receiver": {}}, "receiver.name", "nome completo do recebedor", "art. 38"),
        ({"receiver": {**RECEIVER, "cpf": "169.440.601-00"}}, "receiver.cpf",
         "dígito verificador não confere", "CPF validated"),
        ({"receiver": {**RECEIVER, "document": " "}}, "receiver.document",
         "documento apresentado pelo recebedor", "document shown"),
        ({"receiver_signature": {}}, "receiver_signature", "assinatura do recebedor",
         "signature or refusal"),
        ({"receiver_signature": {"status": "refused", "note": "curta"}}, "receiver_signature",
         "pelo menos 10 caracteres", "refusal needs the agent's note"),
        ({"agent_signature": {}}, "agent_signature", "assinatura do agente que libera",
         "the releasing agent signs"),
    ],
)
def test_the_release_records_who_received_the_vehicle_and_the_signatures(
        store, changes, field, fragment, article):
    termo = retained(store, fails=("DF-SEG-02",))
    with pytest.raises(ServiceError) as err:
        release(store, termo, rechecked_items=["DF-SEG-02"], **changes)
    assert err.value.field == field, article
    assert fragment in err.value.message_pt, err.value.message_pt
    assert "esperado" not in err.value.message_pt
    assert count(store, "termo_liberacao") == 0


def test_a_receiver_who_refuses_to_sign_is_recorded_with_the_agents_note(store):
    termo = retained(store, fails=("DF-SEG-02",))
    [lib] = release(store, termo, rechecked_items=["DF-SEG-02"], receiver_signature={
        "status": "refused", "note": "Recusou-se a assinar o termo na presença do agente."}
    ).records
    sig = lib.envelope["body"]["signatures"]["receiver"]
    assert (sig["status"], sig["png_sha256"]) == ("refused", None)


# --- no auto without an autuado --------------------------------------------------------------

CRLV = {"make_model": "Mercedes-Benz OF-1721", "renavam": "86769597308",
        "holder_name": "Viação Planalto Ltda.", "holder_document": "11.222.333/0001-81"}


def unregistered(store: Store, vehicle: dict[str, Any]) -> tuple[Session, str]:
    session = login(store, "1001")
    iid = inspection(store, session, plate="ZZZ9Z99", vehicle=vehicle)
    sign(store, iid)
    return session, iid


@pytest.mark.parametrize(
    ("missing", "field", "message"),
    [
        ("holder_name", "vehicle.holder_name",
         "Auto de infração sem autuado: informe o nome do proprietário do veículo, como no "
         "CRLV (permissionário ou empresa)."),
        ("holder_document", "vehicle.holder_document",
         "Auto de infração sem autuado: informe o CPF ou CNPJ do proprietário do veículo, "
         "como no CRLV (permissionário ou empresa)."),
        ("renavam", "vehicle.renavam", "RENAVAM não informado"),
        ("make_model", "vehicle.make_model",
         "Informe a marca/modelo do veículo (CRLV): o auto precisa identificar o veículo."),
    ],
)
def test_an_auto_is_not_sealed_without_an_identified_autuado_and_vehicle(
        store, missing, field, message):
    vehicle = {k: v for k, v in CRLV.items() if k != missing}
    session, iid = unregistered(store, vehicle)
    with pytest.raises(ServiceError) as err:
        services.seal_inspection(store=store, session=session, inspection_id=iid,
                                 narrative=NARRATIVE)
    assert err.value.field == field
    assert message in err.value.message_pt
    assert count(store, "auto_infracao") == 0


def test_the_issue_example_renavam_123_and_no_make_model_lists_every_problem(store):
    session, iid = unregistered(store, {})
    with pytest.raises(services.ServiceProblems) as err:
        services.seal_inspection(store=store, session=session, inspection_id=iid,
                                 narrative=NARRATIVE)
    assert [f for f, _m in err.value.problems] == [
        "vehicle.holder_name", "vehicle.holder_document", "vehicle.renavam",
        "vehicle.make_model"]
    with pytest.raises(ServiceError) as bad:
        services.start_inspection(store=store, session=session, pack_id=PACK,
                                  kind="fiscalizacao", location_type="terminal", place=PLACE,
                                  plate="ZZZ9Z98", vehicle={"renavam": "123"})
    assert bad.value.field == "vehicle.renavam"


@pytest.mark.parametrize(
    ("document", "fragment"),
    [("123.456.789-00", "CPF inválido"), ("11.222.333/0001-82", "CNPJ inválido"),
     ("12345", "CPF (11 dígitos) ou CNPJ (14 caracteres)")],
)
def test_a_typed_owner_document_is_checked_when_typed(store, document, fragment):
    session = login(store, "1001")
    with pytest.raises(ServiceError) as err:
        inspection(store, session, plate="ZZZ9Z99", vehicle={**CRLV, "holder_document": document})
    assert err.value.field == "vehicle.holder_document"
    assert fragment in err.value.message_pt and "esperado" not in err.value.message_pt


def test_an_unregistered_vehicle_with_the_crlv_owner_seals_an_auto_naming_the_autuado(store):
    session, iid = unregistered(store, CRLV)
    auto = services.seal_inspection(store=store, session=session, inspection_id=iid,
                                    narrative=NARRATIVE).of_kind("auto_infracao")
    vehicle = auto.envelope["body"]["vehicle"]
    assert (vehicle["holder_name"], vehicle["holder_document"], vehicle["renavam"]) == (
        "Viação Planalto Ltda.", "11222333000181", "86769597308")
    import io

    from pypdf import PdfReader

    from inspector_app.documents import render_document
    text = " ".join(" ".join(p.extract_text().split()) for p in
                    PdfReader(io.BytesIO(render_document(auto, blob_dir=store.blob_dir))).pages)
    assert "Viação Planalto Ltda." in text and "11.222.333/0001-81" in text


# --- the driver reviews before signing; what is signed is what is sealed ---------------------


def test_the_sealed_auto_carries_exactly_the_review_the_driver_saw(store):
    session = login(store, "1001")
    iid = inspection(store, session, fails=("DF-SEG-01", "DF-SEG-02"))
    review = services.review_inspection(store=store, inspection_id=iid, retain=True,
                                        retention_place="Pátio do terminal",
                                        narrative=NARRATIVE)
    # What the driver reads: autuado, driver, each infraction with its description,
    # totals and measures.
    assert review["autuado"]["name"] and review["autuado"]["document"]
    assert [i["rule_id"] for i in review["infractions"]] == ["DF15154.29.VIII",
                                                             "DF15154.29.XIII"]
    assert all(i["description"] and i["article"] for i in review["infractions"])
    assert review["totals"]["count"] == 2 and review["totals"]["fine_brl"] == "440.00"
    assert review["measures"]["retain"] and review["measures"]["grounds"]
    sign(store, iid)
    result = services.seal_inspection(
        store=store, session=session, inspection_id=iid, narrative=NARRATIVE, retain=True,
        retention_place="Pátio do terminal", reviewed_digest=review["digest"])
    body = result.of_kind("auto_infracao").envelope["body"]
    sealed = {k: v for k, v in body["review"].items() if k != "shown_to_driver"}
    assert sealed == review
    assert body["review"]["shown_to_driver"] is True
    # ...and the review is the auto's own content, not a side note.
    assert [(i["rule_id"], i["description"], i["fine_brl"], i["points"])
            for i in body["outcome"]["infractions"]] == [
        (i["rule_id"], i["description"], i["fine_brl"], i["points"])
        for i in review["infractions"]]
    assert body["vehicle"]["holder_name"] == review["autuado"]["name"]
    assert body["narrative"] == review["narrative"]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"removed": {"DF15154.29.VIII": "Tacógrafo apresentado em seguida pelo condutor."}},
         "an infraction removed after the review"),
        ({"narrative": NARRATIVE + " Acrescentado depois."}, "narrative changed"),
        ({"retain": False, "retention_place": ""}, "measure dropped"),
    ],
)
def test_sealing_other_content_than_the_reviewed_one_is_refused(store, change, why):
    session = login(store, "1001")
    iid = inspection(store, session, fails=("DF-SEG-01", "DF-SEG-02"))
    seen = {"retain": True, "retention_place": "Pátio do terminal", "narrative": NARRATIVE}
    review = services.review_inspection(store=store, inspection_id=iid, **seen)
    sign(store, iid)
    with pytest.raises(ServiceError) as err:
        services.seal_inspection(store=store, session=session, inspection_id=iid,
                                 reviewed_digest=review["digest"], **{**seen, **change})
    assert err.value.field == "review", why
    assert "mudou depois da revisão" in err.value.message_pt
    assert count(store, "auto_infracao") == 0


def test_a_new_answer_after_the_review_is_refused_at_sealing(store):
    session = login(store, "1001")
    iid = inspection(store, session)
    review = services.review_inspection(store=store, inspection_id=iid, narrative=NARRATIVE)
    services.record_answer(store=store, inspection_id=iid, item_id="DF-SEG-01",
                           result="fail", note="Constatado depois.")
    sign(store, iid)
    with pytest.raises(ServiceError, match="mudou depois da revisão"):
        services.seal_inspection(store=store, session=session, inspection_id=iid,
                                 narrative=NARRATIVE, reviewed_digest=review["digest"])


# --- witness (testemunha) -------------------------------------------------------------------

WITNESS = {"name": "Maria das Dores Pereira", "cpf": "529.982.247-25",
           "document": "RG 1.234.567 SSP/DF", "signature": {"strokes": STROKES}}


def test_an_optional_witness_signs_the_auto_and_the_termo(store):
    session = login(store, "1001")
    iid = inspection(store, session)
    sign(store, iid)
    result = services.seal_inspection(store=store, session=session, inspection_id=iid,
                                      narrative=NARRATIVE, retain=True,
                                      retention_place="Pátio do terminal", witness=WITNESS)
    import io

    from pypdf import PdfReader

    from inspector_app.documents import render_document
    for kind in ("auto_infracao", "termo_retencao"):
        record = result.of_kind(kind)
        body = record.envelope["body"]
        assert body["witness"] == {"name": "Maria das Dores Pereira", "cpf": "52998224725",
                                   "document": "RG 1.234.567 SSP/DF"}
        assert body["signatures"]["witness"]["status"] == "signed"
        text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(
            io.BytesIO(render_document(record, blob_dir=store.blob_dir))).pages)
        assert "Testemunha: Maria das Dores Pereira – CPF 529.982.247-25" in text, kind
    termo = result.of_kind("termo_retencao")
    [lib] = release(store, termo, rechecked_items=["DF-SEG-02"], witness=WITNESS).records
    assert lib.envelope["body"]["witness"]["cpf"] == "52998224725"


def test_without_a_witness_nothing_is_asked_and_a_half_filled_one_is_refused(store):
    session = login(store, "1001")
    iid = inspection(store, session)
    sign(store, iid)
    with pytest.raises(ServiceError) as err:
        services.seal_inspection(store=store, session=session, inspection_id=iid,
                                 narrative=NARRATIVE,
                                 witness={**WITNESS, "cpf": "529.982.247-00"})
    assert err.value.field == "witness.cpf" and "esperado" not in err.value.message_pt
    auto = services.seal_inspection(store=store, session=session, inspection_id=iid,
                                    narrative=NARRATIVE, witness=None).of_kind("auto_infracao")
    assert "witness" not in auto.envelope["body"]
