"""Auto de vistoria: approved and reproved, each checklist item with its result, next due date."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from pdfcheck import non_white_share, page_png, pdf_text

from inspector_app.documents.formatting import RESULTS, date_br
from inspector_app.domain.deadlines import add_months

LAYOUTS = ["a4", "80mm"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["auto_vistoria_aprovado", "auto_vistoria_reprovado"])
def test_each_checklist_item_prints_with_its_result(rendered, kit, name, layout):
    body = kit.records[name].envelope["body"]
    text = pdf_text(rendered(name, layout))
    assert "AUTO DE VISTORIA" in text
    assert f"Resultado da vistoria: {body['result'].upper()}" in text
    for item_id, answer in body["answers"].items():
        assert " ".join(answer["label"].split()) in text
        assert item_id not in text  # the item's key stays off paper
        assert RESULTS[answer["result"]] in text
    for value in (body["agent"]["name"], body["vehicle"]["plate"], body["pack"]["organ_name"],
                  body["location"]["place"], date_br(body["occurred_at"])):
        assert value in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_approved_vehicle_gets_the_next_vistoria_date(rendered, kit, layout):
    body = kit.records["auto_vistoria_aprovado"].envelope["body"]
    months = body["outcome"]["vistoria"]["period_months"]
    due = add_months(dt.date.fromisoformat(body["occurred_at"][:10]), months)
    text = pdf_text(rendered("auto_vistoria_aprovado", layout))
    # A4 prints the label over the value, the roll "label: value".
    assert re.search(f"Próxima vistoria até:? {due.strftime('%d/%m/%Y')}", text)
    assert "APROVADO" in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_reproved_vistoria_prints_its_infractions_and_deadlines(rendered, kit, layout):
    body = kit.records["auto_vistoria_reprovado"].envelope["body"]
    assert body["result"] == "reprovado"
    text = pdf_text(rendered("auto_vistoria_reprovado", layout))
    assert "REPROVADO" in text and "Não conforme" in text
    assert "após sanadas as irregularidades" in text
    for inf in body["outcome"]["infractions"]:
        assert inf["article"] in text and " ".join(inf["description"].split()) in text
        assert inf["rule_id"] not in text  # internal keys never reach paper
    for d in body["outcome"]["deadlines"]:
        assert date_br(d["due"]) in text and d["body"] in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_vistoria_page_is_not_blank(rendered, tmp_path, layout):
    assert non_white_share(page_png(rendered("auto_vistoria_aprovado", layout), tmp_path)) > 0.03
