"""Run every benchmark and print one table (medians over repeated runs, one process).

``python -m benchmarks [name ...]`` runs only the named suites (see SUITES:
rules, store_seal, store_lookup, store_history, media, documents, pades, sync, faults,
crash, console — HQ's autos table, ``BENCH_CONSOLE_AUTOS`` —, hq_growth — HQ as autos
accumulate, ``BENCH_HQ_GROWTH`` for the checkpoints —, scale — the GUI on stores of
10k/100k records, ``BENCH_SCALE_SIZES``).
"""

from __future__ import annotations

import importlib
import platform
import sys

SUITES = (
    "rules", "store_seal", "store_lookup", "store_history", "media", "documents", "pades", "sync",
    "faults", "crash", "console", "hq_growth", "scale",
)


def main(argv: list[str]) -> int:
    chosen = argv or list(SUITES)
    unknown = [name for name in chosen if name not in SUITES]
    if unknown:
        print(f"unknown suite(s): {', '.join(unknown)}; known: {', '.join(SUITES)}")
        return 2
    rows: list[dict[str, object]] = []
    for name in chosen:
        module = importlib.import_module(f"benchmarks.bench_{name}")
        rows.extend(module.run())
        print(f"… {name} done", file=sys.stderr)
    width = max(len(str(r["name"])) for r in rows)
    print(f"# inspector benchmarks – Python {platform.python_version()} on {platform.machine()}")
    print(f"{'benchmark':<{width}}  {'median ms':>10}  {'p95 ms':>8}  comparison")
    for r in rows:
        median, p95 = float(str(r["median_ms"])), float(str(r["p95_ms"]))
        print(f"{r['name']!s:<{width}}  {median:>10.3f}  {p95:>8.3f}  {r['vs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
