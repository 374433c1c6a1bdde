"""A poisoned pull log (issue 14, finding 2): a change no device can store is quarantined
on the device with its reason and the cursor moves on; HQ refuses to publish such values
in the first place; and a newly enrolled device reaches the end of the log."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import insert

from inspector_app.hq.reference import PublishError, upsert_row
from inspector_app.hq.tables import changes
from inspector_app.sync import client as sync

POISON = {"id": "x:0", "holder_id": None, "plate_key": "JJK8D48", "rule_id": "R1",
          "date": "2026-04-14", "status": "pending", "points": 2**64, "auto_number": None,
          "updated_at": "2026-04-14T00:00:00Z"}


def enrolled(hq, store):
    sync.enrol(store, hq_url=hq.url, code=hq.enrol_code())
    return store


def publish_raw(hq, table, key, row):
    """A change written straight into the log, as an older HQ could have published it."""
    with hq.engine.begin() as conn:
        conn.execute(insert(changes).values(table_name=table, key=key, op="upsert",
                                            row=json.dumps(row), device_id=None,
                                            at="2026-04-14T00:00:00Z"))


def test_a_poisoned_history_row_is_quarantined_and_later_changes_still_arrive(hq, make_store):
    old = enrolled(hq, make_store("old"))
    assert sync.sync_once(old).ok
    publish_raw(hq, "history", "x:0", POISON)
    publish_raw(hq, "lines", "hq-l1", {"id": "hq-l1", "code": "1", "name": "Linha 1",
                                       "pack_id": "DF_STPA", "updated_at": "2026-04-14"})
    last = hq.scalar("SELECT MAX(seq) FROM changes")
    summary = sync.sync_once(old)
    assert summary.ok, summary.error
    assert summary.pull_quarantined == 1
    assert old.meta(sync.META_PULL_CURSOR) == str(last)
    assert old.conn.execute("SELECT 1 FROM ref_lines WHERE id = 'hq-l1'").fetchone()
    (held,) = sync.pull_quarantine(old)
    assert held.table == "history" and "OverflowError" in held.reason
    assert sync.sync_once(old).pull_quarantined == 0  # not again: the cursor moved on

    new = enrolled(hq, make_store("new"))  # a device enrolled after the poison
    summary = sync.sync_once(new)
    assert summary.ok and int(new.meta(sync.META_PULL_CURSOR)) >= last


@pytest.mark.parametrize(("row", "why"), [
    ({**POISON, "points": 2**64}, "64 bits"),
    ({**POISON, "rule_id": "R\x00"}, "NUL"),
    ({**POISON, "rule_id": "R" * 100_001}, "too long"),
    ({**POISON, "points": [1, 2]}, "not a column value"),
], ids=["2^64", "nul", "long", "list"])
def test_hq_refuses_to_publish_a_value_devices_cannot_store(hq, row, why):
    with hq.engine.begin() as conn, pytest.raises(PublishError, match=why):
        upsert_row(conn, "history", row)
    assert hq.scalar("SELECT COUNT(*) FROM changes WHERE table_name = 'history'") == 0
