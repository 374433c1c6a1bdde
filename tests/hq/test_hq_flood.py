"""A bounded flood on loopback (issue 14, Proof): ``inspector-hq serve`` as an administrator
runs it, hit at once by

* 12 clients pushing 16 MiB bodies without a token, again and again (before the fix each was
  read and parsed before the 401: ~1.1 s /health, ~950 MiB of server memory);
* 300 connections trickling their request head one byte at a time (slowloris);
* 10 enrolled devices whose bundle uploads stall after 1 MiB;

while a monitor asks ``/health`` every 20 ms. Passes when ``/health`` answers every time
with p99 under 100 ms (or 3 x the quiet p99 of the same run on a machine so loaded that
the quiet p99 alone exceeds 100 ms: benchmarks here are ratios), the server's resident memory stays under ``RSS_CAP_MIB``, the stalled
bundles are answered 408 within the body idle timeout, and the trickling connections are
closed by the head deadline. Every figure is printed (``pytest -s``) for the report.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from hqkit import TLS, free_port

from inspector_app.security.keys import DeviceKey
from inspector_app.sync.protocol import API_PREFIX

FLOOD_SECONDS = 8.0
BODY_SENDERS, BODY_MIB = 12, 16
SLOW_CONNECTIONS = 300
STALLED_BUNDLES = 10
HEADER_TIMEOUT, BODY_IDLE = 3, 3
P99_MS = 100.0
FORK = multiprocessing.get_context("fork")
RSS_CAP_MIB = 300  # the server idles at ~90 MiB (measured, printed below)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def wait_for_health(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, "HQ exited"
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"{url}{API_PREFIX}/health", timeout=1).status_code == 200:
                return
        time.sleep(0.1)
    raise AssertionError("HQ did not start")


def health_latencies(url: str, stop: threading.Event, out: list[float],
                     failures: list[str]) -> None:
    with httpx.Client(base_url=url, timeout=5, verify=TLS) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                status = client.get(f"{API_PREFIX}/health").status_code
            except httpx.HTTPError as exc:
                failures.append(type(exc).__name__)
            else:
                out.append((time.perf_counter() - started) * 1000)
                if status != 200:
                    failures.append(f"HTTP {status}")
            time.sleep(0.02)


def p99(samples: list[float]) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[98]


def big_bodies(port: int, stop: threading.Event, counts: list[int]) -> None:
    """Unauthenticated 16 MiB pushes, one after another, until ``stop``."""
    chunk = b"[" + b"1," * 32767 + b"1]"
    head = (f"POST {API_PREFIX}/push HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {BODY_MIB * 1024 * 1024}\r\n\r\n").encode()
    while not stop.is_set():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(head)
                for _ in range(BODY_MIB * 16):
                    sock.sendall(chunk)
                    if select.select([sock], [], [], 0)[0]:
                        break  # the answer came: stop sending
                answer = sock.recv(64)
                counts.append(int(answer.split()[1]) if answer.startswith(b"HTTP/") else 0)
        except OSError:
            counts.append(-1)  # reset by the server after its 401: what should happen
        stop.wait(0.25)  # 12 at a time, each trying again 4 times a second


def slowloris(port: int, stop: threading.Event, stats: dict[str, int]) -> None:
    """SLOW_CONNECTIONS connections, each sending one more header byte every 0.5 s."""
    socks: list[socket.socket] = []
    for _ in range(SLOW_CONNECTIONS):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.setblocking(False)
        sock.send(b"GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        socks.append(sock)
    stats["opened"] = len(socks)
    while not stop.is_set() and socks:
        for sock in list(socks):
            try:
                sock.send(b"a")
                if sock.recv(1) == b"":
                    raise ConnectionResetError
            except BlockingIOError:
                continue
            except OSError:
                socks.remove(sock)
                sock.close()
                stats["closed_by_server"] = stats.get("closed_by_server", 0) + 1
        stop.wait(0.5)
    stats["still_open"] = len(socks)
    for sock in socks:
        sock.close()


def stalled_bundle(port: int, token: str, results: list[tuple[int, float]]) -> None:
    with socket.create_connection(("127.0.0.1", port), timeout=BODY_IDLE + 15) as sock:
        sock.sendall((f"POST {API_PREFIX}/blobs/bundle HTTP/1.1\r\nHost: x\r\n"
                      f"Authorization: Bearer {token}\r\n"
                      "Content-Type: application/vnd.inspector.blob-bundle\r\n"
                      f"Content-Length: {64 * 1024 * 1024}\r\n\r\n").encode())
        data = os.urandom(1024 * 1024)
        import hashlib

        sock.sendall(f"{hashlib.sha256(b'x' * 8 * 1024 * 1024).hexdigest()} "
                     f"{8 * 1024 * 1024}\n".encode() + data)
        started = time.monotonic()
        answer = sock.recv(64)
        results.append((int(answer.split()[1]) if answer else 0, time.monotonic() - started))


def flood_process(port: int, tokens: list[str], out: multiprocessing.Queue) -> None:
    """Every attacker at once for FLOOD_SECONDS, in a process of its own."""
    stop = threading.Event()
    counts: list[int] = []
    slow: dict[str, int] = {}
    stalled: list[tuple[int, float]] = []
    threads = [threading.Thread(target=big_bodies, args=(port, stop, counts))
               for _ in range(BODY_SENDERS)]
    threads.append(threading.Thread(target=slowloris, args=(port, stop, slow)))
    threads += [threading.Thread(target=stalled_bundle, args=(port, t, stalled))
                for t in tokens]
    for thread in threads:
        thread.start()
    time.sleep(FLOOD_SECONDS)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    out.put({"counts": counts, "slow": slow, "stalled": stalled})


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc for RSS")
def test_hq_keeps_answering_health_under_a_flood(tmp_path):
    data = ["--data-dir", str(tmp_path)]
    hq = [str(Path(sys.executable).with_name("inspector-hq"))]
    subprocess.run([*hq, "init", *data], check=True, capture_output=True)
    codes = [subprocess.run([*hq, "enrol-code", *data], check=True, capture_output=True,
                            text=True).stdout.strip() for _ in range(STALLED_BUNDLES)]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "HQ_HEADER_TIMEOUT": str(HEADER_TIMEOUT),
           "HQ_BODY_IDLE_TIMEOUT": str(BODY_IDLE)}
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen([*hq, "serve", *data, "--port", str(port),
                               "--log-level", "warning"], stdout=log,
                              stderr=subprocess.STDOUT, env=env)
    try:
        wait_for_health(url, server)
        tokens = []
        for code in codes:
            response = httpx.post(f"{url}{API_PREFIX}/enrol", json={
                "code": code, "public_key": DeviceKey.generate().public_key_b64(),
                "device_name": "tablet"})
            assert response.status_code == 200, response.text
            tokens.append(response.json()["token"])
        idle_rss = rss_mib(server.pid)

        quiet: list[float] = []
        failures: list[str] = []
        stop = threading.Event()
        monitor = threading.Thread(target=health_latencies, args=(url, stop, quiet, failures))
        monitor.start()
        time.sleep(3)
        stop.set()
        monitor.join()

        # The flood comes from another process, so the monitor here is not slowed by the
        # flood's own threads holding this interpreter's lock.
        results: multiprocessing.Queue[dict[str, object]] = FORK.Queue()
        flood = FORK.Process(target=flood_process, args=(port, tokens, results))
        flood.start()
        stop = threading.Event()
        loud: list[float] = []
        monitor = threading.Thread(target=health_latencies, args=(url, stop, loud, failures))
        time.sleep(0.5)  # the flood is under way
        monitor.start()
        peak = idle_rss
        deadline = time.monotonic() + FLOOD_SECONDS - 1
        while time.monotonic() < deadline:
            peak = max(peak, rss_mib(server.pid))
            time.sleep(0.1)
        stop.set()
        monitor.join()
        got = results.get(timeout=60)
        flood.join(timeout=30)
        counts = got["counts"]
        slow = got["slow"]
        stalled = got["stalled"]
        assert isinstance(counts, list) and isinstance(slow, dict) and isinstance(stalled, list)
        after_rss = rss_mib(server.pid)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        log.close()

    figures = {
        "health p99 quiet (ms)": round(p99(quiet), 1),
        "health p99 flood (ms)": round(p99(loud), 1),
        "health max flood (ms)": round(max(loud), 1),
        "health samples flood": len(loud),
        "big bodies sent": len(counts),
        "slow connections opened/closed by HQ/left": (
            slow.get("opened"), slow.get("closed_by_server", 0), slow.get("still_open")),
        "stalled bundles (status, s)": sorted({(s, round(t)) for s, t in stalled}),
        "rss idle/peak/after (MiB)": (round(idle_rss), round(peak), round(after_rss)),
    }
    print("\nflood figures:", figures)
    assert not failures, failures[:5]
    # 100 ms on an idle machine; on a shared one (8 helpers on 2 cores) the quiet baseline
    # of the same run is itself over 100 ms, so the bound is 3 x that baseline there (the
    # unfixed HQ went from ~10 ms to ~1.1 s: 100 x).
    assert p99(loud) < max(P99_MS, 3 * p99(quiet)), figures
    assert peak < RSS_CAP_MIB, figures
    assert len(counts) >= BODY_SENDERS and all(c in (401, -1) for c in counts), figures
    assert slow.get("opened") == SLOW_CONNECTIONS and slow.get("still_open") == 0, figures
    assert [s for s, _ in stalled] == [408] * STALLED_BUNDLES, figures
    assert all(t < BODY_IDLE + 5 for _, t in stalled), figures
