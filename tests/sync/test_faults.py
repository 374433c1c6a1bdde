"""Exactly once over a bad network: N devices seal records with a photo each and sync
repeatedly through a fault-injecting proxy (drop, reset mid-body, delay past the client's
timeout, answer lost after HQ committed), while HQ (uvicorn in its own process) is killed
and restarted once. After the faults stop, one clean sync each must leave HQ with every
record exactly once, with the device's hash, every photo, and every outbox drained.

The negative control runs the same harness against an HQ that skips its "same id already
held" check: the same check must catch it. The 10 devices × 200 records variant runs on
PostgreSQL and restarts the PostgreSQL cluster mid-run as well (about half a minute).
"""

from __future__ import annotations

import contextlib
import hashlib
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from faultproxy import FaultProxy
from hq_process import HQProcess
from hqkit import database_url, free_port
from s3kit import blobs_backend, new_bucket, s3_environment
from sqlalchemy import text

from inspector_app.hq.blobs import BlobStore, FolderBlobStore
from inspector_app.hq.blobs_s3 import S3BlobStore
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.devices import create_enrolment_code
from inspector_app.store.db import Store
from inspector_app.store.sealing import RecordDraft, seal_records
from inspector_app.sync import client as sync

FAULTY_TIMEOUT = httpx.Timeout(1.0, connect=1.0)
PG_RESTART = ["pg_ctlcluster", "--skip-systemctl-redirect", "15", "main", "restart"]


@dataclass
class Scenario:
    devices: int
    records: int
    rounds: int = 5
    seed: int = 7
    idempotent: bool = True
    backend: str = "sqlite"
    restart_postgres: bool = False
    instances: int = 1  # HQ processes on one database and one blob store, behind the proxy
    blobs: str = field(default_factory=blobs_backend)  # "folder" or "s3" (HQ_TEST_BLOBS)


@dataclass
class Outcome:
    problems: list[str] = field(default_factory=list)
    faults: dict[str, int] = field(default_factory=dict)
    hq_killed: bool = False
    postgres_restarted: bool = False
    faulty_syncs: int = 0
    partial_uploads: int = 0
    served: dict[int, int] = field(default_factory=dict)  # requests answered per HQ port


class SeededFaults:
    """Per-request fault choice from a seeded generator; the first push always loses its
    answer (so every run has at least one record HQ committed and the device never heard of)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.first_push_done = False

    def __call__(self, method: str, path: str) -> str:
        with self.lock:
            if "/push" in path and not self.first_push_done:
                self.first_push_done = True
                return "lose"
            roll = self.rng.random()
        if "/push" in path:
            table = (("lose", 0.15), ("reset", 0.06), ("drop", 0.05), ("delay", 0.05))
        else:
            table = (("lose", 0.04), ("reset", 0.03), ("drop", 0.03), ("delay", 0.01))
        for mode, p in table:
            if roll < p:
                return mode
            roll -= p
        return "pass"


def _seal_with_photo(store: Store, rng: random.Random) -> None:
    photo = rng.randbytes(rng.randint(2_000, 6_000))
    sha = hashlib.sha256(photo).hexdigest()
    folder = store.blob_dir / sha[:2]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sha}.jpg").write_bytes(photo)
    seal_records(store, [RecordDraft("numero_anulado", {
        "reason": "formulário em papel danificado",
        "agent": {"matricula": "1004", "name": "Luíza Helena Magalhães"},
        "photos": [{"item_id": None, "original_sha256": sha, "name": "talao.jpg"}],
    })])


@contextlib.contextmanager
def _database(backend: str, folder: Path) -> Iterator[str]:
    with database_url(backend, folder) as url:
        yield url


def run_scenario(scenario: Scenario, folder: Path, make_store) -> Outcome:
    outcome = Outcome()
    with _database(scenario.backend, folder) as url:
        engine = make_engine(url)
        upgrade(engine)
        blob_dir = folder / "hq-blobs"
        env: dict[str, str] = {}
        if scenario.blobs == "s3":
            s3 = new_bucket(folder / "hq-blob-staging")
            env = s3_environment(s3)
            blobs: BlobStore = S3BlobStore(s3)
        else:
            blobs = FolderBlobStore(blob_dir)
        hqs = [HQProcess(url, blob_dir, free_port(), idempotent=scenario.idempotent, env=env)
               for _ in range(scenario.instances)]
        for hq in hqs:
            hq.start()
        faults = SeededFaults(scenario.seed)
        proxy = FaultProxy([hq.port for hq in hqs],
                           delay=FAULTY_TIMEOUT.read + 0.3).start()  # type: ignore[operator]
        try:
            stores = []
            for i in range(scenario.devices):
                store = make_store(f"device{i}")
                code = create_enrolment_code(engine, series="AI",
                                             range_size=scenario.records + 10)
                sync.enrol(store, hq_url=proxy.url, code=code)
                stores.append(store)
            proxy.choose = faults
            _faulty_rounds(scenario, stores, hqs[0], proxy, outcome)
            proxy.choose = lambda method, path: "pass"
            outcome.faults = dict(proxy.seen)
            for i, store in enumerate(stores):
                summary = sync.sync_once(store)
                if not summary.ok or summary.pending:
                    outcome.problems.append(
                        f"device{i}: clean sync error={summary.error} pending={summary.pending} "
                        f"problems={summary.problems[:3]}")
            outcome.served = dict(proxy.served)
            _check(engine, blobs, stores, outcome)
        finally:
            proxy.stop()
            for hq in hqs:
                hq.kill()
            engine.dispose()
    return outcome


def _faulty_rounds(scenario: Scenario, stores: list[Store], hq: HQProcess, proxy: FaultProxy,
                   outcome: Outcome) -> None:
    per_round = -(-scenario.records // scenario.rounds)
    kill_at = max(2, scenario.devices * 2)  # pushes seen before HQ is killed
    failures: list[BaseException] = []

    def device(i: int, store: Store) -> None:
        rng = random.Random(scenario.seed * 1000 + i)
        try:
            sealed = 0
            for _ in range(scenario.rounds):
                for _ in range(min(per_round, scenario.records - sealed)):
                    _seal_with_photo(store, rng)
                    sealed += 1
                for _ in range(8):  # until a run gets through, or gives up for this round
                    summary = sync.sync_once(store, transport=httpx.HTTPTransport(),
                                             timeout=FAULTY_TIMEOUT, batch_size=10)
                    outcome.faulty_syncs += 1
                    if summary.ok and not summary.pending:
                        break
        except BaseException as exc:  # surfaced in the main thread
            failures.append(exc)

    def chaos() -> None:
        deadline = time.monotonic() + 120
        while proxy.pushes < kill_at and time.monotonic() < deadline:
            time.sleep(0.01)
        hq.kill()
        outcome.hq_killed = True
        time.sleep(0.3)
        hq.start()
        if scenario.restart_postgres:
            while proxy.pushes < kill_at * 3 and time.monotonic() < deadline:
                time.sleep(0.01)
            subprocess.run(PG_RESTART, check=True, capture_output=True, timeout=120)
            outcome.postgres_restarted = True

    threads = [threading.Thread(target=device, args=(i, s)) for i, s in enumerate(stores)]
    killer = threading.Thread(target=chaos)
    killer.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    killer.join()
    if failures:
        raise failures[0]


def _check(engine, blobs: BlobStore, stores: list[Store], outcome: Outcome) -> None:
    """0 lost, 0 duplicated, HQ's payload hashing to the device's hash, photos at HQ, outbox
    drained; every violation becomes a line of ``outcome.problems``."""
    device: dict[str, str] = {}
    photos: set[str] = set()
    for i, store in enumerate(stores):
        device.update(dict(store.conn.execute("SELECT id, sha256 FROM records").fetchall()))
        photos |= {p.name.split(".")[0] for p in store.blob_dir.glob("*/*") if p.is_file()}
        left = store.conn.execute(
            "SELECT COUNT(*) FROM outbox WHERE acked_at IS NULL").fetchone()[0]
        if left:
            outcome.problems.append(f"device{i}: {left} record(s) still in the outbox")
        for q in sync.quarantined(store):
            outcome.problems.append(f"device{i}: quarantined {q.record_id}: {q.reason}")
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT id, sha256, payload FROM records")).all()
        numbers = conn.execute(text(
            "SELECT COUNT(*) - COUNT(DISTINCT series || '-' || number) FROM records")).scalar()
    held: dict[str, int] = {}
    for rid, sha, payload in rows:
        held[rid] = held.get(rid, 0) + 1
        if rid not in device:
            outcome.problems.append(f"HQ holds {rid}, which no device sealed")
        elif sha != device[rid] or hashlib.sha256(payload.encode()).hexdigest() != device[rid]:
            outcome.problems.append(f"{rid}: HQ payload hash differs from the device's")
    lost = sorted(set(device) - set(held))
    duplicated = sorted(rid for rid, n in held.items() if n > 1)
    if lost:
        outcome.problems.append(f"{len(lost)} record(s) lost, e.g. {lost[0]}")
    if duplicated or numbers:
        outcome.problems.append(f"{len(duplicated)} id(s) and {numbers} number(s) duplicated")
    # Uploads cut short are removed; only an HQ killed mid-write may leave one (harmless).
    outcome.partial_uploads = blobs.partial_uploads()
    for sha in photos:
        try:
            intact = hashlib.sha256(blobs.read(sha)).hexdigest() == sha
        except FileNotFoundError:
            intact = False
        if not intact:
            outcome.problems.append(f"photo {sha[:12]} missing or altered at HQ")


def test_every_record_reaches_hq_exactly_once_through_faults_and_an_hq_crash(tmp_path,
                                                                             make_store):
    outcome = run_scenario(Scenario(devices=4, records=50), tmp_path, make_store)
    print(f"faults {outcome.faults}, faulty syncs {outcome.faulty_syncs}")
    assert outcome.problems == []
    assert outcome.hq_killed
    faulted = sum(n for mode, n in outcome.faults.items() if mode != "pass")
    assert outcome.faults.get("lose", 0) >= 1 and faulted >= 20
    assert set(outcome.faults) >= {"pass", "lose", "reset", "drop"}


def test_negative_control_without_idempotency_is_caught(tmp_path, make_store):
    outcome = run_scenario(Scenario(devices=4, records=50, idempotent=False), tmp_path,
                           make_store)
    print(f"caught: {outcome.problems[:3]}")
    assert outcome.problems, "the check must catch an HQ that is not idempotent"
    assert any("quarantined" in p or "outbox" in p or "duplicated" in p
               for p in outcome.problems)


def _can_restart_postgres() -> bool:
    return shutil.which("pg_ctlcluster") is not None and Path("/etc/postgresql/15/main").is_dir()


def test_ten_devices_two_hundred_records_on_postgresql_with_restarts(tmp_path, make_store):
    restart = _can_restart_postgres()
    outcome = run_scenario(Scenario(devices=10, records=200, rounds=8, backend="postgresql",
                                    restart_postgres=restart), tmp_path, make_store)
    print(f"faults {outcome.faults}, faulty syncs {outcome.faulty_syncs}")
    assert outcome.problems == []
    assert outcome.hq_killed and outcome.postgres_restarted == restart
    assert sum(n for mode, n in outcome.faults.items() if mode != "pass") >= 50


def test_two_hq_instances_on_one_database_and_one_bucket_with_one_killed(tmp_path,
                                                                         make_store):
    """HQ run as two stateless instances behind a balancing proxy, on one PostgreSQL database
    and one S3 bucket: requests alternate between them, one is SIGKILLed and restarted
    mid-run, and still every record is at HQ exactly once with every photo intact."""
    outcome = run_scenario(Scenario(devices=4, records=40, rounds=4, backend="postgresql",
                                    instances=2, blobs="s3"), tmp_path, make_store)
    print(f"faults {outcome.faults}, served per instance {outcome.served}")
    assert outcome.problems == []
    assert outcome.hq_killed
    assert len(outcome.served) == 2 and min(outcome.served.values()) >= 10  # both worked
