"""The desktop enrols from a photo of the console's QR code (issue 15 part C): a real HQ
(console included) on loopback, an administrator generates the code in headless Chromium,
a PNG of the page's QR code is taken, and the first-run "Cadastrar na sede" dialog's
"Ler de uma foto" fills the HQ address and the code from it; the enrolment then succeeds.
A photo without the code says why and changes nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from uikit import click

TESTS = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def console_hq(tmp_path):
    if str(TESTS) not in sys.path:
        sys.path.append(str(TESTS))
    from hqkit import running_hq

    sys.path.append(str(TESTS / "hq" / "console"))
    from consolekit import cli_staff_add

    with running_hq("sqlite", tmp_path / "hq", console_secure_cookie=False) as hq:
        assert cli_staff_add(hq.settings.database_url, "admin.foto", "Ana Admin",
                             "administrador", "senha-do-administrador") == 0
        yield hq


SCREENSHOT_SCRIPT = """
import re, sys
from playwright.sync_api import sync_playwright
url, png, chromium = sys.argv[1:4]
with sync_playwright() as pw:
    browser = pw.chromium.launch(executable_path=chromium, headless=True,
                                 args=["--no-sandbox", "--disable-dev-shm-usage"])
    page = browser.new_page(viewport={"width": 1366, "height": 768}, base_url=url)
    page.goto("/console/login")
    page.get_by_label("Usuário").fill("admin.foto")
    page.get_by_label("Senha").fill("senha-do-administrador")
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(re.compile(r".*/console/(?!login).*"))
    page.goto("/console/admin/dispositivos")
    page.get_by_role("button", name="Gerar código de cadastro").click()
    print(page.locator("#codigo").inner_text())
    page.locator("#qr").screenshot(path=png)
    browser.close()
"""


def qr_png_from_the_console(hq, target: Path) -> str:
    """Log in as the administrator, generate a code and save a PNG of its QR code: in a
    child process, so a browser another test left open in this one does not interfere."""
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed")
    done = subprocess.run([sys.executable, "-c", SCREENSHOT_SCRIPT, hq.url, str(target),
                           CHROMIUM], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_enrol_dialog_reads_the_console_qr_from_a_photo(qtbot, make_shell, tmp_path,
                                                             console_hq, monkeypatch):
    from inspector_app.ui import sync_screen

    png = tmp_path / "foto-do-codigo.png"
    code = qr_png_from_the_console(console_hq, png)
    shell = make_shell(tmp_path / "empty")
    qtbot.waitUntil(lambda: shell.pages.currentWidget() is shell.first_run, timeout=15_000)
    click(qtbot, shell.first_run.enrol_button)
    dialog = shell.enrol_dialog
    assert dialog.photo_button.isVisible() and dialog.photo_button.text() == "Ler de uma &foto…"

    blank = tmp_path / "parede.png"
    from PIL import Image

    Image.new("RGB", (640, 480), "white").save(blank)
    monkeypatch.setattr(sync_screen.QrPhotoChooser, "ask", classmethod(lambda cls, p: blank))
    click(qtbot, dialog.photo_button)
    assert "Nenhum código QR foi encontrado" in dialog.banner.text()
    assert dialog.code.text() == ""

    monkeypatch.setattr(sync_screen.QrPhotoChooser, "ask", classmethod(lambda cls, p: png))
    click(qtbot, dialog.photo_button)
    assert (dialog.url.text(), dialog.code.text()) == (console_hq.url, code)
    assert "lidos da foto" in dialog.banner.text()
    click(qtbot, dialog.ok_button)
    qtbot.waitUntil(lambda: console_hq.scalar("SELECT count(*) FROM devices") == 1,
                    timeout=20_000)
    qtbot.waitUntil(lambda: "Dispositivo cadastrado na sede" in
                    shell.statusBar().currentMessage(), timeout=15_000)
    shell.sync.stop()  # the worker the enrolment started, before the shell closes
    qtbot.wait(200)
