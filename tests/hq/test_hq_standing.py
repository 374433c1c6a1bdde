"""HQ history, standing (points, reincidence, cassação art. 39 I) and suspected duplicates,
published through the pull log; on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from hqkit import SimDevice

from inspector_app.hq.cli import main
from inspector_app.hq.reference import live_rows
from inspector_app.hq.registry import RegistryError, delete_reference, import_registry
from inspector_app.hq.standing import DF_POINT_WINDOWS, compute_standing
from inspector_app.sync.protocol import API_PREFIX

HOLDER = "H-1"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def auto(device, *, infractions, occurred_on="2026-04-14", plate_key="JJK8D48",
         holder_id=HOLDER, pack="DF_STPA"):
    body = {
        "occurred_at": f"{occurred_on}T10:05:00-03:00",
        "vehicle": {"plate": plate_key},
        "outcome": {"pack": pack, "infractions": [
            {"rule_id": rule, "points": points} for rule, points in infractions]},
    }
    return device.record(device.envelope(kind="auto_infracao", body=body, plate_key=plate_key,
                                         holder_id=holder_id, occurred_on=occurred_on))


def pulled(device):
    changes, cursor = [], 0
    with device.client() as client:
        while True:
            page = client.get(f"{API_PREFIX}/pull", params={"cursor": cursor}).json()
            changes += page["changes"]
            cursor = page["next_cursor"]
            if not page["more"]:
                return changes


def latest(changes, table):
    rows = {}
    for c in changes:
        if c["table"] == table:
            rows[c["key"]] = c["row"]
    return rows


def test_infractions_of_an_accepted_auto_are_published_as_pending_history(hq, device):
    record = auto(device, infractions=[("R1", 5), ("R2", 3)])
    assert device.push_one(record)["status"] == "accepted"
    history = latest(pulled(device), "history")
    assert sorted(history) == [f"{record.id}:0", f"{record.id}:1"]
    row = history[f"{record.id}:0"]
    assert (row["holder_id"], row["plate_key"], row["rule_id"], row["date"], row["status"],
            row["points"]) == (HOLDER, "JJK8D48", "R1", "2026-04-14", "pending", 5)
    standing = latest(pulled(device), "standing")[HOLDER]
    # pending until judged (issue 15): shown apart, not counted as definitive points
    assert json.loads(standing["points_json"])["4"] == 0
    assert json.loads(standing["pending_points_json"])["4"] == 8
    assert standing["cassacao_proposed"] is False
    # the same record again (duplicate) publishes nothing new
    before = len(pulled(device))
    assert device.push_one(record)["status"] == "duplicate"
    assert len(pulled(device)) == before


def test_a_cancelamento_marks_the_history_cancelled_and_recomputes_standing(hq, device):
    record = auto(device, infractions=[("R1", 7)])
    device.push_one(record)
    assert device.push_one(device.cancelamento(record))["status"] == "accepted"
    changes = pulled(device)
    assert latest(changes, "history")[f"{record.id}:0"]["status"] == "cancelled"
    assert json.loads(latest(changes, "standing")[HOLDER]["points_json"])["4"] == 0
    assert json.loads(latest(changes, "standing")[HOLDER]["pending_points_json"])["4"] == 0


def test_crossing_12_points_in_4_months_proposes_cassacao(hq, device):
    device.push_one(auto(device, infractions=[("R1", 5)], occurred_on="2026-02-01"))
    device.push_one(auto(device, infractions=[("R2", 5)], occurred_on="2026-03-01"))
    standing = latest(pulled(device), "standing")[HOLDER]
    assert standing["cassacao_proposed"] is False
    device.push_one(auto(device, infractions=[("R1", 3)], occurred_on="2026-04-14"))
    standing = latest(pulled(device), "standing")[HOLDER]
    assert standing["cassacao_proposed"] is True
    assert json.loads(standing["points_json"]) == {"4": 0, "8": 0, "12": 0}
    assert json.loads(standing["pending_points_json"]) == {"4": 13, "8": 13, "12": 13}
    assert json.loads(standing["reincidence_json"]) == {}
    assert json.loads(standing["provisional_reincidence_json"]) == {"R1": 1}
    proposal = json.loads(standing["cassacao_json"])
    assert proposal["ground"] == "DF15154.39.I" and proposal["provisional"] is True
    assert "13 pontos em 4 meses (limite 12)" in proposal["text"]


def test_points_outside_the_window_do_not_count():
    history = [{"rule_id": "R1", "date": "2025-11-01", "status": "upheld", "points": 10},
               {"rule_id": "R1", "date": "2026-04-14", "status": "upheld", "points": 5}]
    standing = compute_standing(history, DF_POINT_WINDOWS, holder_key=HOLDER, pack_id=None)
    assert json.loads(standing["points_json"]) == {"4": 5, "8": 15, "12": 15}
    assert standing["cassacao_proposed"] is False
    history.append({"rule_id": "R2", "date": "2026-04-01", "status": "upheld", "points": 7})
    standing = compute_standing(history, DF_POINT_WINDOWS, holder_key=HOLDER, pack_id=None,
                                as_of=dt.date(2026, 4, 14))
    proposal = json.loads(standing["cassacao_json"])
    assert proposal["provisional"] is False and "12 pontos em 4 meses" in proposal["text"]


def test_same_plate_rule_and_day_from_two_devices_is_flagged_and_reported(hq, device, capsys):
    other = SimDevice(hq).enrol()
    first = auto(device, infractions=[("R1", 5), ("R2", 3)])
    second = auto(other, infractions=[("R1", 5)])
    assert device.push_one(first)["status"] == "accepted"
    # same device, same plate/rule/day: not a two-device duplicate
    device.push_one(auto(device, infractions=[("R1", 5)]))
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates") == 0
    assert other.push_one(second)["status"] == "accepted"
    # flagged once, against the earliest auto of the other device
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates") == 1
    assert hq.scalar("SELECT rule_id FROM suspected_duplicates WHERE other_record_id = :i",
                     i=first.id) == "R1"
    # another day is not flagged
    other.push_one(auto(other, infractions=[("R1", 5)], occurred_on="2026-04-15"))
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates") == 1
    url = hq.settings.database_url
    code, out, _ = run(capsys, "report", "--json", "--database-url", url)
    assert code == 0
    assert len(json.loads(out)["suspected_duplicates"]) == 1
    code, out, _ = run(capsys, "report", "--database-url", url)
    assert "Suspeitas de duplicidade" in out
    assert f"JJK8D48  R1  2026-04-14: auto {second.id}" in out


def test_history_rows_reach_live_reference_rows(hq, device):
    record = auto(device, infractions=[("R9", 2)], holder_id=None)
    device.push_one(record)
    with hq.engine.connect() as conn:
        (row,) = list(live_rows(conn, "history"))
        standing = list(live_rows(conn, "standing"))
    assert row["holder_id"] is None and row["plate_key"] == "JJK8D48"
    assert standing[0]["id"] == "plate:JJK8D48"


# --- standing is HQ's result, never registry input ---------------------------------------------

STANDING_CSV = ('id,pack_id,as_of,points_json,reincidence_json,cassacao_proposed,cassacao_json,'
                'windows_json\nH-1,DF_STPA,2026-04-14,"{""4"": 99}",{},1,,"[[4, 12]]"\n')


@pytest.mark.parametrize(("file_name", "first_line", "table"), [
    ("standing.csv", "", None),
    ("ref_standing.csv", "", None),
    ("export.csv", "# table: standing\n", None),
    ("export.csv", "", "standing"),
], ids=["file-name", "ref-prefix", "comment", "table-argument"])
def test_a_standing_file_is_refused_by_the_hq_registry_import(hq, device, tmp_path, file_name,
                                                              first_line, table):
    device.push_one(auto(device, infractions=[("R1", 5)]))
    before = hq.scalar("SELECT max(seq) FROM changes")
    path = tmp_path / file_name
    path.write_text(first_line + STANDING_CSV, encoding="utf-8")
    with pytest.raises(RegistryError) as err:
        import_registry(hq.engine, path, table=table)
    assert "calculada pela sede a partir dos autos recebidos" in str(err.value)
    as_json = tmp_path / "registry.json"
    as_json.write_text(json.dumps({"standing": [{"id": HOLDER}], "lines": [
        {"id": "L1", "code": "0.110", "name": "Planaltina", "pack_id": "DF_STPA"}]}),
        encoding="utf-8")
    report = import_registry(hq.engine, as_json)
    assert [(e.where, e.field) for e in report.errors] == [("standing", "")]
    assert "calculada pela sede" in report.errors[0].message
    assert report.published == {"lines": 1}  # the rest of the file is imported
    with pytest.raises(RegistryError, match="calculada pela sede"):
        delete_reference(hq.engine, "standing", HOLDER)
    with hq.engine.connect() as conn:
        (standing,) = list(live_rows(conn, "standing"))
    assert json.loads(standing["pending_points_json"])["4"] == 5  # HQ's figure, untouched
    assert hq.scalar("SELECT count(*) FROM changes WHERE seq > :s AND table_name = 'standing'",
                     s=before) == 0


def test_an_auto_and_its_cancelamento_in_one_batch_leave_it_cancelled(hq, device):
    first = auto(device, infractions=[("R1", 7)])
    second = auto(device, infractions=[("R2", 4)])
    results = device.push(first, second, device.cancelamento(first)).json()["results"]
    assert [r["status"] for r in results] == ["accepted"] * 3
    changes = pulled(device)
    history = latest(changes, "history")
    assert history[f"{first.id}:0"]["status"] == "cancelled"
    assert history[f"{second.id}:0"]["status"] == "pending"
    assert json.loads(latest(changes, "standing")[HOLDER]["pending_points_json"])["4"] == 4


def test_concurrent_batches_about_one_holder_all_count_in_its_standing(hq):
    # Each batch recomputes the holder's standing from the history HQ holds; batches that
    # overlap must each see the others' committed autos, or the last one published wins
    # with a short count.
    from concurrent.futures import ThreadPoolExecutor

    devices = [SimDevice(hq).enrol() for _ in range(6)]
    batches = [[auto(d, infractions=[("R1", 1)], plate_key=f"PLT{i}{j}") for j in range(5)]
               for i, d in enumerate(devices)]

    def push(i):
        return devices[i].push(*batches[i]).json()["results"]

    with ThreadPoolExecutor(len(devices)) as pool:
        answers = list(pool.map(push, range(len(devices))))
    assert all(r["status"] == "accepted" for a in answers for r in a)
    standing = latest(pulled(devices[0]), "standing")[HOLDER]
    assert json.loads(standing["pending_points_json"])["4"] == 6 * 5


def test_migration_0003_indexes_the_history_already_held(tmp_path):
    from alembic import command
    from sqlalchemy import text

    from inspector_app.hq.core.db import alembic_config, make_engine
    from inspector_app.hq.standing import publish_standings

    engine = make_engine(f"sqlite:///{tmp_path / 'hq.db'}")
    command.upgrade(alembic_config(engine), "0002")
    rows = [("a:0", {"id": "a:0", "holder_id": "H-9", "plate_key": "JJK8D48", "rule_id": "R1",
                     "date": "2026-04-01", "status": "pending", "points": 5}),
            ("b:0", {"id": "b:0", "holder_id": None, "plate_key": "ABC1C34", "rule_id": "R2",
                     "date": "2026-04-02", "status": "pending", "points": 3})]
    with engine.begin() as conn:
        for seq, (key, row) in enumerate(rows, start=1):
            conn.execute(text("INSERT INTO reference_rows (table_name, key, row, deleted, seq) "
                              "VALUES ('history', :k, :r, false, :s)"),
                         {"k": key, "r": json.dumps(row), "s": seq})
    command.upgrade(alembic_config(engine), "head")
    with engine.begin() as conn:
        keys = dict(conn.execute(text("SELECT key, holder_key FROM reference_rows")).all())
        assert keys == {"a:0": "H-9", "b:0": "plate:ABC1C34"}
        publish_standings(conn, {"H-9": "DF_STPA"})
        standing = json.loads(conn.execute(text(
            "SELECT row FROM reference_rows WHERE table_name = 'standing'")).scalar_one())
    assert json.loads(standing["pending_points_json"])["4"] == 5
    engine.dispose()


def test_history_changed_by_the_registry_restates_the_holders_standing(hq, device, tmp_path):
    # The authority upholds an auto and an old infraction is imported: the standing moves
    # (no longer provisional; the imported points count). Deleting the imported row moves
    # it back.
    device.push_one(auto(device, infractions=[("R1", 7)], occurred_on="2026-04-01"))
    record = auto(device, infractions=[("R2", 6)], occurred_on="2026-04-10")
    device.push_one(record)
    standing = latest(pulled(device), "standing")[HOLDER]
    assert json.loads(standing["cassacao_json"])["provisional"] is True
    holder = {"id": HOLDER, "kind": "pf", "name": "Maria Souza", "cpf": "169.440.601-67",
              "permit_number": "P-1", "permit_status": "ativa", "pack_id": "DF_STPA"}
    history = [
        {"id": f"{record.id}:0", "holder_id": HOLDER, "plate_key": "JJK8D48", "rule_id": "R2",
         "date": "2026-04-10", "status": "upheld", "points": 6},
        {"id": "old-1", "holder_id": HOLDER, "plate_key": "JJK8D48", "rule_id": "R3",
         "date": "2026-03-20", "status": "upheld", "points": 4},
    ]
    with hq.engine.connect() as conn:
        first = {**next(r for r in live_rows(conn, "history") if r["rule_id"] == "R1"),
                 "status": "upheld"}
    first.pop("updated_at", None)
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"permit_holders": [holder], "history": [first, *history]}))
    report = import_registry(hq.engine, path)
    assert report.errors == []
    standing = latest(pulled(device), "standing")[HOLDER]
    assert json.loads(standing["points_json"])["4"] == 17
    assert json.loads(standing["cassacao_json"])["provisional"] is False
    delete_reference(hq.engine, "history", "old-1")
    standing = latest(pulled(device), "standing")[HOLDER]
    assert json.loads(standing["points_json"])["4"] == 13


# Issue 15: only upheld autos are definitive. (article, history rows as (status, points,
# date, rule), expected definitive 4-month points, pending 4-month points, proposal ground,
# provisional?) – the 12-point limit of art. 39 I in 4 months on its boundary, below, above.
def _h(status, points, date="2026-04-10", rule="R1", auto=None):
    return {"rule_id": rule, "date": date, "status": status, "points": points,
            "auto_number": auto}


STANDING_ROWS = [
    ("Decreto 15.154/1993, art. 39, I – 12 pontos mantidos: proposta definitiva",
     [_h("upheld", 7), _h("upheld", 5)], 12, 0, "DF15154.39.I", False),
    ("art. 39, I – 11 mantidos: sem proposta", [_h("upheld", 6), _h("upheld", 5)], 11, 0,
     None, None),
    ("art. 39, I – 11 mantidos + 1 pendente: provisória",
     [_h("upheld", 6), _h("upheld", 5), _h("pending", 1)], 11, 1, "DF15154.39.I", True),
    ("art. 39, I – 13 mantidos + 4 pendentes: definitiva (13 pontos)",
     [_h("upheld", 13), _h("pending", 4)], 13, 4, "DF15154.39.I", False),
    ("art. 39, I – cancelados não contam", [_h("upheld", 6), _h("cancelled", 9)], 6, 0,
     None, None),
    ("art. 39, II (G16) – segunda autuação por embriaguez mantida",
     [_h("upheld", 3, rule="DF15154.30.XI", auto="A-1"),
      _h("upheld", 3, "2025-01-10", rule="DF15154.30.XI", auto="A-2")],
     3, 0, "DF15154.39.II", False),
    ("art. 39, II (G16) – a segunda ainda pendente: provisória",
     [_h("upheld", 3, rule="DF15154.30.XI", auto="A-1"),
      _h("pending", 3, "2025-01-10", rule="DF15154.30.XI", auto="A-2")],
     3, 0, "DF15154.39.II", True),
]


@pytest.mark.parametrize(("article", "history", "points", "pending", "ground", "provisional"),
                         STANDING_ROWS)
def test_only_upheld_autos_are_definitive(article, history, points, pending, ground,
                                          provisional):
    row = compute_standing(history, DF_POINT_WINDOWS, holder_key=HOLDER, pack_id="DF_STPCR",
                           as_of=dt.date(2026, 4, 14))
    assert json.loads(row["points_json"])["4"] == points, article
    assert json.loads(row["pending_points_json"])["4"] == pending, article
    proposal = json.loads(row["cassacao_json"]) if row["cassacao_json"] else None
    assert (proposal or {}).get("ground") == ground, article
    assert (proposal or {}).get("provisional") == provisional, article


def test_reincidence_counts_upheld_autos_and_the_provisional_one_the_pending_too():
    history = [_h("upheld", 1), _h("pending", 1, "2026-03-01"), _h("upheld", 1, "2026-02-01")]
    row = compute_standing(history, DF_POINT_WINDOWS, holder_key=HOLDER, pack_id=None)
    assert json.loads(row["reincidence_json"]) == {"R1": 1}
    assert json.loads(row["provisional_reincidence_json"]) == {"R1": 2}
