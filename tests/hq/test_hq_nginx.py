"""The sample proxy configuration (deploy/nginx/inspector-hq.conf) in a real nginx on
loopback, in front of two HQ instances sharing one database: TLS, balancing and failover,
HQ's body limit enforced at the proxy, a client's own X-Forwarded-For dropped.

Only the addresses, ports and certificate paths of the file are replaced; skipped when
nginx is not installed (.ci/run installs it)."""

from __future__ import annotations

import contextlib
import datetime as dt
import http.server
import json
import shutil
import socket
import ssl
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from hqkit import RunningHQ, SimDevice, free_port, running_hq

from inspector_app.sync.protocol import API_PREFIX

CONF = Path(__file__).parents[2] / "deploy" / "nginx" / "inspector-hq.conf"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"

pytestmark = pytest.mark.skipif(not Path(NGINX).exists(),
                                reason="nginx is not installed (apt-get install nginx)")


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (cert, key)."""
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hq.test")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "fullchain.pem", folder / "privkey.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


class Nginx:
    def __init__(self, folder: Path, upstreams: tuple[int, int]) -> None:
        self.folder = folder
        self.https_port, self.http_port = free_port(), free_port()
        self.cert, key = _certificate(folder)
        site = CONF.read_text()
        for old, new in (("127.0.0.1:8081", f"127.0.0.1:{upstreams[0]}"),
                         ("127.0.0.1:8082", f"127.0.0.1:{upstreams[1]}"),
                         ("listen 443 ssl", f"listen 127.0.0.1:{self.https_port} ssl"),
                         ("listen 80;", f"listen 127.0.0.1:{self.http_port};"),
                         ("/etc/ssl/inspector-hq/fullchain.pem", str(self.cert)),
                         ("/etc/ssl/inspector-hq/privkey.pem", str(key))):
            assert old in site, f"{old!r} no longer in {CONF.name}"
            site = site.replace(old, new)
        (folder / "site.conf").write_text(site)
        (folder / "nginx.conf").write_text(f"""
worker_processes 1;
pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {folder}/access.log;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
    include {folder}/site.conf;
}}
""")
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Nginx:
        check = subprocess.run([NGINX, "-t", "-p", str(self.folder), "-c",
                                str(self.folder / "nginx.conf")], capture_output=True, text=True)
        assert check.returncode == 0, check.stderr
        self.process = subprocess.Popen([NGINX, "-p", str(self.folder), "-c",
                                         str(self.folder / "nginx.conf"), "-g", "daemon off;"])
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.https_port), timeout=0.5):
                return self
            assert time.monotonic() < deadline and self.process.poll() is None, \
                (self.folder / "error.log").read_text()
            time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=10)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.https_port}"

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, verify=ssl.create_default_context(
            cafile=str(self.cert)), timeout=10, **kwargs)


@contextlib.contextmanager
def nginx_in_front(folder: Path, ports: tuple[int, int]) -> Iterator[Nginx]:
    proxy = Nginx(folder, ports).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.fixture
def two_instances(tmp_path) -> Iterator[tuple[RunningHQ, RunningHQ]]:
    """Two HQ servers on one database and one blob store (the second shares the first's
    settings)."""
    with running_hq("postgresql", tmp_path / "hq") as first:
        second = RunningHQ(first.settings, first.backend).start()
        try:
            yield first, second
        finally:
            with contextlib.suppress(Exception):
                second.stop()


def test_devices_sync_through_nginx_and_tls_across_two_instances_one_stopped(tmp_path,
                                                                             two_instances):
    first, second = two_instances
    with nginx_in_front(tmp_path, (first.port, second.port)) as proxy:
        with httpx.Client(timeout=5) as plain:
            redirect = plain.get(f"http://127.0.0.1:{proxy.http_port}{API_PREFIX}/health")
        assert redirect.status_code == 301 and redirect.headers["location"].startswith("https://")

        device = SimDevice(first).enrol()
        auth = {"Authorization": f"Bearer {device.token}"}
        with proxy.client() as client:
            served = [first.server.server_state.total_requests,
                      second.server.server_state.total_requests]
            for _ in range(10):
                assert client.get(f"{API_PREFIX}/health").status_code == 200
            records = [device.record().model_dump() for _ in range(6)]
            for record in records[:3]:
                pushed = client.post(f"{API_PREFIX}/push", json={"records": [record]},
                                     headers=auth)
                assert pushed.json()["results"][0]["status"] == "accepted", pushed.text
            delta = [first.server.server_state.total_requests - served[0],
                     second.server.server_state.total_requests - served[1]]
            assert min(delta) >= 4, f"requests per instance {delta}: not balanced"

            first.server.should_exit = True  # one instance goes away
            first.thread.join(timeout=10)
            for record in records[3:]:
                pushed = client.post(f"{API_PREFIX}/push", json={"records": [record]},
                                     headers=auth)
                assert pushed.status_code == 200, pushed.text
                assert pushed.json()["results"][0]["status"] == "accepted"
    assert second.scalar("SELECT COUNT(*) FROM records") == 6


def _raw_request(port: int, cafile: Path, request: bytes) -> bytes:
    context = ssl.create_default_context(cafile=str(cafile))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw, \
            context.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
        tls.sendall(request)
        answer = b""
        with contextlib.suppress(TimeoutError, ssl.SSLError, ConnectionError):
            while chunk := tls.recv(65536):
                answer += chunk
    return answer


def test_a_body_over_hqs_limit_is_413_at_the_proxy_without_reaching_hq(tmp_path,
                                                                     two_instances):
    first, second = two_instances
    before = first.server.server_state.total_requests + second.server.server_state.total_requests
    with nginx_in_front(tmp_path, (first.port, second.port)) as proxy:
        limit = first.settings.max_bundle_bytes
        answer = _raw_request(proxy.https_port, proxy.cert, (
            f"POST {API_PREFIX}/blobs/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Content-Length: {limit + 1}\r\nConnection: close\r\n\r\n").encode())
    assert answer.startswith(b"HTTP/1.1 413")
    after = first.server.server_state.total_requests + second.server.server_state.total_requests
    assert after == before


class _Echo(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({k.lower(): v for k, v in self.headers.items()}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def test_a_clients_own_x_forwarded_for_is_replaced_by_the_address_nginx_saw(tmp_path):
    echo = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    threading.Thread(target=echo.serve_forever, daemon=True).start()
    port = echo.server_address[1]
    try:
        with nginx_in_front(tmp_path, (port, port)) as proxy, proxy.client() as client:
            seen = client.get("/anything", headers={"X-Forwarded-For": "6.6.6.6"}).json()
    finally:
        echo.shutdown()
    assert seen["x-forwarded-for"] == "127.0.0.1"
    assert seen["x-forwarded-proto"] == "https"
