"""Sealing benchmark: one auto de infração sealed (number, canonical JSON, Ed25519 signature,
journal, outbox, one transaction with synchronous=FULL), without PDF, next to a bare SQLite
transaction that inserts the same payload once."""

from __future__ import annotations

import json
import sqlite3
import tempfile
import time
from pathlib import Path

from benchmarks import stats
from inspector_app.store import open_store
from inspector_app.store.sealing import RecordDraft, seal_records

AIM_MS = 20.0


def _payload(i: int) -> dict[str, object]:
    return {
        "pack": {"id": "DF_STPCR", "version": "2026.1", "hash": "e3" * 32},
        "occurred_at": "2026-04-14T10:30:00-03:00",
        "vehicle": {"plate": "JKL1A23", "make_model": "Marcopolo Volare W9", "seats": 28},
        "answers": {f"DF-SEG-{n:02d}": {"result": "fail" if n % 5 == 0 else "ok",
                                         "note": "Constatado na fiscalização."}
                    for n in range(1, 40)},
        "photos": [{"original_sha256": f"{n:064x}", "thumb_sha256": f"{n + 1:064x}"}
                   for n in range(4)],
        "narrative": f"Auto de demonstração n.º {i}: extintor vencido e porta sem trava.",
        "outcome": {"infractions": [{"rule_id": "DF15154.29.XIII", "fine_brl": "220.00"}]},
    }


def run(repeat: int = 200) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "store")
        seal_records(store, [RecordDraft("auto_infracao", _payload(0))])  # key, range, caches
        ours = []
        for i in range(repeat):
            t0 = time.perf_counter()
            seal_records(store, [RecordDraft("auto_infracao", _payload(i))])
            ours.append((time.perf_counter() - t0) * 1000)
        store.close()
        raw_conn = sqlite3.connect(str(Path(tmp) / "raw.db"), isolation_level=None)
        raw_conn.execute("PRAGMA journal_mode = WAL")
        raw_conn.execute("PRAGMA synchronous = FULL")
        raw_conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)")
        raw = []
        for i in range(repeat):
            text = json.dumps(_payload(i), sort_keys=True)
            t0 = time.perf_counter()
            raw_conn.execute("BEGIN IMMEDIATE")
            raw_conn.execute("INSERT INTO t(payload) VALUES (?)", [text])
            raw_conn.execute("COMMIT")
            raw.append((time.perf_counter() - t0) * 1000)
        raw_conn.close()
    return [
        {"name": "store: seal one auto (no PDF), synchronous=FULL",
         "median_ms": stats.median(ours), "p95_ms": stats.percentile(ours, 0.99),
         "vs": f"{stats.median(ours) / stats.median(raw):.1f}× the bare insert; "
               f"{stats.median(ours) / AIM_MS:.2f}× of the 20 ms aim (p95 column is p99)"},
        {"name": "baseline: bare SQLite insert of the payload, same pragmas",
         "median_ms": stats.median(raw), "p95_ms": stats.percentile(raw, 0.99), "vs": ""},
    ]
