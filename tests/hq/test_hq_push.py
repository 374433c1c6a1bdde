"""HQ push: every answer (accepted, duplicate, conflict, rejected with each reason,
missing_blobs), authentication failures, and record + receipt in one transaction."""

from __future__ import annotations

import hashlib
import json

import httpx
import pytest
from hqkit import SimDevice
from sqlalchemy import Column, MetaData, String, Table, text

from inspector_app.hq import ingest
from inspector_app.hq.devices import revoke_device
from inspector_app.security.keys import DeviceKey
from inspector_app.sync.protocol import API_PREFIX, MAX_PUSH_RECORDS


def held(hq, record_id):
    return hq.scalar("SELECT sha256 FROM records WHERE id = :id", id=record_id)


def receipts(hq, record_id):
    with hq.engine.connect() as conn:
        return [tuple(r) for r in conn.execute(
            text("SELECT status, reason FROM receipts WHERE record_id = :id ORDER BY id"),
            {"id": record_id})]


def test_a_valid_record_is_accepted_and_stored_with_its_receipt(hq, device):
    record = device.record()
    assert device.push_one(record) == {"id": record.id, "status": "accepted", "reason": None,
                                       "missing": []}
    assert held(hq, record.id) == record.sha256
    assert hq.scalar("SELECT payload FROM records WHERE id = :id", id=record.id) == record.payload
    assert receipts(hq, record.id) == [("accepted", None)]


def test_the_same_record_again_is_a_duplicate_and_stored_once(hq, device):
    record = device.record()
    device.push_one(record)
    assert device.push_one(record)["status"] == "duplicate"
    assert hq.scalar("SELECT COUNT(*) FROM records WHERE id = :id", id=record.id) == 1
    assert [s for s, _ in receipts(hq, record.id)] == ["accepted", "duplicate"]


def test_the_same_record_twice_in_one_batch_is_accepted_then_duplicate(hq, device):
    record = device.record()
    response = device.push(record, record)
    assert [r["status"] for r in response.json()["results"]] == ["accepted", "duplicate"]


def test_the_same_id_with_another_hash_is_a_conflict_and_hq_keeps_the_first(hq, device):
    envelope = device.envelope()
    first = device.record(envelope)
    device.push_one(first)
    changed = device.record({**envelope, "body": {**envelope["body"], "narrative": "outra"}})
    result = device.push_one(changed)
    assert result["status"] == "conflict"
    assert first.sha256 in result["reason"]
    assert held(hq, first.id) == first.sha256


def test_a_bad_signature_is_rejected(hq, device):
    record = device.record(key=DeviceKey.generate())
    result = device.push_one(record)
    assert result["status"] == "rejected"
    assert result["reason"].startswith("bad_signature:")
    assert held(hq, record.id) is None


def test_a_payload_that_does_not_hash_to_its_sha256_is_rejected(hq, device):
    record = device.record(sha256=hashlib.sha256(b"other").hexdigest())
    assert device.push_one(record)["reason"].startswith("hash_mismatch:")


def test_a_payload_not_in_canonical_form_is_rejected(hq, device):
    envelope = device.envelope()
    pretty = json.dumps(envelope, indent=1, sort_keys=True, ensure_ascii=False)
    record = device.record(envelope, payload=pretty,
                           sha256=hashlib.sha256(pretty.encode()).hexdigest())
    assert device.push_one(record)["reason"].startswith("not_canonical:")


def test_a_payload_that_is_not_a_json_object_is_rejected(hq, device):
    record = device.record(payload="[1, 2]", sha256=hashlib.sha256(b"[1, 2]").hexdigest())
    assert device.push_one(record)["reason"].startswith("invalid_payload:")


@pytest.mark.parametrize("field", ["number", "kind", "created_at"])
def test_fields_that_differ_from_the_signed_envelope_are_rejected(hq, device, field):
    changed = {"number": 999, "kind": "auto_vistoria",
               "created_at": "2026-01-01T00:00:00+00:00"}[field]
    record = device.record(**{field: changed})
    result = device.push_one(record)
    assert result["status"] == "rejected"
    assert result["reason"] == f"envelope_mismatch: {field} differs from the signed payload"


def test_a_verification_code_not_derived_from_the_id_is_rejected(hq, device):
    record = device.record(device.envelope(verification_code="AAAA-BBBB-CCCC"))
    assert device.push_one(record)["reason"].startswith("envelope_mismatch: verification_code")


def test_a_number_outside_the_devices_ranges_is_rejected(hq, device):
    outside = device.record(device.envelope(number=device.first + 5000))
    other_series = device.record(device.envelope(series="DEMO-1234", number=1))
    for record in (outside, other_series):
        result = device.push_one(record)
        assert result["status"] == "rejected"
        assert result["reason"].startswith("number_out_of_range:")


def test_a_number_already_carried_by_another_record_is_rejected(hq, device):
    device.push_one(device.record(device.envelope(number=7)))
    result = device.push_one(device.record(device.envelope(number=7)))
    assert result["reason"].startswith("number_taken:")


def test_a_record_replayed_under_another_devices_token_is_rejected(hq, device):
    record = device.record()
    assert device.push_one(record)["status"] == "accepted"
    thief = SimDevice(hq).enrol()
    replay = thief.push_one(record)
    assert replay["status"] == "rejected"
    assert replay["reason"].startswith("wrong_device:")
    # Re-signed by the other device's key, the envelope still names the first device.
    resigned = thief.record(json.loads(record.payload))
    assert thief.push_one(resigned)["reason"].startswith("wrong_device:")


def test_blobs_named_by_the_record_but_absent_are_listed_then_accepted_after_upload(hq, device):
    photo, signature = b"\xff\xd8 foto", b"\x89PNG assinatura"
    sha_photo, sha_sig = (hashlib.sha256(b).hexdigest() for b in (photo, signature))
    body = {"photos": [{"original_sha256": sha_photo, "working_sha256": sha_photo,
                        "thumb_sha256": sha_photo}],
            "signatures": {"agent": {"status": "signed", "png_sha256": sha_sig}},
            "cancelled_sha256": "ab" * 32}  # a record hash, not a file: never asked for
    record = device.record(device.envelope(body=body))
    result = device.push_one(record)
    assert result["status"] == "missing_blobs"
    assert result["missing"] == sorted([sha_photo, sha_sig])
    assert held(hq, record.id) is None
    device.put_blob(photo)
    assert device.push_one(record)["missing"] == [sha_sig]
    device.put_blob(signature)
    assert device.push_one(record)["status"] == "accepted"
    linked = hq.scalar("SELECT COUNT(*) FROM record_blobs WHERE record_id = :id", id=record.id)
    assert linked == 2


def test_a_batch_answers_each_record_in_order(hq, device):
    good, bad = device.record(), device.record(key=DeviceKey.generate())
    results = device.push(good, bad).json()["results"]
    assert [(r["id"], r["status"]) for r in results] == [(good.id, "accepted"),
                                                         (bad.id, "rejected")]


def test_more_than_100_records_in_a_batch_is_422(hq, device):
    record = device.record()
    response = device.push(*([record] * (MAX_PUSH_RECORDS + 1)))
    assert response.status_code == 422
    assert held(hq, record.id) is None


def test_push_without_a_token_or_with_an_unknown_one_is_401(hq, device):
    body = {"records": [device.record().model_dump()]}
    with hq.client() as anonymous, hq.client("not-a-token") as stranger:
        for client in (anonymous, stranger):
            response = client.post(f"{API_PREFIX}/push", json=body)
            assert response.status_code == 401
            assert response.headers["WWW-Authenticate"] == "Bearer"


def test_a_revoked_device_is_refused_on_first_contact(hq, device):
    revoke_device(hq.engine, device.device_id)
    record = device.record()
    assert device.push(record).status_code == 403
    with device.client() as client:
        assert client.get(f"{API_PREFIX}/pull").status_code == 403
        assert client.head(f"{API_PREFIX}/blobs/{'0' * 64}").status_code == 403
    assert held(hq, record.id) is None


def test_record_and_receipt_commit_together_or_not_at_all(hq, device, monkeypatch):
    # Break the receipt insert: the record of the same batch must not be stored either.
    missing_table = Table("no_such_table", MetaData(), Column("record_id", String),
                          Column("device_id", String), Column("status", String),
                          Column("reason", String), Column("sha256", String),
                          Column("at", String))
    monkeypatch.setattr(ingest, "receipts", missing_table)
    record = device.record()
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/push", json={"records": [record.model_dump()]})
    assert response.status_code == 500
    assert held(hq, record.id) is None
    monkeypatch.undo()
    assert device.push_one(record)["status"] == "accepted"


def test_a_malformed_push_is_422_naming_the_field_without_echoing_the_payload(hq, device):
    record = device.record(device.envelope(body={"driver": {"cpf": "16944060167"}}))
    bad = {**record.model_dump(), "kind": "Auto De Infração", "signature": "\ud800"}
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/push", content=json.dumps({"records": [bad]}),
                               headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    fields = {tuple(e["loc"]) for e in response.json()["detail"]}
    assert ("body", "records", 0, "kind") in fields
    assert "16944060167" not in response.text and "input" not in response.text


def test_a_payload_naming_a_file_by_something_not_a_sha256_is_rejected(hq, device):
    body = {"signatures": {"agent": {"status": "signed", "png_sha256": "../../etc/passwd"}}}
    result = device.push_one(device.record(device.envelope(body=body)))
    assert result["status"] == "rejected"
    assert result["reason"].startswith("invalid_payload:")


def test_an_unreachable_database_is_a_503_the_device_retries_not_a_500(tmp_path):
    import asyncio

    from inspector_app.hq.core.config import Settings
    from inspector_app.hq.main import create_app

    app = create_app(Settings(database_url="postgresql+psycopg://postgres@127.0.0.1:1/none",
                              blob_dir=tmp_path / "blobs"))

    async def ask():
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://hq") as client:
            return (await client.post("/api/v1/push", json={"records": []},
                                      headers={"Authorization": "Bearer x"}),
                    await client.get("/api/v1/health"))

    push, health = asyncio.run(ask())
    assert push.status_code == 503 and push.headers["Retry-After"] == "5"
    assert "indisponível" in push.json()["detail"]
    assert health.status_code == 503 and health.json()["status"] == "degraded"


def test_a_batch_that_loses_a_race_is_answered_again_record_by_record(hq, device, monkeypatch):
    # The batch path checks numbers with one query; make that query miss the record another
    # push committed just after it (the race window). The batch insert then hits the unique
    # index and the batch is answered record by record, each in its own savepoint.
    first = device.record(device.envelope(number=7))
    assert device.push_one(first)["status"] == "accepted"
    real, calls = ingest._numbers_taken, []

    def blind_once(conn, candidates):
        calls.append(len(candidates))
        return {} if len(calls) == 1 else real(conn, candidates)

    monkeypatch.setattr(ingest, "_numbers_taken", blind_once)
    fresh, clash = device.record(device.envelope(number=8)), device.record(device.envelope(number=7))
    results = device.push(fresh, clash).json()["results"]
    assert calls[0] == 2 and len(calls) > 1  # the batch query, then record by record
    assert [r["status"] for r in results] == ["accepted", "rejected"]
    assert results[1]["reason"].startswith("number_taken:")
    assert held(hq, fresh.id) == fresh.sha256 and held(hq, clash.id) is None
    assert receipts(hq, fresh.id) == [("accepted", None)]


def test_concurrent_pushes_of_the_same_batch_store_each_record_once(hq, device):
    from concurrent.futures import ThreadPoolExecutor

    batch = [device.record() for _ in range(20)]

    def push(_):
        with device.client() as client:
            body = {"records": [r.model_dump() for r in batch]}
            return client.post(f"{API_PREFIX}/push", json=body).json()["results"]

    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(push, range(4)))
    for index, record in enumerate(batch):
        statuses = sorted(a[index]["status"] for a in answers)
        assert statuses == ["accepted", "duplicate", "duplicate", "duplicate"], statuses
        assert held(hq, record.id) == record.sha256
    assert hq.scalar("SELECT COUNT(*) FROM records") == len(batch)


def test_the_same_batch_committed_between_the_two_checks_is_a_duplicate(hq, device,
                                                                         monkeypatch):
    # Another push of the same records commits just before this push reads which numbers
    # are taken (PostgreSQL, READ COMMITTED), so possibly after it read which ids are held:
    # the records must come back as duplicates, not as "number taken by themselves".
    import threading

    if hq.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one writer at a time: no window between the two reads")
    batch = [device.record(), device.record()]
    real, other = ingest._numbers_taken, []

    def other_push_commits_first(conn, candidates):
        if not other:
            other.append(None)
            pusher = threading.Thread(target=lambda: other.append(device.push(*batch).json()))
            pusher.start()
            pusher.join(timeout=30)
        return real(conn, candidates)

    monkeypatch.setattr(ingest, "_numbers_taken", other_push_commits_first)
    results = device.push(*batch).json()["results"]
    assert [r["status"] for r in other[1]["results"]] == ["accepted", "accepted"]
    assert [r["status"] for r in results] == ["duplicate", "duplicate"], results
