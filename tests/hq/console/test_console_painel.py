"""The Painel's service layer (issue 15 part C) on a real HQ, SQLite and PostgreSQL: autos
by órgão, agent, rule and place from the columns ingest fills; pending sync as devices
report it on their pull; numbering per range; suspected duplicates resolved once with a
reason; vehicles held and for how long."""

from __future__ import annotations

import datetime as dt

import pytest
from hqkit import SimDevice

from inspector_app.hq.console import painel
from inspector_app.hq.numbering import account
from inspector_app.hq.tables import suspected_duplicates
from inspector_app.sync.protocol import API_PREFIX

DAY = dt.date(2026, 4, 14)


@pytest.fixture
def device(hq):
    """A device of the ``hq`` server (both backends), not the console kit's."""
    return SimDevice(hq).enrol()


def auto(device, *, rules=(("DF15154.29.XIII", 3),), day=DAY, plate="JJK8D48",
         organ="SEMOB-DF", agent="1001", place="Rodoviária do Plano Piloto"):
    body = {
        "occurred_at": f"{day.isoformat()}T10:05:00-03:00",
        "vehicle": {"plate": plate},
        "pack": {"id": "DF_STPCR", "organ": organ},
        "agent": {"matricula": agent, "name": "Agente"},
        "location": {"type": "via", "place": place},
        "outcome": {"pack": "DF_STPCR", "infractions": [
            {"rule_id": rule, "points": points} for rule, points in rules]},
    }
    return device.record(device.envelope(kind="auto_infracao", body=body, plate_key=plate,
                                         occurred_on=day.isoformat()))


def test_autos_are_counted_by_organ_agent_rule_and_place_for_today_and_the_month(hq, device):
    other = SimDevice(hq).enrol()
    hq.add_supervisor("1001", "Ana Souza", role="inspector")
    records = [auto(device), auto(device, agent="1002", rules=(("R.A", 1), ("R.B", 2))),
               auto(device, day=DAY - dt.timedelta(days=3), organ="SETTRA-JF",
                    place="Av. Rio Branco"),
               auto(device, day=DAY.replace(month=3, day=31)),  # last month: not counted
               ]
    assert {r["status"] for r in device.push(*records).json()["results"]} == {"accepted"}
    assert other.push_one(auto(other, plate="ABC1234"))["status"] == "accepted"
    with hq.engine.connect() as conn:
        today, month = painel.autos_today_and_month(conn, DAY)
    assert today.title == "Hoje, 14/04/2026" and today.total == 3
    assert [(c.label, c.n) for c in today.by_organ] == [("SEMOB-DF", 3)]
    assert [(c.label, c.n) for c in today.by_agent] == [("Ana Souza (1001)", 2),
                                                       ("matrícula 1002", 1)]
    assert {(c.label, c.n) for c in today.by_rule} == {("DF15154.29.XIII", 2), ("R.A", 1),
                                                      ("R.B", 1)}
    assert month.title == "Mês de abril de 2026" and month.total == 4
    assert [(c.label, c.n) for c in month.by_organ] == [("SEMOB-DF", 3), ("SETTRA-JF", 1)]
    assert [(c.label, c.n) for c in month.by_place] == [("Rodoviária do Plano Piloto", 3),
                                                       ("Av. Rio Branco", 1)]


def test_more_than_ten_groups_are_summed_as_others(hq, device):
    device.push(*[auto(device, place=f"Ponto {i:02d}") for i in range(13)])
    with hq.engine.connect() as conn:
        today = painel.breakdown(conn, "hoje", DAY, DAY)
    assert len(today.by_place) == painel.TOP + 1
    assert today.by_place[-1] == painel.Count("outros", 3)


def test_a_device_reports_its_pending_count_on_pull_and_an_older_one_says_nothing(hq, device):
    old = SimDevice(hq).enrol()
    with device.client() as client:
        assert client.get(f"{API_PREFIX}/pull", params={"pending": 7}).status_code == 200
        # hostile counts are refused by the route, the stored one stays
        assert client.get(f"{API_PREFIX}/pull", params={"pending": -1}).status_code == 422
        assert client.get(f"{API_PREFIX}/pull", params={"pending": 10**12}).status_code == 422
        assert client.get(f"{API_PREFIX}/pull", params={"pending": "x"}).status_code == 422
    with old.client() as client:
        assert client.get(f"{API_PREFIX}/pull").status_code == 200
    rows = {s.id: s for s in painel.sync_by_device(hq.engine)}
    assert rows[device.device_id].pending_reported == 7
    assert rows[device.device_id].last_contact_at and not rows[device.device_id].late
    assert rows[old.device_id].pending_reported is None
    assert rows[old.device_id].last_contact_at is not None
    later = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    assert all(s.late for s in painel.sync_by_device(hq.engine, later))
    assert next(iter(rows)) == device.device_id  # most pending first


def test_a_push_counts_as_contact(hq, device):
    device.push_one(auto(device))
    (row,) = painel.sync_by_device(hq.engine)
    assert row.last_contact_at is not None and row.pending_reported is None


def test_numbering_per_range_counts_issued_voided_and_missing(hq, device):
    first = device.first
    device.push(auto(device), auto(device))              # first, first+1
    device.next_number = first + 4
    device.push_one(device.record(device.envelope(kind="numero_anulado")))   # first+4
    device.push_one(auto(device))                         # first+5
    ranges, total = painel.numbering_page(hq.engine)
    assert total == 1
    (acc,) = ranges
    assert (acc.issued, acc.voided, acc.missing, acc.missing_total) == (
        3, 1, [first + 2, first + 3], 2)
    assert acc.unused == acc.size - 6
    assert account(hq.engine, device_id="nobody") == []


def test_missing_numbers_are_listed_up_to_fifty_and_counted_all(hq, device):
    device.push_one(auto(device))
    device.next_number = device.first + 120
    device.push_one(auto(device))
    ((acc,), _) = painel.numbering_page(hq.engine)
    assert acc.missing_total == 119 and acc.missing == list(range(device.first + 1,
                                                                   device.first + 51))


def pair_of_duplicates(hq, device):
    other = SimDevice(hq).enrol()
    device.push_one(auto(device))
    other.push_one(auto(other))
    with hq.engine.connect() as conn:
        (flag,), total = painel.duplicates(conn)
    assert total == 1
    return flag


def test_a_suspected_duplicate_is_listed_with_both_autos_and_resolved_once(hq, device):
    flag = pair_of_duplicates(hq, device)
    assert flag.auto and flag.other and flag.auto.device_id != flag.other.device_id
    assert flag.auto.number and flag.auto.agent_matricula == "1001"
    assert flag.resolution_label == "em aberto"
    done = painel.resolve_duplicate(hq.engine, flag.id, resolution="distinct",
                                    reason="Fatos distintos: dois horários e dois locais.",
                                    staff_login="supervisora")
    assert done.resolution == "distinct" and done.resolved_by == "supervisora"
    with hq.engine.connect() as conn:
        assert painel.duplicates(conn)[1] == 0
        assert painel.duplicates(conn, "resolvidas")[1] == 1
    with pytest.raises(painel.PainelError, match="já foi resolvida por supervisora"):
        painel.resolve_duplicate(hq.engine, flag.id, resolution="duplicate",
                                 reason="mudei de ideia depois", staff_login="outro")


@pytest.mark.parametrize(("ident", "resolution", "reason", "message"), [
    ("999999", "distinct", "motivo suficiente", "inexistente"),
    ("1; DROP TABLE records", "distinct", "motivo suficiente", "inexistente"),
    (None, "distinct", "motivo suficiente", "inexistente"),
    ("{id}", "merge", "motivo suficiente", "Escolha"),
    ("{id}", "duplicate", "curto", "pelo menos 10"),
    ("{id}", "duplicate", "   \n   ", "pelo menos 10"),
    ("{id}", "duplicate", "x" * 2001, "passa de 2000"),
    ("{id}", "duplicate", "motivo\x00 com nulo", "controle"),
    ("{id}", "duplicate", ["lista"], "Informe o motivo"),
])
def test_hostile_resolutions_are_refused_in_portuguese(hq, device, ident, resolution, reason,
                                                       message):
    flag = pair_of_duplicates(hq, device)
    with pytest.raises(painel.PainelError, match=message):
        painel.resolve_duplicate(hq.engine, str(ident).replace("{id}", str(flag.id))
                                 if ident else ident, resolution=resolution, reason=reason,
                                 staff_login="supervisora")
    assert hq.scalar("SELECT count(*) FROM suspected_duplicates WHERE resolution IS NULL") == 1


def test_an_unknown_filter_is_refused(hq):
    with hq.engine.connect() as conn, pytest.raises(painel.PainelError, match="desconhecido"):
        painel.duplicates(conn, "'; DROP")


def test_vehicles_held_until_released_with_how_long(hq, device):
    first = auto(device)
    retention = device.record(device.envelope(
        kind="termo_retencao", refers_to=first.id,
        created_at="2026-04-14T13:05:00.000000+00:00",
        body={"occurred_at": "2026-04-14T10:05:00-03:00", "vehicle": {"plate": "JJK-8D48"},
              "place": "Pátio do DER"}))
    released = auto(device, plate="ABC1234")
    retention2 = device.record(device.envelope(kind="termo_retencao", refers_to=released.id,
                                               plate_key="ABC1234"))
    results = device.push(first, retention, released, retention2).json()["results"]
    assert {r["status"] for r in results} == {"accepted"}, results
    release = device.record(device.envelope(kind="termo_liberacao", refers_to=retention2.id,
                                            plate_key="ABC1234"))
    assert device.push_one(release)["status"] == "accepted", device.push_one(release)
    now = dt.datetime(2026, 4, 16, 17, 35, tzinfo=dt.UTC)
    with hq.engine.connect() as conn:
        held, total = painel.vehicles_held(conn, now)
    assert total == 1
    (one,) = held
    assert one.plate == "JJK-8D48" and one.place == "Pátio do DER"
    assert one.held_for_text == "2 d 4 h"


@pytest.mark.parametrize(("minutes", "text"), [(0, "0 min"), (59, "59 min"), (60, "1 h 00 min"),
                                               (24 * 60 - 1, "23 h 59 min"), (24 * 60, "1 d 0 h"),
                                               (-5, "0 min")])
def test_duration_text(minutes, text):
    assert painel.duration_text(dt.timedelta(minutes=minutes)) == text


def test_month_bounds():
    assert painel.month_bounds(dt.date(2028, 2, 10)) == (dt.date(2028, 2, 1), dt.date(2028, 2, 29))
    assert painel.month_bounds(dt.date(2026, 12, 31)) == (dt.date(2026, 12, 1),
                                                          dt.date(2026, 12, 31))


def test_suspected_duplicates_table_has_the_resolution_columns():
    assert {"resolution", "resolution_reason", "resolved_by", "resolved_at"} <= set(
        suspected_duplicates.c.keys())
