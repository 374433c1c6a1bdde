"""Summaries of timing samples, shared by every benchmark (nearest-rank percentiles)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def median(samples: Sequence[float]) -> float:
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] if ordered else 0.0


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(len(ordered) * q) - 1)] if ordered else 0.0


def row(name: str, samples: Sequence[float], vs: str = "") -> dict[str, object]:
    """One line of the ``make bench`` table."""
    return {"name": name, "median_ms": median(samples), "p95_ms": percentile(samples, 0.95),
            "vs": vs}
