"""HQ's HTTP layer against a hostile client (issue 14, findings 4 and 14): bodies refused
before they are read, size caps, slow heads and bodies cut off, uploads at once bounded,
security headers, API docs off, no version on /health.

A real HQ (uvicorn on loopback, the options ``inspector-hq serve`` uses) on SQLite and
PostgreSQL, with short timeouts so the slow-client tests take seconds; raw sockets send what
no HTTP library would (a head that never ends, a body that stalls).
"""

from __future__ import annotations

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest
from hqkit import BACKENDS, RunningHQ, SimDevice, running_hq

from inspector_app.sync.protocol import API_PREFIX, bundle_part_header

JSON_CAP = 64 * 1024
BUNDLE_CAP = 1024 * 1024
HEADER_TIMEOUT = 1.0
BODY_IDLE = 1.0
BODY_TOTAL = 3.0
PER_DEVICE = 2
# How long an answer that needs no body may take (a loaded 2-core machine).
PROMPT = 3.0


@pytest.fixture(scope="module", params=BACKENDS)
def tight_hq(request, tmp_path_factory) -> Iterator[RunningHQ]:
    with running_hq(request.param, tmp_path_factory.mktemp(f"hq-limits-{request.param}"),
                    max_json_bytes=JSON_CAP, max_bundle_bytes=BUNDLE_CAP,
                    header_timeout=HEADER_TIMEOUT, body_idle_timeout=BODY_IDLE,
                    body_total_timeout=BODY_TOTAL, max_uploads_per_device=PER_DEVICE) as hq:
        yield hq


@pytest.fixture
def hq(tight_hq: RunningHQ) -> RunningHQ:
    tight_hq.reset()
    return tight_hq


@pytest.fixture
def device(hq: RunningHQ) -> SimDevice:
    return SimDevice(hq).enrol()


@contextlib.contextmanager
def raw(hq: RunningHQ, timeout: float = 10.0) -> Iterator[socket.socket]:
    sock = socket.create_connection(("127.0.0.1", hq.port), timeout=timeout)
    try:
        yield sock
    finally:
        sock.close()


def head(method: str, path: str, *headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *headers, "", ""]
    return "\r\n".join(lines).encode("ascii")


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and whatever body arrived until the server closed or sent it all."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed without an answer: {data!r}")
        data += chunk
    top, _, body = data.partition(b"\r\n\r\n")
    lines = top.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """True when the server closes the connection (EOF or reset) within ``within`` s."""
    sock.settimeout(within)
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


# --- authenticate before reading the body; caps -----------------------------------------------


@pytest.mark.parametrize("auth", [None, "Authorization: Bearer not-a-token"])
def test_a_push_without_a_valid_token_is_refused_before_its_body_is_sent(hq, auth):
    """32 MiB announced, not a byte of it sent: before the fix HQ waited for the body
    (to parse it, then answer 401); now the answer comes from the headers alone."""
    with raw(hq, timeout=PROMPT) as sock:
        sock.sendall(head("POST", f"{API_PREFIX}/push", "Content-Type: application/json",
                          "Content-Length: 33554432", *([auth] if auth else [])))
        started = time.monotonic()
        status, headers, body = read_answer(sock)
        assert status == 401, body
        assert time.monotonic() - started < PROMPT
        assert headers["www-authenticate"] == "Bearer"
        assert headers["connection"] == "close"
        assert "Token de dispositivo" in body.decode("utf-8")
        assert closed_by_server(sock, PROMPT)


def test_a_revoked_device_is_refused_403_before_its_body(hq, device):
    from inspector_app.hq.devices import revoke_device

    revoke_device(hq.engine, device.device_id)
    with raw(hq, timeout=PROMPT) as sock:
        sock.sendall(head("POST", f"{API_PREFIX}/push", f"Authorization: Bearer {device.token}",
                          "Content-Length: 1000000"))
        status, _, body = read_answer(sock)
    assert status == 403 and "revogado" in body.decode("utf-8")


@pytest.mark.parametrize(("path", "method", "limit"), [
    (f"{API_PREFIX}/push", "POST", "64 KiB"),
    (f"{API_PREFIX}/blobs/missing", "POST", "64 KiB"),
    (f"{API_PREFIX}/blobs/bundle", "POST", "1 MiB"),
    (f"{API_PREFIX}/enrol", "POST", "64 KiB"),
])
def test_a_5_gb_content_length_is_answered_413_at_once_naming_the_limit(hq, device, path,
                                                                         method, limit):
    with raw(hq, timeout=PROMPT) as sock:
        sock.sendall(head(method, path, f"Authorization: Bearer {device.token}",
                          "Content-Type: application/json", "Content-Length: 5000000000"))
        status, headers, body = read_answer(sock)
        assert status == 413, body
        assert limit in body.decode("utf-8") and "limite" in body.decode("utf-8")
        assert headers["connection"] == "close"
        assert closed_by_server(sock, PROMPT)


def test_a_chunked_body_over_the_cap_is_cut_off_with_413(hq, device):
    """No Content-Length to refuse up front: the body is counted as it arrives."""
    chunk = b"x" * 16384
    with raw(hq) as sock:
        sock.sendall(head("POST", f"{API_PREFIX}/push", f"Authorization: Bearer {device.token}",
                          "Content-Type: application/json", "Transfer-Encoding: chunked"))
        with contextlib.suppress(ConnectionError, BrokenPipeError):
            for _ in range(JSON_CAP // len(chunk) + 2):
                sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        status, _, body = read_answer(sock)
    assert status == 413 and "64 KiB" in body.decode("utf-8")


def test_a_push_under_the_cap_still_goes_through(hq, device):
    assert device.push_one(device.record())["status"] == "accepted"


# --- slow clients -----------------------------------------------------------------------------


def test_a_head_that_trickles_is_closed_after_the_header_timeout(hq):
    """Slowloris: one header byte at a time keeps uvicorn's keep-alive timer from firing;
    the head deadline closes the connection anyway."""
    with raw(hq) as sock:
        sock.sendall(b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        closed = False
        sock.settimeout(0.2)
        while time.monotonic() - started < HEADER_TIMEOUT + PROMPT:
            try:
                sock.sendall(b"a")
                if sock.recv(1) == b"":
                    closed = True
                    break
            except TimeoutError:
                continue
            except (ConnectionResetError, BrokenPipeError):
                closed = True
                break
        assert closed, "a trickling head was held open"
        assert time.monotonic() - started >= HEADER_TIMEOUT * 0.9


def test_an_idle_keep_alive_connection_after_an_answer_is_closed(hq):
    with raw(hq) as sock:
        sock.sendall(head("GET", f"{API_PREFIX}/health"))
        assert read_answer(sock)[0] == 200
        assert closed_by_server(sock, HEADER_TIMEOUT + PROMPT)


def test_a_stalled_authenticated_bundle_is_answered_408_and_closed(hq, device):
    """Before the fix such a bundle held its files in memory for as long as the client kept
    the connection (10 stalled bundles: ~167 MiB, indefinitely)."""
    data = b"photo" * 1000
    from inspector_app.security.records import sha256_hex

    part = bundle_part_header(sha256_hex(data), len(data)) + data
    with raw(hq) as sock:
        sock.sendall(head("POST", f"{API_PREFIX}/blobs/bundle",
                          f"Authorization: Bearer {device.token}",
                          "Content-Type: application/x-inspector-bundle",
                          f"Content-Length: {len(part) + 100_000}"))
        sock.sendall(part)  # one whole file, then silence
        started = time.monotonic()
        status, _, body = read_answer(sock)
        assert status == 408, body
        assert BODY_IDLE * 0.9 <= time.monotonic() - started < BODY_IDLE + PROMPT
        assert "lento" in body.decode("utf-8")
        assert closed_by_server(sock, PROMPT)
    # the whole file that came before the stall is kept (the device does not resend it)
    assert hq.blobs.has(sha256_hex(data))


def test_a_body_that_trickles_forever_is_cut_at_the_total_timeout(hq, device):
    with raw(hq) as sock:
        sock.sendall(head("POST", f"{API_PREFIX}/push", f"Authorization: Bearer {device.token}",
                          "Content-Type: application/json", "Content-Length: 60000"))
        started = time.monotonic()
        answer = None
        sock.settimeout(BODY_IDLE / 3)
        while time.monotonic() - started < BODY_TOTAL + PROMPT:
            try:
                sock.sendall(b" ")
                answer = sock.recv(65536)
                break
            except TimeoutError:
                continue
        assert answer is not None and answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - started >= BODY_TOTAL * 0.9


def test_uploads_at_once_per_device_are_bounded(hq, device):
    """A stolen credential cannot open body after body: the third concurrent one is 503."""
    socks = []
    try:
        for _ in range(PER_DEVICE):
            sock = socket.create_connection(("127.0.0.1", hq.port), timeout=PROMPT)
            sock.sendall(head("POST", f"{API_PREFIX}/blobs/bundle",
                              f"Authorization: Bearer {device.token}",
                              f"Content-Length: {BUNDLE_CAP}"))
            socks.append(sock)
        time.sleep(0.3)  # both are being read now
        with raw(hq, timeout=PROMPT) as sock:
            sock.sendall(head("POST", f"{API_PREFIX}/blobs/missing",
                              f"Authorization: Bearer {device.token}",
                              "Content-Type: application/json", "Content-Length: 2"))
            status, headers, _ = read_answer(sock)
        assert status == 503 and headers["retry-after"] == "5"
        other = SimDevice(hq).enrol()
        assert other.push_one(other.record())["status"] == "accepted"
    finally:
        for sock in socks:
            sock.close()
    time.sleep(0.3)
    with device.client() as client:
        assert client.post(f"{API_PREFIX}/blobs/missing",
                           json={"sha256": ["0" * 64]}).status_code == 200


# --- public pages (finding 14) ----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/verify/ABCD-EFGH", f"{API_PREFIX}/verify/ABCD-EFGH",
                                  f"{API_PREFIX}/health", f"{API_PREFIX}/push"])
def test_every_answer_carries_the_security_headers(hq, path):
    with hq.client() as client:
        response = client.get(path)
    headers = response.headers
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert headers["referrer-policy"] == "no-referrer"
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src" not in csp and "unsafe-inline" not in csp
    if path.startswith("/verify/"):
        assert "style-src 'sha256-" in csp  # the page's own style block, nothing else


def test_the_api_docs_and_spec_are_not_served_by_default(hq):
    with hq.client() as client:
        for path in (f"{API_PREFIX}/docs", f"{API_PREFIX}/openapi.json", "/docs", "/redoc"):
            assert client.get(path).status_code in (401, 404), path


def test_health_does_not_tell_the_version(hq):
    with hq.client() as client:
        body = client.get(f"{API_PREFIX}/health").json()
    assert body == {"status": "ok", "database": "ok"}
