"""The console's test kit: a real HQ on loopback (PostgreSQL), one staff account per role
created through the real ``inspector-hq staff add``, and a real headless Chromium
(Playwright on the system's /usr/bin/chromium, no browser download).

Other console areas reuse these fixtures: ``console`` (the server, emptied per test but for
the staff accounts), ``staff`` (role -> (login, password)), ``http(role)`` (an httpx client
logged in), ``page`` (a fresh 1366×768 browser page) and ``logged_in(page, role)``.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from consolekit import (
    CHROMIUM,
    KEEP,
    LOGINS,
    NAMES,
    PASSWORDS,
    ROLES,
    VIEWPORT,
    cli_staff_add,
    do_login,
    http_login,
)
from hqkit import RunningHQ, SimDevice, running_hq
from sqlalchemy import text

from inspector_app.hq.tables import metadata


@pytest.fixture(scope="session")
def console_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningHQ]:
    with running_hq("postgresql", tmp_path_factory.mktemp("hq-console"),
                    console_secure_cookie=False) as hq:
        for role in ROLES:
            assert cli_staff_add(hq.settings.database_url, LOGINS[role], NAMES[role], role,
                                 PASSWORDS[role]) == 0
        yield hq


def reset_keeping_staff(hq: RunningHQ) -> None:
    names = [t.name for t in reversed(metadata.sorted_tables) if t.name not in KEEP]
    with hq.engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {', '.join(names)} RESTART IDENTITY"))
        conn.execute(text("UPDATE staff SET disabled_at = NULL"))
    hq.blobs.clear()


@pytest.fixture
def console(console_server: RunningHQ) -> RunningHQ:
    reset_keeping_staff(console_server)
    return console_server


@pytest.fixture
def staff() -> dict[str, tuple[str, str]]:
    return {role: (LOGINS[role], PASSWORDS[role]) for role in ROLES}


@pytest.fixture
def device(console: RunningHQ) -> SimDevice:
    return SimDevice(console).enrol()


@pytest.fixture
def http(console: RunningHQ) -> Iterator[Callable[[str], httpx.Client]]:
    """``http(role)``: an httpx client logged in as that role's account."""
    opened: list[httpx.Client] = []

    def make(role: str) -> httpx.Client:
        client, answer = http_login(console, LOGINS[role], PASSWORDS[role])
        assert answer.status_code == 303, answer.text
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.close()


# --- the browser ----------------------------------------------------------------------------


# Per test module: Playwright's sync API keeps an asyncio loop running in the main thread
# while it is open, and later modules (tests/hq/test_hq_blob_stores.py) call asyncio.run().
@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() and shutil.which("chromium") is None:
        pytest.skip("Chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, headless=True,
                                      args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object, console: RunningHQ) -> Iterator[object]:
    context = browser.new_context(viewport=VIEWPORT, base_url=console.url,  # type: ignore[attr-defined]
                                  locale="pt-BR", accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.console_errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()


@pytest.fixture
def logged_in() -> Callable[..., None]:
    """``logged_in(page, role)``: that page is now logged in as the role's account."""
    return do_login
