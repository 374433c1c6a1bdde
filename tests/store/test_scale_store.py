"""Issue 17 on the store side: held vehicles in pages, verify since the last clean run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchmarks import scale_store
from inspector_app import services
from inspector_app.store import open_store
from tests.store.test_store_cli import inspector


@pytest.fixture(scope="module")
def seeded(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("since") / "data"
    assert inspector(data_dir, "demo", "seed", "--vehicles", "20", "--autos", "3").returncode == 0
    return data_dir


@pytest.fixture
def seeded_copy(seeded: Path, tmp_path: Path) -> Path:
    shutil.copytree(seeded, tmp_path / "data")
    return tmp_path / "data"


@pytest.fixture(scope="module")
def grown(tmp_path_factory) -> scale_store.Built:
    return scale_store.build(tmp_path_factory.mktemp("grown") / "data", 400, vehicles=60)


def test_held_vehicles_come_in_pages_that_add_up_to_the_whole_list(grown):
    store = open_store(grown.data_dir)
    try:
        whole = services.vehicles_held(store=store)
        pages, after = [], None
        while True:
            page = services.vehicles_held(store=store, after=after, limit=37)
            pages.extend(page)
            if len(page) < 37:
                break
            after = (page[-1]["retained_at"], page[-1]["record_id"])
        count = services.held_count(store=store)
    finally:
        store.close()
    assert len(whole) > 100
    assert pages == whole
    assert count == len(whole)
    assert [h["retained_at"] for h in whole] == sorted(h["retained_at"] for h in whole)


def test_released_and_cancelled_retentions_are_not_held(grown):
    store = open_store(grown.data_dir)
    try:
        held = {h["record_id"] for h in services.vehicles_held(store=store)}
        closed = {r[0] for r in store.conn.execute(
            "SELECT t.id FROM records t JOIN records x ON x.refers_to = t.id "
            "WHERE t.kind = 'termo_retencao' AND x.kind = 'termo_liberacao'")}
        for rid in list(closed)[:3]:
            assert services.held_record(store=store, retention_id=rid) is None
    finally:
        store.close()
    assert closed and not held & closed


def test_verify_since_the_last_clean_run_checks_only_what_was_sealed_after_it(seeded_copy):
    full = inspector(seeded_copy, "store", "verify")
    assert full.returncode == 0 and "full run in" in full.stdout, full.stdout
    store = open_store(seeded_copy)
    try:
        checkpoint = json.loads(store.meta("verify_last_clean") or "{}")
        session = services.login(store=store, matricula="1004", password="demo1004")
        services.void_number(store=store, session=session, reason="Formulário rasgado.")
    finally:
        store.close()
    since = inspector(seeded_copy, "store", "verify", "--since-last-clean")
    assert since.returncode == 0, since.stdout
    assert since.stdout.startswith("store ok: 1 records, 1 journal entries")
    assert f"records sealed after journal entry {checkpoint['seq']}" in since.stdout
    assert "the last full run took" in since.stdout
    again = inspector(seeded_copy, "store", "verify", "--since-last-clean")
    assert again.stdout.startswith("store ok: 0 records"), again.stdout


def test_a_checkpoint_that_no_longer_matches_the_journal_is_reported(seeded_copy: Path):
    store = open_store(seeded_copy)
    try:
        store.set_meta("verify_last_clean", json.dumps(
            {"seq": 2, "entry_hash": "0" * 64, "full_seconds": 1.0, "records": 5}))
    finally:
        store.close()
    result = inspector(seeded_copy, "store", "verify", "--since-last-clean")
    assert result.returncode == 1
    assert "journal entry 2: no longer the one the last clean run ended at" in result.stdout
