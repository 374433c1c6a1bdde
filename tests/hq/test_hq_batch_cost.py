"""A batch costs the same however many autos HQ holds (issue 19): the statements a batch
of 100 autos sends and the rows PostgreSQL reads for it (``pg_stat_user_tables``: rows
fetched by sequential and index scans), at 1,000 and at 4,000 autos held. The autos are
dated in order, 2.5 a day, so the law's 12-month windows hold about as many rows at both
sizes: only something that reads the history beyond the windows (a standing recomputed
from the whole history, a duplicate check scanning a plate's every day) makes the second
figure grow."""

from __future__ import annotations

import base64
import datetime as dt
import random
import uuid
from typing import Any

from hqkit import database_url
from sqlalchemy import create_engine, event, text
from sqlalchemy.pool import StaticPool

from inspector_app.hq.blobs import FolderBlobStore
from inspector_app.hq.core.db import upgrade
from inspector_app.hq.devices import create_enrolment_code, enrol, get_device
from inspector_app.hq.ingest import ingest
from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.sync.protocol import EnrolRequest, PushRecord, verification_code_for

HOLDERS = 40
RULES = (("DF15154.28.IV", 3), ("DF15154.29.XIII", 5), ("DF15154.30.II", 2))
SMALL, LARGE, BATCH = 1_000, 3_000, 100
PER_DAY = 2.5
FIRST_DAY = dt.date.today() - dt.timedelta(days=int((LARGE + 2 * BATCH) / PER_DAY) + 5)


class _Device:
    def __init__(self, engine: Any) -> None:
        self.key = DeviceKey.generate()
        answer = enrol(engine, EnrolRequest(
            code=create_enrolment_code(engine, series="AI", range_size=LARGE + 1000),
            public_key=self.key.public_key_b64(), device_name="custo"))
        device = get_device(engine, answer.device_id)
        assert device is not None
        self.device = device
        self.number = answer.number_range.first

    def auto(self, rng: random.Random, n: int) -> PushRecord:
        day = (FIRST_DAY + dt.timedelta(days=int(n / PER_DAY))).isoformat()
        holder = rng.randrange(HOLDERS)
        rid = str(uuid.uuid4())
        rule, points = rng.choice(RULES)
        envelope = {
            "envelope_version": 1, "id": rid, "kind": "auto_infracao", "series": "AI",
            "number": self.number, "created_at": f"{day}T12:00:00.000000+00:00",
            "device_id": self.device.id, "key_id": self.key.device_key_id,
            "inspection_id": None, "refers_to": None, "plate_key": f"JJK{holder:04d}",
            "holder_id": f"H{holder}", "occurred_on": day,
            "verification_code": verification_code_for(rid),
            "body": {"agent": {"matricula": "1001"}, "vehicle": {"plate": f"JJK{holder:04d}"},
                     "outcome": {"pack": "DF_STPA",
                                 "infractions": [{"rule_id": rule, "points": points}]}}}
        self.number += 1
        payload = canonical_json(envelope)
        return PushRecord(id=rid, kind="auto_infracao", series="AI",
                          number=envelope["number"], created_at=envelope["created_at"],
                          payload=payload.decode(), sha256=sha256_hex(payload),
                          signature=base64.b64encode(self.key.sign(payload)).decode(),
                          blobs=[])


def _rows_read(engine: Any) -> dict[str, int]:
    """Rows fetched so far by sequential and index scans, per table."""
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_stat_force_next_flush()"))
        conn.commit()
    with engine.connect() as conn:
        conn.execute(text("SELECT pg_stat_clear_snapshot()"))
        return {str(name): int(n) for name, n in conn.execute(text(
            "SELECT relname, coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0) "
            "FROM pg_stat_user_tables"))}


def _measure(engine: Any, device: _Device, blobs: Any, start: int
             ) -> tuple[int, int, dict[str, int]]:
    """(statements, rows read, rows read per table) of one batch of :data:`BATCH` autos, the next in order."""
    rng = random.Random(99)  # the same holders in both measured batches
    batch = [device.auto(rng, start + i) for i in range(BATCH)]
    statements: list[str] = []

    def count(conn, cursor, statement, *args):
        statements.append(statement)

    before = _rows_read(engine)
    event.listen(engine, "before_cursor_execute", count)
    try:
        results = ingest(engine, device.device, batch, blobs)
    finally:
        event.remove(engine, "before_cursor_execute", count)
    assert {r.status for r in results} == {"accepted"}, [r.reason for r in results if r.reason][:2]
    after = _rows_read(engine)
    tables = {t: n - before.get(t, 0) for t, n in after.items() if n != before.get(t, 0)}
    return len(statements), sum(tables.values()), tables


def _fill(engine: Any, device: _Device, blobs: Any, rng: random.Random, start: int,
          stop: int) -> None:
    for first in range(start, stop, 500):
        batch = [device.auto(rng, n) for n in range(first, min(first + 500, stop))]
        assert {r.status for r in ingest(engine, device.device, batch, blobs)} == {"accepted"}


def test_a_batch_costs_the_same_at_4000_autos_held_as_at_1000(tmp_path):
    with database_url("postgresql", tmp_path) as url:
        # One connection throughout, so the statistics this test reads are its own.
        engine = create_engine(url, poolclass=StaticPool)
        try:
            upgrade(engine)
            # A few thousand rows are a small table, which the planner would rather read
            # whole; discouraged from it, it plans as on a large one (index ranges), so the
            # rows read are what the queries ask for, not what is cheapest at this size.
            with engine.connect() as conn:
                conn.execute(text("SET enable_seqscan = off"))
                conn.commit()
            blobs = FolderBlobStore(tmp_path / "blobs")
            device, rng = _Device(engine), random.Random(19)
            _fill(engine, device, blobs, rng, 0, SMALL)
            small = _measure(engine, device, blobs, SMALL)
            _fill(engine, device, blobs, rng, SMALL + BATCH, LARGE)
            large = _measure(engine, device, blobs, LARGE + BATCH)
        finally:
            engine.dispose()
    statements_small, rows_small, _ = small
    statements_large, rows_large, _ = large
    assert statements_large == statements_small, (small, large)
    # The windows hold about as many rows at both sizes; 4× the autos must not show.
    assert rows_large <= rows_small * 1.3 + 200, f"{small} {large}"


