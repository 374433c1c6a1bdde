"""Duplicate flags stay bounded (issue 14, finding 6): devices pushing many autos for one
plate, day and rules flag each auto once, never one row per pair of autos; the report
gives one page of flags with their total, on SQLite and PostgreSQL."""

from __future__ import annotations

import json

from hq.test_hq_standing import auto
from hqkit import SimDevice

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
