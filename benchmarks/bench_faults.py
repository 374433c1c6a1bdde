"""Exactly once at a larger scale than CI (issue 5: "more in ``make bench``").

The harness of ``tests/sync/test_faults.py`` (fault-injecting proxy: drop, reset mid-body,
delay past the client's timeout, answer lost after HQ committed; HQ in its own process,
killed and restarted; the PostgreSQL cluster restarted when ``pg_ctlcluster`` can) with
20 devices × 500 records, each with a photo, on PostgreSQL. The row reports the wall time
and the faults injected; any record lost, duplicated, altered or left in an outbox makes
the suite fail. Skipped (one row saying so) when PostgreSQL is unreachable.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import psycopg

TESTS = Path(__file__).resolve().parent.parent / "tests"
DEVICES, RECORDS = 20, 500
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def run() -> list[dict[str, object]]:
    for folder in (TESTS, TESTS / "sync"):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    from synckit import store_from_template  # type: ignore[import-not-found]
    from test_faults import (  # type: ignore[import-not-found]  # tests/sync, on sys.path
        Scenario,
        _can_restart_postgres,
        run_scenario,
    )

    from inspector_app import demo
    from inspector_app.store.db import DB_NAME, Store, open_store

    name = f"sync: {DEVICES} devices × {RECORDS} records with photos through faults, PostgreSQL"
    try:
        psycopg.connect(PG_ADMIN, connect_timeout=3).close()
    except psycopg.Error as exc:
        return [{"name": f"{name}: SKIPPED ({exc})", "median_ms": 0.0, "p95_ms": 0.0, "vs": ""}]
    folder = Path(tempfile.mkdtemp(prefix="bench-faults-"))
    stores: list[Store] = []
    try:
        template = folder / "template"
        seeded = open_store(template)
        demo.seed_registry(seeded, vehicles=40, seed=1)
        seeded.close()

        def make_store(device: str) -> Store:
            store: Store = store_from_template(template / DB_NAME, folder / device)
            stores.append(store)
            return store

        restart = _can_restart_postgres()
        t0 = time.perf_counter()
        outcome = run_scenario(Scenario(devices=DEVICES, records=RECORDS, rounds=10,
                                        backend="postgresql", restart_postgres=restart),
                               folder, make_store)
        elapsed = (time.perf_counter() - t0) * 1000
    finally:
        for store in stores:
            store.close()
        shutil.rmtree(folder, ignore_errors=True)
    if outcome.problems:
        raise RuntimeError(f"faults benchmark: {outcome.problems[:5]}")
    faulted = sum(n for mode, n in outcome.faults.items() if mode != "pass")
    total = sum(outcome.faults.values())
    return [{"name": name, "median_ms": elapsed, "p95_ms": elapsed,
             "vs": f"0 lost, 0 duplicated; {faulted} of {total} requests faulted, "
                   f"{outcome.faulty_syncs} sync runs, HQ killed, PostgreSQL "
                   f"{'restarted' if outcome.postgres_restarted else 'not restarted'}"}]
