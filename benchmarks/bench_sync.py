"""Sync benchmarks (issue 5), each against a real server on loopback running in its own
process (``inspector-hq serve`` as an administrator starts it; the raw sink likewise), so the
client being measured does not share an interpreter with the server:

* push: one device store with 1,000 sealed records naming 4,000 photos (16 KiB of random
  bytes each, 64 MiB in all: small photos keep ``make bench`` short), pushed by
  ``sync_once`` (which of them HQ lacks, then bundles of about 8 MiB, then batches of 100
  records) to an HQ on SQLite; compared with a raw HTTP upload of the same bytes (one
  keep-alive client PUTting every photo and POSTing every payload to a server that only
  reads the body). Aim: raw time / sync time ≥ 0.5.
* ingest: 20 simulated devices pushing concurrently (batches of 20 signed records) to an HQ
  on PostgreSQL at 127.0.0.1:5432 (a fresh database, dropped after); records/s and the p99
  latency of a push request. Twice: voided numbers (the checks and the insert alone), then
  autos de infração against 300 permit holders (each also appends history and recomputes
  the holder's standing and the same-day duplicate flags), both with each device sending
  its next batch as soon as the last is answered (capacity); then autos again with the
  devices paced to 300 records/s in all (the latency at the aimed load, counted from when
  each request was due). Aim: ≥ 300 records/s, p99 ≤ 500 ms. Skipped (one row saying so)
  when PostgreSQL is unreachable.
* both again with HQ's files in an S3 bucket (``HQ_BLOB_STORE=s3``) on a moto server on
  loopback, next to the folder rows: the cost of object storage against the same baseline.
  moto is an in-memory Python server, far slower than MinIO or S3 itself, so the S3 rows
  are an upper bound on the cost of HQ's S3 code path, not a figure for a real bucket.
  Skipped (one row saying so) when moto is not installed.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks import stats
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.devices import create_enrolment_code
from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.store.db import open_store
from inspector_app.store.sealing import RecordDraft, seal_records
from inspector_app.sync import client as sync
from inspector_app.sync.protocol import API_PREFIX, verification_code_for

RECORDS, PHOTOS_PER_RECORD, PHOTO_BYTES = 1_000, 4, 16 * 1024
DEVICES, PER_DEVICE, BATCH = 20, 200, 20
HOLDERS = 300
INGEST_AIM = 300  # records/s
PG_ADMIN = os.environ.get("HQ_TEST_PG_ADMIN", "postgresql://postgres@127.0.0.1:5432/postgres")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def _serve(argv: list[str], port: int, ready_path: str,
           env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``argv`` (a server listening on ``port``) as a child process until the block
    ends; waits until ``GET ready_path`` answers."""
    url = f"http://127.0.0.1:{port}"
    # The server's log goes to a file (a pipe nobody reads would block the server once
    # full); its tail is shown when the server fails.
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log,
                            env={**os.environ, **(env or {})})
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + ready_path, timeout=1).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"benchmark server did not start: {_tail(log)}")
            time.sleep(0.05)
        try:
            yield url
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}; server log: {_tail(log)}") from None
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def _tail(log: Any, size: int = 2000) -> str:
    log.seek(0)
    text: bytes = log.read()
    return text[-size:].decode(errors="replace")


def _serve_hq(settings: Settings, workers: int = 1,
              env: dict[str, str] | None = None) -> contextlib.AbstractContextManager[str]:
    port = _free_port()
    hq = Path(sys.executable).with_name("inspector-hq")
    argv = [str(hq) if hq.exists() else "inspector-hq", "serve", "--database-url",
            settings.database_url, "--blob-dir", str(settings.blob_dir), "--port", str(port),
            "--log-level", "warning", "--workers", str(workers)]
    return _serve(argv, port, f"{API_PREFIX}/health", env=env)


@contextmanager
def _s3_bucket(folder: Path) -> Iterator[dict[str, str] | None]:
    """The HQ environment for a fresh bucket on a moto server on loopback (None when moto
    is not installed)."""
    try:
        import boto3
        import moto.server  # noqa: F401
    except ImportError:
        yield None
        return
    port = _free_port()
    with _serve([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                port, "/moto-api/") as endpoint:
        boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                     aws_access_key_id="bench", aws_secret_access_key="bench").create_bucket(
            Bucket="bench")
        yield {"HQ_BLOB_STORE": "s3", "HQ_S3_BUCKET": "bench", "HQ_S3_PREFIX": "blobs/",
               "HQ_S3_ENDPOINT_URL": endpoint, "HQ_S3_REGION": "us-east-1",
               "HQ_S3_ACCESS_KEY_ID": "bench", "HQ_S3_SECRET_ACCESS_KEY": "bench",
               "HQ_S3_STAGING_DIR": str(folder / "s3-staging")}


def _serve_sink() -> contextlib.AbstractContextManager[str]:
    port = _free_port()
    return _serve([sys.executable, "-m", "benchmarks.sink", str(port)], port, "/sink/ready")


def _row(name: str, ms: float, p95: float, vs: str) -> dict[str, object]:
    return {"name": name, "median_ms": ms, "p95_ms": p95, "vs": vs}


def bench_push(folder: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    """The push row and its raw baseline; with ``env`` (an S3 bucket), HQ stores the files
    there."""
    folder.mkdir(parents=True, exist_ok=True)
    settings = Settings(database_url=f"sqlite:///{folder / 'hq.db'}", blob_dir=folder / "hq")
    engine = make_engine(settings.database_url)
    upgrade(engine)
    store = open_store(folder / "device")
    rng = random.Random(5)
    photos: list[bytes] = []
    try:
        with _serve_hq(settings, env=env) as url:
            sync.enrol(store, hq_url=url,
                       code=create_enrolment_code(engine, series="AI", range_size=RECORDS + 10))
            drafts = []
            for _ in range(RECORDS):
                names = []
                for _ in range(PHOTOS_PER_RECORD):
                    data = rng.randbytes(PHOTO_BYTES)
                    sha = sha256_hex(data)
                    (store.blob_dir / sha[:2]).mkdir(parents=True, exist_ok=True)
                    (store.blob_dir / sha[:2] / f"{sha}.jpg").write_bytes(data)
                    photos.append(data)
                    names.append({"item_id": None, "original_sha256": sha, "name": "f.jpg"})
                drafts.append(RecordDraft("numero_anulado", {
                    "reason": "talão danificado", "photos": names,
                    "agent": {"matricula": "1004", "name": "Luíza Helena Magalhães"}}))
            for start in range(0, RECORDS, 100):
                seal_records(store, drafts[start:start + 100])
            payloads = [str(r[0]) for r in store.conn.execute("SELECT payload FROM records")]
            t0 = time.perf_counter()
            # moto stores a bundle's files one conditional PUT at a time, in Python: a longer
            # timeout for it, the default for the folder. (/blobs/missing asks HQ's list of
            # files, not the bucket: hq/blob_index.py.)
            summary = sync.sync_once(store, timeout=httpx.Timeout(300.0, connect=5.0)
                                     if env else sync.DEFAULT_TIMEOUT)
            sync_ms = (time.perf_counter() - t0) * 1000
            if not summary.ok or summary.accepted != RECORDS:
                raise RuntimeError(f"push benchmark did not deliver: {summary.as_json()}")
        with _serve_sink() as sink, httpx.Client(base_url=sink) as client:
            t0 = time.perf_counter()
            for i, data in enumerate(photos):
                client.put(f"/sink/p{i}", content=data)
            for i in range(0, RECORDS, 100):
                client.post(f"/sink/b{i}", json={"records": payloads[i:i + 100]})
            raw_ms = (time.perf_counter() - t0) * 1000
    finally:
        store.close()
        engine.dispose()
    mib = len(photos) * PHOTO_BYTES / 2**20
    ratio = raw_ms / sync_ms
    where = "files in an S3 bucket (moto)" if env else "files in a folder"
    return [
        _row(f"sync: push {RECORDS} records + {len(photos)} photos ({mib:.0f} MiB), SQLite HQ, "
             f"{where}",
             sync_ms, sync_ms,
             f"{RECORDS / sync_ms * 1000:.0f} records/s; {ratio:.2f}× raw speed (aim ≥ 0.5×)"),
        _row("baseline: raw HTTP upload of the same bytes (keep-alive, no checks)",
             raw_ms, raw_ms, f"{mib / raw_ms * 1000:.0f} MiB/s"),
    ]


class _Device:
    def __init__(self, url: str, engine: Any) -> None:
        self.key = DeviceKey.generate()
        code = create_enrolment_code(engine, series="AI", range_size=PER_DEVICE + 10)
        response = httpx.post(f"{url}{API_PREFIX}/enrol", json={
            "code": code, "public_key": self.key.public_key_b64(), "device_name": "bench"})
        body = response.json()
        self.device_id, self.token = str(body["device_id"]), str(body["token"])
        self.series, self.number = body["number_range"]["series"], body["number_range"]["first"]

    def record(self, rng: random.Random | None = None) -> dict[str, Any]:
        """A voided number; with ``rng``, an auto de infração against one of
        :data:`HOLDERS` permit holders, which makes HQ append history and recompute the
        holder's standing."""
        rid = str(uuid.uuid4())
        kind = "numero_anulado" if rng is None else "auto_infracao"
        body: dict[str, Any] = {"reason": "talão danificado", "agent": {"matricula": "1004"}}
        holder = plate = None
        occurred_on = "2026-04-14"
        if rng is not None:
            # Spread over three months, as a real backlog is: the same plate on the same day
            # from two devices (flagged as a suspected duplicate) stays the exception.
            day = dt.date(2026, 2, 1) + dt.timedelta(days=rng.randrange(90))
            occurred_on = day.isoformat()
            n = rng.randrange(HOLDERS)
            holder, plate = f"holder-{n}", f"JJK{n % 10}D{n % 100:02d}"
            rule = rng.choice(("DF15154.29.XIII", "DF15154.28.IV", "DF15154.30.II"))
            body = {"agent": {"matricula": "1004"}, "vehicle": {"plate": plate},
                    "outcome": {"pack": "DF_STPA",
                                "infractions": [{"rule_id": rule, "points": 3}]}}
        envelope = {
            "envelope_version": 1, "id": rid, "kind": kind, "series": self.series,
            # sealed the day it happened: HQ refuses an act dated after its sealing
            "number": self.number, "created_at": f"{occurred_on}T20:05:00.000000+00:00",
            "device_id": self.device_id, "key_id": self.key.device_key_id,
            "inspection_id": None, "refers_to": None, "plate_key": plate, "holder_id": holder,
            "occurred_on": occurred_on, "verification_code": verification_code_for(rid),
            "body": body,
        }
        self.number += 1
        payload = canonical_json(envelope)
        return {"id": rid, "kind": kind, "series": self.series,
                "number": envelope["number"], "created_at": envelope["created_at"],
                "payload": payload.decode(), "sha256": sha256_hex(payload),
                "signature": base64.b64encode(self.key.sign(payload)).decode(), "blobs": []}


def bench_ingest(folder: Path, env: dict[str, str] | None = None) -> list[dict[str, object]]:
    import psycopg

    name = f"bench_sync_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        return [_row(f"sync: HQ ingest, {DEVICES} devices on PostgreSQL: SKIPPED ({exc})",
                     0.0, 0.0, "")]
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    settings = Settings(database_url=f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                        blob_dir=folder / "pg-blobs")
    engine = make_engine(settings.database_url)
    try:
        upgrade(engine)
        with _serve_hq(settings, env=env) as url:
            if env:  # the files' store only differs for the capacity with autos
                return [_ingest_round(url, engine, autos=True, label="files in S3 (moto)")]
            return [_ingest_round(url, engine, autos=False),
                    _ingest_round(url, engine, autos=True),
                    _ingest_round(url, engine, autos=True, paced=INGEST_AIM)]
    finally:
        engine.dispose()
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _ingest_round(url: str, engine: Any, *, autos: bool,
                  paced: float | None = None, label: str = "") -> dict[str, object]:
    """20 new devices push concurrently; the row for their push requests.

    Unpaced, each device sends its next batch as soon as the last is answered (a backlog
    after days offline): records/s is HQ's capacity, and by Little's law the latency is 20
    requests' worth of queue. Paced at ``paced`` records/s in all, each device sends a
    batch every ``20 × BATCH / paced`` seconds from a random offset; a request's latency
    counts from when it was due, so a late send is not hidden."""
    rng = random.Random(20) if autos else None
    devices = [_Device(url, engine) for _ in range(DEVICES)]
    batches = [[[d.record(rng) for _ in range(BATCH)] for _ in range(PER_DEVICE // BATCH)]
               for d in devices]
    latencies: list[float] = []
    lock = threading.Lock()
    interval = DEVICES * BATCH / paced if paced else 0.0
    offsets = random.Random(7).sample(range(1000), DEVICES)
    start = time.perf_counter() + (0.5 if paced else 0.0)

    def push(index: int) -> int:
        device, accepted = devices[index], 0
        due = start + interval * offsets[index] / 1000
        with httpx.Client(base_url=url, timeout=60,
                          headers={"Authorization": f"Bearer {device.token}"}) as client:
            for batch in batches[index]:
                if paced:
                    time.sleep(max(0.0, due - time.perf_counter()))
                t0 = due if paced else time.perf_counter()
                response = client.post(f"{API_PREFIX}/push", json={"records": batch})
                elapsed = (time.perf_counter() - t0) * 1000
                due += interval
                with lock:
                    latencies.append(elapsed)
                accepted += sum(r["status"] == "accepted" for r in response.json()["results"])
        return accepted

    with ThreadPoolExecutor(DEVICES) as pool:
        accepted = sum(pool.map(push, range(DEVICES)))
    total_s = time.perf_counter() - start  # from the first request due
    if accepted != DEVICES * PER_DEVICE:
        raise RuntimeError(f"ingest benchmark: {accepted} of {DEVICES * PER_DEVICE} accepted")
    latencies.sort()
    p99 = stats.percentile(latencies, 0.99)
    what = (f"autos de infração against {HOLDERS} holders (history + standing)" if autos
            else "voided numbers")
    load = f"offered at {paced:.0f} records/s" if paced else "as fast as answered"
    return _row(
        f"sync: HQ ingest, {DEVICES} devices × {PER_DEVICE} {what}, batches of {BATCH} "
        f"{load}, PostgreSQL{', ' + label if label else ''} — push request latency",
        stats.median(latencies), stats.percentile(latencies, 0.95),
        f"{accepted / total_s:.0f} records/s (aim ≥ 300), p99 {p99:.0f} ms (aim ≤ 500)")


def run() -> list[dict[str, object]]:
    folder = Path(tempfile.mkdtemp(prefix="bench-sync-"))
    try:
        rows = bench_push(folder / "folder") + bench_ingest(folder / "folder")
        with _s3_bucket(folder) as env:
            if env is None:
                return [*rows, _row("sync: S3 blob store rows: SKIPPED (moto not installed)",
                                    0.0, 0.0, "")]
            try:
                return rows + bench_push(folder / "s3", env) + bench_ingest(folder / "s3", env)
            except RuntimeError as exc:  # said in the table, not hidden: moto is slow
                return [*rows, _row(f"sync: S3 blob store rows: DID NOT COMPLETE ({exc})"[:300],
                                    0.0, 0.0, "")]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
