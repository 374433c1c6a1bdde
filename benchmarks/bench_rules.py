"""Rules-engine benchmarks: a full checklist with a long infraction history."""

from __future__ import annotations

import datetime as dt
import json
import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from benchmarks import stats
from inspector_app.calendars import calendar_around
from inspector_app.domain.case import parse_case
from inspector_app.domain.engine import evaluate
from inspector_app.packs import get_pack
from inspector_app.services import evaluate_case

AIM_MS = 5.0


def build_case(pack_id: str, *, items: int, history: int, seed: int = 7) -> dict[str, Any]:
    """A case answering ``items`` checklist items (1 in 5 failing) with ``history`` rows."""
    rng = random.Random(seed)
    pack = get_pack(pack_id)
    answers: dict[str, Any] = {}
    all_items = list(pack.items.values())
    for i in range(items):
        item = all_items[i % len(all_items)]
        failing = rng.random() < 0.2 and bool(item.fail) and not item.requires_facts
        answers[item.id] = "fail" if failing else "ok"
    manual: list[str] = []
    selectable = [r.id for r in pack.rules.values() if r.selectable and not r.preconditions]
    while len(answers) + len(manual) < items:
        manual.append(rng.choice(selectable))
    occurred = dt.date(2026, 4, 14)
    rows = [
        {
            "rule_id": rng.choice(selectable),
            "date": (occurred - dt.timedelta(days=rng.randint(1, 900))).isoformat(),
            "status": rng.choice(["upheld", "upheld", "upheld", "pending", "cancelled"]),
        }
        for _ in range(history)
    ]
    return {
        "pack": pack_id,
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "location_type": "terminal",
        "vehicle": {
            "plate": "JKL1A23",
            "chassis_year": 2020,
            "body_year": 2020,
            "seats": 40,
            "doors": 4,
            "last_vistoria": "2026-03-01",
        },
        "driver": {"cpf": "16944060167", "registered": True},
        "checklist": answers,
        "infractions": manual,
        "history": rows,
        # A revoked pack (JF_1972) evaluates a 2026 fact only as a historical re-evaluation.
        **({"historical_reevaluation": {"reason": "benchmark"}}
           if pack.meta.effective_until is not None else {}),
    }


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm caches (pack, calendar)
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def _json_round_trip(text: str) -> object:
    return evaluate_case(data=json.loads(text)).as_json()


def _parse_only(text: str) -> object:
    return parse_case(json.loads(text))


def run(repeat: int = 300) -> list[dict[str, object]]:
    results: list[dict[str, object]] = []
    for pack_id in ("DF_STPCR", "JF_1972"):
        data = build_case(pack_id, items=50, history=100)
        text = json.dumps(data)
        pack = get_pack(pack_id)
        case = parse_case(data)
        cal = calendar_around(pack, case.date)
        engine_only = _times(partial(evaluate, pack, case, cal), repeat)
        full = _times(partial(_json_round_trip, text), repeat)
        parse_only = _times(partial(_parse_only, text), repeat)
        for name, samples in (
            (f"rules: evaluate {pack_id}, 50 answers, 100 history (engine only)", engine_only),
            (f"rules: JSON in → outcome JSON, {pack_id} (parse + engine + serialise)", full),
            (f"baseline: json.loads + parse_case only, {pack_id}", parse_only),
        ):
            aim = f"{stats.median(samples) / AIM_MS:.2f}× of the 5 ms aim"
            results.append(stats.row(name, samples, "" if "baseline" in name else aim))
    return results
