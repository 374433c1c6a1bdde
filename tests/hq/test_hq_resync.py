"""HQ tells a device it is behind it (issue 14, finding 3): after a restore from a backup
the device's cursor may lie beyond HQ's log, name a change HQ now holds differently, or the
device may have seen more of its records acknowledged than HQ holds. Each answers
``resync``; a device in step gets its page."""

from __future__ import annotations

import json

from sqlalchemy import text

from inspector_app.sync.protocol import API_PREFIX, change_tag


def pull(device, **params):
    with device.client() as client:
        response = client.get(f"{API_PREFIX}/pull", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def last_change(hq):
    with hq.engine.connect() as conn:
        row = conn.execute(text("SELECT seq, table_name, key, op, row FROM changes "
                                "ORDER BY seq DESC LIMIT 1")).one()
    return row.seq, change_tag(row.seq, row.table_name, row.key, row.op, json.loads(row.row))


def test_a_device_in_step_gets_its_page_and_one_ahead_of_hq_is_told_to_resync(hq, device):
    assert device.push_one(device.record())["status"] == "accepted"
    seq, tag = last_change(hq)
    page = pull(device, cursor=seq, tag=tag, acked=1)
    assert (page["resync"], page["changes"], page["next_cursor"]) == (False, [], seq)
    assert pull(device, cursor=0, acked=0)["resync"] is False

    beyond = pull(device, cursor=seq + 40, acked=1)  # a cursor past HQ's log
    assert (beyond["resync"], beyond["next_cursor"], beyond["changes"]) == (True, 0, [])
    assert pull(device, cursor=seq, tag="0" * 32, acked=1)["resync"] is True  # another change
    assert pull(device, cursor=seq, tag=tag, acked=2)["resync"] is True  # HQ lost a record


def test_a_cursor_at_another_devices_private_change_is_not_in_step(hq, device):
    from hqkit import SimDevice

    SimDevice(hq).enrol()  # its number range is a change for it alone
    seq, tag = last_change(hq)
    assert pull(device, cursor=seq, tag=tag)["resync"] is True
