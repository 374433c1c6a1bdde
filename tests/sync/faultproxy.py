"""A fault-injecting TCP proxy for sync tests, on 127.0.0.1 only.

It sits between the sync client and a real HQ (uvicorn) and frames HTTP/1.1 requests and
responses by ``Content-Length`` (what httpx and uvicorn send), so a fault can be aimed at one
request of a kept-alive connection. ``choose(method, path)`` picks, per request, one of:

* ``pass``    forward the request and the response;
* ``drop``    close the client's connection before anything reaches HQ;
* ``reset``   forward the headers and half of the body, then reset both connections (HQ sees a
              body cut short, the client a reset);
* ``delay``   hold the request ``delay`` seconds before forwarding it (past the client's
              timeout it becomes a request HQ handles while the client has given up);
* ``lose``    forward the request, read HQ's full response (HQ has committed), then reset the
              client's connection without sending a byte of it.

When HQ is down the proxy closes the client's connection (the client sees a disconnect).

Given several upstream ports (HQ run as several instances), it balances like a reverse proxy:
each request goes to the next instance in turn, and an instance that refuses the connection
is skipped for the next one (nginx's ``proxy_next_upstream error``); ``served`` counts the
requests each port answered.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence

MODES = ("pass", "drop", "reset", "delay", "lose")
Chooser = Callable[[str, str], str]


class _Closed(Exception):
    pass


def _abort(sock: socket.socket) -> None:
    """Close with RST (SO_LINGER 0) instead of FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    with contextlib.suppress(OSError):
        sock.close()


class _Reader:
    def __init__(self, sock: socket.socket) -> None:
        self.sock, self.buf = sock, b""

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise _Closed
        self.buf += chunk

    def head(self) -> bytes:
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        end = self.buf.index(b"\r\n\r\n") + 4
        head, self.buf = self.buf[:end], self.buf[end:]
        return head

    def exactly(self, size: int) -> bytes:
        while len(self.buf) < size:
            self._fill()
        data, self.buf = self.buf[:size], self.buf[size:]
        return data


def _length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
        if name.strip().lower() == b"transfer-encoding":
            raise ValueError("chunked bodies are not supported by the fault proxy")
    return 0


class FaultProxy:
    """``FaultProxy(upstream_port, choose=...)``; ``start()``, ``url``, ``stop()``.

    ``choose`` may be swapped at any time (``proxy.choose = lambda m, p: "pass"``); ``seen``
    counts the faults applied, ``requests`` the requests seen per ``(method, path prefix)``.
    """

    def __init__(self, upstream_port: int | Sequence[int], *, choose: Chooser | None = None,
                 delay: float = 0.2) -> None:
        self.upstream_ports = ([upstream_port] if isinstance(upstream_port, int)
                               else list(upstream_port))
        self.upstream_port = self.upstream_ports[0]
        self.served: Counter[int] = Counter()
        self._turn = 0
        self.choose: Chooser = choose or (lambda method, path: "pass")
        self.delay = delay
        self.seen: Counter[str] = Counter()
        self.pushes = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.2)
        self.port = int(self._listener.getsockname()[1])
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._open: set[socket.socket] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FaultProxy:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)
        self._listener.close()
        with self._lock:
            for sock in list(self._open):
                _abort(sock)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _track(self, sock: socket.socket, add: bool) -> None:
        with self._lock:
            (self._open.add if add else self._open.discard)(sock)

    def _connect(self) -> tuple[socket.socket, int] | None:
        """A connection to the next upstream in turn that accepts one, or None."""
        with self._lock:
            start = self._turn
            self._turn += 1
        for k in range(len(self.upstream_ports)):
            port = self.upstream_ports[(start + k) % len(self.upstream_ports)]
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=30), port
            except OSError:
                continue
        return None

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        self._track(client, True)
        try:
            reader = _Reader(client)
            while True:
                head = reader.head()
                body = reader.exactly(_length(head))
                method, path = head.split(b" ", 2)[:2]
                mode = self.choose(method.decode(), path.decode())
                with self._lock:
                    self.seen[mode] += 1
                    if b"/push" in path:
                        self.pushes += 1
                if mode == "drop":
                    _abort(client)
                    return
                if mode == "delay":
                    time.sleep(self.delay)
                if len(self.upstream_ports) > 1 and upstream is not None:
                    self._track(upstream, False)  # next request, next instance
                    with contextlib.suppress(OSError):
                        upstream.close()
                    upstream = None
                if upstream is None:
                    connected = self._connect()
                    if connected is None:
                        _abort(client)  # HQ down
                        return
                    upstream, port = connected
                    self._track(upstream, True)
                    up_reader = _Reader(upstream)
                if mode == "reset":
                    upstream.sendall(head + body[: len(body) // 2])
                    _abort(upstream)
                    _abort(client)
                    return
                upstream.sendall(head + body)
                answer = up_reader.head()
                status_line = answer.split(b"\r\n", 1)[0]
                status = int(status_line.split(b" ")[1])
                size = 0 if method == b"HEAD" or status in (204, 304) else _length(answer)
                payload = up_reader.exactly(size)
                with self._lock:
                    self.served[port] += 1
                if mode == "lose":
                    _abort(client)
                    return
                client.sendall(answer + payload)
        except (_Closed, OSError, ValueError, IndexError):
            pass
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    self._track(sock, False)
                    with contextlib.suppress(OSError):
                        sock.close()
