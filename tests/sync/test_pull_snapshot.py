"""A pull log that does not grow without end (issue 19), with the real device client
against a real HQ on loopback: ``compact`` removes superseded upserts and old tombstones
and expires history outside every window from the devices; a device behind the compaction
point takes a snapshot (and deletes what HQ deleted meanwhile), a device in step carries on
with the log, a new device downloads only what is live, and an older app that knows no
snapshots is told to resync, in fields it knows."""

from __future__ import annotations

import datetime as dt
import json

from sqlalchemy import text

from inspector_app.hq.compaction import EXPIRY_GRACE_DAYS, compact
from inspector_app.hq.reference import upsert_tables
from inspector_app.hq.registry import delete_reference, import_registry
from inspector_app.store.db import open_store
from inspector_app.sync import client as sync
from inspector_app.sync.protocol import API_PREFIX

TODAY = dt.date.today()
REGISTRY = {
    "permit_holders": [{"id": "hq-h1", "kind": "pj", "name": "Viação Cerrado Ltda",
                        "cnpj": "11.222.333/0001-81", "permit_number": "P-900",
                        "permit_status": "active", "pack_id": "DF_STPCR"}],
    "vehicles": [{"id": "hq-v1", "plate": "QWE4R56", "holder_id": "hq-h1",
                  "pack_id": "DF_STPCR", "seats": 44},
                 {"id": "hq-v2", "plate": "QWE4R57", "holder_id": "hq-h1",
                  "pack_id": "DF_STPCR", "seats": 40}],
    "inspectors": [{"id": "hq-i1", "matricula": "7777", "name": "Nova Agente",
                    "role": "inspector",
                    "password_hash": "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA"}],
}


def _history(key: str, day: dt.date) -> dict[str, object]:
    return {"id": key, "holder_id": "hq-h1", "plate_key": None, "rule_id": "DF15154.28.IV",
            "date": day.isoformat(), "status": "pending", "points": 3, "auto_number": None,
            "updated_at": "2026-01-01"}


def _import(hq, tmp_path, registry) -> None:
    path = tmp_path / f"reg-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(registry), encoding="utf-8")
    assert import_registry(hq.engine, path).ok


def _state(store) -> dict[str, list[tuple[object, ...]]]:
    return {t: sorted(tuple(r) for r in store.conn.execute(f"SELECT * FROM ref_{t}"))
            for t in ("permit_holders", "vehicles", "inspectors", "history")}


def _device(hq, tmp_path, name):
    store = open_store(tmp_path / name)
    sync.enrol(store, hq_url=hq.url + "/", code=hq.enrol_code())
    return store


def test_compaction_snapshot_and_expiry_through_the_real_client(hq, tmp_path):
    _import(hq, tmp_path, REGISTRY)
    old_day = TODAY - dt.timedelta(days=366 + EXPIRY_GRACE_DAYS + 40)  # outside every window
    with hq.engine.begin() as conn:
        upsert_tables(conn, [("history", [
            _history("old:0", old_day), _history("new:0", TODAY - dt.timedelta(days=10)),
            # Drunkenness counts for cassação with no time window (art. 39 II, gap G16),
            # on the device too: never expired, however old.
            {**_history("drunk:0", old_day), "rule_id": "DF15154.30.XI",
             "status": "upheld"}])])
    behind, in_step = _device(hq, tmp_path, "behind"), _device(hq, tmp_path, "in-step")
    assert sync.sync_once(behind).ok and sync.sync_once(in_step).ok
    assert {r[0] for r in behind.conn.execute("SELECT id FROM ref_vehicles")} == {
        "hq-v1", "hq-v2"}

    # HQ goes on while ``behind`` is offline: a vehicle deleted, the holder renamed twice.
    delete_reference(hq.engine, "vehicles", "hq-v2")
    for name in ("Viação Cerrado S.A.", "Viação Cerrado Transportes S.A."):
        _import(hq, tmp_path, {"permit_holders": [{**REGISTRY["permit_holders"][0],
                                                   "name": name}]})
    assert sync.sync_once(in_step).ok  # in step: it saw the tombstone
    changes_before = hq.scalar("SELECT count(*) FROM changes")
    # Everything so far is 40 days old: older than --keep-days 30.
    with hq.engine.begin() as conn:
        conn.execute(text("UPDATE changes SET at = '2000-01-01T00:00:00+00:00'"))
    floor = int(in_step.meta(sync.META_PULL_CURSOR) or 0)

    done = compact(hq.engine, keep_days=30)
    assert (done.floor, done.expired) == (floor, 1) and done.removed > 0
    assert done.left < changes_before
    assert hq.scalar("SELECT count(*) FROM changes WHERE op = 'delete' AND seq <= :f",
                     f=floor) == 0
    # HQ keeps the expired row as a fact of the holder's history.
    assert hq.scalar("SELECT count(*) FROM history_facts WHERE key = 'old:0'") == 1

    summary = sync.sync_once(behind, pull_limit=2)  # a snapshot over several pages
    assert summary.ok and not summary.resynced, summary.as_json()
    assert any("cópia completa" in p for p in summary.problems)
    assert {r[0] for r in behind.conn.execute("SELECT id FROM ref_vehicles")} == {"hq-v1"}
    assert {r[0] for r in behind.conn.execute("SELECT id FROM ref_history")} == {
        "new:0", "drunk:0"}
    assert behind.conn.execute("SELECT name FROM ref_permit_holders").fetchone()[0] == \
        "Viação Cerrado Transportes S.A."

    # In step at the floor: the log goes on, no snapshot.
    summary = sync.sync_once(in_step)
    assert summary.ok and not any("cópia completa" in p for p in summary.problems)
    assert _state(in_step) == _state(behind)

    # A new device downloads only what is live (and the young expiry tombstone): one change
    # per live row, its own number range aside.
    fresh = _device(hq, tmp_path, "fresh")
    summary = sync.sync_once(fresh)
    assert summary.ok and not any("cópia completa" in p for p in summary.problems)
    live = hq.scalar("SELECT count(*) FROM reference_rows WHERE deleted = false")
    mine = hq.scalar("SELECT count(*) FROM changes WHERE device_id = :d",
                     d=fresh.meta("device_id"))
    assert summary.pulled == live + mine + 1
    assert _state(fresh) == _state(behind)

    # After compaction HQ goes on: a device past the floor gets just the new change.
    _import(hq, tmp_path, {"vehicles": [{**REGISTRY["vehicles"][0], "seats": 45}]})
    summary = sync.sync_once(behind)
    assert summary.ok and summary.pulled == 1
    for store in (behind, in_step, fresh):
        store.close()


def test_an_app_without_snapshots_behind_the_floor_is_told_to_resync(hq, tmp_path):
    _import(hq, tmp_path, REGISTRY)
    store = _device(hq, tmp_path, "old-app")
    assert sync.sync_once(store).ok
    cursor = int(store.meta(sync.META_PULL_CURSOR) or 0)
    _import(hq, tmp_path, {"vehicles": [{**REGISTRY["vehicles"][0], "seats": 46}]})
    compact(hq.engine, keep_days=0)
    token = store.meta(sync.META_TOKEN)
    with hq.client(token) as client:
        old = client.get(f"{API_PREFIX}/pull", params={"cursor": cursor, "acked": 0}).json()
        new = client.get(f"{API_PREFIX}/pull", params={"cursor": cursor, "acked": 0,
                                                       "snapshot": "true"}).json()
        in_step = client.get(f"{API_PREFIX}/pull", params={"cursor": 0}).json()
    assert (old["resync"], old["next_cursor"], "snapshot" in old) == (True, 0, False)
    assert (new["resync"], new["snapshot"], new["changes"]) == (False, True, [])
    assert "snapshot" not in in_step and in_step["changes"]
    store.close()
