"""Duplicate flags stay bounded (issue 14, finding 6): devices pushing many autos for one
plate, day and rules flag each auto once, never one row per pair of autos; the report
gives one page of flags with their total, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

import pytest
from hq.test_hq_standing import auto
from hqkit import SimDevice, database_url

from inspector_app.hq.cli import main as hq_main
from inspector_app.hq.report import build_report, report_lines

AUTOS = 120  # per device; all the same plate, day and rules


def push_autos(device, count):
    records = [auto(device, infractions=[("R1", 5), ("R2", 3)]) for _ in range(count)]
    for start in range(0, count, 100):
        results = device.push(*records[start:start + 100]).json()["results"]
        assert {r["status"] for r in results} == {"accepted"}
    return records


def test_each_auto_is_flagged_once_however_many_match(hq, device):
    push_autos(device, AUTOS)
    others = [SimDevice(hq).enrol() for _ in range(2)]
    for other in others:
        push_autos(other, AUTOS)
    # the first device's autos had nothing to match when they arrived; every later auto
    # is flagged once (before: AUTOS x AUTOS x 2 rules per pair of devices)
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates") == 2 * AUTOS
    assert hq.scalar("SELECT count(DISTINCT record_id) FROM suspected_duplicates") == 2 * AUTOS
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates WHERE other_device_id = :d",
                     d=device.device_id) == 2 * AUTOS  # against the earliest autos received
    assert hq.scalar("SELECT count(DISTINCT other_record_id) FROM suspected_duplicates") <= AUTOS
    assert hq.scalar("SELECT min(rule_id) FROM suspected_duplicates") == "R1"


def test_the_report_pages_the_flags_and_gives_their_total(hq, device, capsys):
    push_autos(device, 5)
    push_autos(SimDevice(hq).enrol(), 130)
    report = build_report(hq.engine)
    assert len(report["suspected_duplicates"]) == 100
    assert report["suspected_duplicates_total"] == 130
    lines = report_lines(report)
    assert any("1 a 100 de 130" in line for line in lines)
    assert any("--duplicates-from 100" in line for line in lines)
    url = hq.settings.database_url
    assert hq_main(["report", "--json", "--duplicates", "10", "--duplicates-from", "125",
                    "--database-url", url]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["suspected_duplicates"]) == 5 and out["suspected_duplicates_total"] == 130


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_0004_i14a_keeps_one_flag_per_auto_and_makes_it_unique(backend, tmp_path):
    from alembic import command
    from sqlalchemy import text
    from sqlalchemy.exc import IntegrityError

    from inspector_app.hq.core.db import alembic_config, make_engine

    with database_url(backend, tmp_path) as url:
        engine = make_engine(url)
        command.upgrade(alembic_config(engine), "0003")
        flag = ("INSERT INTO suspected_duplicates (plate_key, rule_id, occurred_on, record_id, "
                "device_id, other_record_id, other_device_id, flagged_at) VALUES "
                "('JJK8D48', :rule, '2026-04-14', :rec, 'd2', :other, 'd1', 'now')")
        with engine.begin() as conn:  # the explosion an HQ may hold: a row per pair and rule
            for rec in ("a", "b"):
                for other in ("x", "y", "z"):
                    for rule in ("R1", "R2"):
                        conn.execute(text(flag), {"rule": rule, "rec": rec, "other": other})
        command.upgrade(alembic_config(engine), "head")
        with engine.begin() as conn:
            kept = conn.execute(text("SELECT record_id, other_record_id, rule_id FROM "
                                     "suspected_duplicates ORDER BY record_id")).all()
        assert [tuple(r) for r in kept] == [("a", "x", "R1"), ("b", "x", "R1")]
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text(flag), {"rule": "R1", "rec": "a", "other": "y"})
        engine.dispose()
