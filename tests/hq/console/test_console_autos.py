"""The Autos area, server side, on a real HQ (PostgreSQL) fed by a simulated device that
signs its records: the table and every filter (plate in either format), pagination, the
CSV export (audited, formulas neutralised), and an auto's page with its files checked by
SHA-256, its signature status, linked records and map fallback."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re

from consolekit import auto_body, csrf_of, push_auto, sealed_at
from hqkit import RunningHQ, SimDevice
from sqlalchemy import text

from inspector_app.sync.protocol import display_number


def number_of(record) -> str:
    env = json.loads(record.payload)
    return display_number(env["series"], env["number"])


def code_of(record) -> str:
    return json.loads(record.payload)["verification_code"]


def numbers_on(html: str) -> list[str]:
    return re.findall(r'<a href="/console/autos/[0-9a-f-]{36}">([^<]+)</a>', html)


def audit_rows(hq: RunningHQ) -> list[tuple[str, str, str | None, dict]]:
    with hq.engine.connect() as conn:
        return [(r.staff_login, r.action, r.target, json.loads(r.detail)) for r in conn.execute(
            text("SELECT * FROM audit_log WHERE action NOT IN ('login') ORDER BY id"))]


def test_a_pushed_auto_is_in_the_table_with_its_fields(console, device, http) -> None:
    record, _ = push_auto(device, with_files=False)
    page = http("consulta").get("/console/autos")
    assert page.status_code == 200
    assert numbers_on(page.text) == [number_of(record)]
    for shown in (code_of(record), "JJK8D48", "Transportes Boa Viagem Ltda", "Ana Souza",
                  "(1001)", "DF_STPCR.art22", "14/04/2026 10:05", "Válido", "1 auto(s)"):
        assert shown in page.text, shown


def _several(device: SimDevice) -> dict[str, object]:
    made = {
        "mercosul": push_auto(device, with_files=False)[0],
        "old": push_auto(device, with_files=False, plate="ABC-1234", plate_key="ABC1C34",
                         holder="Cooperativa São José", agent=("2002", "Bruno Lima"),
                         rules=(("DF_STPCR.art30", 5),),
                         occurred_at="2026-03-02T08:00:00-03:00")[0],
        "may": push_auto(device, with_files=False, plate="QWE9F87",
                         holder="Expresso Ávila", agent=("1001", "Ana Souza"),
                         rules=(("DF_STPCR.art22", 3), ("DF_STPCR.art31", 1)),
                         occurred_at="2026-05-31T23:30:00-03:00")[0],
    }
    return made


def test_every_filter(console, device, http) -> None:
    made = _several(device)
    client = http("consulta")

    def found(**query: str) -> list[str]:
        page = client.get("/console/autos", params=query)
        assert page.status_code == 200
        return sorted(numbers_on(page.text))

    n = {k: number_of(v) for k, v in made.items()}
    # Plate: either format finds the vehicle (ABC-1234 is ABC1C34 in Mercosul form).
    assert found(placa="abc-1234") == [n["old"]]
    assert found(placa="ABC1C34") == [n["old"]]
    assert found(placa="JJK 8348") == [n["mercosul"]]  # old form of JJK8D48
    assert found(placa="jjk8d48") == [n["mercosul"]]
    # Holder: without accents or case.
    assert found(titular="sao jose") == [n["old"]]
    assert found(titular="ÁVILA") == [n["may"]]
    # Agent by matrícula or name.
    assert found(agente="1001") == sorted([n["mercosul"], n["may"]])
    assert found(agente="bruno") == [n["old"]]
    # Rule: the whole id, any of the auto's infractions.
    assert found(regra="DF_STPCR.art31") == [n["may"]]
    assert found(regra="DF_STPCR.art3") == []
    # Dates, inclusive, in the date the fact happened (Brasília): 31/05 23:30 is 31/05.
    assert found(de="2026-05-31", ate="2026-05-31") == [n["may"]]
    assert found(de="2026-03-03", ate="2026-05-30") == [n["mercosul"]]
    assert found(ate="2026-03-02") == [n["old"]]
    assert found(de="01/04/2026", ate="30/04/2026") == [n["mercosul"]]
    # Agent and month together.
    assert found(agente="1001", de="2026-04-01", ate="2026-04-30") == [n["mercosul"]]
    # Number (with or without series and zeros) and verification code (any case/dashes).
    assert found(numero=n["may"]) == [n["may"]]
    assert found(numero=str(json.loads(made["old"].payload)["number"])) == [n["old"]]
    assert found(codigo=code_of(made["may"]).lower().replace("-", "")) == [n["may"]]
    assert found(tipo="auto_vistoria") == []


def test_status_filter_follows_a_cancelamento(console, device, http) -> None:
    made = _several(device)
    assert device.push_one(device.cancelamento(made["old"]))["status"] == "accepted"
    client = http("supervisor")
    page = client.get("/console/autos", params={"situacao": "cancelado"})
    assert numbers_on(page.text) == [number_of(made["old"])]
    assert "Cancelado" in page.text
    valid = client.get("/console/autos", params={"situacao": "valido"}).text
    assert number_of(made["old"]) not in numbers_on(valid) and len(numbers_on(valid)) == 2


def test_bad_filters_are_explained_in_portuguese(console, device, http) -> None:
    push_auto(device, with_files=False)
    client = http("consulta")
    for query, message in (({"placa": "AB12"}, "Placa inválida"),
                           ({"de": "31/02/2026"}, "Data inicial: data inválida"),
                           ({"de": "2026-05-02", "ate": "2026-05-01"}, "anterior à data inicial"),
                           ({"numero": "x; drop"}, "Número: use"),
                           ({"regra": "a b"}, "Regra: informe"),
                           ({"situacao": "apagado"}, "Situação desconhecida")):
        page = client.get("/console/autos", params=query)
        assert page.status_code == 200
        assert message in page.text, query
        assert "Traceback" not in page.text
        assert numbers_on(page.text) == []


def test_pagination_newest_first(console, device, http) -> None:
    moments = [f"2026-04-{1 + i // 10:02d}T{8 + i % 10:02d}:00:00-03:00" for i in range(120)]
    records = [device.record(device.envelope(
        kind="auto_infracao", body=auto_body(occurred_at=at), occurred_on=at[:10],
        created_at=sealed_at(at))) for at in moments]
    for start in range(0, 120, 60):
        answer = device.push(*records[start:start + 60])
        assert {r["status"] for r in answer.json()["results"]} == {"accepted"}
    client = http("consulta")
    expected = [number_of(r) for r in reversed(records)]
    seen: list[str] = []
    for page in (1, 2, 3):
        html = client.get("/console/autos", params={"pagina": page}).text
        seen += numbers_on(html)
        assert "120 auto(s)" in html and f"página {page} de 3" in html
        assert ('rel="next"' in html) == (page < 3)
    assert seen == expected
    assert numbers_on(client.get("/console/autos", params={"pagina": 4}).text) == []
    deep = client.get("/console/autos", params={"pagina": 5000}).text
    assert "refine os filtros" in deep
    htmx = client.get("/console/autos", params={"pagina": 2}, headers={"HX-Request": "true"})
    assert "<html" not in htmx.text and numbers_on(htmx.text) == expected[50:100]


def test_csv_export_is_audited_and_safe_for_spreadsheets(console, device, http) -> None:
    push_auto(device, with_files=False)
    push_auto(device, with_files=False, holder="=HYPERLINK(\"http://x\")", plate="QWE9F87")
    client = http("supervisor")
    answer = client.get("/console/autos.csv", params={"placa": "QWE9F87"})
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert "attachment" in answer.headers["content-disposition"]
    text_ = answer.content.decode("utf-8-sig")
    rows = list(csv.reader(io.StringIO(text_), delimiter=";"))
    assert rows[0][:3] == ["Número", "Documento", "Código de verificação"]
    assert len(rows) == 2
    assert rows[1][5] == "'=HYPERLINK(\"http://x\")"  # a formula is written as text
    assert rows[1][4] == "QWE9F87"
    assert audit_rows(console) == [("super.teste", "autos_csv", None,
                                    {"filtros": {"placa": "QWE9F87"}, "linhas": 1})]


def test_auto_page_shows_data_files_signature_and_links(console, device, http) -> None:
    record, shas = push_auto(device)
    assert device.push_one(device.cancelamento(record))["status"] == "accepted"
    client = http("consulta")
    page = client.get(f"/console/autos/{record.id}")
    assert page.status_code == 200
    html = page.text
    for shown in (number_of(record), code_of(record), "Transportes Boa Viagem Ltda",
                  "11.222.333/0001-81", "José da Silva", "Ana Souza", "matrícula 1001",
                  "tablet de teste", "Rodoviária do Plano Piloto", "DF_STPCR.art22",
                  "Veículo sem vistoria válida", "1.234,56", "Assinatura do dispositivo válida",
                  "Cancelado", "erro de digitação", "Recusou-se a assinar",
                  "condutor recusou-se a assinar", "Latitude -15.793889, longitude -47.882778",
                  "Mapa não configurado", "PDF assinado pelo dispositivo"):
        assert shown in html, shown
    assert 'id="mapa"' not in html  # no tile URL set: the coordinates list only
    # Files: thumbnail, full size and the signature image, served with their hash.
    for sha, media in ((shas["thumb"], "image/jpeg"), (shas["photo"], "image/jpeg"),
                       (shas["signature"], "image/png")):
        assert f"/console/autos/{record.id}/arquivo/{sha}" in html
        answer = client.get(f"/console/autos/{record.id}/arquivo/{sha}")
        assert answer.status_code == 200 and answer.headers["content-type"] == media
        assert hashlib.sha256(answer.content).hexdigest() == sha
    pdf = client.get(f"/console/autos/{record.id}/pdf/{shas['pdf']}")
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF-")
    assert hashlib.sha256(pdf.content).hexdigest() == shas["pdf"]
    assert f'filename="{number_of(record)}.pdf"' in pdf.headers["content-disposition"]
    assert audit_rows(console) == [("consu.teste", "auto_pdf", number_of(record),
                                    {"sha256": shas["pdf"]})]


def test_a_file_that_no_longer_matches_its_hash_is_not_served(console, device, http) -> None:
    record, shas = push_auto(device)
    path = console.blobs.path(shas["photo"])  # the folder store (HQ_TEST_BLOBS unset)
    path.chmod(0o644)
    path.write_bytes(b"\xff\xd8 bytes trocados no disco")
    client = http("consulta")
    answer = client.get(f"/console/autos/{record.id}/arquivo/{shas['photo']}")
    assert answer.status_code == 500
    assert "Arquivo corrompido" in answer.text and "\xff" not in answer.text


def test_files_of_another_auto_or_unknown_ids_are_not_served(console, device, http) -> None:
    one, shas = push_auto(device)
    other, _ = push_auto(device, with_files=False)
    client = http("consulta")
    assert client.get(f"/console/autos/{other.id}/arquivo/{shas['photo']}").status_code == 404
    assert client.get(f"/console/autos/{other.id}/pdf/{shas['pdf']}").status_code == 404
    # The photo is not a PDF and the PDF is not an image.
    assert client.get(f"/console/autos/{one.id}/pdf/{shas['photo']}").status_code == 404
    assert client.get(f"/console/autos/{one.id}/arquivo/{shas['pdf']}").status_code == 404
    assert client.get("/console/autos/00000000-0000-0000-0000-000000000000").status_code == 404
    page = client.get("/console/autos/..%2f..%2fetc")
    assert page.status_code == 404 and "Página não encontrada" in page.text
    assert audit_rows(console) == []


def test_a_payload_changed_at_hq_shows_a_broken_signature(console, device, http) -> None:
    record, _ = push_auto(device, with_files=False)
    with console.engine.begin() as conn:
        conn.execute(text("UPDATE records SET payload = replace(payload, 'Ana Souza', "
                          "'Ana Sousa') WHERE id = :id"), {"id": record.id})
    html = http("consulta").get(f"/console/autos/{record.id}").text
    assert "NÃO confere" in html


def test_auto_without_coordinates_says_so(console, device, http) -> None:
    record, _ = push_auto(device, with_files=False, location=None)
    html = http("consulta").get(f"/console/autos/{record.id}").text
    assert "O agente não registrou coordenadas" in html and "Sem fotos" in html
    assert "não enviou o PDF" in html


def test_index_is_rebuilt_from_the_records(console, device, http) -> None:
    from inspector_app.hq.autos_index import rebuild

    made = _several(device)
    device.push_one(device.cancelamento(made["may"]))
    with console.engine.begin() as conn:
        before = [tuple(r) for r in conn.execute(text(
            "SELECT * FROM auto_index ORDER BY record_id"))]
        assert rebuild(conn) == 3
        after = [tuple(r) for r in conn.execute(text(
            "SELECT * FROM auto_index ORDER BY record_id"))]
    assert before == after and len(after) == 3
    assert csrf_of(http("consulta").get("/console/autos").text)
