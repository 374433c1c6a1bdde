"""A push batch larger than HQ's body cap (issue 14 finding 4: HQ_MAX_JSON_BYTES) is sent in
halves by the device, never retried whole forever. A real HQ on loopback with a small cap."""

from __future__ import annotations

from hqkit import running_hq
from sqlalchemy import text
from synckit import outbox, void_numbers

from inspector_app.sync import client as sync

CAP = 4096


def test_a_batch_over_hqs_body_cap_is_split_and_every_record_delivered(tmp_path, make_store):
    with running_hq("sqlite", tmp_path / "hq", max_json_bytes=CAP) as hq:
        store = make_store()
        sync.enrol(store, hq_url=hq.url + "/", code=hq.enrol_code())
        ids = void_numbers(store, 12)
        marks = ",".join("?" * len(ids))
        sizes = [len(r[0]) for r in store.conn.execute(
            f"SELECT payload FROM records WHERE id IN ({marks})", ids)]
        assert sum(sizes) > CAP  # one body could not carry the batch
        summary = sync.sync_once(store, batch_size=12)
        assert (summary.ok, summary.accepted, summary.pending) == (True, 12, 0), summary.problems
        assert all(status == "accepted" for _, status, *_ in outbox(store).values())
        with hq.engine.connect() as conn:
            order = [r[0] for r in conn.execute(text("SELECT record_id FROM receipts ORDER BY id"))]
        assert order == ids
