"""A real HQ for tests: uvicorn on a free loopback port, on SQLite or a fresh PostgreSQL
database, plus a simulated device that signs records like the store's sealing does.

Fixtures built from these live in ``tests/hq/conftest.py`` and ``tests/sync/conftest.py``.
"""

from __future__ import annotations

import base64
import contextlib
import os
import socket
import ssl
import threading
import time
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from s3kit import blobs_backend, new_bucket
from sqlalchemy import Engine, text

from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.core.limits import server_options
from inspector_app.hq.devices import create_enrolment_code
from inspector_app.hq.main import create_app
from inspector_app.hq.tables import metadata
from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.sync.protocol import API_PREFIX, PushRecord, verification_code_for

PG_HOST, PG_PORT = "127.0.0.1", 5432
PG_ADMIN_DSN = os.environ.get("HQ_TEST_PG_ADMIN", f"postgresql://postgres@{PG_HOST}:{PG_PORT}/postgres")
BACKENDS = ("sqlite", "postgresql")
MAX_BLOB_BYTES = 256 * 1024
SUPERVISOR_MATRICULA = "1004"
VOIDED_BODY = {"reason": "talão danificado", "agent": {"matricula": "1001", "name": "Agente"}}
# Building an SSL context costs ~80 ms per httpx.Client; the tests make hundreds.
TLS = ssl.create_default_context()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def database_url(backend: str, folder: Path) -> Iterator[str]:
    """A fresh database for one test session: a SQLite file, or a new PostgreSQL database
    (created with psycopg, dropped at the end). Skips when PostgreSQL is unreachable."""
    if backend == "sqlite":
        yield f"sqlite:///{folder / 'hq.db'}"
        return
    import psycopg

    name = f"hq_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        admin = psycopg.connect(PG_ADMIN_DSN, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        reason = f"PostgreSQL at {PG_HOST}:{PG_PORT} unreachable ({exc}); PostgreSQL run skipped"
        print(reason)
        pytest.skip(reason)
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"postgresql+psycopg://postgres@{PG_HOST}:{PG_PORT}/{name}"
    finally:
        with psycopg.connect(PG_ADMIN_DSN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass
class RunningHQ:
    """An HQ app served by uvicorn in a thread of the test process."""

    settings: Settings
    backend: str
    engine: Engine = field(init=False)
    port: int = field(init=False)
    server: uvicorn.Server = field(init=False)
    thread: threading.Thread = field(init=False)

    def start(self) -> RunningHQ:
        self.engine = make_engine(self.settings.database_url)
        upgrade(self.engine)
        self.app = create_app(self.settings)
        self.port = free_port()
        config = uvicorn.Config(self.app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="off", **server_options(self.settings))
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("HQ test server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.app.state.hq.engine.dispose()
        self.engine.dispose()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def blobs(self) -> BlobStore:
        """The server's own blob store (a folder, or a bucket under HQ_TEST_BLOBS=s3)."""
        store: BlobStore = self.app.state.hq.blobs
        return store

    def client(self, token: str | None = None, **kwargs: Any) -> httpx.Client:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        kwargs.setdefault("verify", TLS)
        return httpx.Client(base_url=self.url, headers=headers, timeout=10, **kwargs)

    def reset(self) -> None:
        """Empty every table (the rate limits' counts too) and the blob folder."""
        names = [t.name for t in reversed(metadata.sorted_tables)]
        with self.engine.begin() as conn:
            if self.backend == "postgresql":
                conn.execute(text(f"TRUNCATE {', '.join(names)} RESTART IDENTITY CASCADE"))
            else:
                for name in names:
                    conn.execute(text(f"DELETE FROM {name}"))
        self.blobs.clear()

    def add_supervisor(self, matricula: str = SUPERVISOR_MATRICULA,
                       name: str = "Luíza Helena Magalhães", role: str = "supervisor") -> None:
        """Register an agent in HQ's registry (a cancelamento must name a supervisor HQ
        knows); the same matrícula and name as the device's demo supervisor."""
        from inspector_app.hq.registry import publish_row
        from inspector_app.security.passwords import DEFAULT_PARAMETERS, hash_password

        with self.engine.begin() as conn:
            publish_row(conn, "inspectors", {
                "id": f"agent-{matricula}", "matricula": matricula, "name": name, "role": role,
                "password_hash": hash_password("senha-de-teste", parameters=DEFAULT_PARAMETERS),
                "organ": None, "active": 1})

    def enrol_code(self, **kwargs: Any) -> str:
        return create_enrolment_code(self.engine, **kwargs)

    def scalar(self, sql: str, **params: Any) -> Any:
        with self.engine.connect() as conn:
            return conn.execute(text(sql), params).scalar()


def test_settings(url: str, folder: Path, **kwargs: Any) -> Settings:
    """HQ settings for a test server: blobs in ``folder/blobs``, or, under
    ``HQ_TEST_BLOBS=s3``, in a new bucket on the session's S3 server (tests/s3kit.py)."""
    if blobs_backend() == "s3":
        kwargs.update(blob_backend="s3", s3=new_bucket(folder / "blob-staging"))
    return Settings(database_url=url, blob_dir=folder / "blobs", **kwargs)


@contextlib.contextmanager
def running_hq(backend: str, folder: Path, **limits: Any) -> Iterator[RunningHQ]:
    """A real HQ on ``backend``; ``limits`` override Settings fields (HTTP limits, docs)."""
    with database_url(backend, folder) as url:
        settings = test_settings(url, folder, **{"max_blob_bytes": MAX_BLOB_BYTES, **limits})
        hq = RunningHQ(settings, backend).start()
        try:
            yield hq
        finally:
            hq.stop()


@dataclass
class SimDevice:
    """A device without a store: its own key, enrolled over HTTP, signing envelopes as
    ``store.sealing`` builds them."""

    hq: RunningHQ
    key: DeviceKey = field(default_factory=DeviceKey.generate)
    device_id: str = ""
    token: str = ""
    series: str = ""
    first: int = 0
    next_number: int = 0

    def enrol(self, code: str | None = None, **code_kwargs: Any) -> SimDevice:
        with self.hq.client() as client:
            response = client.post(f"{API_PREFIX}/enrol", json={
                "code": code or self.hq.enrol_code(**code_kwargs),
                "public_key": self.key.public_key_b64(), "device_name": "tablet de teste"})
        assert response.status_code == 200, response.text
        body = response.json()
        self.device_id, self.token = body["device_id"], body["token"]
        rng = body["number_range"]
        self.series, self.first = rng["series"], rng["first"]
        self.next_number = self.first
        return self

    def client(self, **kwargs: Any) -> httpx.Client:
        return self.hq.client(self.token, **kwargs)

    def envelope(self, *, kind: str = "auto_infracao", number: int | None = None,
                 series: str | None = None, body: Mapping[str, Any] | None = None,
                 record_id: str | None = None, refers_to: str | None = None,
                 **overrides: Any) -> dict[str, Any]:
        if number is None:
            number = self.next_number
            self.next_number += 1
        rid = record_id or str(uuid.uuid4())
        envelope = {
            "envelope_version": 1, "id": rid, "kind": kind,
            "series": series or self.series, "number": number,
            "created_at": "2026-04-14T13:05:00.000000+00:00", "device_id": self.device_id,
            "key_id": self.key.device_key_id, "inspection_id": None, "refers_to": refers_to,
            "plate_key": "JJK8D48", "holder_id": None, "occurred_on": "2026-04-14",
            "verification_code": verification_code_for(rid),
            "body": dict(body if body is not None else VOIDED_BODY if kind == "numero_anulado"
                         else {
                "occurred_at": "2026-04-14T10:05:00-03:00",
                "vehicle": {"plate": "JJK8D48"},
                "pack": {"organ": "SEMOB-DF", "organ_name": "Secretaria de Transporte"},
            }),
        }
        envelope.update(overrides)
        return envelope

    def record(self, envelope: Mapping[str, Any] | None = None, *, key: DeviceKey | None = None,
               **fields: Any) -> PushRecord:
        """A PushRecord for ``envelope`` signed by this device (or ``key``); ``fields``
        override the PushRecord's own fields after signing (to break them in tests)."""
        env = dict(envelope if envelope is not None else self.envelope())
        payload = canonical_json(env)
        signature = base64.b64encode((key or self.key).sign(payload)).decode("ascii")
        values: dict[str, Any] = {
            "id": env["id"], "kind": env["kind"], "series": env["series"],
            "number": env["number"], "created_at": env["created_at"],
            "payload": payload.decode("utf-8"), "sha256": sha256_hex(payload),
            "signature": signature, "blobs": [],
        }
        values.update(fields)
        return PushRecord.model_construct(**values)

    def cancelamento(self, auto: PushRecord, **overrides: Any) -> PushRecord:
        """A signed cancelamento of ``auto`` (reason "erro de digitação") by the supervisor
        :meth:`RunningHQ.add_supervisor` registers (it is registered here when absent)."""
        if not self.hq.scalar("SELECT COUNT(*) FROM reference_rows WHERE table_name = "
                              "'inspectors' AND key = :key", key=f"agent-{SUPERVISOR_MATRICULA}"):
            self.hq.add_supervisor()
        body = {"reason": "erro de digitação",
                "supervisor": {"matricula": SUPERVISOR_MATRICULA, "name": "Luíza Helena"}}
        return self.record(self.envelope(kind="cancelamento", refers_to=auto.id,
                                         body=body, **overrides))

    def push(self, *records: PushRecord) -> httpx.Response:
        with self.client() as client:
            return client.post(f"{API_PREFIX}/push",
                               json={"records": [r.model_dump() for r in records]})

    def push_one(self, record: PushRecord) -> dict[str, Any]:
        response = self.push(record)
        assert response.status_code == 200, response.text
        results = response.json()["results"]
        assert [r["id"] for r in results] == [record.id]
        result: dict[str, Any] = results[0]
        return result

    def put_blob(self, data: bytes) -> str:
        sha = sha256_hex(data)
        with self.client() as client:
            response = client.put(f"{API_PREFIX}/blobs/{sha}", content=data)
        assert response.status_code in (200, 201), response.text
        return sha
