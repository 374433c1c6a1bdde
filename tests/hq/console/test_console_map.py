"""The auto's map: Leaflet draws the pin on tiles from the configured tile server (a real
HTTP server on loopback here), and when that server does not answer the page falls back to
the coordinates, which are always listed (offline use). Its own HQ (PostgreSQL) with
``console_tile_url`` set."""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from consolekit import LOGINS, NAMES, PASSWORDS, VIEWPORT, cli_staff_add, push_auto
from hqkit import RunningHQ, SimDevice, free_port, running_hq
from playwright.sync_api import expect


def _tile() -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (256, 256), (170, 211, 223)).save(out, "PNG")
    return out.getvalue()


class _Tiles(BaseHTTPRequestHandler):
    body = _tile()
    served: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.served.append(self.path)
        self.send_response(200)
        self.send_header("Content-Type", "image/png")
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def tiles() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", free_port()), _Tiles)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def map_hq(tiles, tmp_path_factory) -> Iterator[RunningHQ]:
    url = f"http://127.0.0.1:{tiles.server_address[1]}/{{z}}/{{x}}/{{y}}.png"
    with running_hq("postgresql", tmp_path_factory.mktemp("hq-map"), console_secure_cookie=False,
                    console_tile_url=url) as hq:
        assert cli_staff_add(hq.settings.database_url, LOGINS["consulta"], NAMES["consulta"],
                             "consulta", PASSWORDS["consulta"]) == 0
        yield hq


@pytest.fixture
def map_page(browser, map_hq):
    context = browser.new_context(viewport=VIEWPORT, base_url=map_hq.url, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.goto("/console/login")
    page.get_by_label("Usuário").fill(LOGINS["consulta"])
    page.get_by_label("Senha").fill(PASSWORDS["consulta"])
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(re.compile(r".*/console/(?!login).*"))
    yield page
    context.close()


def test_pin_on_the_tiles_then_coordinates_when_the_tile_server_is_gone(
        map_hq, map_page, tiles, tmp_path) -> None:
    from test_console_browser import shot

    record, _ = push_auto(SimDevice(map_hq).enrol(), with_files=False)
    page = map_page
    csp = page.goto(f"/console/autos/{record.id}").headers["content-security-policy"]
    assert f"img-src 'self' data: blob: http://127.0.0.1:{tiles.server_address[1]}" in csp
    box = page.locator("#mapa")
    expect(box).to_have_attribute("data-state", "drawn")
    expect(page.locator("#mapa .leaflet-marker-icon")).to_have_count(1)
    page.wait_for_function("() => [...document.querySelectorAll('#mapa img.leaflet-tile')]"
                           ".some(i => i.complete && i.naturalWidth === 256)")
    assert any(p.startswith("/16/") for p in _Tiles.served)  # zoom 16 around the pin
    assert page.locator("#coordenadas").is_visible()
    assert page.locator("#mapa-aviso").is_hidden()
    box.scroll_into_view_if_needed()
    shot(page, tmp_path, "06-auto-mapa")
    # The tile server goes away: the page says so and keeps the coordinates.
    tiles.shutdown()
    tiles.server_close()
    page.reload()
    expect(box).to_have_attribute("data-state", "unreachable")
    assert box.is_hidden()
    assert "não respondeu" in page.locator("#mapa-aviso").inner_text()
    assert "Latitude -15.793889, longitude -47.882778" in page.locator("#coordenadas").inner_text()
