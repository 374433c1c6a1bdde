"""Termos (retenção, liberação, compromisso) and the cancellation notice, A4 and 80 mm."""

from __future__ import annotations

import pytest
from pdfcheck import non_white_share, page_png, pdf_text, squeeze

from inspector_app.documents.formatting import date_br, datetime_br, person_document
from inspector_app.store.sealing import verification_code

LAYOUTS = ["a4", "80mm"]


def common(record) -> list[str]:
    return [f"N.º {record.number:06d}", record.series, record.verification_code]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_termo_de_retencao_names_grounds_place_auto_and_signatures(rendered, kit, layout):
    record = kit.records["termo_retencao"]
    body = record.envelope["body"]
    text = pdf_text(rendered("termo_retencao", layout))
    expected = [
        *common(record), "TERMO DE RETENÇÃO DE VEÍCULO", body["place"],
        body["pack"]["organ_name"], body["agent"]["name"], body["agent"]["matricula"],
        body["vehicle"]["plate"], body["vehicle"]["holder_name"],
        date_br(body["occurred_at"]), body["location"]["place"],
        verification_code(record.envelope["refers_to"]),  # the auto sealed with it
        "recusou-se a assinar",
    ]
    details = {d["id"]: d for d in body["retention"]["details"] + body["retention"]["possible_grounds"]}
    for ground in body["grounds"]:
        expected += [details[ground]["citation"]]
        assert ground not in text  # the ground's key stays off paper
    assert [t for t in expected if t not in text] == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_termo_de_liberacao_prints_the_art_38_conditions(rendered, kit, layout):
    record = kit.records["termo_liberacao"]
    body = record.envelope["body"]
    text = pdf_text(rendered("termo_liberacao", layout))
    expected = [
        *common(record), "TERMO DE LIBERAÇÃO DE VEÍCULO", body["retention_number"],
        body["agent"]["name"], body["agent"]["matricula"], body["vehicle"]["plate"],
        body["vehicle"]["holder_name"], body["note"], "Art. 38, III", "não informado",
        datetime_br(record.created_at), "Recebedor do veículo",
    ]
    expected += [" ".join(w.split()) for w in body["warnings"]]
    assert [t for t in expected if t not in text] == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_termo_de_compromisso_carries_the_commitment_and_the_holders_signature_line(
        rendered, kit, layout):
    record = kit.records["termo_compromisso"]
    body = record.envelope["body"]
    text = pdf_text(rendered("termo_compromisso", layout))
    _label, document = person_document(body["vehicle"]["holder_document"])
    expected = [
        *common(record), "TERMO DE COMPROMISSO", "art. 38, parágrafo único",
        " ".join(body["commitment"].split()), body["retention_number"],
        body["vehicle"]["holder_name"], document, body["vehicle"]["permit_number"],
        body["vehicle"]["plate"], "Permissionário",
    ]
    assert [t for t in expected if t not in text] == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_cancellation_notice_names_the_cancelled_record_and_the_reason(rendered, kit,
                                                                          layout):
    record = kit.records["cancelamento"]
    body = record.envelope["body"]
    text = pdf_text(rendered("cancelamento", layout))
    expected = [
        *common(record), "AVISO DE CANCELAMENTO", body["cancelled_number"], body["reason"],
        body["supervisor"]["name"], body["supervisor"]["matricula"], "Auto de infração",
    ]
    assert [t for t in expected if t not in text] == []
    assert body["cancelled_sha256"] in squeeze(text)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["termo_retencao", "termo_liberacao", "termo_compromisso",
                                  "cancelamento"])
def test_a_termo_page_is_not_blank(rendered, tmp_path, name, layout):
    assert non_white_share(page_png(rendered(name, layout), tmp_path)) > 0.03
