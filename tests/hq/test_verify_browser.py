"""The public ``/verify/{code}`` page as a citizen sees it: a real HQ (uvicorn on loopback,
SQLite) and a real headless Chromium that loads the page, whose rendered DOM and screenshot
are checked. Skipped only when Chromium is not installed (``.ci/run`` installs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hqkit import RunningHQ, SimDevice, running_hq
from PIL import Image

from inspector_app.sync.protocol import PushRecord

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Chromium is not installed (apt-get install chromium; .ci/run installs it)",
)
BROWSER_TIMEOUT_S = 60
PHONE = (390, 844)  # the QR code on the paper is read with a phone
BACKGROUND = (0xF4, 0xF5, 0xF7)  # the page around the card (verification.py's CSS)


# --- a real HQ with one enrolled device, and a real browser --------------------------------------


@pytest.fixture(scope="module")
def verify_hq(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHQ]:
    with running_hq("sqlite", tmp_path_factory.mktemp("hq-browser")) as hq:
        yield hq


@pytest.fixture(scope="module")
def device(verify_hq: RunningHQ) -> SimDevice:
    return SimDevice(verify_hq).enrol()


def code_of(record: PushRecord) -> str:
    code: str = json.loads(record.payload)["verification_code"]
    return code


def chromium(tmp_path: Path, url: str, *args: str) -> str:
    """Run headless Chromium on ``url`` with a fresh profile; its stdout."""
    assert CHROMIUM is not None
    command = [
        CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--disable-background-networking", "--no-first-run", "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'chromium-profile'}", *args, url,
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=BROWSER_TIMEOUT_S,
                            cwd=tmp_path)
    assert result.returncode == 0, f"chromium failed ({result.returncode}):\n{result.stderr}"
    return result.stdout


class RenderedPage(HTMLParser):
    """What a reader sees in a DOM dumped by the browser: the title, the headline, the
    visible text of <body>, and the details list as label -> value."""

    def __init__(self, dom: str) -> None:
        super().__init__()
        self.title = self.headline = self.text = ""
        self.details: dict[str, str] = {}
        self.lang: str | None = None
        self._open: list[str] = []
        self._label = ""
        self.feed(dom)
        self.close()
        self.text = " ".join(self.text.split())

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html":
            self.lang = dict(attrs).get("lang")
        if tag == "dd":
            self.details[self._label] = ""
        self._open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        while self._open and self._open.pop() != tag:
            pass

    def handle_data(self, data: str) -> None:
        inside = set(self._open)
        if "title" in inside:
            self.title += data
        if "body" not in inside or inside & {"style", "script"}:
            return
        self.text += data
        if "h1" in inside:
            self.headline += data
        if "dt" in inside:
            self._label = data.strip()
        elif "dd" in inside:
            self.details[self._label] = (self.details[self._label] + data).strip()


def load(tmp_path: Path, url: str) -> RenderedPage:
    return RenderedPage(chromium(tmp_path, url, "--dump-dom"))


# --- what the citizen sees --------------------------------------------------------------------


def test_a_sealed_auto_is_shown_authentic_and_valid_in_the_browser(
    verify_hq: RunningHQ, device: SimDevice, tmp_path: Path
) -> None:
    auto = device.record()
    assert device.push_one(auto)["status"] == "accepted"
    number = f"{device.series}-{auto.number:06d}"

    page = load(tmp_path, f"{verify_hq.url}/verify/{code_of(auto).lower()}")

    assert page.lang == "pt-BR"
    assert page.title == f"Verificação — {number}"
    assert page.headline == "Documento autêntico"
    assert page.details == {
        "Documento": "Auto de infração", "Número": number, "Data": "14/04/2026",
        "Placa": "JJK8D48", "Situação": "Válido", "Órgão": "Secretaria de Transporte",
    }
    assert "emitido por um agente de fiscalização e registrado na sede em" in page.text
    assert f"Código consultado: {code_of(auto)}" in page.text
    assert "Cancelado" not in page.text


def test_a_cancelled_auto_is_shown_authentic_and_cancelled_in_the_browser(
    verify_hq: RunningHQ, device: SimDevice, tmp_path: Path
) -> None:
    auto = device.record()
    device.push_one(auto)
    cancel = device.cancelamento(auto, created_at="2026-04-20T10:00:00+00:00")
    assert device.push_one(cancel)["status"] == "accepted"

    page = load(tmp_path, f"{verify_hq.url}/verify/{code_of(auto)}")

    assert page.headline == "Documento autêntico — CANCELADO"
    assert page.details["Situação"] == "Cancelado em 20/04/2026"
    assert page.details["Número"] == f"{device.series}-{auto.number:06d}"
    assert page.details["Placa"] == "JJK8D48"
    assert "Válido" not in page.text


def test_an_unknown_code_is_shown_as_not_found_in_the_browser(
    verify_hq: RunningHQ, tmp_path: Path
) -> None:
    page = load(tmp_path, f"{verify_hq.url}/verify/aaaa-bbbb-cccc")

    assert page.headline == "Documento não encontrado"
    assert "Não há na sede um documento com este código de verificação" in page.text
    assert "pode ainda não ter chegado à sede" in page.text
    assert "Código consultado: AAAA-BBBB-CCCC" in page.text
    assert page.details == {}
    assert "autêntico" not in page.text


def test_the_page_renders_on_a_phone_screen(
    verify_hq: RunningHQ, device: SimDevice, tmp_path: Path
) -> None:
    auto = device.record()
    device.push_one(auto)
    shot = tmp_path / "verify.png"

    chromium(tmp_path, f"{verify_hq.url}/verify/{code_of(auto)}",
             f"--screenshot={shot}", f"--window-size={PHONE[0]},{PHONE[1]}")

    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(shot) as image:
        assert image.size == PHONE
        rgb = image.convert("RGB")
        counted = rgb.getcolors(maxcolors=PHONE[0] * PHONE[1])
        edges = {rgb.getpixel((0, 100)), rgb.getpixel((PHONE[0] - 1, 100))}
    assert edges == {BACKGROUND}  # the card keeps a margin from the screen's edges
    colours = {colour for _, colour in counted or []}
    assert (0x0A, 0x6B, 0x2B) in colours  # the green "Documento autêntico" / "Válido"
    assert (0xFF, 0xFF, 0xFF) in colours and len(colours) > 20  # a card with text on it
