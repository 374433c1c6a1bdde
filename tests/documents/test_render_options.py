"""Copy and reprint labels, DEMONSTRAÇÃO, determinism, refusals and damaged blobs."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import subprocess
import sys

import pytest
from pdfcheck import pdf_text, squeeze
from pypdf import PdfReader

from inspector_app.documents import DOCUMENT_KINDS, render_document
from inspector_app.media.photos import blob_path

LAYOUTS = ["a4", "80mm"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("copy", "label", "other"), [
    ("1", "1ª via – autuado", "2ª via – órgão"),
    ("2", "2ª via – órgão", "1ª via – autuado"),
])
def test_the_copy_label_says_whose_copy_it_is(rendered, layout, copy, label, other):
    text = pdf_text(rendered("auto_infracao_jf", layout, copy=copy))
    assert label in text
    assert other not in text


@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_organs_copy_carries_a_contra_recibo(rendered, layout):
    assert "CONTRA-RECIBO Recebi a 1ª via" in pdf_text(rendered("auto_infracao_jf", layout,
                                                                copy="2"))
    assert "CONTRA-RECIBO" not in pdf_text(rendered("auto_infracao_jf", layout, copy="1"))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_a_reprint_differs_from_the_original_only_by_its_reprint_label(rendered, layout):
    original = pdf_text(rendered("auto_infracao_jf", layout))
    reprint = pdf_text(rendered("auto_infracao_jf", layout, reprint_number=3))
    label = "Reimpressão n.º 3 ("
    assert "2ª VIA" not in reprint  # "2ª via" names the órgão's copy, never a reprint
    assert label not in original
    assert label in reprint
    # The label appears in the header and the footer; without it the text is the same.
    label = reprint[reprint.index(label):reprint.index(label) + len(label) + 11]  # + date)
    cleaned = reprint.replace(f" – {label}", "").replace(f"{label} ", "").replace(label, "")
    assert " ".join(cleaned.split()) == original


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", DOCUMENT_KINDS)
def test_demo_documents_say_demonstracao_and_real_ones_do_not(rendered, layout, name):
    key = {"auto_vistoria": "auto_vistoria_aprovado"}.get(name, name)
    assert "DEMONSTRAÇÃO" in pdf_text(rendered(key, layout, demo=True))
    assert "DEMONSTRAÇÃO" not in pdf_text(rendered(key, layout))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", ["auto_infracao", "termo_liberacao", "cancelamento"])
def test_two_renders_of_the_same_record_give_identical_bytes(kit, layout, name):
    def render() -> bytes:
        return render_document(kit.records[name], blob_dir=kit.store.blob_dir, layout=layout,
                               copy="2", reprint_number=1, demo=True)

    assert render() == render()


def test_the_bytes_do_not_depend_on_the_process_or_the_data_folders_location(kit, tmp_path):
    record = kit.records["auto_infracao"]
    moved = tmp_path / "elsewhere" / "blobs"
    shutil.copytree(kit.store.blob_dir, moved)
    here = render_document(record, blob_dir=kit.store.blob_dir)
    script = (
        "import sys, json; from pathlib import Path\n"
        "from inspector_app.store.sealing import SealedRecord\n"
        "from inspector_app.documents import render_document\n"
        "r = SealedRecord(**json.loads(sys.stdin.read()))\n"
        f"sys.stdout.buffer.write(render_document(r, blob_dir=Path({str(moved)!r})))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(dataclasses.asdict(record)).encode(),
        capture_output=True, check=True, timeout=120)
    assert child.stdout == here


def test_the_pdf_dates_come_from_the_record_not_the_clock(rendered, kit):
    record = kit.records["auto_infracao"]
    info = PdfReader(io.BytesIO(rendered("auto_infracao"))).metadata
    stamp = record.created_at[:19].replace("-", "").replace("T", "").replace(":", "")
    assert info["/CreationDate"].startswith(f"D:{stamp}")
    assert record.verification_code in info["/Keywords"]
    assert record.sha256 in info["/Subject"]


@pytest.mark.parametrize("kind", ["numero_anulado", "retificacao", "nonsense"])
def test_kinds_without_a_document_are_refused(kit, kind):
    record = dataclasses.replace(kit.records["auto_infracao"], kind=kind)
    with pytest.raises(ValueError, match=kind):
        render_document(record, blob_dir=kit.store.blob_dir)


@pytest.mark.parametrize("options", [{"layout": "a5"}, {"copy": "3"}, {"reprint_number": -1}])
def test_bad_print_options_are_refused(kit, options):
    with pytest.raises(ValueError):
        render_document(kit.records["auto_infracao"], blob_dir=kit.store.blob_dir, **options)


def test_a_thumbnail_that_no_longer_matches_its_hash_is_not_printed(kit, tmp_path):
    record = kit.records["auto_infracao"]
    blobs = tmp_path / "blobs"
    shutil.copytree(kit.store.blob_dir, blobs)
    photo = record.envelope["body"]["photos"][0]
    blob_path(blobs, photo["thumb_sha256"], ".jpg").write_bytes(b"not the photo")
    pdf = render_document(record, blob_dir=blobs)
    images = [img for page in PdfReader(io.BytesIO(pdf)).pages for img in page.images]
    assert sum(1 for img in images if img.image.size == (480, 360)) == 3
    text = pdf_text(pdf)
    assert "imagem indisponível" in text
    assert photo["original_sha256"] in squeeze(text)


def test_missing_blobs_still_give_a_complete_document(kit, tmp_path):
    pdf = render_document(kit.records["auto_infracao_jf"], blob_dir=tmp_path / "empty")
    text = pdf_text(pdf)
    assert "assinatura indisponível" in text
    assert kit.records["auto_infracao_jf"].verification_code in text


def test_record_text_that_looks_like_markup_prints_as_typed(kit):
    record = kit.records["auto_infracao_jf"]
    body = {**record.envelope["body"], "narrative": "Placa <b>ABC</b> & R$ 10 – ok"}
    odd = dataclasses.replace(record, envelope={**record.envelope, "body": body})
    assert "Placa <b>ABC</b> & R$ 10 – ok" in pdf_text(render_document(
        odd, blob_dir=kit.store.blob_dir))


def test_the_verification_base_url_can_be_configured(kit):
    record = kit.records["cancelamento"]
    pdf = render_document(record, blob_dir=kit.store.blob_dir,
                          verify_base_url="https://hq.example.gov.br/v")
    assert f"https://hq.example.gov.br/v/{record.verification_code}" in pdf_text(pdf)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_notes_and_descriptions_longer_than_a_page_flow_on_instead_of_failing(kit, layout):
    record = kit.records["auto_vistoria_reprovado"]
    body = record.envelope["body"]
    answers = {k: dict(v) for k, v in body["answers"].items()}
    first = sorted(answers)[0]
    answers[first]["note"] = " ".join(f"nota{n}" for n in range(2500))
    outcome = dict(body["outcome"])
    outcome["infractions"] = [dict(i) for i in outcome["infractions"]]
    outcome["infractions"][0]["description"] = " ".join(f"descr{n}" for n in range(2500))
    place = " ".join(f"local{n}" for n in range(1500))
    long_body = {**body, "answers": answers, "outcome": outcome,
                 "location": {**body["location"], "place": place}}
    odd = dataclasses.replace(record, envelope={**record.envelope, "body": long_body})
    text = pdf_text(render_document(odd, blob_dir=kit.store.blob_dir, layout=layout))
    for word in ("nota0", "nota2499", "descr0", "descr2499", "local0", "local1499"):
        assert word in text
