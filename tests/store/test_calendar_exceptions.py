"""Dated calendar exceptions published by HQ (``ref_parameters`` ``calendar.exceptions``,
as the pull log delivers them) applied by the device offline, and CaseError's Portuguese
reaching the inspector through ``services`` (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inspector_app import services
from inspector_app.domain.calendar_exceptions import parse_exceptions
from inspector_app.services import ServiceError
from tests.store.test_services_flow import (  # noqa: F401 (fixture)
    PACK,
    PLAIN_ITEM,
    copy_store,
    login,
    start,
    template,
)

MATRICULA = "1001"


def _publish(store, value: object) -> None:
    store.conn.execute(
        "INSERT OR REPLACE INTO ref_parameters (pack_id, name, value_json, updated_at) "
        "VALUES (?, 'calendar.exceptions', ?, '2026-01-01T00:00:00Z')",
        [PACK, json.dumps(value)],
    )
    store.conn.commit()


def test_hq_exception_moves_the_defence_deadline_and_names_the_calendar(
    template: Path, tmp_path: Path  # noqa: F811
) -> None:
    store = copy_store(template, tmp_path / "data")
    session = login(store, MATRICULA)
    iid = start(store, session)
    services.record_answer(store=store, inspection_id=iid, item_id=PLAIN_ITEM, result="fail")
    before = services.evaluate_inspection(store=store, inspection_id=iid)
    (defesa,) = [d for d in before.deadlines if d.kind == "defesa"]
    assert defesa.due is not None
    # HQ publishes: the due day is a ponto facultativo decreed this year (closed).
    _publish(store, [{"date": defesa.due.isoformat(), "kind": "closed",
                      "name": "Ponto facultativo", "decree": "Decreto GDF nº 1/2026"}])
    after = services.evaluate_inspection(store=store, inspection_id=iid)
    (moved,) = [d for d in after.deadlines if d.kind == "defesa"]
    assert moved.due is not None and moved.due > defesa.due  # Lei 9.784 art. 66 §1
    assert moved.calendar_version != defesa.calendar_version
    assert "+exc:" in moved.calendar_version
    # A malformed row never blocks the evaluation: warned, pack calendar used.
    _publish(store, [{"date": "2026-13-40", "kind": "closed", "name": "x", "decree": "y"}])
    broken = services.evaluate_inspection(store=store, inspection_id=iid)
    assert [d.due for d in broken.deadlines if d.kind == "defesa"] == [defesa.due]
    assert any("Exceções de calendário" in w for w in broken.warnings)
    store.close()


def test_case_error_reaches_the_inspector_in_portuguese(
    template: Path, tmp_path: Path  # noqa: F811
) -> None:
    store = copy_store(template, tmp_path / "data")
    session = login(store, MATRICULA)
    with pytest.raises(ServiceError) as err:
        start(store, session, facts={"age_replacement_notified_on": "2099-01-01"})
    assert err.value.field == "facts.age_replacement_notified_on"
    assert "posterior ao fato" in err.value.message_pt
    assert "after" not in err.value.message_pt
    with pytest.raises(ServiceError) as err:
        start(store, session, occurred_at="2099-01-01T10:00:00-03:00")
    assert err.value.field == "occurred_at"
    assert "posterior ao momento atual" in err.value.message_pt
    store.close()


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"date": "2026-12-24"}, "calendar.exceptions"),
        ([{"date": "2026-12-24", "kind": "closed", "name": "x"}], "calendar.exceptions[0].decree"),
        ([{"date": "2099-99-01", "kind": "closed", "name": "x", "decree": "d"}],
         "calendar.exceptions[0].date"),
        ([{"date": "2026-12-24", "kind": "half", "name": "x", "decree": "d"}],
         "calendar.exceptions[0].kind"),
        ([{"date": "2026-12-24", "kind": "closed", "name": "x", "decree": "d", "by": "me"}],
         "calendar.exceptions[0].by"),
        ([{"date": "2026-12-24", "kind": "closed", "name": "x", "decree": "d"},
          {"date": "2026-12-24", "kind": "early_close", "name": "x", "decree": "d"}],
         "calendar.exceptions[1].date"),
    ],
)
def test_hostile_exception_lists_are_refused_naming_the_field(value: object, field: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_exceptions(value)
    assert str(err.value).startswith(field)
