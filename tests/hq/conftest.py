"""HQ fixtures: one real server per database backend for the session, emptied per test."""

from __future__ import annotations

import pytest
from hqkit import BACKENDS, RunningHQ, SimDevice, running_hq


@pytest.fixture(scope="session", params=BACKENDS)
def hq_server(request, tmp_path_factory):
    with running_hq(request.param, tmp_path_factory.mktemp(f"hq-{request.param}")) as hq:
        yield hq


@pytest.fixture
def hq(hq_server: RunningHQ) -> RunningHQ:
    hq_server.reset()
    return hq_server


@pytest.fixture
def device(hq: RunningHQ) -> SimDevice:
    return SimDevice(hq).enrol()
