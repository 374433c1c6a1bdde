"""The console in a real headless Chromium (Playwright on /usr/bin/chromium) against a
real HQ on loopback (PostgreSQL) fed by a simulated device in the same test: log in, find
the auto, open its photos and its PDF, CSRF refusal, role refusal, the audit log.

``CONSOLE_SCREENSHOTS=docs/hq-console`` also saves each page's screenshot there (the ones
in docs/hq-console.md)."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from consolekit import LOGINS, push_auto
from playwright.sync_api import expect

from inspector_app.sync.protocol import display_number

SHOTS = os.environ.get("CONSOLE_SCREENSHOTS")


def shot(page, tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=False)
    return path


def number_of(record) -> str:
    env = json.loads(record.payload)
    return display_number(env["series"], env["number"])


def no_horizontal_scroll(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_log_in_see_the_pushed_auto_open_photos_and_pdf(page, logged_in, device, console,
                                                         tmp_path) -> None:
    page.goto("/console/autos")
    assert page.url.endswith("/console/login?next=%2Fconsole%2Fautos")
    shot(page, tmp_path, "01-entrar")
    logged_in(page, "supervisor", "%2Fconsole%2Fautos")
    assert page.get_by_text("Nenhum auto encontrado").is_visible()
    # A device pushes an auto while the supervisor has the console open.
    record, shas = push_auto(device)
    older, _ = push_auto(device, with_files=False, plate="ABC-1234", plate_key="ABC1C34",
                         holder="Cooperativa São José", occurred_at="2026-03-02T08:00:00-03:00")
    page.reload()
    table = page.locator("#autos")
    assert table.get_by_role("link", name=number_of(record)).is_visible()
    assert table.get_by_role("link", name=number_of(older)).is_visible()
    assert no_horizontal_scroll(page)
    shot(page, tmp_path, "02-autos")
    # Filter by the old form of the Mercosul plate: htmx swaps the table, the URL follows.
    page.get_by_label("Placa").fill("JJK-8348")
    page.get_by_label("Placa").press("Enter")
    page.wait_for_url(re.compile(r".*placa=JJK-8348.*"))
    expect(page.locator("#autos tbody tr")).to_have_count(1)
    assert table.get_by_role("link", name=number_of(record)).is_visible()
    assert page.locator("#contagem").inner_text().startswith("1 auto")
    shot(page, tmp_path, "03-autos-filtro-placa")
    # An invalid plate is explained in Portuguese.
    page.get_by_label("Placa").fill("AB12")
    page.get_by_role("button", name="Filtrar").click()
    assert "Placa inválida" in page.locator("#erro-filtro").inner_text()
    page.get_by_label("Placa").fill("")
    page.get_by_role("button", name="Filtrar").click()
    expect(page.locator("#autos tbody tr")).to_have_count(2)
    # Open the auto.
    table.get_by_role("link", name=number_of(record)).click()
    page.wait_for_url(f"**/console/autos/{record.id}")
    assert "Assinatura do dispositivo válida" in page.locator("#assinatura").inner_text()
    assert "Transportes Boa Viagem Ltda" in page.locator("#dados").inner_text()
    thumb = page.get_by_alt_text(re.compile("Foto 1"))
    thumb.scroll_into_view_if_needed()
    page.wait_for_function(
        "() => [...document.querySelectorAll('#fotos img, #assinaturas img')]"
        ".every(i => i.complete && i.naturalWidth > 0)")
    assert page.get_by_alt_text("Assinatura: Agente").evaluate("i => i.naturalWidth") == 400
    assert thumb.evaluate("i => i.naturalWidth") == 160
    assert "Latitude -15.793889" in page.locator("#coordenadas").inner_text()
    page.locator("#h-dados").scroll_into_view_if_needed()
    shot(page, tmp_path, "04-auto")
    page.locator("#h-fotos").scroll_into_view_if_needed()
    shot(page, tmp_path, "05-auto-fotos")
    # The full-size photo opens in a new tab, checked against its SHA-256.
    with page.expect_popup() as popup:
        thumb.click()
    full = popup.value
    full.wait_for_load_state()
    assert full.evaluate("document.images[0].naturalWidth") == 640
    full.close()
    # The PDF downloads, byte for byte what the device uploaded.
    with page.expect_download() as download:
        page.locator("#baixar-pdf").click()
    saved = tmp_path / "auto.pdf"
    download.value.save_as(saved)
    assert download.value.suggested_filename == f"{number_of(record)}.pdf"
    assert saved.read_bytes().startswith(b"%PDF-")
    assert hashlib.sha256(saved.read_bytes()).hexdigest() == shas["pdf"]
    assert page.console_errors == []  # nothing the CSP refused, no script error
    assert console.scalar("SELECT COUNT(*) FROM audit_log WHERE action = 'auto_pdf' "
                          "AND staff_login = :l", l=LOGINS["supervisor"]) == 1


def test_a_forged_form_is_refused_with_a_portuguese_page(page, logged_in, tmp_path) -> None:
    logged_in(page, "julgador")
    page.evaluate("document.querySelector('form[action=\"/console/logout\"] "
                  "input[name=csrf_token]').value = 'forjado'")
    page.get_by_role("button", name="Sair").click()
    assert page.locator("#titulo-erro").inner_text() == "Formulário recusado"
    assert "CSRF" in page.get_by_role("alert").inner_text()
    shot(page, tmp_path, "08-csrf-recusado")
    page.goto("/console/autos")
    assert page.url.endswith("/console/autos")  # the session survived the forgery


def test_consulta_cannot_reach_the_administrators_pages(page, logged_in, tmp_path) -> None:
    logged_in(page, "consulta")
    nav = page.get_by_role("navigation", name="Áreas do console")
    assert nav.get_by_role("link", name="Autos").is_visible()
    assert nav.get_by_role("link", name="Auditoria").count() == 0
    assert nav.get_by_role("link", name="Administração").count() == 0
    response = page.goto("/console/auditoria")
    assert response is not None and response.status == 403
    assert "Seu perfil não tem acesso" in page.get_by_role("alert").inner_text()
    shot(page, tmp_path, "09-perfil-sem-acesso")


def test_audit_log_shows_the_actions(page, logged_in, device, console, tmp_path) -> None:
    record, _ = push_auto(device)
    logged_in(page, "supervisor")
    page.goto(f"/console/autos/{record.id}")
    with page.expect_download():
        page.locator("#baixar-pdf").click()
    page.goto("/console/autos")
    with page.expect_download():
        page.locator("#exportar").click()
    page.get_by_role("button", name="Sair").click()
    page.wait_for_url("**/console/login")
    page.get_by_label("Usuário").fill(LOGINS["consulta"])
    page.get_by_label("Senha").fill("senha-errada-de-proposito")
    page.get_by_role("button", name="Entrar").click()
    assert "Usuário ou senha incorretos" in page.locator("#erro").inner_text()
    logged_in(page, "administrador")
    nav = page.get_by_role("navigation", name="Áreas do console")
    nav.get_by_role("link", name="Auditoria").click()
    page.wait_for_url("**/console/auditoria")
    rows = page.locator("#auditoria tbody tr").all_inner_texts()
    actions = [r.split("\t")[1:3] for r in rows]
    assert actions == [
        [LOGINS["administrador"], "Entrada no console"],
        [LOGINS["consulta"], "Tentativa de entrada recusada"],
        [LOGINS["supervisor"], "Saída do console"],
        [LOGINS["supervisor"], "Exportação de autos (CSV)"],
        [LOGINS["supervisor"], "Download do PDF do auto"],
        [LOGINS["supervisor"], "Entrada no console"],
    ]
    assert number_of(record) in rows[4] and "127.0.0.1" in rows[4]
    assert no_horizontal_scroll(page)
    shot(page, tmp_path, "07-auditoria")


def test_keyboard_reaches_the_content_with_visible_focus(page, logged_in) -> None:
    logged_in(page, "consulta")
    page.keyboard.press("Tab")
    focused = page.evaluate("document.activeElement.textContent")
    assert focused == "Ir para o conteúdo"
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Painel"


@pytest.mark.parametrize("role", ["administrador", "julgador"])
def test_every_role_can_read_the_autos(page, logged_in, role) -> None:
    logged_in(page, role)
    page.goto("/console/autos")
    assert page.get_by_role("heading", name="Autos").is_visible()
