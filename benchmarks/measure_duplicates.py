"""Issue 14, finding 6: rows and time when devices push many autos for one plate, day and
rules. ``python -m benchmarks.measure_duplicates [DEVICES] [AUTOS]`` (defaults 2 × 500) on a
fresh PostgreSQL database at 127.0.0.1 (dropped at the end): HQ ingest called directly,
batches of 100, then ``build_report``. Prints suspected_duplicates rows, ingest seconds and
report seconds."""

from __future__ import annotations

import base64
import sys
import tempfile
import time
import uuid
from pathlib import Path

import psycopg

from inspector_app.hq.blobs import FolderBlobStore
from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.devices import create_enrolment_code, enrol, get_device
from inspector_app.hq.ingest import ingest
from inspector_app.hq.report import build_report
from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.sync.protocol import EnrolRequest, PushRecord, verification_code_for

ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"


def record(device_id: str, key: DeviceKey, series: str, number: int) -> PushRecord:
    rid = str(uuid.uuid4())
    created_at = "2026-04-14T13:05:00.000000+00:00"
    envelope: dict[str, object] = {
        "envelope_version": 1, "id": rid, "kind": "auto_infracao", "series": series,
        "number": number, "created_at": created_at,
        "device_id": device_id, "key_id": key.device_key_id, "inspection_id": None,
        "refers_to": None, "plate_key": "JJK8D48", "holder_id": "H1",
        "occurred_on": "2026-04-14", "verification_code": verification_code_for(rid),
        "body": {"outcome": {"pack": "DF_STPA", "infractions": [
            {"rule_id": "R1", "points": 5}, {"rule_id": "R2", "points": 3}]}},
    }
    payload = canonical_json(envelope)
    return PushRecord(id=rid, kind="auto_infracao", series=series, number=number,
                      created_at=created_at, payload=payload.decode(),
                      sha256=sha256_hex(payload),
                      signature=base64.b64encode(key.sign(payload)).decode())


def main(devices: int, autos: int) -> None:
    name = f"hq_dup_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        engine = make_engine(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
        upgrade(engine)
        blobs = FolderBlobStore(Path(tempfile.mkdtemp()))
        started = time.perf_counter()
        for _ in range(devices):
            key = DeviceKey.generate()
            answer = enrol(engine, EnrolRequest(
                code=create_enrolment_code(engine, range_size=autos),
                public_key=key.public_key_b64(), device_name="bench"))
            device = get_device(engine, answer.device_id)
            assert device is not None
            first = answer.number_range.first
            batch = [record(device.id, key, answer.number_range.series, first + i)
                     for i in range(autos)]
            for start in range(0, autos, 100):
                results = ingest(engine, device, batch[start:start + 100], blobs)
                assert {r.status for r in results} == {"accepted"}, results[0]
        ingest_s = time.perf_counter() - started
        with engine.connect() as conn:
            rows = conn.exec_driver_sql("SELECT count(*) FROM suspected_duplicates").scalar()
        started = time.perf_counter()
        report = build_report(engine)
        report_s = time.perf_counter() - started
        print(f"{devices} devices x {autos} autos: suspected_duplicates rows {rows}, "
              f"ingest {ingest_s:.2f} s, report {report_s:.2f} s "
              f"({len(report['suspected_duplicates'])} flags in the report)")
        engine.dispose()
    finally:
        with psycopg.connect(ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:]]
    main(*(args + [2, 500][len(args):]))
