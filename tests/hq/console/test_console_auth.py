"""The console's door, server side: login and lockout, sessions (idle timeout, absolute
lifetime, logout, disabled account), CSRF on every POST, roles, and the audit log that
PostgreSQL refuses to rewrite. A real HQ on loopback, PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy.exc
from consolekit import LOGINS, PASSWORDS, cli_staff_add, csrf_of, http_login
from hqkit import RunningHQ
from sqlalchemy import text

from inspector_app.hq import cli


def landing(hq: RunningHQ) -> str:
    """Where a login lands: the Painel once that area is installed, else Autos."""
    paths = {getattr(r, "path", None) for r in hq.app.routes}
    return "/console/painel" if "/console/painel" in paths else "/console/autos"


def audit_actions(hq: RunningHQ) -> list[tuple[str, str]]:
    with hq.engine.connect() as conn:
        return [(r.staff_login, r.action) for r in conn.execute(
            text("SELECT staff_login, action FROM audit_log ORDER BY id"))]


def test_login_opens_a_session_with_a_strict_httponly_cookie(console: RunningHQ) -> None:
    client, answer = http_login(console, LOGINS["supervisor"], PASSWORDS["supervisor"])
    try:
        assert answer.status_code == 303
        assert answer.headers["location"] == landing(console)
        cookie = answer.headers.get_list("set-cookie")[0]
        assert cookie.startswith("hq_console=")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        page = client.get("/console/auditoria")
        assert page.status_code == 403  # a supervisor is not an administrator
        assert "Seu perfil não tem acesso" in page.text
    finally:
        client.close()
    assert audit_actions(console) == [(LOGINS["supervisor"], "login")]


def test_the_cookie_is_secure_unless_switched_off_for_loopback(console: RunningHQ) -> None:
    from inspector_app.hq.console.auth import cookie_name

    assert cookie_name(console.settings) == "hq_console"
    from inspector_app.hq.core.config import Settings

    production = Settings(database_url="sqlite://", blob_dir=console.settings.blob_dir)
    assert production.console_secure_cookie is True
    assert cookie_name(production) == "__Host-hq_console"  # the browser demands Secure


def test_wrong_password_is_refused_in_portuguese_and_audited(console: RunningHQ) -> None:
    client, answer = http_login(console, LOGINS["consulta"], "senha-errada-123")
    try:
        assert answer.status_code == 401
        assert "Usuário ou senha incorretos" in answer.text
        assert not [c for c in answer.headers.get_list("set-cookie")
                    if c.startswith("hq_console=")]
        assert client.get("/console/autos").status_code == 303  # still no session
    finally:
        client.close()
    assert audit_actions(console) == [(LOGINS["consulta"], "login_failed")]


def test_lockout_after_five_failures_even_with_the_right_password(console: RunningHQ) -> None:
    login = LOGINS["julgador"]
    for _ in range(console.settings.console_lockout_failures):
        client, answer = http_login(console, login, "tentativa-errada-1")
        client.close()
        assert answer.status_code == 401
    client, answer = http_login(console, login, PASSWORDS["julgador"])
    client.close()
    assert answer.status_code == 429
    assert "bloqueada" in answer.text
    # Another login from the same address is not locked by that login's failures.
    client, answer = http_login(console, LOGINS["consulta"], PASSWORDS["consulta"])
    client.close()
    assert answer.status_code == 303
    # The lock is in the database (every instance sees it): lift it by ageing the rows.
    with console.engine.begin() as conn:
        conn.execute(text("UPDATE rate_events SET at = :old"),
                     {"old": (dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)).isoformat()})
    client, answer = http_login(console, login, PASSWORDS["julgador"])
    client.close()
    assert answer.status_code == 303


def test_lockout_per_address_across_logins(console: RunningHQ) -> None:
    limit = console.settings.console_lockout_ip_failures
    for n in range(limit):
        client, answer = http_login(console, f"inexistente{n}", "qualquer-coisa-1")
        client.close()
        assert answer.status_code == 401, n
    client, answer = http_login(console, LOGINS["consulta"], PASSWORDS["consulta"])
    client.close()
    assert answer.status_code == 429


def test_idle_timeout_ends_the_session(console: RunningHQ, http) -> None:
    client = http("consulta")
    assert client.get("/console/autos").status_code == 200
    idle = console.settings.console_idle_minutes
    with console.engine.begin() as conn:
        conn.execute(text("UPDATE staff_sessions SET last_seen_at = :t"), {
            "t": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=idle, seconds=5)).isoformat()})
    answer = client.get("/console/autos")
    assert answer.status_code == 303
    assert answer.headers["location"].startswith("/console/login")
    assert console.scalar("SELECT COUNT(*) FROM staff_sessions WHERE ended_at IS NULL") == 0


def test_just_under_the_idle_timeout_the_session_lives(console: RunningHQ, http) -> None:
    client = http("consulta")
    idle = console.settings.console_idle_minutes
    with console.engine.begin() as conn:
        conn.execute(text("UPDATE staff_sessions SET last_seen_at = :t"), {
            "t": (dt.datetime.now(dt.UTC) - dt.timedelta(minutes=idle, seconds=-30)).isoformat()})
    assert client.get("/console/autos").status_code == 200


def test_absolute_lifetime_ends_an_active_session(console: RunningHQ, http) -> None:
    client = http("consulta")
    with console.engine.begin() as conn:
        conn.execute(text("UPDATE staff_sessions SET expires_at = :t"), {
            "t": (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()})
    assert client.get("/console/autos").status_code == 303


def test_logout_needs_the_csrf_token_and_ends_the_session(console: RunningHQ, http) -> None:
    client = http("administrador")
    page = client.get("/console/auditoria")
    refused = client.post("/console/logout", data={"csrf_token": "forjado"})
    assert refused.status_code == 403
    assert "Formulário recusado" in refused.text and "CSRF" in refused.text
    assert client.get("/console/autos").status_code == 200  # still logged in
    bare = client.post("/console/logout")
    assert bare.status_code == 403
    done = client.post("/console/logout", data={"csrf_token": csrf_of(page.text)})
    assert done.status_code == 303
    assert client.get("/console/autos").status_code == 303
    assert [a for _, a in audit_actions(console)] == ["login", "logout"]


def test_htmx_header_carries_the_csrf_token(console: RunningHQ, http) -> None:
    client = http("consulta")
    page = client.get("/console/autos")
    token = csrf_of(page.text)
    assert client.post("/console/logout", headers={"X-CSRF-Token": "x" * 43}).status_code == 403
    assert client.post("/console/logout", headers={"X-CSRF-Token": token}).status_code == 303


def test_a_token_from_another_session_is_refused(console: RunningHQ, http) -> None:
    one, other = http("consulta"), http("supervisor")
    foreign = csrf_of(other.get("/console/autos").text)
    assert one.post("/console/logout", data={"csrf_token": foreign}).status_code == 403


def test_login_form_without_its_own_token_is_refused(console: RunningHQ) -> None:
    with console.client() as client:
        answer = client.post("/console/login", data={
            "login": LOGINS["consulta"], "password": PASSWORDS["consulta"],
            "csrf_token": "inventado"})
    assert answer.status_code == 403
    assert "expirou" in answer.text


def test_no_session_redirects_to_login_keeping_the_page(console: RunningHQ) -> None:
    with console.client() as client:
        answer = client.get("/console/auditoria?quem=x")
    assert answer.status_code == 303
    assert answer.headers["location"] == "/console/login?next=%2Fconsole%2Fauditoria%3Fquem%3Dx"


def test_next_cannot_leave_the_console(console: RunningHQ) -> None:
    with console.client() as client:
        form = client.get("/console/login")
        answer = client.post("/console/login", data={
            "login": LOGINS["consulta"], "password": PASSWORDS["consulta"],
            "csrf_token": csrf_of(form.text), "next": "//evil.example/console/x"})
    assert answer.headers["location"] == landing(console)


def test_disabled_account_loses_its_sessions_and_cannot_log_in(console: RunningHQ, http) -> None:
    client = http("julgador")
    assert cli.main(["staff", "disable", LOGINS["julgador"],
                     "--database-url", console.settings.database_url]) == 0
    assert client.get("/console/autos").status_code == 303
    again, answer = http_login(console, LOGINS["julgador"], PASSWORDS["julgador"])
    again.close()
    assert answer.status_code == 401


def test_roles_see_only_their_areas(console: RunningHQ, http) -> None:
    admin = http("administrador").get("/console/autos").text
    consulta = http("consulta").get("/console/autos").text
    assert 'href="/console/auditoria"' in admin and 'href="/console/admin"' in admin
    assert 'href="/console/auditoria"' not in consulta
    assert 'href="/console/admin"' not in consulta
    assert http("administrador").get("/console/auditoria").status_code == 200


def test_staff_add_refuses_bad_input(console: RunningHQ, capsys) -> None:
    url = console.settings.database_url
    assert cli_staff_add(url, "curta", "Fulano", "consulta", "curta") == 2
    assert "at least 12" in capsys.readouterr().err
    assert cli_staff_add(url, LOGINS["consulta"], "Outro", "consulta", "x" * 12) == 2
    assert "already exists" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli.main(["staff", "add", "novo", "Novo", "chefe", "--password-stdin",
                  "--database-url", url])
    assert console.scalar("SELECT password_hash FROM staff WHERE login = :l",
                          l=LOGINS["consulta"]).startswith("$argon2id$")


def test_audit_log_refuses_update_and_delete_on_postgresql(console: RunningHQ, http) -> None:
    http("consulta")
    assert console.scalar("SELECT COUNT(*) FROM audit_log") == 1
    for sql in ("UPDATE audit_log SET staff_login = 'outra'", "DELETE FROM audit_log"):
        with pytest.raises(sqlalchemy.exc.DBAPIError, match="append-only"), \
                console.engine.begin() as conn:
            conn.execute(text(sql))
    assert console.scalar("SELECT staff_login FROM audit_log") == LOGINS["consulta"]


def test_console_pages_allow_only_their_own_files(console: RunningHQ, http) -> None:
    page = http("consulta").get("/console/autos")
    csp = page.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "script-src 'self'" in csp
    assert "unsafe-inline" not in csp and "http" not in csp
    assert page.headers["x-frame-options"] == "DENY"
    assert page.headers["cache-control"] == "no-store"
    for name in ("htmx.min.js", "leaflet.js", "leaflet.css", "console.js", "console.css"):
        assert http("consulta").get(f"/console/static/{name}").status_code == 200


def test_console_settings_from_the_environment(tmp_path) -> None:
    from inspector_app.hq.core.config import Settings, limits_from_env

    values = limits_from_env({"HQ_CONSOLE_SECURE_COOKIE": "0", "HQ_CONSOLE_IDLE_MINUTES": "10",
                              "HQ_CONSOLE_TILE_URL": " https://t.example/{z}/{x}/{y}.png "})
    assert values == {"console_secure_cookie": False, "console_idle_minutes": 10,
                      "console_tile_url": "https://t.example/{z}/{x}/{y}.png"}
    assert limits_from_env({"HQ_CONSOLE_SECURE_COOKIE": "yes"})["console_secure_cookie"] is True
    with pytest.raises(ValueError, match="HQ_CONSOLE_LOCKOUT_FAILURES"):
        limits_from_env({"HQ_CONSOLE_LOCKOUT_FAILURES": "cinco"})
    with pytest.raises(ValueError, match="HQ_CONSOLE_TILE_URL"):
        Settings(database_url="sqlite://", blob_dir=tmp_path, console_tile_url="file:///etc")
