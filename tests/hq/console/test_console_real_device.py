"""Autos sealed by the real device side (services, the demo registry, photos and signature
PNGs, one cancelled by a supervisor) and synced by the real sync client reach the console's
table and pages with the fields of their signed envelopes."""

from __future__ import annotations

import hashlib

import pytest

from inspector_app import demo, demo_autos, services
from inspector_app.store.db import open_store
from inspector_app.store.sealing import load_record
from inspector_app.sync import client as sync
from inspector_app.sync.protocol import blobs_of_envelope

SUPERVISOR = services.Session(matricula="1004", name="Luíza Helena Magalhães",
                              role="supervisor")


@pytest.fixture
def store(tmp_path):
    store = open_store(tmp_path / "device")
    demo.seed_registry(store, vehicles=20, seed=3)
    yield store
    store.close()


def test_autos_synced_by_a_real_device_are_in_the_console(console, store, http) -> None:
    console.add_supervisor()
    sync.enrol(store, hq_url=console.url, code=console.enrol_code(series="AI", range_size=100))
    autos = demo_autos.seed_autos(store, autos=4, seed=5)
    services.cancel_auto(password="demo1004", store=store, session=SUPERVISOR,
                         record_id=autos[1], reason="placa anotada errada no auto")
    summary = sync.sync_once(store)
    assert summary.ok, summary.problems
    client = http("consulta")
    table = client.get("/console/autos").text
    for rid in autos:
        record = load_record(store, rid)
        env = record.envelope
        body = env["body"]
        assert record.display_number in table
        assert record.verification_code in table
        assert body["vehicle"]["holder_name"] in table
        assert body["agent"]["name"] in table
        for inf in body["outcome"]["infractions"]:
            assert inf["rule_id"] in table
    cancelled = load_record(store, autos[1])
    only = client.get("/console/autos", params={"situacao": "cancelado"}).text
    assert cancelled.display_number in only and "1 auto(s)" in only
    # The page of one auto: the signature verifies, every file it names is served intact.
    record = load_record(store, autos[0])
    page = client.get(f"/console/autos/{record.id}").text
    assert "Assinatura do dispositivo válida" in page
    files = blobs_of_envelope(record.envelope)
    assert files
    for sha in files:
        if f"/arquivo/{sha}" in page:
            answer = client.get(f"/console/autos/{record.id}/arquivo/{sha}")
            assert answer.status_code == 200
            assert hashlib.sha256(answer.content).hexdigest() == sha
