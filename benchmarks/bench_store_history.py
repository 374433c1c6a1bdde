"""History search benchmark: sealed records by plate or by printed auto number, over a
records table of 1,000,000 rows, next to the raw SQLite query for the same lookup.

The rows are bulk-inserted (not sealed one by one: sealing a million autos would take half
an hour); the lookup path measured is the services' one.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks import stats
from inspector_app import services
from inspector_app.store import open_store
from inspector_app.store.sealing import ensure_device, verification_code

ROWS = 1_000_000
PLATES = 100_000
LOOKUPS = 2_000


def _plate(i: int) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    first, second = letters[i // 26 % 26], letters[i % 26]
    return f"J{first}{second}{i % 10}{letters[i // 10 % 10]}{i % 97 % 10}{i % 7}"


def _fill(conn_path: Path) -> None:
    store = open_store(conn_path)
    ensure_device(store)
    rng = random.Random(3)
    batch = []
    with store.atomic():
        for n in range(1, ROWS + 1):
            rid = f"00000000-0000-4000-8000-{n:012d}"
            plate = _plate(rng.randrange(PLATES))
            batch.append((rid, "auto_infracao", "BENCH", n, plate,
                          f"2026-{1 + n % 12:02d}-{1 + n % 28:02d}", "2026-01-01T00:00:00+00:00",
                          json.dumps({"id": rid, "n": n}), "0" * 64, "", "k", n,
                          verification_code(rid)))
            if len(batch) == 50_000:
                store.conn.executemany(
                    "INSERT INTO records(id, kind, series, number, plate_key, occurred_on, "
                    "created_at, payload, sha256, signature, key_id, journal_seq, "
                    "verification_code) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch)
                batch.clear()
    store.close()


def _times(fn: Callable[[str], object], args: Sequence[str]) -> list[float]:
    out = []
    for a in args:
        t0 = time.perf_counter()
        fn(a)
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def _row(name: str, ours: list[float], raw: list[float] | None) -> dict[str, object]:
    vs = ""
    if raw:
        vs = (f"{stats.median(ours) / stats.median(raw):.1f}× the raw query "
              f"(p99 {stats.percentile(ours, 0.99):.3f} ms)")
    return stats.row(name, ours, vs)


def run() -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        _fill(Path(tmp))
        fill_s = time.perf_counter() - t0
        store = open_store(Path(tmp))
        rng = random.Random(5)
        plates = [_plate(rng.randrange(PLATES)) for _ in range(LOOKUPS)]
        numbers = [f"BENCH-{rng.randrange(1, ROWS):06d}" for _ in range(LOOKUPS)]
        conn = store.conn
        by_plate = _times(lambda p: services.search_records(store=store, plate=p), plates)
        raw_plate = _times(lambda p: conn.execute(
            "SELECT id, payload FROM records WHERE plate_key = ? ORDER BY occurred_on DESC, "
            "created_at DESC LIMIT 50", [p]).fetchall(), plates)
        by_number = _times(lambda n: services.find_record(store=store, number=n), numbers)
        raw_number = _times(lambda n: conn.execute(
            "SELECT id, payload FROM records WHERE series = ? AND number = ?",
            ["BENCH", int(n.split("-")[1])]).fetchall(), numbers)
        store.close()
    return [
        _row(f"store: history by plate, {ROWS:,} records (~10 per plate; filled in "
             f"{fill_s:.0f} s)", by_plate, raw_plate),
        _row("baseline: raw SQL by plate_key (same rows)", raw_plate, None),
        _row(f"store: find auto by printed number, {ROWS:,} records", by_number, raw_number),
        _row("baseline: raw SQL by (series, number)", raw_number, None),
    ]
