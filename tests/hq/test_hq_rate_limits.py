"""Rate limits (issue 14, findings 12 and 14): enrolment failures and public verification
per client address, counted in the database (the same count across HQ instances on one
database), X-Forwarded-For believed only from a configured proxy, and a valid enrolment
code never refused for someone else's typos. Real HQs on loopback, SQLite and PostgreSQL.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx
import pytest
from hqkit import BACKENDS, TLS, RunningHQ, running_hq

from inspector_app.security.keys import DeviceKey
from inspector_app.sync.protocol import API_PREFIX

LIMIT = 5
WRONG = "AAAA-BBBB-CCCC-DDDD"


@pytest.fixture(scope="module", params=BACKENDS)
def proxied_hq(request, tmp_path_factory) -> Iterator[RunningHQ]:
    """HQ behind a reverse proxy on 127.0.0.1 (the test plays the proxy)."""
    with running_hq(request.param, tmp_path_factory.mktemp(f"hq-proxy-{request.param}"),
                    trusted_proxies=("127.0.0.1",), enrol_failures_per_minute=LIMIT,
                    verify_per_minute=LIMIT) as hq:
        yield hq


@pytest.fixture
def behind_proxy(proxied_hq: RunningHQ) -> RunningHQ:
    proxied_hq.reset()
    return proxied_hq


def enrol(hq: RunningHQ, code: str, forwarded: str | None = None, **kwargs) -> httpx.Response:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    with hq.client(**kwargs) as client:
        return client.post(f"{API_PREFIX}/enrol", headers=headers, json={
            "code": code, "public_key": DeviceKey.generate().public_key_b64(),
            "device_name": "tablet"})


def test_x_forwarded_for_from_a_client_is_not_believed(hq):
    """Before the fix uvicorn believed X-Forwarded-For from loopback, so a client that
    changed it on every try was never limited (200 failures, no 429)."""
    statuses = [enrol(hq, WRONG, forwarded=f"198.51.100.{i}").status_code for i in range(8)]
    assert statuses[:5] == [400] * 5 and statuses[5:] == [429] * 3
    response = enrol(hq, hq.enrol_code(), forwarded="198.51.100.200")
    assert response.status_code == 200
    assert hq.scalar("SELECT enrolled_from FROM devices WHERE id = :i",
                     i=response.json()["device_id"]) == "127.0.0.1"


def test_behind_a_trusted_proxy_each_client_is_counted_and_a_good_code_passes(behind_proxy):
    hq = behind_proxy
    for _ in range(LIMIT):
        assert enrol(hq, WRONG, forwarded="203.0.113.7").status_code == 400
    assert enrol(hq, WRONG, forwarded="203.0.113.7").status_code == 429
    # a client cannot escape by prepending an address: the proxy appends the real one
    assert enrol(hq, WRONG, forwarded="192.0.2.1, 203.0.113.7").status_code == 429
    # the other clients of the same proxy are not locked out
    assert enrol(hq, WRONG, forwarded="203.0.113.8").status_code == 400
    # and the blocked client's valid code still enrols, recorded under its own address
    good = enrol(hq, hq.enrol_code(), forwarded="203.0.113.7")
    assert good.status_code == 200, good.text
    assert hq.scalar("SELECT enrolled_from FROM devices WHERE id = :i",
                     i=good.json()["device_id"]) == "203.0.113.7"


def test_the_count_is_shared_by_every_hq_instance_on_the_database(behind_proxy):
    """Two servers (two processes' worth of app state) on one database: before the fix
    each counted on its own, so N instances allowed N times the limit."""
    first = behind_proxy
    second = RunningHQ(first.settings, first.backend).start()
    try:
        for i in range(LIMIT):
            assert enrol(first if i % 2 else second, WRONG,
                         forwarded="203.0.113.9").status_code == 400
        assert enrol(first, WRONG, forwarded="203.0.113.9").status_code == 429
        assert enrol(second, WRONG, forwarded="203.0.113.9").status_code == 429
    finally:
        second.stop()


def test_verification_is_limited_per_address_with_a_portuguese_page(behind_proxy):
    hq = behind_proxy
    with hq.client() as client:
        client.headers["X-Forwarded-For"] = "203.0.113.20"
        for _ in range(LIMIT):
            code = uuid.uuid4().hex[:12].upper()
            assert client.get(f"/verify/{code}").status_code == 404
        page = client.get("/verify/ABCD")
        api = client.get(f"{API_PREFIX}/verify/ABCD")
    assert page.status_code == 429 and int(page.headers["Retry-After"]) >= 1
    assert "Muitas consultas" in page.text and page.headers["content-type"].startswith("text/html")
    assert api.status_code == 429 and "Muitas consultas" in api.json()["detail"]
    with hq.client() as client:
        client.headers["X-Forwarded-For"] = "203.0.113.21"
        assert client.get("/verify/ABCD").status_code == 404


def test_verification_from_a_direct_client_is_limited_too(hq):
    """The default server (no proxy): 60 lookups a minute, then 429."""
    limit = hq.settings.verify_per_minute
    transport = httpx.HTTPTransport(local_address="127.0.0.3", verify=TLS)
    with hq.client(transport=transport) as client:
        statuses = [client.get(f"{API_PREFIX}/verify/X{i}").status_code
                    for i in range(limit + 2)]
    assert statuses[:limit] == [404] * limit and statuses[limit:] == [429, 429]
