"""Console sessions, login lockout, CSRF and the ``require_staff`` dependency.

Sessions live in ``staff_sessions`` (not in a process's memory: HQ runs as several
instances). The cookie holds 32 random bytes; the table only their SHA-256. A session ends
at logout, after ``console_idle_minutes`` without a request, and ``console_session_hours``
after login in any case. The cookie is HttpOnly, SameSite=Strict and Secure (unless
``console_secure_cookie`` is off for a plain-HTTP loopback test server).

Failed logins are counted in ``rate_events`` (``hq/ratelimit.py``) per login and per client
address: ``console_lockout_failures`` failures lock the login, ``console_lockout_ip_failures``
the address, for ``console_lockout_minutes``.

CSRF: every session has its own token, put in every form (hidden ``csrf_token``) and sent by
htmx as ``X-CSRF-Token``; every POST is refused (403, in Portuguese) without it. The login
form, before any session, uses a double-submit cookie.
"""

from __future__ import annotations

import datetime as dt
import hmac
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from fastapi import Request
from sqlalchemy import Engine, delete, insert, select, update

from inspector_app.hq.api.deps import HQState, client_address, get_state
from inspector_app.hq.console.staff import Staff
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.security import hash_secret
from inspector_app.hq.ratelimit import RateLimiter
from inspector_app.hq.tables import rate_events, staff, staff_sessions

LOGIN_FAILURES, ADDRESS_FAILURES = "console_login", "console_addr"
PRE_COOKIE = "hq_console_pre"
CSRF_FIELD, CSRF_HEADER = "csrf_token", "x-csrf-token"
_TOUCH_EVERY = dt.timedelta(seconds=15)  # last_seen_at is written at most this often


class LoginRequired(Exception):
    """No valid session: the console redirects to its login page."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


class Forbidden(Exception):
    """A 403 page in Portuguese (wrong role, CSRF refusal)."""

    def __init__(self, message: str, *, title: str = "Acesso negado") -> None:
        super().__init__(message)
        self.message = message
        self.title = title


@dataclass(frozen=True)
class Session:
    token_hash: str
    staff: Staff
    csrf_token: str


def cookie_name(settings: Settings) -> str:
    # The __Host- prefix makes the browser refuse the cookie unless it is Secure, for this
    # host only and path /: no sibling subdomain can plant one.
    return "__Host-hq_console" if settings.console_secure_cookie else "hq_console"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _iso(moment: dt.datetime) -> str:
    return moment.isoformat(timespec="microseconds")


# --- lockout ------------------------------------------------------------------------------


def _limiters(state: HQState) -> tuple[RateLimiter, RateLimiter]:
    s = state.settings
    window = s.console_lockout_minutes * 60.0
    return (RateLimiter(state.engine, LOGIN_FAILURES, s.console_lockout_failures, window),
            RateLimiter(state.engine, ADDRESS_FAILURES, s.console_lockout_ip_failures, window))


def _login_key(login: str) -> str:
    return "login:" + hash_secret(login.strip().lower())[:48]


def locked_for(state: HQState, login: str, address: str) -> float:
    """Seconds until ``login`` from ``address`` may try again (0: now)."""
    by_login, by_address = _limiters(state)
    return max(by_login.blocked_for(_login_key(login)), by_address.blocked_for(address))


def count_failure(state: HQState, login: str, address: str) -> None:
    by_login, by_address = _limiters(state)
    by_login.hit(_login_key(login))
    by_address.hit(address)


def clear_failures(engine: Engine, login: str) -> None:
    with engine.begin() as conn:
        conn.execute(delete(rate_events).where(rate_events.c.bucket == LOGIN_FAILURES,
                                               rate_events.c.address == _login_key(login)))


# --- sessions -----------------------------------------------------------------------------


def open_session(state: HQState, who: Staff, address: str) -> tuple[str, Session]:
    """A new session for ``who``: (cookie token, session)."""
    token = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    now = _now()
    expires = now + dt.timedelta(hours=state.settings.console_session_hours)
    with state.engine.begin() as conn:
        conn.execute(insert(staff_sessions).values(
            token_hash=hash_secret(token), staff_id=who.id, csrf_token=csrf,
            created_at=_iso(now), last_seen_at=_iso(now), expires_at=_iso(expires),
            address=address[:64]))
        # Sessions long expired are of no use to anyone.
        conn.execute(delete(staff_sessions).where(
            staff_sessions.c.expires_at < _iso(now - dt.timedelta(days=30))))
    return token, Session(hash_secret(token), who, csrf)


def end_session(engine: Engine, token_hash: str) -> None:
    with engine.begin() as conn:
        conn.execute(update(staff_sessions).where(staff_sessions.c.token_hash == token_hash,
                                                  staff_sessions.c.ended_at.is_(None))
                     .values(ended_at=_iso(_now())))


def session_of(request: Request) -> Session | None:
    """The request's live session (touched: its idle clock restarts), or None."""
    state = get_state(request)
    token = request.cookies.get(cookie_name(state.settings))
    if not token or len(token) > 128:
        return None
    cached = request.scope.get("inspector.console_session")
    if isinstance(cached, Session):
        return cached
    token_hash = hash_secret(token)
    now = _now()
    idle_since = now - dt.timedelta(minutes=state.settings.console_idle_minutes)
    with state.engine.begin() as conn:
        row = conn.execute(
            select(staff_sessions.c.csrf_token, staff_sessions.c.last_seen_at,
                   staff_sessions.c.expires_at, staff_sessions.c.ended_at,
                   staff.c.id, staff.c.login, staff.c.name, staff.c.role, staff.c.disabled_at)
            .join(staff, staff.c.id == staff_sessions.c.staff_id)
            .where(staff_sessions.c.token_hash == token_hash)).first()
        if row is None or row.ended_at is not None or row.disabled_at is not None:
            return None
        last_seen = dt.datetime.fromisoformat(row.last_seen_at)
        if last_seen < idle_since or row.expires_at <= _iso(now):
            conn.execute(update(staff_sessions).where(staff_sessions.c.token_hash == token_hash)
                         .values(ended_at=_iso(now)))
            return None
        if now - last_seen > _TOUCH_EVERY:
            conn.execute(update(staff_sessions).where(staff_sessions.c.token_hash == token_hash)
                         .values(last_seen_at=_iso(now)))
    session = Session(token_hash, Staff(id=int(row.id), login=row.login, name=row.name,
                                        role=row.role), row.csrf_token)
    request.scope["inspector.console_session"] = session
    return session


# --- CSRF ---------------------------------------------------------------------------------


async def submitted_csrf(request: Request) -> str:
    header = request.headers.get(CSRF_HEADER)
    if header:
        return header
    content_type = request.headers.get("content-type", "")
    if content_type.startswith(("application/x-www-form-urlencoded", "multipart/form-data")):
        form = await request.form()
        value = form.get(CSRF_FIELD)
        return value if isinstance(value, str) else ""
    return ""


def same_token(given: str, expected: str) -> bool:
    return bool(given) and hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


CSRF_REFUSED = ("O formulário expirou ou não veio desta página (verificação de segurança "
                "CSRF). Volte, recarregue a página e tente de novo.")


# --- the dependency -----------------------------------------------------------------------


def require_staff(*roles: str) -> Callable[[Request], Awaitable[Staff]]:
    """A FastAPI dependency: the logged-in staff member (any role when ``roles`` is empty).
    No session → redirect to the login page; another role → 403 page; a POST without the
    session's CSRF token → 403 page."""
    allowed = frozenset(roles)

    async def dependency(request: Request) -> Staff:
        from starlette.concurrency import run_in_threadpool

        session = await run_in_threadpool(session_of, request)
        if session is None:
            raise LoginRequired()
        if request.method not in ("GET", "HEAD", "OPTIONS") and not same_token(
                await submitted_csrf(request), session.csrf_token):
            raise Forbidden(CSRF_REFUSED, title="Formulário recusado")
        if allowed and session.staff.role not in allowed:
            raise Forbidden("Seu perfil não tem acesso a esta página. Fale com um "
                            "administrador se precisar deste acesso.")
        return session.staff

    return dependency


def address_of(request: Request) -> str:
    return client_address(request)
