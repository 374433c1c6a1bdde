"""Trusted time, registry age, HQ address and filing, sealed with every record.

The device clock is *confirmed* when it agreed with HQ's ``Date`` at the last contact of
this run (within the configurable tolerance) and moved in step with the monotonic clock
since; otherwise the documents say so. The recorded time is never changed.
"""

from __future__ import annotations

import datetime as dt
import json
from email.utils import format_datetime

import pytest

from inspector_app import services
from inspector_app.demo import seed_registry
from inspector_app.hq.verification import clock_note
from inspector_app.store import device_context as dc
from inspector_app.store.db import open_store

HQ_TIME = dt.datetime(2026, 4, 14, 11, 0, 0, tzinfo=dt.UTC)  # 08:00 in Brasília
SESSION = services.Session("1002", "Maria da Conceição Araújo", "inspector")


@pytest.fixture()
def store(tmp_path):
    dc.reset_for_tests()
    s = open_store(tmp_path / "store")
    yield s
    s.close()
    dc.reset_for_tests()


def _contact(store, *, wall_offset_s: float = 0.0, mono: float = 1000.0) -> None:
    dc.note_hq_time(format_datetime(HQ_TIME, usegmt=True),
                    wall=HQ_TIME + dt.timedelta(seconds=wall_offset_s), monotonic=mono)
    dc.persist_contact(store)


# Skew between the wall clock and HQ time + monotonic elapsed, against the default 120 s
# tolerance: the boundary, the second before and the second after (RULES.md has no
# article on device clocks; the tolerance is a named setting, clock_tolerance_s).
@pytest.mark.parametrize(("skew_s", "confirmed"), [
    (0, True), (119, True), (120, True), (121, False), (-121, False), (3600, False)])
def test_the_clock_is_confirmed_only_within_the_tolerance(store, skew_s, confirmed):
    _contact(store)
    later = HQ_TIME + dt.timedelta(minutes=30)  # 30 min on both clocks
    state = dc.clock_state(store, now=later + dt.timedelta(seconds=skew_s),
                           monotonic=1000.0 + 1800)
    assert state["confirmed"] is confirmed
    assert state["reference"] == "hq" and state["skew_ms"] == skew_s * 1000
    assert state["hq_time"] == HQ_TIME.isoformat()
    assert state["monotonic_since_ms"] == 1_800_000


def test_the_tolerance_is_a_setting(store):
    _contact(store)
    store.set_meta(dc.META_TOLERANCE, "30")
    state = dc.clock_state(store, now=HQ_TIME + dt.timedelta(seconds=45), monotonic=1000.0)
    assert state["confirmed"] is False and state["tolerance_s"] == 30
    store.set_meta(dc.META_TOLERANCE, "60")
    assert dc.clock_state(store, now=HQ_TIME + dt.timedelta(seconds=45),
                          monotonic=1000.0)["confirmed"] is True


def test_without_hq_contact_in_this_run_the_clock_is_unconfirmed_since_the_last_one(store):
    _contact(store)  # an earlier run met HQ and agreed …
    dc.reset_for_tests()  # … then the app restarted: the monotonic chain is broken
    state = dc.clock_state(store)
    assert state["confirmed"] is False and state["reference"] == "start"
    assert state["confirmed_until"] == HQ_TIME.isoformat()
    assert clock_note({"context": {"clock": state}}) == (
        "Horário do dispositivo não confirmado desde 14/04/2026 08:00 (horário de Brasília).")


def test_a_sealed_auto_keeps_the_agents_time_and_prints_the_note(store):
    from inspector_app.documents import render_document

    seed_registry(store, vehicles=5, seed=1, today=dt.date(2026, 4, 14))
    plate = store.conn.execute("SELECT plate FROM ref_vehicles WHERE pack_id = 'DF_STPA' "
                               "LIMIT 1").fetchone()[0]
    store.set_meta("registry_source", "hq")
    store.set_meta("registry_updated_at", "2026-04-13T21:30:00+00:00")
    dc.set_filing(store, "DF_STPA", {"address": "Setor de protocolo, sala 1", "online":
                                     "https://protocolo.example.org"})
    _contact(store, wall_offset_s=0)
    dc.reset_for_tests()  # restarted after the contact: unconfirmed
    insp = services.start_inspection(
        store=store, session=SESSION, pack_id="DF_STPA", kind="fiscalizacao",
        location_type="terminal", place="Rodoviária", plate=plate,
        occurred_at="2026-04-14T08:47:00-03:00")
    item = next(i for i in __import__("inspector_app.packs", fromlist=["x"])
                .get_pack("DF_STPA").items.values() if i.fail and not i.requires_facts)
    services.record_answer(store=store, inspection_id=insp, item_id=item.id, result="fail",
                           note="Tacógrafo sem lacre")
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=[[(10, 10), (50, 40), (90, 20)]])
    services.record_signature(store=store, inspection_id=insp, role="driver",
                              status="refused", note="Condutor recusou-se a assinar.")
    sealed = services.seal_inspection(store=store, session=SESSION, inspection_id=insp,
                                      narrative="Fatos constatados na fiscalização.")
    auto = sealed.of_kind("auto_infracao")
    assert auto is not None
    context = auto.envelope["context"]
    assert context["clock"]["confirmed"] is False
    assert auto.envelope["body"]["occurred_at"] == "2026-04-14T08:47:00-03:00"  # unchanged
    assert context["clock"]["device_wall"][:16] <= auto.created_at[:16]
    row = store.conn.execute("SELECT payload FROM records WHERE id = ?", [auto.id]).fetchone()
    assert json.loads(row[0])["context"] == context  # sealed, signed with the record
    import io

    from pypdf import PdfReader
    pdf = render_document(auto, blob_dir=store.blob_dir)
    text = " ".join(" ".join(p.extract_text().split()) for p in PdfReader(io.BytesIO(pdf)).pages)
    assert "Horário do dispositivo não confirmado desde 14/04/2026 08:00." in text
    assert "Consulta ao cadastro de 13/04/2026 18:30." in text
    assert "Endereço para protocolo: Setor de protocolo, sala 1" in text
    assert "Pela internet: https://protocolo.example.org" in text
    assert "Tacógrafo sem lacre" in text  # the item's note, under its infraction


def test_hq_reads_only_a_flag_and_a_timestamp_from_the_devices_context():
    hostile = {"context": {"clock": {"confirmed": False, "confirmed_until": "<script>"}}}
    assert clock_note(hostile) == "Horário do dispositivo não confirmado pela sede."
    assert clock_note({"context": {"clock": {"confirmed": "no"}}}) is None
    assert clock_note({"context": "x"}) is None and clock_note({}) is None


def test_the_verification_address_comes_from_enrolment_not_a_placeholder(store):
    assert dc.verify_base_url(store) is None
    store.set_meta("hq_url", "http://10.0.0.5:8000")
    assert dc.verify_base_url(store) == "http://10.0.0.5:8000/verify/"
    store.set_meta(dc.META_PUBLIC_URL, "https://fiscalizacao.example.gov.br/")
    assert dc.verify_base_url(store) == "https://fiscalizacao.example.gov.br/verify/"


def test_the_document_settings_are_set_from_the_command_line(tmp_path, capsys):
    from inspector_app import cli

    data = str(tmp_path / "cli-store")
    assert cli.main(["--data-dir", data, "documents", "settings", "--signature", "p256",
                     "--clock-tolerance", "60", "--filing-pack", "DF_STPA",
                     "--filing-address", "SAIN, Setor de protocolo"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["signature"] == "p256" and shown["clock_tolerance_s"] == 60
    assert shown["filing"] == {"address": "SAIN, Setor de protocolo"}
    assert cli.main(["--data-dir", data, "documents", "settings", "--clock-tolerance",
                     "0"]) != 0  # out of range: refused, nothing changed
    capsys.readouterr()
    assert cli.main(["--data-dir", data, "documents", "settings"]) == 0
    assert json.loads(capsys.readouterr().out)["clock_tolerance_s"] == 60
