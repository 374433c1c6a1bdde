"""Bans on a new permission (Decreto 15.154/1993 arts. 12 §ú, 39 §ú, 16 §2), known at HQ,
imported into the device's registry and shown on the vehicle/holder card (issue 13). The
period is counted date to date, the last day included (Lei 9.784/1999 art. 66 §3)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from inspector_app.store import reference
from inspector_app.store.db import open_store
from inspector_app.store.registry_import import import_registry

D = dt.date


def _store_with(tmp_path: Path, holder: dict) -> tuple:
    store = open_store(tmp_path / "data")
    data = {
        "permit_holders": [{"id": "H1", "kind": "pf", "name": "Antônio Carlos Gonçalves",
                            "cpf": "41840660546", "permit_number": "STPA-00001/1999",
                            "permit_status": "revoked", "pack_id": "DF_STPA", **holder}],
        "vehicles": [{"id": "V1", "plate": "JKL1A23", "holder_id": "H1", "pack_id": "DF_STPA"}],
    }
    path = tmp_path / "registry.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return store, import_registry(store, path)


@pytest.mark.parametrize(
    ("reason", "since", "today", "banned", "cite"),
    [
        ("cassacao", "2025-06-10", D(2026, 6, 9), True, "art. 39 §ú: the day before 1 year"),
        ("cassacao", "2025-06-10", D(2026, 6, 10), True, "art. 39 §ú: the end day, included"),
        ("cassacao", "2025-06-10", D(2026, 6, 11), False, "art. 39 §ú: the day after"),
        ("revogacao", "2025-06-10", D(2026, 6, 10), True, "art. 12 §ú: 1 year"),
        ("revogacao", "2025-06-10", D(2026, 6, 11), False, "art. 12 §ú: after 1 year"),
        ("desistencia", "2025-06-10", D(2025, 12, 10), True, "art. 16 §2: the end day"),
        ("desistencia", "2025-06-10", D(2025, 12, 11), False, "art. 16 §2: after 6 months"),
    ],
)
def test_ban_is_shown_on_the_card_while_it_lasts(
    tmp_path: Path, reason: str, since: str, today: D, banned: bool, cite: str
) -> None:
    store, report = _store_with(tmp_path, {"ban_reason": reason, "ban_from": since})
    assert report.ok, report.lines()
    view = reference.find_vehicle(store, "JKL1A23", today=today)
    assert view is not None
    found = [w for w in view.warnings if w.startswith("Impedido(a) de nova permissão")]
    assert bool(found) is banned, (cite, view.warnings)
    if banned:
        assert "Decreto 15.154/1993" in found[0]
    store.close()


@pytest.mark.parametrize(
    ("holder", "field"),
    [
        ({"ban_reason": "castigo", "ban_from": "2025-06-10"}, "ban_reason"),
        ({"ban_reason": "cassacao"}, "ban_from"),
        ({"ban_reason": "cassacao", "ban_from": "2099-01-01"}, "ban_from"),
    ],
)
def test_bad_ban_rows_are_refused_naming_the_field(tmp_path: Path, holder: dict,
                                                   field: str) -> None:
    store, report = _store_with(tmp_path, holder)
    assert [e.field for e in report.errors][:1] == [field]
    store.close()


def test_hq_checks_the_ban_fields_it_publishes() -> None:
    from inspector_app.domain.rowfields import FieldError
    from inspector_app.hq.registry import COLUMNS, _ban

    assert {"ban_reason", "ban_from"} <= set(COLUMNS["permit_holders"])
    assert _ban({"ban_reason": "desistencia", "ban_from": "2025-06-10"}) == {
        "ban_reason": "desistencia", "ban_from": "2025-06-10"}
    with pytest.raises(FieldError):
        _ban({"ban_reason": "cassacao", "ban_from": "2099-01-01"})
