"""Login, logout and the console's landing page."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import RedirectResponse, Response

from inspector_app.hq.api.deps import StateDep, client_address
from inspector_app.hq.console import audit
from inspector_app.hq.console.auth import (
    PRE_COOKIE,
    clear_failures,
    cookie_name,
    count_failure,
    end_session,
    locked_for,
    open_session,
    require_staff,
    same_token,
    session_of,
)
from inspector_app.hq.console.staff import Staff, check_password
from inspector_app.hq.console.templating import page_headers, render

router = APIRouter(prefix="/console", include_in_schema=False)
LANDING = "/console/autos"
PREFERRED_LANDING = "/console/painel"  # once the Painel area is installed


def landing_path(request: Request) -> str:
    """The page after login: the Painel when that area is installed, else Autos."""
    paths = {getattr(route, "path", None) for route in request.app.routes}
    return PREFERRED_LANDING if PREFERRED_LANDING in paths else LANDING


def _safe_next(target: str | None, request: Request) -> str:
    """Only a console path of this site (no scheme, no //host): else the landing page."""
    if target and target.startswith("/console/") and not target.startswith("//") \
            and "\\" not in target and "\n" not in target and "\r" not in target:
        return target
    return landing_path(request)


@router.get("")
@router.get("/")
def landing(request: Request) -> RedirectResponse:
    return RedirectResponse(landing_path(request), status_code=303)


def _login_page(request: Request, state: StateDep, *, error: str = "", login: str = "",
                next_path: str = "", status_code: int = 200) -> Response:
    pre = secrets.token_urlsafe(24)
    response = render(request, "login.html", {"error": error, "login": login,
                                              "next": next_path, "pre_token": pre},
                      status_code=status_code)
    response.set_cookie(PRE_COOKIE, pre, httponly=True, samesite="strict",
                        secure=state.settings.console_secure_cookie, path="/console")
    return response


@router.get("/login")
def login_form(request: Request, state: StateDep, next: str = "") -> Response:
    if session_of(request) is not None:
        return RedirectResponse(_safe_next(next, request), status_code=303)
    return _login_page(request, state, next_path=_safe_next(next, request) if next else "")


@router.post("/login")
def login(request: Request, state: StateDep,
          login: Annotated[str, Form(max_length=200)] = "",
          password: Annotated[str, Form(max_length=1024)] = "",
          csrf_token: Annotated[str, Form(max_length=200)] = "",
          next: Annotated[str, Form(max_length=2000)] = "") -> Response:
    address = client_address(request)
    if not same_token(csrf_token, request.cookies.get(PRE_COOKIE, "")):
        return _login_page(request, state, login=login, next_path=next, status_code=403,
                           error="A página de entrada expirou. Digite usuário e senha de novo.")
    wait = locked_for(state, login, address)
    if wait > 0:
        minutes = max(1, round(wait / 60))
        return _login_page(request, state, login=login, next_path=next, status_code=429,
                           error=f"Muitas tentativas sem sucesso. Por segurança, a entrada "
                           f"está bloqueada; tente de novo em {minutes} minuto(s).")
    with state.engine.connect() as conn:
        who = check_password(conn, login, password)
    if who is None:
        count_failure(state, login, address)
        with state.engine.begin() as conn:
            audit.record(conn, None, "login_failed", None, {}, request, login=login.strip())
        return _login_page(request, state, login=login, next_path=next, status_code=401,
                           error="Usuário ou senha incorretos (ou conta desativada).")
    clear_failures(state.engine, login)
    token, _ = open_session(state, who, address)
    with state.engine.begin() as conn:
        audit.record(conn, who, "login", None, {}, request)
    response = RedirectResponse(_safe_next(next, request), status_code=303,
                                headers=page_headers(request))
    response.set_cookie(cookie_name(state.settings), token, httponly=True, samesite="strict",
                        secure=state.settings.console_secure_cookie, path="/",
                        max_age=state.settings.console_session_hours * 3600)
    response.delete_cookie(PRE_COOKIE, path="/console")
    return response


@router.post("/logout")
def logout(request: Request, state: StateDep,
           staff: Annotated[Staff, Depends(require_staff())]) -> Response:
    session = session_of(request)
    if session is not None:
        end_session(state.engine, session.token_hash)
    with state.engine.begin() as conn:
        audit.record(conn, staff, "logout", None, {}, request)
    response = RedirectResponse("/console/login", status_code=303,
                                headers=page_headers(request))
    response.delete_cookie(cookie_name(state.settings), path="/",
                           secure=state.settings.console_secure_cookie, httponly=True,
                           samesite="strict")
    return response
