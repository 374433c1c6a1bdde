"""The HTTP guard in front of every HQ route (pure ASGI), and the uvicorn settings HQ runs
with. What a hostile client cannot do any more (issue 14, findings 4 and 14):

* make HQ read a body before the device is known: every ``/api/v1`` route except health,
  enrolment and verification checks the bearer token from the headers first (401/403,
  ``Connection: close``, the body never read);
* send a body larger than the route takes: a declared ``Content-Length`` above the cap is
  answered 413 at once, naming the limit; a chunked body is counted as it arrives;
* hold a request open: a head must be complete within ``header_timeout`` (the protocol
  class below), a body must not pause longer than ``body_idle_timeout`` nor last longer than
  ``body_total_timeout`` (408); every open connection counts against ``limit_concurrency``;
* read many bodies at once: at most ``max_concurrent_uploads`` device bodies in all and
  ``max_uploads_per_device`` per device are read at a time (503 with Retry-After);
* frame the public pages or sniff their type: every answer carries a Content-Security-Policy,
  ``X-Frame-Options: DENY``, ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy``.

The client address the rate limits count is the peer's, or – only when the peer is one of
``trusted_proxies`` – the last address of ``X-Forwarded-For`` that is not a trusted proxy.
uvicorn's own proxy-header handling is switched off (it trusts 127.0.0.1 by default).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread
import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from inspector_app.hq.core.config import Settings, limits_from_env
from inspector_app.sync.protocol import API_PREFIX

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

DEVICE_SCOPE_KEY = "inspector.device"
CLIENT_SCOPE_KEY = "inspector.client"
MAX_HEAD_BYTES = 16 * 1024  # request line and headers (h11's incomplete-event cap)
MAX_PUBLIC_BODY = 64 * 1024  # a body anyone may send (enrolment)
# A defence or an appeal registered in the console with its attachments (hq/process.py):
# at most 5 files of 10 MiB each, in one form.
MAX_PROCESS_FORM = 52 * 1024 * 1024
PROCESS_FORMS = ("/console/processos/",)

# Routes under /api/v1 that anyone may call; every other one needs a device token.
_PUBLIC_API = ("/health", "/enrol", "/openapi.json", "/docs", "/docs/oauth2-redirect")

# --- what the console's Painel and Administração forms accept (issue 15) -------------------
# A registry file uploaded in the console (the device's own JSON import takes 16 MiB).
MAX_REGISTRY_UPLOAD = 16 * 1024 * 1024
CONSOLE_UPLOAD_PATHS = ("/console/admin/registro",)
# A reason typed by a supervisor or administrator (duplicate resolution, revocation).
MIN_REASON_CHARS, MAX_REASON_CHARS = 10, 2000
# Row errors of one registry import kept for the download (the page shows the first 200).
MAX_IMPORT_PROBLEMS_KEPT, IMPORT_PROBLEMS_SHOWN = 10_000, 200
# Dated parameters: a value may take effect at most this many days ahead (an act
# scheduling next year's tariff), never before 1988; a legal act is dated in the past.
PARAMETER_DAYS_AHEAD = 400
EARLIEST_LEGAL_YEAR = 1988
MAX_MONEY = 10**9
# Number ranges allocated in the console, and enrolment codes made there.
MAX_RANGE_SIZE = 1_000_000
MAX_CODE_TTL_MINUTES = 7 * 24 * 60
# Rows a Painel or Administração list shows per page.
CONSOLE_PAGE = 50

SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
# The verify page's only style is its inline <style> block, allowed by its hash.
_CSP_BASE = ("default-src 'none'; img-src 'self' data:; base-uri 'none'; form-action 'none'; "
             "frame-ancestors 'none'")


def content_security_policy(style_hashes: tuple[str, ...] = ()) -> bytes:
    styles = " ".join(f"'sha256-{h}'" for h in style_hashes)
    return (f"{_CSP_BASE}; style-src {styles}" if styles else _CSP_BASE).encode("ascii")


def _size(n: int) -> str:
    if n >= 1024 * 1024 and n % (1024 * 1024) == 0:
        return f"{n // (1024 * 1024)} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    return f"{n} bytes"


class DatabaseUnavailable(Exception):
    """Raised by ``lookup_device`` when the database cannot be reached: answered 503."""


class _Refusal(Exception):
    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None):
        super().__init__(detail)
        self.status, self.detail, self.headers = status, detail, headers or {}


class RequestGuard:
    """ASGI middleware: see the module docstring. ``lookup_device(token)`` returns the
    device (with ``.id`` and ``.revoked``) or None; it runs in a worker thread."""

    def __init__(self, app: ASGIApp, settings: Settings,
                 lookup_device: Callable[[str], Any], *,
                 style_hashes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.settings = settings
        self.lookup_device = lookup_device
        self.proxies = [ipaddress.ip_network(p, strict=False) for p in settings.trusted_proxies]
        self.csp = content_security_policy(style_hashes)
        self.uploads = 0
        self.uploads_by_device: Counter[str] = Counter()

    # --- where the request comes from -----------------------------------------------------

    def _trusted(self, address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(ip in net for net in self.proxies)

    def client_address(self, scope: Scope) -> str:
        peer = scope.get("client")
        address = str(peer[0]) if peer else "unknown"
        if not self.proxies or not self._trusted(address):
            return address
        forwarded: list[str] = []
        for name, value in scope.get("headers", ()):
            if name == b"x-forwarded-for":
                forwarded += [p.strip() for p in value.decode("latin-1").split(",")]
        for hop in reversed(forwarded):
            if not hop:
                continue
            if not self._trusted(hop):
                try:
                    return str(ipaddress.ip_address(hop))
                except ValueError:
                    return address  # garbage from the proxy's client: count the proxy
            address = hop
        return address

    # --- the request ------------------------------------------------------------------------

    def _cap(self, method: str, path: str) -> tuple[int, str]:
        if method == "PUT" and path.startswith(f"{API_PREFIX}/blobs/"):
            return self.settings.max_blob_bytes, "arquivo"
        if path == f"{API_PREFIX}/blobs/bundle":
            return self.settings.max_bundle_bytes, "pacote de arquivos"
        if method == "POST" and path in CONSOLE_UPLOAD_PATHS:  # the file and its form fields
            return MAX_REGISTRY_UPLOAD + MAX_PUBLIC_BODY, "arquivo enviado"
        if method == "POST" and path.startswith(PROCESS_FORMS):
            return MAX_PROCESS_FORM, "formulário com anexos"
        if not self._needs_device(path):  # enrolment: a code and a key, well under 1 KiB
            return min(self.settings.max_json_bytes, MAX_PUBLIC_BODY), "corpo da requisição"
        return self.settings.max_json_bytes, "corpo da requisição"

    @staticmethod
    def _needs_device(path: str) -> bool:
        if not path.startswith(API_PREFIX + "/"):
            return False
        rest = path[len(API_PREFIX):]
        return rest not in _PUBLIC_API and not rest.startswith("/verify/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        client = self.client_address(scope)
        scope[CLIENT_SCOPE_KEY] = client
        if scope.get("client"):
            scope["client"] = (client, scope["client"][1])
        headers = {k: v for k, v in scope.get("headers", ())}
        method, path = scope["method"], scope["path"]
        has_body = (b"transfer-encoding" in headers
                    or headers.get(b"content-length", b"0").strip() not in (b"", b"0"))
        cycle = _Cycle(send, self)
        try:
            device = None
            if self._needs_device(path):
                device = await self._authenticate(headers.get(b"authorization", b""))
                scope[DEVICE_SCOPE_KEY] = device
            cap, what = self._cap(method, path)
            declared = headers.get(b"content-length")
            if declared is not None:
                if not declared.strip().isdigit():
                    raise _Refusal(400, "Content-Length inválido.")
                if int(declared) > cap:
                    raise _Refusal(413, f"O {what} excede o limite da sede ({_size(cap)}).")
            # Only a device's bodies take upload slots: anonymous ones (enrolment) are small
            # and cannot crowd the devices out of them.
            slot = self._take_slot(device) if has_body and device is not None else None
        except _Refusal as refusal:
            await cycle.refuse(refusal, close=has_body)
            return
        try:
            await self.app(scope, cycle.receiver(receive, cap, what), cycle.send)
        except Exception:
            if cycle.abort is None:
                raise
        finally:
            if slot is not None:
                self._give_slot(slot)
        if cycle.abort is not None and not cycle.started:
            await cycle.refuse(cycle.abort, close=True)

    async def _authenticate(self, authorization: bytes) -> Any:
        scheme, _, token = authorization.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _Refusal(401, "Token de dispositivo ausente ou inválido.",
                           {"WWW-Authenticate": "Bearer"})
        try:
            device = await anyio.to_thread.run_sync(self.lookup_device, token.strip())
        except DatabaseUnavailable:
            raise _Refusal(503, "Banco de dados da sede indisponível; tente de novo.",
                           {"Retry-After": "5"}) from None
        if device is None:
            raise _Refusal(401, "Token de dispositivo ausente ou inválido.",
                           {"WWW-Authenticate": "Bearer"})
        if device.revoked:
            raise _Refusal(403, "Dispositivo revogado pela sede.")
        return device

    def _take_slot(self, device: Any) -> str:
        key = str(device.id)
        busy = _Refusal(503, "A sede está recebendo muitos envios agora; tente de novo.",
                        {"Retry-After": "5"})
        if self.uploads >= self.settings.max_concurrent_uploads:
            raise busy
        if self.uploads_by_device[key] >= self.settings.max_uploads_per_device:
            raise busy
        self.uploads += 1
        self.uploads_by_device[key] += 1
        return key

    def _give_slot(self, key: str) -> None:
        self.uploads -= 1
        self.uploads_by_device[key] -= 1
        if self.uploads_by_device[key] <= 0:
            del self.uploads_by_device[key]


class _Cycle:
    """One request's send and receive as the guard sees them."""

    def __init__(self, send: Send, guard: RequestGuard) -> None:
        self._send = send
        self.guard = guard
        self.started = False
        self.abort: _Refusal | None = None

    def _headers(self, headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
        present = {k.lower() for k, _ in headers}
        extra = [(k, v) for k, v in SECURITY_HEADERS if k not in present]
        if b"content-security-policy" not in present:
            extra.append((b"content-security-policy", self.guard.csp))
        return [*headers, *extra]

    async def send(self, message: Message) -> None:
        if self.abort is not None and not self.started:
            return  # the app's answer to a body we cut off; ours replaces it
        if message["type"] == "http.response.start":
            self.started = True
            message["headers"] = self._headers(list(message.get("headers", [])))
        await self._send(message)

    async def refuse(self, refusal: _Refusal, *, close: bool) -> None:
        body = json.dumps({"detail": refusal.detail}, ensure_ascii=False).encode("utf-8")
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(body)).encode("ascii"))]
        headers += [(k.lower().encode("latin-1"), v.encode("latin-1"))
                    for k, v in refusal.headers.items()]
        if close:  # an unread body must not keep the connection (h11 then closes it)
            headers.append((b"connection", b"close"))
        self.started = True
        await self._send({"type": "http.response.start", "status": refusal.status,
                          "headers": self._headers(headers)})
        await self._send({"type": "http.response.body", "body": body})

    def receiver(self, receive: Receive, cap: int, what: str) -> Receive:
        settings = self.guard.settings
        deadline = time.monotonic() + settings.body_total_timeout
        received = 0

        async def guarded() -> Message:
            nonlocal received
            if self.abort is not None:
                return {"type": "http.disconnect"}
            wait = min(settings.body_idle_timeout, deadline - time.monotonic())
            try:
                message = await asyncio.wait_for(receive(), timeout=max(wait, 0.001))
            except TimeoutError:
                self.abort = _Refusal(408, "Envio lento demais: a sede encerrou a conexão.")
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap:
                    self.abort = _Refusal(413, f"O {what} excede o limite da sede ({_size(cap)}).")
                    return {"type": "http.disconnect"}
            return message

        return guarded


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on the request head: a connection that has not
    sent a whole request line and headers ``header_timeout`` seconds after it opened (or
    after its previous answer) is closed – 300 connections trickling one byte a second are
    gone after that, instead of being held as long as they trickle."""

    # ``inspector-hq serve --workers N`` hands uvicorn this class by name: the value comes
    # from HQ_HEADER_TIMEOUT; one process serving a Settings object gets a subclass.
    header_timeout: float = float(str(limits_from_env().get("header_timeout", 10.0)))

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        handle = getattr(self, "_head_deadline", None)
        if handle is not None:
            handle.cancel()
        super().connection_lost(exc)

    def _arm_head_deadline(self) -> None:
        old = getattr(self, "_head_deadline", None)
        if old is not None:
            old.cancel()
        waiting_for = self.cycle
        self._head_deadline: asyncio.TimerHandle | None = self.loop.call_later(
            self.header_timeout, self._head_overdue, waiting_for)

    def _head_overdue(self, waiting_for: object) -> None:
        self._head_deadline = None
        if self.cycle is not waiting_for or self.transport.is_closing():
            return  # a request head arrived since
        if self.conn.our_state is h11.IDLE or self.conn.our_state is h11.DONE:
            self._unset_keepalive_if_required()
            self.transport.close()


def protocol_for(settings: Settings) -> type[GuardedH11Protocol]:
    return type("HQH11Protocol", (GuardedH11Protocol,),
                {"header_timeout": settings.header_timeout, "__module__": __name__})


def server_options(settings: Settings, *, by_name: bool = False) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.Config`` / ``uvicorn.run`` that enforce the limits:
    what ``inspector-hq serve`` and the tests' HQ (tests/hqkit.py) both run with.
    ``by_name``: the protocol named by its import path (worker processes import it; the
    head deadline then comes from HQ_HEADER_TIMEOUT)."""
    http: str | type[GuardedH11Protocol]
    if by_name:
        http = f"{__name__}:GuardedH11Protocol"
    elif settings.header_timeout == GuardedH11Protocol.header_timeout:
        http = GuardedH11Protocol
    else:
        http = protocol_for(settings)
    return {
        "http": http,
        "proxy_headers": False,  # RequestGuard reads X-Forwarded-For from trusted proxies only
        "timeout_keep_alive": settings.keep_alive_timeout,
        "limit_concurrency": settings.limit_concurrency,
        "h11_max_incomplete_event_size": MAX_HEAD_BYTES,
        "server_header": False,
    }
