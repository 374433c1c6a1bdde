"""End to end, on SQLite and PostgreSQL: a demo device enrols, seals autos (with signature
images), cancels one, syncs; HQ holds every record with the device's hash and every file,
the outbox is drained, a second sync sends nothing, and the public page tells the truth."""

from __future__ import annotations

import json

from sqlalchemy import text
from synckit import SUPERVISOR, outbox, seal_autos

from inspector_app import services
from inspector_app.hq.report import build_report
from inspector_app.store.sealing import load_record
from inspector_app.store.verify import verify_store
from inspector_app.sync import client as sync
from inspector_app.sync.protocol import API_PREFIX, blobs_of_envelope


def test_a_device_syncs_everything_exactly_once_and_hq_verifies_the_autos(hq_server, make_store):
    hq = hq_server
    hq.reset()
    hq.add_supervisor()  # the cancelamento names supervisor 1004; HQ's registry confirms it
    store = make_store()
    sync.enrol(store, hq_url=hq.url, code=hq.enrol_code(series="AI", range_size=500))
    autos = seal_autos(store, 10)
    cancelled = autos[3]
    services.cancel_auto(password="demo1004", store=store, session=SUPERVISOR, record_id=cancelled,
                         reason="placa anotada errada no auto")
    services.void_number(store=store, session=SUPERVISOR, reason="talão danificado na chuva")
    device = dict(store.conn.execute("SELECT id, sha256 FROM records").fetchall())
    files = {sha for rid in device for sha in blobs_of_envelope(load_record(store, rid).envelope)}

    summary = sync.sync_once(store, batch_size=7)
    assert summary.ok, summary.problems
    assert summary.accepted == len(device) and summary.pending == 0
    assert summary.blobs_uploaded == len(files)

    with hq.engine.connect() as conn:
        held = dict(conn.execute(text("SELECT id, sha256 FROM records")).all())
        payloads = dict(conn.execute(text("SELECT id, payload FROM records")).all())
    assert held == device  # every record, once, with the device's hash
    for rid, payload in payloads.items():
        assert payload == store.conn.execute(
            "SELECT payload FROM records WHERE id = ?", [rid]).fetchone()[0]
    assert all(hq.blobs.has(sha) for sha in files)
    assert all(acked for acked, *_ in outbox(store).values())
    assert verify_store(store).problems == []

    again = sync.sync_once(store)
    assert (again.ok, again.pushed, again.blobs_uploaded, again.blobs_present) == (
        True, 0, 0, 0)
    assert hq.scalar("SELECT COUNT(*) FROM records") == len(device)

    valid = next(a for a in autos if a != cancelled)
    with hq.client() as client:
        for rid, expected in ((valid, "Válido"), (cancelled, "Cancelado em")):
            record = load_record(store, rid)
            page = client.get(f"/verify/{record.verification_code}")
            assert page.status_code == 200
            assert "Documento autêntico" in page.text and expected in page.text
            assert record.display_number in page.text
            plate = record.envelope["body"]["vehicle"]["plate"]
            assert plate in page.text
            data = client.get(f"{API_PREFIX}/verify/{record.verification_code}").json()
            assert data["status"] == ("cancelled" if rid == cancelled else "valid")

    report = build_report(hq.engine)
    (rng,) = report["ranges"]
    assert (rng["issued"], rng["voided"], rng["missing"]) == (len(device) - 1, 1, 0)
    assert json.dumps(report)
