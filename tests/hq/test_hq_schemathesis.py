"""schemathesis against HQ's own OpenAPI spec, over a live uvicorn on loopback (SQLite):
generated requests to every operation, as an enrolled device, must never get a server
error (5xx) and every answer must match the spec (status code, content type, body schema).
Bounded to a few dozen examples per operation so it stays well under a minute."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import schemathesis
from hqkit import SimDevice, running_hq
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from inspector_app.hq.core.config import Settings
from inspector_app.hq.main import create_app
from inspector_app.sync.protocol import API_PREFIX, BUNDLE_MEDIA_TYPE

# A bundle is bytes (files framed by '<sha256> <size>' lines): send the generated body as is.
schemathesis.serializer.alias(BUNDLE_MEDIA_TYPE, "application/octet-stream")

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@pytest.fixture(scope="module")
def live_hq(tmp_path_factory):
    with running_hq("sqlite", tmp_path_factory.mktemp("hq-schemathesis"), api_docs=True) as hq:
        yield hq, SimDevice(hq).enrol()


def _spec() -> dict:
    """The spec HQ serves, built at import (pytest collects the operations from it);
    ``schemathesis.pytest.from_fixture`` does not work with pytest 9.2 (``_nodeid``)."""
    with tempfile.TemporaryDirectory() as folder:
        app = create_app(Settings(database_url="sqlite://", blob_dir=Path(folder) / "b",
                                  api_docs=True))
        return app.openapi()


schema = schemathesis.openapi.from_dict(_spec())


def test_the_spec_is_the_one_hq_serves(live_hq):
    hq, _ = live_hq
    with hq.client() as client:
        assert client.get(f"{API_PREFIX}/openapi.json").json() == _spec()


@schema.parametrize()
@settings(max_examples=30, deadline=None,
          suppress_health_check=list(HealthCheck))
def test_hq_answers_every_generated_request_within_its_spec(case, live_hq):
    hq, device = live_hq
    case.call_and_validate(base_url=hq.url, headers={"Authorization": f"Bearer {device.token}"},
                           checks=CHECKS)
