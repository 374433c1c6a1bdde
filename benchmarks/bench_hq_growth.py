"""HQ as years of autos accumulate (issue 19): one PostgreSQL HQ filled with autos de
infração from 20 simulated devices against the demo registry, measured at checkpoints.

Checkpoints: 10,000 and 100,000 autos held by default; ``BENCH_HQ_GROWTH=100000,250000,
1000000`` for the full run (1M takes long: about an hour on two cores). At each checkpoint:

* capacity: the 20 devices push batches of 100 autos over HTTP to ``inspector-hq serve``
  (one worker) as fast as they are answered: records/s;
* paced: the same devices offer 300 records/s in all (batches of 20, each request's latency
  counted from when it was due): p99;
* the pull log (rows of ``changes``), what a newly enrolled device downloads (every pull page
  from cursor 0: changes and response bytes), the database size and the server's RSS;
* then the same two figures after ``inspector-hq compact --keep-days 0`` (issue 19: superseded
  upserts and old tombstones removed, history outside every window expired).

How the history is filled fast: not over HTTP but with HQ's own ``ingest`` called in this
process on the same database, batches of 500 (the same checks, signatures, history, standing,
duplicate flags and pull log as a push; only the HTTP and JSON framing are skipped). The autos
are dated in order, :data:`AUTOS_PER_DAY` a day, ending today at the last checkpoint, so at
1M autos the history spans about 2.7 years and the law's 12-month windows hold a part of it.
Progress goes to stderr.
"""

from __future__ import annotations

import base64
import datetime as dt
import os
import random
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
from benchmarks.bench_sync import PG_ADMIN, _free_port, _row
from inspector_app.hq.blobs import open_blob_store
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.devices import create_enrolment_code, get_device
from inspector_app.hq.ingest import ingest
from inspector_app.hq.reference import upsert_tables
from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.sync.protocol import API_PREFIX, PushRecord, verification_code_for

DEVICES = 20
CAPACITY_BATCH, CAPACITY_BATCHES = 100, 3  # per device: 6,000 autos per capacity probe
PACED_BATCH, PACED_BATCHES, PACED_RATE = 20, 10, 300  # 4,000 autos at 300/s
FILL_BATCH = 500
AUTOS_PER_DAY = 1000
DEMO_VEHICLES = 2000
DEFAULT_CHECKPOINTS = (10_000, 100_000)
REGISTRY_TABLES = ("permit_holders", "lines", "vehicles", "drivers", "inspectors",
                   "parameters", "pack_versions")


def checkpoints() -> list[int]:
    text = os.environ.get("BENCH_HQ_GROWTH", "")
    if not text.strip():
        return list(DEFAULT_CHECKPOINTS)
    return sorted({int(part) for part in text.split(",") if part.strip()})


def _progress(text: str) -> None:
    print(f"[hq_growth {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


class _Registry:
    """The demo registry (``inspector_app.demo.seed_registry``, :data:`DEMO_VEHICLES`
    vehicles): its rows as HQ publishes them, and who an auto can be against."""

    def __init__(self, folder: Path) -> None:
        from inspector_app.demo import seed_registry
        from inspector_app.store.db import open_store

        store = open_store(folder / "demo-device")
        try:
            seed_registry(store, vehicles=DEMO_VEHICLES, seed=19)
            self.tables: list[tuple[str, list[dict[str, Any]]]] = []
            for table in REGISTRY_TABLES:
                cur = store.conn.execute(f"SELECT * FROM ref_{table}")
                names = [c[0] for c in cur.description]
                self.tables.append((table, [dict(zip(names, r, strict=True)) for r in cur]))
            self.targets = [(str(h), str(p), str(k)) for h, p, k in store.conn.execute(
                "SELECT v.holder_id, h.pack_id, v.plate_key FROM ref_vehicles v "
                "JOIN ref_permit_holders h ON h.id = v.holder_id ORDER BY v.plate_key")]
            rules: dict[str, list[tuple[str, int]]] = {}
            for pack, rule, points in store.conn.execute(
                    "SELECT DISTINCT h.pack_id, r.rule_id, r.points FROM ref_history r "
                    "JOIN ref_permit_holders h ON h.id = r.holder_id"):
                rules.setdefault(str(pack), []).append((str(rule), int(points or 0)))
            self.rules = rules
        finally:
            store.close()
        self.holders = len({t[0] for t in self.targets})


class _Device:
    def __init__(self, url: str, engine: Any, range_size: int) -> None:
        self.key = DeviceKey.generate()
        code = create_enrolment_code(engine, series="AI", range_size=range_size)
        body = httpx.post(f"{url}{API_PREFIX}/enrol", json={
            "code": code, "public_key": self.key.public_key_b64(),
            "device_name": "bench"}).json()
        self.device_id, self.token = str(body["device_id"]), str(body["token"])
        self.series, self.number = body["number_range"]["series"], body["number_range"]["first"]
        device = get_device(engine, self.device_id)
        assert device is not None
        self.device = device

    def auto(self, reg: _Registry, rng: random.Random, day: dt.date) -> dict[str, Any]:
        holder, pack, plate = rng.choice(reg.targets)
        rules = reg.rules.get(pack) or [("DF15154.29.XIII", 3)]
        chosen = rng.sample(rules, k=min(len(rules), rng.choice((1, 1, 1, 2))))
        rid = str(uuid.uuid4())
        occurred_on = day.isoformat()
        envelope = {
            "envelope_version": 1, "id": rid, "kind": "auto_infracao", "series": self.series,
            "number": self.number, "created_at": f"{occurred_on}T12:05:00.000000+00:00",
            "device_id": self.device_id, "key_id": self.key.device_key_id,
            "inspection_id": None, "refers_to": None, "plate_key": plate, "holder_id": holder,
            "occurred_on": occurred_on, "verification_code": verification_code_for(rid),
            "body": {"agent": {"matricula": "1001"}, "vehicle": {"plate": plate},
                     "outcome": {"pack": pack, "infractions": [
                         {"rule_id": r, "points": p} for r, p in chosen]}},
        }
        self.number += 1
        payload = canonical_json(envelope)
        return {"id": rid, "kind": "auto_infracao", "series": self.series,
                "number": envelope["number"], "created_at": envelope["created_at"],
                "payload": payload.decode(), "sha256": sha256_hex(payload),
                "signature": base64.b64encode(self.key.sign(payload)).decode(), "blobs": []}


class _Clock:
    """The day of the n-th auto: :data:`AUTOS_PER_DAY` a day, the last one today."""

    def __init__(self, total: int) -> None:
        self.n = 0
        self.first = dt.date.today() - dt.timedelta(days=total // AUTOS_PER_DAY)

    def next_day(self) -> dt.date:
        day = min(self.first + dt.timedelta(days=self.n // AUTOS_PER_DAY), dt.date.today())
        self.n += 1
        return day


@contextmanager
def _serve_hq(settings: Settings) -> Iterator[tuple[str, int]]:
    import subprocess

    port = _free_port()
    hq = Path(sys.executable).with_name("inspector-hq")
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in the finally below)
    proc = subprocess.Popen(
        [str(hq) if hq.exists() else "inspector-hq", "serve", "--database-url",
         settings.database_url, "--blob-dir", str(settings.blob_dir), "--port", str(port),
         "--log-level", "warning", "--workers", "1"],
        # stderr to a file: a pipe nobody reads would fill up and stop the server.
        stdout=subprocess.DEVNULL, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a loaded machine starts it slowly
        while True:
            try:
                if httpx.get(url + f"{API_PREFIX}/health", timeout=1).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                err = log.read().decode(errors="replace")
                raise RuntimeError(f"HQ did not start: {err[-2000:]}")
            time.sleep(0.05)
        yield url, proc.pid
    finally:
        log.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _fill(engine: Any, devices: list[_Device], reg: _Registry, clock: _Clock,
          rng: random.Random, count: int, blobs: Any) -> float:
    """``count`` autos through HQ's ingest in this process; records/s."""
    t0 = time.perf_counter()
    done, turn = 0, 0
    while done < count:
        device = devices[turn % len(devices)]
        turn += 1
        size = min(FILL_BATCH, count - done)
        batch = [PushRecord.model_validate(device.auto(reg, rng, clock.next_day()))
                 for _ in range(size)]
        results = ingest(engine, device.device, batch, blobs)
        bad = [r for r in results if r.status != "accepted"]
        if bad:
            raise RuntimeError(f"fill: {bad[0].status} {bad[0].reason}")
        done += size
        if done % 10_000 < FILL_BATCH or done == count:
            rate = done / (time.perf_counter() - t0)
            _progress(f"filled {done:,}/{count:,} ({rate:.0f} autos/s)")
    return count / (time.perf_counter() - t0)


def _push_round(url: str, devices: list[_Device], reg: _Registry, clock: _Clock,
                rng: random.Random, *, batch: int, batches: int,
                paced: float | None) -> tuple[float, list[float]]:
    """Every device pushes ``batches`` batches over HTTP; (records/s, latencies ms)."""
    work = [[[device.auto(reg, rng, clock.next_day()) for _ in range(batch)]
             for _ in range(batches)] for device in devices]
    latencies: list[float] = []
    lock = threading.Lock()
    interval = len(devices) * batch / paced if paced else 0.0
    offsets = random.Random(7).sample(range(1000), len(devices))
    start = time.perf_counter() + (0.5 if paced else 0.0)

    def push(index: int) -> int:
        device, accepted = devices[index], 0
        due = start + interval * offsets[index] / 1000
        with httpx.Client(base_url=url, timeout=120,
                          headers={"Authorization": f"Bearer {device.token}"}) as client:
            for records in work[index]:
                if paced:
                    time.sleep(max(0.0, due - time.perf_counter()))
                t0 = due if paced else time.perf_counter()
                response = client.post(f"{API_PREFIX}/push", json={"records": records})
                elapsed = (time.perf_counter() - t0) * 1000
                due += interval
                with lock:
                    latencies.append(elapsed)
                accepted += sum(r["status"] == "accepted" for r in response.json()["results"])
        return accepted

    with ThreadPoolExecutor(len(devices)) as pool:
        accepted = sum(pool.map(push, range(len(devices))))
    total_s = time.perf_counter() - start
    if accepted != len(devices) * batch * batches:
        raise RuntimeError(f"push round: {accepted} of {len(devices) * batch * batches} "
                           "accepted")
    latencies.sort()
    return accepted / total_s, latencies


def _new_device_download(url: str, engine: Any) -> tuple[int, int, float]:
    """A newly enrolled device pulls from cursor 0 to the end: (changes, bytes, seconds)."""
    device = _Device(url, engine, 10)
    rows = size = 0
    cursor = 0
    t0 = time.perf_counter()
    with httpx.Client(base_url=url, timeout=300,
                      headers={"Authorization": f"Bearer {device.token}"}) as client:
        while True:
            response = client.get(f"{API_PREFIX}/pull",
                                  params={"cursor": cursor, "limit": 1000, "acked": 0})
            size += len(response.content)
            page = response.json()
            rows += len(page["changes"])
            cursor = page["next_cursor"]
            if not page["more"]:
                break
    return rows, size, time.perf_counter() - t0


def _db_figures(engine: Any) -> tuple[int, float]:
    from sqlalchemy import text

    with engine.connect() as conn:
        changes = int(conn.execute(text("SELECT count(*) FROM changes")).scalar_one())
        size = int(conn.execute(text("SELECT pg_database_size(current_database())"))
                   .scalar_one())
    return changes, size / 2**20


def _compact(settings: Settings) -> str | None:
    """``inspector-hq compact --keep-days 0`` as an administrator runs it: its last line,
    None when this HQ has no such command (the figures before issue 19)."""
    import subprocess

    hq = Path(sys.executable).with_name("inspector-hq")
    done = subprocess.run([str(hq) if hq.exists() else "inspector-hq", "compact",
                           "--database-url", settings.database_url, "--keep-days", "0"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return None
    out = done.stdout.strip().splitlines()
    return out[-1] if out else ""


def run() -> list[dict[str, object]]:
    import psycopg

    marks = checkpoints()
    name = f"bench_hq_growth_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        return [_row(f"hq_growth: SKIPPED (PostgreSQL unreachable: {exc})", 0.0, 0.0, "")]
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    folder = Path(tempfile.mkdtemp(prefix="bench-hq-growth-"))
    settings = Settings(database_url=f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                        blob_dir=folder / "blobs")
    engine = make_engine(settings.database_url)
    rows: list[dict[str, object]] = []
    try:
        upgrade(engine)
        _progress(f"demo registry ({DEMO_VEHICLES} vehicles) …")
        reg = _Registry(folder)
        with engine.begin() as conn:
            upsert_tables(conn, reg.tables)
        _progress(f"registry published: {reg.holders} holders, {len(reg.targets)} vehicles")
        probe = DEVICES * (CAPACITY_BATCH * CAPACITY_BATCHES + PACED_BATCH * PACED_BATCHES)
        total = marks[-1] + probe * len(marks)
        clock, rng = _Clock(total), random.Random(19)
        blobs = open_blob_store(settings)
        with _serve_hq(settings) as (url, pid):
            devices = [_Device(url, engine, total // DEVICES + 20_000) for _ in range(DEVICES)]
            held = 0
            for mark in marks:
                if mark > held:
                    fill_rate = _fill(engine, devices, reg, clock, rng, mark - held, blobs)
                    held = mark
                    _progress(f"at {held:,} autos (fill {fill_rate:.0f}/s); probing …")
                capacity, lat = _push_round(url, devices, reg, clock, rng,
                                            batch=CAPACITY_BATCH, batches=CAPACITY_BATCHES,
                                            paced=None)
                _, paced = _push_round(url, devices, reg, clock, rng, batch=PACED_BATCH,
                                       batches=PACED_BATCHES, paced=PACED_RATE)
                held += probe
                p99 = stats.percentile(paced, 0.99)
                changes, db_mib = _db_figures(engine)
                got, size, secs = _new_device_download(url, engine)
                rss = _rss_mib(pid)
                label = f"hq_growth: {mark:,} autos held"
                rows.append(_row(
                    f"{label} — capacity, batches of {CAPACITY_BATCH}",
                    stats.median(lat), stats.percentile(lat, 0.95),
                    f"{capacity:.0f} records/s (aim ≥ 500)"))
                rows.append(_row(
                    f"{label} — paced {PACED_RATE}/s, batches of {PACED_BATCH}",
                    stats.median(paced), stats.percentile(paced, 0.95),
                    f"p99 {p99:.0f} ms (aim ≤ 500)"))
                rows.append(_row(
                    f"{label} — new device pull from cursor 0", secs * 1000, secs * 1000,
                    f"{got:,} changes, {size / 2**20:.1f} MiB; pull log {changes:,} rows; "
                    f"DB {db_mib:.0f} MiB; HQ RSS {rss:.0f} MiB"))
                _progress(" | ".join(str(r["vs"]) for r in rows[-3:]))
                said = _compact(settings)
                if said is not None:
                    changes, db_mib = _db_figures(engine)
                    got, size, secs = _new_device_download(url, engine)
                    rows.append(_row(
                        f"{label} — after compact --keep-days 0: new device pull",
                        secs * 1000, secs * 1000,
                        f"{got:,} changes, {size / 2**20:.1f} MiB; pull log {changes:,} rows; "
                        f"DB {db_mib:.0f} MiB ({said})"))
                    _progress(str(rows[-1]["vs"]))
    finally:
        engine.dispose()
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    return rows
