"""The device's sync engine against a real HQ on loopback: enrolment, push with blobs,
unknown outcomes retried, quarantine, resumable uploads, pull with cursor and tombstones."""

from __future__ import annotations

import base64
import json
import uuid

import httpx
import pytest
from hqkit import free_port
from sqlalchemy import text
from synckit import FaultTransport, outbox, record_count, seal_autos, void_numbers

from inspector_app.hq.devices import revoke_device
from inspector_app.hq.reference import append_change, delete_row, live_rows
from inspector_app.hq.registry import delete_reference, import_registry
from inspector_app.security.keys import load_or_create_device_key
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.store import numbering, reference
from inspector_app.store.sealing import load_record, verification_code
from inspector_app.store.verify import verify_store
from inspector_app.sync import client as sync
from inspector_app.sync.protocol import (
    API_PREFIX,
    REFERENCE_KEYS,
    blobs_of_envelope,
    verification_code_for,
)


def enrolled(hq, store, **code_kwargs):
    sync.enrol(store, hq_url=hq.url + "/", code=hq.enrol_code(**code_kwargs))
    return store


def hq_records(hq):
    with hq.engine.connect() as conn:
        return dict(conn.execute(text("SELECT id, sha256 FROM records")).all())


# --- enrolment --------------------------------------------------------------------------------


def test_enrol_stores_token_and_hq_range_and_new_records_take_hq_numbers(hq, make_store):
    store = make_store()
    result = sync.enrol(store, hq_url=hq.url, code=hq.enrol_code(series="SEMOB", range_size=30))
    assert (result.series, result.first, result.last) == ("SEMOB", 1, 30)
    assert store.meta("device_id") == result.device_id
    assert store.meta(sync.META_HQ_URL) == hq.url
    assert store.meta(sync.META_TOKEN)
    assert [(r.series, r.first, r.last, r.source) for r in numbering.ranges(store)] == [
        ("SEMOB", 1, 30, "hq")]
    (rid,) = void_numbers(store, 1)
    record = load_record(store, rid)
    assert (record.series, record.number) == ("SEMOB", 1)
    assert record.envelope["device_id"] == result.device_id


def test_enrolling_twice_is_refused_on_the_device(hq, make_store):
    store = enrolled(hq, make_store())
    with pytest.raises(sync.SyncError) as caught:
        sync.enrol(store, hq_url=hq.url, code=hq.enrol_code())
    assert "já está cadastrado" in caught.value.message_pt


def test_a_refused_enrolment_gives_hqs_reason_and_changes_nothing(hq, make_store):
    store = make_store()
    with pytest.raises(sync.SyncError) as caught:
        sync.enrol(store, hq_url=hq.url, code="AAAA-BBBB-CCCC-DDDD")
    assert caught.value.message_pt == "A sede recusou o cadastro: Código de cadastro inválido."
    assert store.meta(sync.META_TOKEN) is None and numbering.ranges(store) == []


def test_enrolment_with_hq_unreachable_says_so(make_store):
    with pytest.raises(sync.SyncError) as caught:
        sync.enrol(make_store(), hq_url=f"http://127.0.0.1:{free_port()}", code="X" * 16)
    assert "Não foi possível falar com a sede" in caught.value.message_pt


def test_an_enrolment_whose_answer_was_lost_succeeds_with_a_new_code_not_the_used_one(
        hq, make_store):
    store, code = make_store(), hq.enrol_code()
    lost = FaultTransport(lose=lambda request, n: request.url.path.endswith("/enrol"))
    with pytest.raises(sync.SyncError) as caught:
        sync.enrol(store, hq_url=hq.url, code=code, transport=lost)
    assert "peça um novo código" in caught.value.message_pt
    assert store.meta(sync.META_TOKEN) is None
    with pytest.raises(sync.SyncError) as caught:  # a used code never gives a token again
        sync.enrol(store, hq_url=hq.url, code=code)
    assert "já utilizado" in caught.value.message_pt
    result = sync.enrol(store, hq_url=hq.url, code=hq.enrol_code())
    assert hq.scalar("SELECT COUNT(*) FROM devices WHERE revoked_at IS NULL") == 1
    assert hq.scalar("SELECT id FROM devices WHERE revoked_at IS NULL") == result.device_id
    void_numbers(store, 1)
    assert sync.sync_once(store).accepted == 1


def test_sync_before_enrolment_is_refused(make_store):
    with pytest.raises(sync.SyncError) as caught:
        sync.sync_once(make_store())
    assert "não está cadastrado" in caught.value.message_pt


# --- push -------------------------------------------------------------------------------------


def test_sync_delivers_every_record_oldest_first_and_the_next_sync_sends_nothing(hq, make_store):
    store = enrolled(hq, make_store())
    ids = void_numbers(store, 5)
    summary = sync.sync_once(store, batch_size=2)
    assert (summary.ok, summary.online, summary.pushed, summary.accepted) == (True, True, 5, 5)
    assert summary.pending == 0
    assert all(acked and status == "accepted" for acked, status, *_ in outbox(store).values())
    with hq.engine.connect() as conn:
        order = [r[0] for r in conn.execute(text("SELECT record_id FROM receipts ORDER BY id"))]
    assert order == ids
    again = sync.sync_once(store)
    assert (again.pushed, again.blobs_uploaded, again.blobs_present) == (0, 0, 0)
    assert json.loads(json.dumps(again.as_json()))["pushed"] == 0


def test_hq_down_leaves_every_record_pending_and_unacknowledged(hq, make_store):
    store = enrolled(hq, make_store())
    void_numbers(store, 2)
    store.set_meta(sync.META_HQ_URL, f"http://127.0.0.1:{free_port()}")
    summary = sync.sync_once(store)
    assert not summary.ok and not summary.online
    assert "sede inacessível" in summary.error
    assert summary.pending == 2
    assert all(not acked for acked, *_ in outbox(store).values())


def test_a_timed_out_push_is_unknown_not_failed_and_is_delivered_next_time(hq, make_store):
    store = enrolled(hq, make_store())
    void_numbers(store, 3)

    def timeout_on_push(request, n):
        if request.url.path.endswith("/push"):
            raise httpx.ReadTimeout("HQ too slow", request=request)

    summary = sync.sync_once(store, transport=FaultTransport(fault=timeout_on_push))
    assert summary.unknown == 3 and summary.pending == 3 and summary.error
    assert {v[:3] for v in outbox(store).values()} == {(0, "unknown", 1)}
    assert hq_records(hq) == {}
    summary = sync.sync_once(store)
    assert (summary.accepted, summary.pending) == (3, 0)


def test_an_answer_lost_after_hq_committed_is_resent_and_acknowledged_as_duplicate(hq, make_store):
    store = enrolled(hq, make_store())
    ids = void_numbers(store, 4)
    lose_push = FaultTransport(lose=lambda request, n: request.url.path.endswith("/push"))
    summary = sync.sync_once(store, transport=lose_push)
    assert summary.unknown == 4
    assert set(hq_records(hq)) == set(ids)  # HQ committed; the device does not know it
    assert all(not acked for acked, *_ in outbox(store).values())
    summary = sync.sync_once(store)
    assert (summary.duplicate, summary.accepted, summary.pending) == (4, 0, 0)
    assert len(hq_records(hq)) == 4
    assert {v[1] for v in outbox(store).values()} == {"duplicate"}


def test_a_conflict_is_quarantined_with_its_reason_and_nothing_is_deleted(hq, make_store):
    store = enrolled(hq, make_store())
    (rid,) = void_numbers(store, 1)
    # HQ already holds this id with other content (e.g. a restored backup signed it before).
    original = load_record(store, rid)
    envelope = {**original.envelope, "body": {**original.envelope["body"], "reason": "outro"}}
    payload = canonical_json(envelope)
    key = load_or_create_device_key(store.key_path)
    with hq.client(store.meta(sync.META_TOKEN)) as client:
        client.post(f"{API_PREFIX}/push", json={"records": [{
            "id": rid, "kind": original.kind, "series": original.series,
            "number": original.number, "created_at": original.created_at,
            "payload": payload.decode(), "sha256": sha256_hex(payload),
            "signature": base64.b64encode(key.sign(payload)).decode()}]})
    summary = sync.sync_once(store)
    assert summary.conflict == 1 and summary.pending == 0 and summary.quarantined == 1
    (q,) = sync.quarantined(store)
    assert (q.record_id, q.status) == (rid, "conflict")
    assert q.reason.startswith("conflict: HQ holds this id")
    assert record_count(store) == 1 and outbox(store)[rid][0] == 0
    assert sync.sync_once(store).pushed == 0  # quarantined: not resent by itself
    assert sync.requeue(store, [rid]) == 1
    assert sync.sync_once(store).conflict == 1


def test_records_sealed_in_demo_mode_before_enrolment_are_rejected_and_kept(hq, make_store):
    store = make_store()
    (demo_id,) = void_numbers(store, 1)  # demo range, local device id
    assert load_record(store, demo_id).series.startswith("DEMO-")
    enrolled(hq, store)
    (real_id,) = void_numbers(store, 1)
    assert load_record(store, real_id).series == "AI"
    summary = sync.sync_once(store)
    assert (summary.accepted, summary.rejected, summary.pending) == (1, 1, 0)
    (q,) = sync.quarantined(store)
    assert q.record_id == demo_id and q.reason.startswith("wrong_device:")
    assert set(hq_records(hq)) == {real_id}
    assert record_count(store) == 2


def bundle_shas(content: bytes) -> list[str]:
    """The files of a blob bundle, in order (each part: '<sha256> <size>\\n' + bytes)."""
    shas, pos = [], 0
    while pos < len(content):
        end = content.index(b"\n", pos)
        sha, size = content[pos:end].decode().split(" ")
        shas.append(sha)
        pos = end + 1 + int(size)
    return shas


def test_blobs_go_before_the_record_that_needs_them_and_are_never_sent_twice(hq, make_store):
    store = enrolled(hq, make_store())
    ids = seal_autos(store, 2)
    needed = {sha for rid in ids for sha in blobs_of_envelope(load_record(store, rid).envelope)}
    assert needed
    sent: list[str] = []

    def note_bundles(request, n):
        if request.url.path.endswith("/blobs/bundle"):
            sent.extend(bundle_shas(request.content))

    transport = FaultTransport(fault=note_bundles)
    summary = sync.sync_once(store, transport=transport)
    assert summary.ok and summary.blobs_uploaded == len(needed)
    first_push = transport.log.index(("POST", f"{API_PREFIX}/push"))
    asked = transport.log.index(("POST", f"{API_PREFIX}/blobs/missing"))
    bundles = [i for i, (_, p) in enumerate(transport.log) if p.endswith("/blobs/bundle")]
    assert asked < min(bundles) and max(bundles) < first_push
    assert sorted(sent) == sorted(needed)  # each file once
    assert all(hq.blobs.has(sha) for sha in needed)
    again = FaultTransport()
    sync.sync_once(store, transport=again)
    assert again.count("POST", f"{API_PREFIX}/blobs") == 0  # confirmed: not even asked


def test_an_interrupted_upload_resumes_without_resending_finished_files(hq, make_store,
                                                                       monkeypatch):
    monkeypatch.setattr(sync, "BUNDLE_BYTES", 1)  # one file per bundle: several requests
    store = enrolled(hq, make_store())
    seal_autos(store, 2)
    bundles: list[list[str]] = []

    def drop_third_bundle(request, n):
        if request.url.path.endswith("/blobs/bundle"):
            bundles.append(bundle_shas(request.content))
            if len(bundles) == 3:
                raise httpx.RemoteProtocolError("connection reset mid-body", request=request)

    first = sync.sync_once(store, transport=FaultTransport(fault=drop_third_bundle))
    assert not first.ok and first.blobs_uploaded == 2 and first.pushed == 0
    done = {sha for bundle in bundles[:2] for sha in bundle}
    resent: list[str] = []

    def note(request, n):
        if request.url.path.endswith("/blobs/bundle"):
            resent.extend(bundle_shas(request.content))

    second = sync.sync_once(store, transport=FaultTransport(fault=note))
    assert second.ok and second.pending == 0
    assert resent and not set(resent) & done


def test_a_blob_hq_lost_is_uploaded_again_and_the_record_pushed_in_the_same_run(hq, make_store):
    store = enrolled(hq, make_store())
    (rid,) = seal_autos(store, 1)[:1]
    for sha in blobs_of_envelope(load_record(store, rid).envelope):
        store.conn.execute("INSERT INTO sync_blobs VALUES (?, 'antes')", [sha])  # wrongly sure
    summary = sync.sync_once(store)
    assert summary.ok and summary.missing_blobs == 0 and summary.pending == 0
    assert summary.blobs_uploaded >= 1 and rid in hq_records(hq)


def test_a_revoked_device_is_told_so_and_keeps_every_record(hq, make_store):
    store = enrolled(hq, make_store())
    void_numbers(store, 2)
    revoke_device(hq.engine, store.meta("device_id"))
    summary = sync.sync_once(store)
    assert "recusou este dispositivo" in summary.error and "revogado" in summary.error
    assert summary.pending == 2 and record_count(store) == 2


def test_outbox_marks_keep_the_store_verifiable(hq, make_store):
    store = enrolled(hq, make_store())
    void_numbers(store, 3)
    sync.sync_once(store)
    assert verify_store(store).problems == []


# --- pull -------------------------------------------------------------------------------------

REGISTRY = {
    "permit_holders": [{"id": "hq-h1", "kind": "pj", "name": "Viação Cerrado Ltda",
                        "cnpj": "11.222.333/0001-81", "permit_number": "P-900",
                        "permit_status": "active", "pack_id": "DF_STPCR"}],
    "vehicles": [{"id": "hq-v1", "plate": "QWE4R56", "holder_id": "hq-h1",
                  "pack_id": "DF_STPCR", "seats": 44}],
    "inspectors": [{"id": "hq-i1", "matricula": "7777", "name": "Nova Agente",
                    "role": "inspector",
                    "password_hash": "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"}],
}


def test_pull_brings_registry_changes_and_tombstones_into_the_reference_tables(
        hq, make_store, tmp_path):
    store = enrolled(hq, make_store())
    path = tmp_path / "reg.json"
    path.write_text(json.dumps(REGISTRY), encoding="utf-8")
    assert import_registry(hq.engine, path).ok
    summary = sync.sync_once(store, pull_limit=2)
    assert summary.ok and summary.pulled == 4 and summary.pages == 2  # + the device's range
    vehicle = store.conn.execute(
        "SELECT plate, holder_id, seats FROM ref_vehicles WHERE id = 'hq-v1'").fetchone()
    assert tuple(vehicle) == ("QWE4R56", "hq-h1", 44)
    assert store.conn.execute(
        "SELECT name FROM ref_inspectors WHERE matricula = '7777'").fetchone()[0] == "Nova Agente"
    cursor = int(store.meta(sync.META_PULL_CURSOR))
    delete_reference(hq.engine, "vehicles", "hq-v1")
    summary = sync.sync_once(store)
    assert summary.pulled == 1
    assert store.conn.execute("SELECT 1 FROM ref_vehicles WHERE id = 'hq-v1'").fetchone() is None
    assert int(store.meta(sync.META_PULL_CURSOR)) > cursor
    assert store.meta("registry_source") == "hq"


def device_standing(store):
    cursor = store.conn.execute("SELECT * FROM ref_standing ORDER BY id")
    names = [d[0] for d in cursor.description]
    return {row[0]: dict(zip(names, row, strict=True)) for row in cursor.fetchall()}


def hq_standing(hq):
    with hq.engine.connect() as conn:
        return {r["id"]: {**r, "cassacao_proposed": int(r["cassacao_proposed"])}
                for r in live_rows(conn, "standing")}


def reference_state(store):
    tables = [*(f"ref_{t}" for t in REFERENCE_KEYS if t != "number_ranges"), "number_ranges"]
    return {t: store.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in tables}


def test_pull_stores_hqs_standing_and_applies_its_tombstones(hq, make_store):
    store = enrolled(hq, make_store())
    seal_autos(store, 4)
    assert sync.sync_once(store).ok  # push, HQ recomputes the holders' standing, pull
    at_hq = hq_standing(hq)
    assert at_hq and device_standing(store) == at_hq
    key = sorted(at_hq)[0]
    holder_id, plate = (None, key[len("plate:"):]) if key.startswith("plate:") else (key, None)
    view = reference.standing_for(store, holder_id=holder_id, plate_key=plate)
    assert view is not None and view.text_pt().startswith("Situação na sede (")

    with hq.engine.begin() as conn:  # an HQ-side correction: the row is withdrawn
        delete_row(conn, "standing", key)
    summary = sync.sync_once(store)
    assert summary.ok and summary.pulled == 1
    assert set(device_standing(store)) == set(at_hq) - {key}
    assert reference.standing_for(store, holder_id=holder_id, plate_key=plate) is None


def test_pulling_the_whole_log_again_as_migration_0004_makes_it_changes_nothing(
        hq, make_store, tmp_path):
    store = enrolled(hq, make_store())
    path = tmp_path / "reg.json"
    path.write_text(json.dumps(REGISTRY), encoding="utf-8")
    assert import_registry(hq.engine, path).ok
    seal_autos(store, 3)
    assert sync.sync_once(store).ok
    delete_reference(hq.engine, "vehicles", "hq-v1")
    assert sync.sync_once(store).ok
    before, cursor = reference_state(store), store.meta(sync.META_PULL_CURSOR)
    assert before["ref_standing"]
    store.set_meta(sync.META_PULL_CURSOR, "0")
    summary = sync.sync_once(store, pull_limit=7)
    assert summary.ok and summary.pulled == hq.scalar(
        "SELECT count(*) FROM changes WHERE device_id IS NULL OR device_id = :d",
        d=store.meta("device_id"))
    assert reference_state(store) == before
    assert store.meta(sync.META_PULL_CURSOR) == cursor


def test_a_pull_change_that_cannot_be_applied_is_quarantined_and_the_pull_moves_on(
        hq, make_store):
    store = enrolled(hq, make_store())
    assert sync.sync_once(store).ok
    with hq.engine.begin() as conn:
        append_change(conn, "inspectors", "hq-i9", "upsert", {  # role the device refuses
            "id": "hq-i9", "matricula": "9", "name": "X", "role": "chefe",
            "password_hash": "$argon2id$x", "updated_at": "2026-04-14"})
        append_change(conn, "lines", "hq-l9", "upsert", {
            "id": "hq-l9", "code": "9", "name": "Linha boa", "pack_id": "DF_STPA",
            "updated_at": "2026-04-14"})
    summary = sync.sync_once(store)
    assert summary.ok and summary.pulled == 2 and summary.pull_quarantined == 1
    assert any("ficou em quarentena" in p for p in summary.problems)
    assert store.meta(sync.META_PULL_CURSOR) == str(hq.scalar("SELECT MAX(seq) FROM changes"))
    assert store.conn.execute("SELECT 1 FROM ref_lines WHERE id = 'hq-l9'").fetchone()
    assert store.conn.execute("SELECT 1 FROM ref_inspectors WHERE id = 'hq-i9'").fetchone() \
        is None
    (held,) = sync.pull_quarantine(store)
    assert (held.table, held.key) == ("inspectors", "hq-i9") and "IntegrityError" in held.reason


def test_the_verification_code_rule_is_the_same_on_the_device_and_at_hq():
    for _ in range(20):
        rid = str(uuid.uuid4())
        assert verification_code_for(rid) == verification_code(rid)


@pytest.mark.parametrize(("reason", "shown"), [
    ("number_out_of_range: AI-000009 is not in a range assigned to this device",
     "número fora das faixas deste dispositivo"),
    ("bad_reference: o registro cancelado X pertence a outro dispositivo: só o dispositivo "
     "que o emitiu pode cancelá-lo",
     "cancelamento recusado pela sede: o registro cancelado X pertence a outro dispositivo: "
     "só o dispositivo que o emitiu pode cancelá-lo"),
    ("date_out_of_bounds: occurred_on 2099-01-01 posterior à selagem",
     "data fora dos limites aceitos pela sede: occurred_on 2099-01-01 posterior à selagem"),
    ("dispositivo: registro fora do protocolo de envio", "dispositivo: registro fora do "
     "protocolo de envio"),
    (None, None),
])
def test_hqs_reasons_are_shown_without_machine_words(reason, shown):
    assert sync.reason_pt(reason) == shown


def test_a_sync_with_the_real_hq_confirms_the_device_clock_and_seals_it(hq, make_store):
    """HQ's Date header (a real HQ on loopback) is the last HQ time seen: the next record
    is sealed with a confirmed clock, HQ's time and the monotonic time since (issue 12)."""
    from inspector_app.store import device_context as dc

    dc.reset_for_tests()
    store = enrolled(hq, make_store())
    assert store.meta(dc.META_PUBLIC_URL), "enrolment returns HQ's public URL"
    summary = sync.sync_once(store)
    assert summary.ok
    assert store.meta(dc.META_HQ_TIME) and store.meta(dc.META_CONFIRMED_AT)
    ids = void_numbers(store, 1)
    clock = load_record(store, ids[0]).envelope["context"]["clock"]
    assert clock["reference"] == "hq" and clock["confirmed"] is True
    assert clock["monotonic_since_ms"] >= 0 and abs(clock["skew_ms"]) <= 2000
    dc.reset_for_tests()


def test_a_judgement_at_hq_reaches_the_device_as_definitive_standing(hq, make_store):
    # Issue 15: HQ upholds one auto after its defence; the device pulls the auto's history
    # as upheld and a standing whose points are definitive, the rest pending apart.
    import datetime as dt

    from inspector_app.domain.legaltime import legal_today
    from inspector_app.hq import process as hq_process

    store = enrolled(hq, make_store())
    seal_autos(store, 3)
    assert sync.sync_once(store).ok
    with hq.engine.connect() as conn:
        row = conn.execute(text(
            "SELECT id, holder_key FROM records r JOIN reference_rows h "
            "ON h.table_name = 'history' AND h.key = r.id || '\\:0' "
            "WHERE r.kind = 'auto_infracao' AND h.holder_key IS NOT NULL "
            "ORDER BY r.occurred_on DESC LIMIT 1")).one()
    auto_id, holder = row
    before = reference.standing_for(store, holder_id=None if holder.startswith("plate:")
                                    else holder, plate_key=holder.removeprefix("plate:")
                                    if holder.startswith("plate:") else None)
    assert before is not None and any(n for _, n in before.pending_points)
    today = legal_today()
    with hq.engine.begin() as conn:
        auto = hq_process.auto_of(conn, auto_id)
        on = max(auto.occurred_on, today - dt.timedelta(days=1))
        hq_process.record_event(conn, auto_id, "defesa", on, {"channel": "protocolo"},
                                actor="super", role="supervisor", address=None, today=today)
        hq_process.record_event(conn, auto_id, "julgamento", today, {
            "result": "upheld", "reasons": "Infração comprovada pelas fotos do auto."},
            actor="julga", role="julgador", address=None, today=today)
    assert sync.sync_once(store).ok
    status = store.conn.execute("SELECT DISTINCT status FROM ref_history WHERE id LIKE ?",
                                [f"{auto_id}:%"]).fetchall()
    assert status == [("upheld",)]
    assert device_standing(store) == hq_standing(hq)  # every column, the new ones too
    after = reference.standing_for(store, holder_id=None if holder.startswith("plate:")
                                   else holder, plate_key=holder.removeprefix("plate:")
                                   if holder.startswith("plate:") else None)
    assert after is not None and any(n for _, n in after.points)
    assert sum(n for _, n in after.pending_points) < sum(n for _, n in before.pending_points)
