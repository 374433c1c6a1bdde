"""Helpers for sync tests: sealing quickly, HTTP transports that inject faults, outbox reads."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import httpx
from hqkit import TLS

from inspector_app import demo_autos, services
from inspector_app.store.db import DB_KEY_NAME, DB_NAME, Store, open_store


def store_from_template(template_db: Path, folder: Path) -> Store:
    """A new device store in ``folder`` (created here) holding a copy of ``template_db``
    (its own key on first seal)."""
    folder.mkdir()
    # The template is closed (no -wal): the file and its database key make the copy.
    shutil.copyfile(template_db, folder / DB_NAME)
    shutil.copyfile(template_db.with_name(DB_KEY_NAME), folder / DB_KEY_NAME)
    return open_store(folder)


SUPERVISOR = services.Session(matricula="1004", name="Luíza Helena Magalhães",
                              role="supervisor")


def void_numbers(store: Store, count: int) -> list[str]:
    """Seal ``count`` quick records (numbers voided with a reason): no blobs, no engine."""
    return [services.void_number(store=store, session=SUPERVISOR,
                                 reason="formulário em papel danificado").records[0].id
            for _ in range(count)]


def seal_autos(store: Store, count: int, seed: int = 1) -> list[str]:
    return demo_autos.seed_autos(store, autos=count, seed=seed)


def outbox(store: Store) -> dict[str, tuple]:
    rows = store.conn.execute(
        "SELECT record_id, acked_at IS NOT NULL, ack_status, attempts, last_error FROM outbox"
    ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def record_count(store: Store) -> int:
    return int(store.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])


class FaultTransport(httpx.BaseTransport):
    """Forwards to a real HTTP transport; ``fault(request, n)`` may raise before sending
    (the request never reaches HQ) and ``lose(request, n)`` may drop the answer after HQ
    handled it. ``log`` lists every request as ``(method, path)``."""

    def __init__(self, *, fault: Callable[[httpx.Request, int], None] | None = None,
                 lose: Callable[[httpx.Request, int], bool] | None = None) -> None:
        self.inner = httpx.HTTPTransport(verify=TLS)
        self.fault, self.lose = fault, lose
        self.log: list[tuple[str, str]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        n = len(self.log)
        self.log.append((request.method, request.url.path))
        if self.fault is not None:
            self.fault(request, n)
        response = self.inner.handle_request(request)
        if self.lose is not None and self.lose(request, n):
            response.read()
            response.close()
            raise httpx.ReadTimeout("answer lost after HQ handled the request", request=request)
        return response

    def close(self) -> None:
        pass  # reused across several sync runs (each closes its client); the pool dies with it

    def count(self, method: str, prefix: str = "") -> int:
        return sum(1 for m, p in self.log if m == method and p.startswith(prefix))
