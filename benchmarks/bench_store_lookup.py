"""Store benchmarks: plate lookup among 100,000 vehicles and history by plate among 1,000,000
rows, each next to the raw SQLite query it wraps.

Half of the lookups type the plate in the old form (``ABC-1234``) and half in the Mercosul
form of the same plates (``ABC1C34``); both must hit the same row through ``plate_key``.
``p95_ms`` is what the shared table prints; ``p99_ms`` (the issue's figure, aim ≤ 2 ms) is
in each row and in the comparison text. Latencies are the best of ROUNDS rounds of the same
2,000 lookups (see ``_time_each``).
"""

from __future__ import annotations

import datetime as dt
import random
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from inspector_app.demo import seed_history, seed_registry
from inspector_app.domain.identity import parse_plate
from inspector_app.store.db import Store, open_store
from inspector_app.store.reference import find_vehicle, history_for

VEHICLES = 100_000
HISTORY = 1_000_000
HISTORY_FALLBACK = 200_000
HISTORY_SEED_BUDGET_S = 60.0
LOOKUPS = 2_000
ROUNDS = 3
AIM_P99_MS = 2.0
TODAY = dt.date(2026, 4, 14)


def _percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


def _time_each(
    fn: Callable[[str], object], keys: Sequence[str]
) -> tuple[list[float], list[float]]:
    """Per-call (wall, CPU) milliseconds over ``keys``: the round, of ROUNDS, with the
    lowest wall-clock p99.

    Wall time is what the inspector waits; CPU time (``thread_time``) leaves out the
    moments the process was not running, which on a busy machine is what the p99 of a
    0.1 ms call mostly measures. The raw-SQL baseline is measured the same way.
    """
    for key in keys[:50]:  # warm the page cache and the pack cache
        fn(key)
    best: tuple[list[float], list[float]] | None = None
    for _ in range(ROUNDS):
        wall, cpu = [], []
        for key in keys:
            w0, c0 = time.perf_counter(), time.thread_time()
            fn(key)
            cpu.append((time.thread_time() - c0) * 1000)
            wall.append((time.perf_counter() - w0) * 1000)
        if best is None or _percentile(wall, 0.99) < _percentile(best[0], 0.99):
            best = (wall, cpu)
    assert best is not None
    return best


def _lookup_plates(store: Store, rng: random.Random) -> list[str]:
    """LOOKUPS plate texts: each sampled plate once in the old form, once in Mercosul form."""
    keys = [
        str(r[0])
        for r in store.conn.execute("SELECT plate_key FROM ref_vehicles ORDER BY plate_key")
        if parse_plate(str(r[0])).old() is not None
    ]
    chosen = rng.sample(keys, LOOKUPS // 2)
    texts = []
    for key in chosen:
        plate = parse_plate(key)
        old = plate.old()
        assert old is not None
        texts += [f"{old[:3]}-{old[3:]}", plate.mercosul()]
    rng.shuffle(texts)
    return texts


def _row(name: str, samples: list[float], vs: str) -> dict[str, object]:
    return {
        "name": name,
        "median_ms": _percentile(samples, 0.5),
        "p95_ms": _percentile(samples, 0.95),
        "p99_ms": _percentile(samples, 0.99),
        "vs": vs,
    }


def _compare(
    name: str,
    baseline_name: str,
    wrapped: tuple[list[float], list[float]],
    raw: tuple[list[float], list[float]],
    *,
    aim: str = "",
) -> list[dict[str, object]]:
    ratio = _percentile(wrapped[0], 0.5) / max(_percentile(raw[0], 0.5), 1e-9)

    def p99(samples: tuple[list[float], list[float]]) -> str:
        wall, cpu = (_percentile(x, 0.99) for x in samples)
        return f"p99 {wall:.3f} ms wall / {cpu:.3f} ms CPU"

    return [
        _row(name, wrapped[0], f"{p99(wrapped)}{aim}; {ratio:.1f}× the raw query (median)"),
        _row(baseline_name, raw[0], p99(raw)),
    ]


def _seed_history(store: Store) -> tuple[int, float]:
    """(rows, seconds): HISTORY rows, or HISTORY_FALLBACK when the first HISTORY_FALLBACK
    rows show that 1,000,000 would take longer than HISTORY_SEED_BUDGET_S to seed."""
    chunks = HISTORY // HISTORY_FALLBACK
    t0 = time.perf_counter()
    rows = seed_history(store, rows=HISTORY_FALLBACK, seed=1, today=TODAY)
    if (time.perf_counter() - t0) * chunks <= HISTORY_SEED_BUDGET_S:
        for seed in range(2, chunks + 1):  # other seeds: other row ids
            rows += seed_history(store, rows=HISTORY_FALLBACK, seed=seed, today=TODAY)
    return rows, time.perf_counter() - t0


def _one_run(name: str, seconds: float, vs: str) -> dict[str, object]:
    ms = seconds * 1000
    return {"name": name, "median_ms": ms, "p95_ms": ms, "p99_ms": ms, "vs": vs}


def run() -> list[dict[str, Any]]:
    rng = random.Random(11)
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="inspector-bench-") as tmp:
        store = open_store(Path(tmp))
        t0 = time.perf_counter()
        seed_registry(store, vehicles=VEHICLES, seed=1, today=TODAY, history=0)
        seconds = time.perf_counter() - t0
        results.append(
            _one_run(
                f"store: demo seed, {VEHICLES:,} vehicles (one run)",
                seconds,
                f"{seconds:.1f} s; aim well under 60 s",
            )
        )

        plates = _lookup_plates(store, rng)
        keys = [parse_plate(p).canonical_key() for p in plates]
        wrapped = _time_each(lambda p: find_vehicle(store, p, today=TODAY), plates)
        raw_sql = "SELECT * FROM ref_vehicles WHERE plate_key = ?"
        raw = _time_each(lambda k: store.conn.execute(raw_sql, [k]).fetchall(), keys)
        results += _compare(
            f"store: find_vehicle, {VEHICLES:,} vehicles, old + Mercosul forms",
            "baseline: raw SELECT * FROM ref_vehicles WHERE plate_key = ?",
            wrapped,
            raw,
            aim=f" (aim ≤ {AIM_P99_MS:g} ms)",
        )

        rows, seconds = _seed_history(store)
        label = f"{rows:,} history rows"
        if rows < HISTORY:
            label += f" (1,000,000 projected > {HISTORY_SEED_BUDGET_S:g} s to seed)"
        results.append(_one_run(f"store: demo seed_history, {label} (one run)", seconds,
                                f"{seconds:.1f} s"))
        wrapped = _time_each(lambda p: history_for(store, plate_key=p), plates)
        raw_sql = (
            "SELECT rule_id, date, status, points, auto_number FROM ref_history "
            "WHERE plate_key = ? ORDER BY date"
        )
        raw = _time_each(lambda k: store.conn.execute(raw_sql, [k]).fetchall(), keys)
        results += _compare(
            f"store: history_for(plate), {label}, ~{rows / VEHICLES:.0f} per plate, both forms",
            "baseline: raw SELECT … FROM ref_history WHERE plate_key = ? ORDER BY date",
            wrapped,
            raw,
        )
        store.close()
    return results


if __name__ == "__main__":
    for r in run():
        print(f"{r['name']:<100} {r['median_ms']:>10.3f} {r['p99_ms']:>10.3f}  {r['vs']}")
