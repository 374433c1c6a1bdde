"""Sync fixtures: a real HQ on loopback and device stores copied from a seeded template."""

from __future__ import annotations

import pytest
from hqkit import BACKENDS, RunningHQ, running_hq
from synckit import store_from_template

from inspector_app import demo
from inspector_app.store.db import DB_NAME, open_store


@pytest.fixture(scope="session")
def hq_sqlite(tmp_path_factory):
    with running_hq("sqlite", tmp_path_factory.mktemp("hq-sync")) as hq:
        yield hq


@pytest.fixture
def hq(hq_sqlite: RunningHQ) -> RunningHQ:
    hq_sqlite.reset()
    return hq_sqlite


@pytest.fixture(scope="session", params=BACKENDS)
def hq_server(request, tmp_path_factory):
    with running_hq(request.param, tmp_path_factory.mktemp(f"hq-e2e-{request.param}")) as hq:
        yield hq


@pytest.fixture(scope="session")
def registry_template(tmp_path_factory):
    """A store with the demo registry (40 vehicles) and no device key: copied per test."""
    folder = tmp_path_factory.mktemp("template")
    store = open_store(folder)
    demo.seed_registry(store, vehicles=40, seed=1)
    store.close()
    return folder / DB_NAME


@pytest.fixture
def make_store(tmp_path, registry_template):
    """``make_store(name)``: a new device store (own folder, own key on first seal)."""
    opened = []

    def make(name: str = "device"):
        store = store_from_template(registry_template, tmp_path / name)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
