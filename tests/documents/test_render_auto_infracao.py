"""Auto de infração: every field of RULES.md §A7.3 printed from the sealed record, A4 and 80 mm."""

from __future__ import annotations

import io

import pytest
from pdfcheck import non_white_share, page_png, pdf_text, squeeze
from PIL import Image
from pypdf import PdfReader
from recordkit import KIT_VERIFY_BASE

from inspector_app.documents import qr_png, verification_url
from inspector_app.documents.formatting import date_br, legal, money, person_document, time_br
from inspector_app.domain.identity import format_cpf
from inspector_app.packs import get_pack

LAYOUTS = ["a4", "80mm"]
AUTOS = ["auto_infracao", "auto_infracao_jf", "auto_infracao_ausente"]


def required_texts(record) -> list[str]:
    """What the paper must say (RULES.md §A7.3), as it must read, from the sealed record."""
    body = record.envelope["body"]
    pack, agent, vehicle = body["pack"], body["agent"], body["vehicle"]
    location, outcome = body["location"], body["outcome"]
    expected = [
        "AUTO DE INFRAÇÃO", f"N.º {record.number:06d}", record.series,     # number and series
        pack["organ_name"], pack["organ"],                                  # órgão
        agent["name"], agent["matricula"],                                  # agent, matrícula
        date_br(body["occurred_at"]), time_br(body["occurred_at"]),         # date and time
        location["place"],                                                  # place
        vehicle["plate"], vehicle["make_model"], vehicle["species"],        # vehicle
        vehicle["fleet_number"], vehicle["renavam"],
        f"{vehicle['line_code']} – {vehicle['line_name']}",                 # line being run
        vehicle["holder_name"], person_document(vehicle["holder_document"])[1],
        vehicle["permit_number"],                                           # permissionário
        body["narrative"],                                                  # narrative
        pack["id"], pack["version"],                                        # pack id, version
        record.verification_code,
        verification_url(record.verification_code, verify_base_url=KIT_VERIFY_BASE),
    ]
    if location["latitude"]:
        expected += [location["latitude"], location["longitude"]]          # GPS
    for inf in outcome["infractions"]:                                      # tipificação
        expected += [inf["article"], inf["group"], inf["description"],
                     inf["fine_reference"], money(inf["fine_brl"]),
                     *[legal(b) for b in inf["basis"]]]
    expected.append(money(outcome["totals"]["fine_brl"]))                  # penalty preview
    expected.append(f"{outcome['totals']['points']} ponto(s)")             # points
    for d in outcome["deadlines"]:                                         # deadlines as dates
        expected += [f"{d['label']}: até {date_br(d['due'])}", d["body"], d["basis"]]
    driver = body["driver"]
    if driver:
        expected += [driver["name"], format_cpf(driver["cpf"]), driver["cnh"]]
    else:
        expected.append("Condutor não identificado.")
    return expected


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", AUTOS)
def test_every_required_field_of_the_auto_is_printed_from_the_sealed_record(rendered, kit,
                                                                            name, layout):
    record = kit.records[name]
    text = pdf_text(rendered(name, layout))
    missing = [t for t in required_texts(record) if " ".join(str(t).split()) not in text]
    assert missing == []


@pytest.mark.parametrize("layout", LAYOUTS)
def test_portuguese_accents_survive_in_the_embedded_fonts(rendered, layout):
    text = pdf_text(rendered("auto_infracao", layout))
    for word in ("INFRAÇÃO", "Conceição", "Sebastião", "Gonçalves", "N.º", "1ª via", "Rodoviária"):
        assert word in text
    assert {"ç", "ã", "é", "õ", "º", "ª"} <= set(text)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_sha256_of_every_evidence_photo_is_listed(rendered, kit, layout):
    record = kit.records["auto_infracao"]
    photos = record.envelope["body"]["photos"]
    assert len(photos) == 4
    text = squeeze(pdf_text(rendered("auto_infracao", layout)))
    for photo in photos:
        assert photo["original_sha256"] in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_four_thumbnails_and_the_qr_are_embedded_but_never_the_originals(rendered, kit,
                                                                           layout):
    pdf = rendered("auto_infracao", layout)
    images = [img.image for page in PdfReader(io.BytesIO(pdf)).pages for img in page.images]
    sizes = {im.size for im in images}
    # The thumbnails, as stored, on A4; the black-and-white thermal roll lists hashes only.
    assert ((480, 360) in sizes) is (layout == "a4")
    assert (1600, 1200) not in sizes and (1280, 960) not in sizes
    code = kit.records["auto_infracao"].verification_code
    qr = Image.open(io.BytesIO(qr_png(code, verify_base_url=KIT_VERIFY_BASE)))
    assert any(im.size == qr.size and im.convert("L").tobytes() == qr.convert("L").tobytes()
               for im in images)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_refusal_prints_the_statement_and_the_agents_note(rendered, kit, layout):
    text = pdf_text(rendered("auto_infracao", layout))
    note = kit.records["auto_infracao"].envelope["body"]["signatures"]["driver"]["note"]
    assert "recusou-se a assinar" in text
    assert f"Observação do agente: {note}" in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_an_absent_driver_prints_ausente_with_the_note(rendered, kit, layout):
    text = pdf_text(rendered("auto_infracao_ausente", layout))
    note = kit.records["auto_infracao_ausente"].envelope["body"]["signatures"]["driver"]["note"]
    assert "Condutor ausente" in text
    assert note in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_signed_auto_embeds_both_signature_images(rendered, layout):
    pdf = rendered("auto_infracao_jf", layout)
    images = [img.image for page in PdfReader(io.BytesIO(pdf)).pages for img in page.images]
    assert sum(1 for im in images if im.size == (600, 200)) == 2
    assert pdf_text(pdf).count("Assinado em") == 2


@pytest.mark.parametrize("layout", LAYOUTS)
def test_only_the_presumed_rules_that_changed_the_outcome_print_in_legal_portuguese(
        rendered, kit, layout):
    outcome = kit.records["auto_infracao"].envelope["body"]["outcome"]
    assert outcome["presumed_rule_applied"]
    text = pdf_text(rendered("auto_infracao", layout))
    assert "regra(s) presumida(s)" in text
    pack = get_pack("DF_STPA")
    used = {a["parameter"] for inf in outcome["infractions"] for a in inf["assumptions"]}
    used |= {a["parameter"] for d in outcome["deadlines"] for a in d["assumptions"]}
    assert "points.group_a" in used  # a Grupo A infraction: its point is presumed (G1)
    for name in used:
        if name.startswith("tables."):
            continue
        sentence = " ".join(pack.parameters[name].printed.split())
        assert sentence and sentence in text, name
    # Looked at by the engine but without effect here: age limit (no value in DF_STPA).
    consulted = {a["parameter"] for a in outcome["assumptions"]}
    assert "vehicle.max_age_chassis_years" in consulted - used
    assert "idade máxima de operação" not in text
    for assumption in outcome["assumptions"]:  # the developer's notes stay off paper
        assert " ".join(assumption["text"].split()) not in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_retention_grounds_are_printed_as_measures(rendered, kit, layout):
    retention = kit.records["auto_infracao"].envelope["body"]["outcome"]["retention"]
    text = pdf_text(rendered("auto_infracao", layout))
    for ground in retention["details"] + retention["possible_grounds"]:
        assert ground["citation"] in text and ground["id"] not in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_later_deadlines_are_listed_with_the_body_that_receives_them(rendered, kit, layout):
    later = kit.records["auto_infracao"].envelope["body"]["outcome"]["later_deadlines"]
    text = pdf_text(rendered("auto_infracao", layout))
    for d in later:
        assert d["label"] in text and d["body"] in text


def test_a_long_narrative_flows_onto_the_next_a4_page_without_losing_a_word(rendered, kit):
    pdf = rendered("auto_infracao", "a4")
    reader = PdfReader(io.BytesIO(pdf))
    assert len(reader.pages) >= 2
    narrative = kit.records["auto_infracao"].envelope["body"]["narrative"]
    assert " ".join(narrative.split()) in pdf_text(pdf)
    pages = len(reader.pages)
    assert f"página {pages} de {pages}" in pdf_text(pdf)


def test_the_roll_is_one_page_as_wide_as_the_printable_width(rendered):
    reader = PdfReader(io.BytesIO(rendered("auto_infracao", "80mm")))
    assert len(reader.pages) == 1
    box = reader.pages[0].mediabox
    assert float(box.width) == pytest.approx(72 * 72 / 25.4, abs=0.01)  # 72 mm printable
    assert float(box.height) > 600  # one long page, as tall as the content


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_rendered_page_is_not_blank(rendered, tmp_path, layout):
    image = page_png(rendered("auto_infracao", layout), tmp_path)
    assert non_white_share(image) > 0.03
