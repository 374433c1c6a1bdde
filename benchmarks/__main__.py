"""Run every benchmark and print one table (medians over repeated runs, one process)."""

from __future__ import annotations

import platform
import sys

from benchmarks import bench_rules


def main() -> int:
    rows = bench_rules.run()
    width = max(len(str(r["name"])) for r in rows)
    print(f"# inspector benchmarks – Python {platform.python_version()} on {platform.machine()}")
    print(f"{'benchmark':<{width}}  {'median ms':>10}  {'p95 ms':>8}  comparison")
    for r in rows:
        print(f"{r['name']!s:<{width}}  {r['median_ms']:>10.3f}  {r['p95_ms']:>8.3f}  {r['vs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
