"""Painel and Administração in a real headless Chromium (issue 15 part C), against a real
HQ on PostgreSQL with autos pushed by simulated devices in the same test: a supervisor
resolves a suspected duplicate; an administrator enrols a device from the on-screen code
(its QR code read back from a PNG of the page), imports a registry file with one bad row
(errors shown and downloaded), allocates a range, adds an agent and publishes a tariff with
its act; a non-administrator is refused; the audit log shows each action.

``CONSOLE_SCREENSHOTS=docs/hq-console`` also saves the pages' screenshots (1366×768) for
docs/hq-console.md, named ``c-<page>.png``."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import re
from pathlib import Path

import pytest
from hqkit import SimDevice

from inspector_app.domain.legaltime import legal_today
from inspector_app.media.qr_read import read_enrolment_qr

SHOTS = os.environ.get("CONSOLE_SCREENSHOTS")


def shot(page, name, tmp_path):
    target = Path(SHOTS) if SHOTS else tmp_path
    target.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(target / f"c-{name}.png"), full_page=False)


def auto(device, *, plate="JJK8D48", rule="DF15154.29.XIII", agent="1001",
         place="Rodoviária do Plano Piloto", organ="SEMOB-DF"):
    day = legal_today()
    body = {"occurred_at": f"{day.isoformat()}T10:05:00-03:00", "vehicle": {"plate": plate},
            "pack": {"id": "DF_STPCR", "organ": organ},
            "agent": {"matricula": agent, "name": "Agente"},
            "location": {"type": "via", "place": place},
            "outcome": {"pack": "DF_STPCR", "infractions": [{"rule_id": rule, "points": 3}]}}
    now = dt.datetime.now(dt.UTC).isoformat(timespec="microseconds")
    return device.record(device.envelope(kind="auto_infracao", body=body, plate_key=plate,
                                         occurred_on=day.isoformat(), created_at=now))


def test_a_supervisor_resolves_a_suspected_duplicate_in_the_painel(console, page, logged_in,
                                                                  tmp_path):
    first, second = SimDevice(console).enrol(), SimDevice(console).enrol()
    assert first.push_one(auto(first))["status"] == "accepted"
    for i, place in enumerate(("Terminal Asa Sul", "Eixo Monumental", "W3 Norte")):
        first.push_one(auto(first, plate=f"ABC12{i}4", rule="DF15154.29.II", place=place,
                            agent="1002"))
    assert second.push_one(auto(second, agent="1003"))["status"] == "accepted"
    with first.client() as client:
        client.get("/api/v1/pull", params={"pending": 3})
    logged_in(page, "supervisor")
    page.goto("/console/painel")
    assert page.locator("p.total").first.inner_text() == "5 auto(s)"
    assert page.locator("svg.chart").count() >= 8
    assert page.get_by_role("img", name=re.compile("Por local – Hoje")).count() == 1
    assert "1 suspeita(s) de duplicidade em aberto" in page.locator("main").inner_text()
    row = page.locator("#dispositivos tbody tr").first
    assert row.locator("td").nth(2).inner_text() == "3"
    shot(page, "painel", tmp_path)
    page.get_by_role("link", name=re.compile("suspeita")).click()
    card = page.locator("article.card").first
    assert "JJK8D48" in card.inner_text() and card.locator("tbody tr").count() == 2
    card.get_by_label("Autos distintos").check()
    card.get_by_label("Motivo (obrigatório)").fill("curto")
    # the browser's own minlength check stops it first; the server refuses too (below)
    card.get_by_label("Motivo (obrigatório)").fill(
        "Dois fatos: horários e pontos de fiscalização diferentes.")
    shot(page, "painel-duplicidade", tmp_path)
    card.get_by_role("button", name="Registrar decisão").click()
    page.wait_for_url(re.compile(r".*filtro=resolvidas.*"))
    assert "Autos distintos por super.teste" in page.locator("main").inner_text()
    assert console.scalar("SELECT resolution FROM suspected_duplicates") == "distinct"
    assert console.scalar("SELECT count(*) FROM audit_log WHERE action = "
                          "'duplicate_resolved'") == 1


def test_a_resolution_without_a_reason_or_by_consulta_is_refused(console, http):
    first, second = SimDevice(console).enrol(), SimDevice(console).enrol()
    first.push_one(auto(first))
    second.push_one(auto(second))
    flag = console.scalar("SELECT id FROM suspected_duplicates")
    from consolekit import csrf_of

    supervisor = http("supervisor")
    token = csrf_of(supervisor.get("/console/painel/duplicidades").text)
    answer = supervisor.post(f"/console/painel/duplicidades/{flag}", data={
        "csrf_token": token, "resolucao": "duplicate", "motivo": "curto"})
    assert answer.status_code == 422 and "pelo menos 10 caracteres" in answer.text
    consulta = http("consulta")
    page = consulta.get("/console/painel/duplicidades")
    assert page.status_code == 200 and "Registrar decisão" not in page.text
    answer = consulta.post(f"/console/painel/duplicidades/{flag}", data={
        "csrf_token": csrf_of(page.text), "resolucao": "distinct",
        "motivo": "motivo suficiente aqui"})
    assert answer.status_code == 403
    assert console.scalar("SELECT count(*) FROM suspected_duplicates WHERE resolution IS NULL") == 1


@pytest.mark.parametrize("role", ["supervisor", "julgador", "consulta"])
def test_administracao_is_for_administrators_only(console, http, role):
    client = http(role)
    for path in ("/console/admin/dispositivos", "/console/admin/faixas",
                 "/console/admin/agentes", "/console/admin/registro",
                 "/console/admin/parametros"):
        answer = client.get(path)
        assert answer.status_code == 403 and "Seu perfil não tem acesso" in answer.text, path
    token = re.search(r'name="csrf_token" value="([^"]+)"',
                      client.get("/console/painel").text).group(1)
    answer = client.post("/console/admin/dispositivos/codigo", data={
        "csrf_token": token, "serie": "AI", "tamanho": "10", "validade": "60"})
    assert answer.status_code == 403
    assert console.scalar("SELECT count(*) FROM enrolment_codes") == 0


def test_an_administrator_enrols_a_device_from_the_on_screen_code(console, page, logged_in,
                                                                 tmp_path):
    logged_in(page, "administrador")
    page.goto("/console/admin/dispositivos")
    page.get_by_label("Tamanho da primeira faixa").fill("0")
    page.get_by_role("button", name="Gerar código de cadastro").click()
    # the browser refuses 0 (min=1); a hostile client posting it gets the server's message
    assert console.scalar("SELECT count(*) FROM enrolment_codes") == 0
    page.get_by_label("Tamanho da primeira faixa").fill("250")
    page.get_by_role("button", name="Gerar código de cadastro").click()
    code = page.locator("#codigo").inner_text()
    assert page.locator("#endereco").inner_text() == console.url
    png = tmp_path / "qr.png"
    page.locator("#qr").screenshot(path=str(png))
    shot(page, "admin-codigo", tmp_path)
    assert read_enrolment_qr(png) == (console.url, code)
    device = SimDevice(console).enrol(code)
    assert device.first == 1 and console.scalar("SELECT max(last) FROM number_ranges") == 250
    page.goto("/console/admin/dispositivos")
    assert "tablet de teste" in page.locator("#dispositivos").inner_text()
    shot(page, "admin-dispositivos", tmp_path)
    page.get_by_role("button", name="Revogar tablet de teste").click()
    assert "revogado" in page.locator(".notice").inner_text()
    with device.client() as client:
        assert client.get("/api/v1/pull").status_code == 403


def test_an_administrator_imports_a_registry_file_with_one_bad_row(console, page, logged_in,
                                                                  tmp_path):
    source = tmp_path / "veiculos.csv"
    source.write_text("# table: vehicles\nid,plate,pack_id\nv1,JJK8D48,DF_STPCR\n"
                      "v2,PLACA,DF_STPCR\nv3,ABC1234,DF_STPCR\n", encoding="utf-8")
    logged_in(page, "administrador")
    page.goto("/console/admin/registro")
    page.get_by_label("Arquivo (.csv ou .json)").set_input_files(str(source))
    page.get_by_role("button", name="Importar").click()
    result = page.locator("#resultado")
    assert "vehicles 2" in result.inner_text()
    assert "1 linha(s) recusada(s)" in result.inner_text()
    cells = page.locator("#erros tbody tr td").all_inner_texts()
    assert cells[:2] == ["veiculos.csv:4", "plate"]
    shot(page, "admin-registro", tmp_path)
    with page.expect_download() as info:
        page.get_by_role("link", name="Baixar os erros (CSV)").click()
    text = Path(info.value.path()).read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text), delimiter=";"))
    assert rows[0] == ["tipo", "local", "campo", "mensagem"] and rows[1][:3] == [
        "erro", "veiculos.csv:4", "plate"]
    page.goto("/console/auditoria")
    log = page.locator("#auditoria").inner_text()
    assert "Importação do cadastro" in log and "Download dos erros da importação" in log


def test_hostile_admin_forms_come_back_in_portuguese(console, http):
    client = http("administrador")
    page = client.get("/console/admin/parametros")
    token = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)
    answer = client.post("/console/admin/parametros/tabela", data={
        "csrf_token": token, "regulamento": "DF_STPCR", "tabela": "tariff_brl",
        "vigencia": "01/01/2099", "valor": "5,50", "ato_numero": "Decreto nº 1",
        "ato_data": "01/01/2026"})
    assert answer.status_code == 422 and "fora do período aceito" in answer.text
    assert 'value="5,50"' in answer.text  # what was typed comes back
    answer = client.post("/console/admin/faixas", data={
        "csrf_token": token, "dispositivo": "x", "serie": "AI", "tamanho": "abc"})
    assert answer.status_code == 422 and "número inteiro" in answer.text
    answer = client.post("/console/admin/registro", files={
        "arquivo": ("virus.exe", b"MZ")}, data={"csrf_token": token})
    assert answer.status_code == 422 and "deve ser .csv ou .json" in answer.text
    huge = b"id,plate,pack_id\n" + b"x" * (17 * 1024 * 1024)
    answer = client.post("/console/admin/registro", files={"arquivo": ("v.csv", huge)},
                         data={"csrf_token": token})
    assert answer.status_code == 413 and "excede o limite" in answer.text
    answer = client.post("/console/admin/registro", files={"arquivo": ("v.csv", b"a")},
                         data={"csrf_token": "forjado"})
    assert answer.status_code == 403
    assert console.scalar("SELECT count(*) FROM changes") == 0


def test_admin_pages_and_the_audit_log_show_each_action(console, page, logged_in, tmp_path):
    device = SimDevice(console).enrol()
    logged_in(page, "administrador")
    page.goto("/console/admin/faixas")
    page.get_by_label("Quantidade (após a última faixa da série)").fill("500")
    page.get_by_role("button", name="Alocar faixa").click()
    assert "Faixa AI 1001–1500 alocada" in page.locator(".notice").inner_text()
    shot(page, "admin-faixas", tmp_path)
    page.goto("/console/admin/agentes")
    page.get_by_label("Matrícula").fill("2001")
    page.get_by_label("Nome").fill("Bruna Lima")
    page.get_by_label("Senha inicial (mín. 8)").fill("senha-forte-1")
    page.get_by_role("button", name="Cadastrar agente").click()
    assert "Agente 2001 cadastrado" in page.locator(".notice").inner_text()
    page.get_by_label("Nova senha de 2001").fill("outra-senha-2")
    page.get_by_label("Confirmação").fill("outra-senha-2")
    page.get_by_role("button", name="Definir").click()
    page.get_by_role("button", name="Desativar 2001").click()
    assert "desativado" in page.locator("#agentes").inner_text()
    shot(page, "admin-agentes", tmp_path)
    page.goto("/console/admin/parametros")
    page.locator("#tabela-d").fill("01/02/2026")
    page.locator("#tabela-v").fill("5,50")
    page.locator("#tabela-ato").fill("Decreto nº 45.123")
    page.locator("#tabela-atodata").fill("10/01/2026")
    page.get_by_role("button", name="Publicar valor").click()
    assert "Publicado" in page.locator(".notice").inner_text()
    page.locator("#cal-d").fill("16/02/2027")
    page.locator("#cal-n").fill("Ponto facultativo – Carnaval")
    page.locator("#calendario-ato").fill("Decreto nº 45.200")
    page.locator("#calendario-atodata").fill("20/01/2026")
    page.get_by_role("button", name="Publicar exceção").click()
    assert "Decreto nº 45.200, de 20/01/2026" in page.locator("main").inner_text()
    shot(page, "admin-parametros", tmp_path)
    # the device receives the range, the agent and the parameters by its pull
    with device.client() as client:
        pulled = client.get("/api/v1/pull").json()["changes"]
    assert {c["table"] for c in pulled} >= {"number_ranges", "inspectors", "parameters"}
    page.goto("/console/auditoria")
    log = page.locator("#auditoria").inner_text()
    for label in ("Faixa de numeração alocada", "Agente cadastrado", "Nova senha de agente",
                  "Agente desativado", "Parâmetro datado publicado",
                  "Exceção de calendário publicada"):
        assert label in log, label
    assert "outra-senha" not in log and "senha-forte" not in log
    shot(page, "admin-auditoria", tmp_path)
