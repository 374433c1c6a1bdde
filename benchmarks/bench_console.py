"""The HQ console's Autos table on PostgreSQL (issue 15): N autos (``BENCH_CONSOLE_AUTOS``,
default 100,000; the issue's figure is 1,000,000) filled with INSERT … SELECT
generate_series into ``records`` and ``auto_index``, then pages fetched over HTTP from
``inspector-hq serve`` (its own process) by a logged-in staff session:

* page 1 with no filter (the newest autos, and the count capped at 10,000);
* a plate (one of 50,000 vehicles, typed in the old format: the index holds the
  Mercosul key);
* an agent (one of 300) in one month;
* page 1,000 with no filter (offset 49,950 on the ordering index).

Each row: median and p95 of ``BENCH_CONSOLE_SAMPLES`` requests (default 40); compared with
``/api/v1/health`` on the same server (the bare cost of a request) and with the aim, p95
under 300 ms. Skipped (one row saying so) when PostgreSQL is unreachable.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from sqlalchemy import text

from benchmarks import stats
from benchmarks.bench_sync import PG_ADMIN, _serve_hq
from inspector_app.hq.console.staff import add_staff
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.security.passwords import FAST_PARAMETERS

AUTOS = int(os.environ.get("BENCH_CONSOLE_AUTOS", "100000"))
SAMPLES = int(os.environ.get("BENCH_CONSOLE_SAMPLES", "40"))
PLATES, AGENTS = 50_000, 300
AIM_MS = 300.0
PASSWORD = "senha-do-benchmark"
DEVICE = "00000000-0000-4000-8000-000000000001"

# Autos spread over 24 months of 2025-2026, every 20th cancelled; vehicle k = i % 50,000
# has the Mercosul plate "<A..E>NC<digit><A..J><2 digits>" (one with an old form).
_FILL_RECORDS = """
INSERT INTO records (id, device_id, kind, series, number, created_at, received_at, payload,
                     sha256, signature, verification_code, refers_to, plate_key, occurred_on)
SELECT md5('r' || i)::uuid::text, :device, 'auto_infracao', 'AI', i,
       to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS".000000+00:00"'),
       to_char(t, 'YYYY-MM-DD"T"HH24:MI:SS".000000+00:00"'), '{}', md5('s' || i) || md5('t' || i),
       'x', upper(substr(md5('v' || i), 1, 12)), NULL, plate, to_char(t, 'YYYY-MM-DD')
FROM (SELECT i, timestamp '2025-01-01' + (i * (730.0 * 86400 / :n)) * interval '1 second' AS t,
             chr(65 + i % 50000 / 10000) || 'NC' || (i % 10000 / 1000)
               || chr(65 + i % 1000 / 100) || lpad((i % 100)::text, 2, '0') AS plate
      FROM generate_series(1, :n) AS i) AS g
"""
_FILL_INDEX = """
INSERT INTO auto_index (record_id, kind, device_id, series, number, verification_code, plate_key,
                        plate, holder_name, holder_search, holder_document, agent_matricula,
                        agent_name, rule_ids, organ, occurred_at, status, received_at, place,
                        latitude, longitude)
SELECT id, kind, device_id, series, number, verification_code, plate_key, plate_key,
       'Permissionário ' || (number % 20000), 'permissionario ' || (number % 20000), NULL,
       (1000 + number % 300)::text, 'Agente ' || (number % 300),
       ' DF_STPCR.art' || (20 + number % 15) || ' ', 'SEMOB-DF',
       replace(created_at, '.000000+00:00', '-03:00'),
       CASE WHEN number % 20 = 0 THEN 'cancelado' ELSE 'valido' END, received_at,
       'Rodoviária', '-15.793889', '-47.882778'
FROM records WHERE kind = 'auto_infracao'
"""


def _old_form(plate: str) -> str:
    """ANC1D23 -> ANC-1323 (the old format of the same vehicle)."""
    return f"{plate[:3]}-{plate[3]}{ord(plate[4]) - 65}{plate[5:]}"


def _fill(engine: object) -> float:
    start = time.perf_counter()
    with engine.begin() as conn:  # type: ignore[attr-defined]
        conn.execute(text("INSERT INTO devices (id, name, public_key, key_id, token_hash, "
                          "enrolled_at) VALUES (:d, 'bench', 'x', 'x', 'x', '2025-01-01')"),
                     {"d": DEVICE})
        conn.execute(text(_FILL_RECORDS), {"device": DEVICE, "n": AUTOS})
        conn.execute(text(_FILL_INDEX))
    auto = engine.execution_options(isolation_level="AUTOCOMMIT")  # type: ignore[attr-defined]
    with auto.connect() as conn:
        conn.execute(text("VACUUM ANALYZE records"))
        conn.execute(text("VACUUM ANALYZE auto_index"))
    return time.perf_counter() - start


def _login(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=60)
    form = client.get("/console/login")
    token = re.search(r'name="csrf_token" value="([^"]+)"', form.text)
    assert token is not None
    answer = client.post("/console/login", data={"login": "bench", "password": PASSWORD,
                                                 "csrf_token": token.group(1)})
    if answer.status_code != 303:
        raise RuntimeError(f"benchmark login failed: {answer.status_code}")
    return client


def _timed(client: httpx.Client, path: str, params: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    answer = client.get(path, params=params)
    elapsed = (time.perf_counter() - start) * 1000
    if answer.status_code != 200:
        raise RuntimeError(f"{path} {params}: HTTP {answer.status_code}")
    return elapsed, answer.text


def run() -> list[dict[str, object]]:
    import psycopg

    label = f"console: autos table, {AUTOS:_} autos in PostgreSQL".replace("_", ".")
    name = f"bench_console_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        admin = psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=3)
    except psycopg.Error as exc:
        return [stats.row(f"{label}: SKIPPED ({exc})", [0.0])]
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    folder = Path(tempfile.mkdtemp(prefix="bench-console-"))
    settings = Settings(database_url=f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}",
                        blob_dir=folder / "blobs")
    engine = make_engine(settings.database_url)
    try:
        upgrade(engine)
        add_staff(engine, "bench", "Benchmark", "consulta", PASSWORD, parameters=FAST_PARAMETERS)
        fill_s = _fill(engine)
        with _serve_hq(settings, env={"HQ_CONSOLE_SECURE_COOKIE": "0"}) as url:
            client = _login(url)
            try:
                return _measure(client, fill_s, label)
            finally:
                client.close()
    finally:
        engine.dispose()
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _measure(client: httpx.Client, fill_s: float, label: str) -> list[dict[str, object]]:
    rng = random.Random(15)
    for _ in range(5):  # warm the server's connections and PostgreSQL's caches
        _timed(client, "/console/autos", {})
    health = [_timed(client, "/api/v1/health", {})[0] for _ in range(SAMPLES)]
    base = stats.percentile(health, 0.95)
    cases: list[tuple[str, list[dict[str, str]], str]] = []
    picks = [rng.randrange(1, min(AUTOS, PLATES) + 1) for _ in range(SAMPLES)]
    plates = [f"{chr(65 + i % 50000 // 10000)}NC{i % 10000 // 1000}{chr(65 + i % 1000 // 100)}"
              f"{i % 100:02d}" for i in picks]
    cases.append(("page 1, no filter", [{} for _ in range(SAMPLES)], "autos"))
    cases.append(("plate (old format typed)",
                  [{"placa": _old_form(p)} for p in plates], "auto(s)"))
    months = [(2025 + m // 12, 1 + m % 12) for m in (rng.randrange(24) for _ in range(SAMPLES))]
    cases.append(("agent + month",
                  [{"agente": str(1000 + rng.randrange(AGENTS)), "de": f"{y}-{m:02d}-01",
                    "ate": f"{y + (m == 12)}-{(m % 12) + 1:02d}-01"} for y, m in months],
                  "auto(s)"))
    deep = min(1000, max(1, AUTOS // 50))
    cases.append((f"page {deep:_}".replace("_", ".") + ", no filter",
                  [{"pagina": str(deep)} for _ in range(SAMPLES)], "página"))
    rows = [stats.row(f"{label}: /api/v1/health (bare request)", health,
                      f"fill {fill_s:.1f} s")]
    for name, params, must in cases:
        samples = []
        for p in params:
            elapsed, body = _timed(client, "/console/autos", p)
            if must not in body or 'href="/console/autos/' not in body:
                raise RuntimeError(f"{name}: unexpected page for {p}")
            samples.append(elapsed)
        p95 = stats.percentile(samples, 0.95)
        verdict = "OK" if p95 < AIM_MS else "OVER"
        rows.append(stats.row(f"{label}: {name}", samples,
                              f"p95 {p95 / base:.1f}× health; aim p95 < {AIM_MS:.0f} ms: "
                              f"{verdict}"))
    return rows
