"""HQ enrolment: one-time codes, tokens stored hashed, expiry, rate limit, failure answers."""

from __future__ import annotations

import datetime as dt
import hashlib

import httpx
from hqkit import TLS, SimDevice
from sqlalchemy import update

from inspector_app.hq.core.security import hash_secret
from inspector_app.hq.tables import enrolment_codes
from inspector_app.security.keys import DeviceKey
from inspector_app.sync.protocol import API_PREFIX


def post_enrol(hq, code, key=None, **client_kwargs):
    key = key or DeviceKey.generate()
    with hq.client(**client_kwargs) as client:
        return client.post(f"{API_PREFIX}/enrol", json={
            "code": code, "public_key": key.public_key_b64(), "device_name": "tablet 7"})


def test_enrolment_returns_device_token_and_first_range_and_keeps_only_the_token_hash(hq):
    code = hq.enrol_code(series="SEMOB", range_size=50)
    response = post_enrol(hq, code.lower().replace("-", " "))  # typed loosely by a person
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["number_range"] == {"series": "SEMOB", "first": 1, "last": 50}
    stored = hq.scalar("SELECT token_hash FROM devices WHERE id = :id", id=body["device_id"])
    assert stored == hashlib.sha256(body["token"].encode()).hexdigest()
    assert hq.scalar("SELECT COUNT(*) FROM devices WHERE token_hash = :t", t=body["token"]) == 0
    assert hq.scalar("SELECT COUNT(*) FROM enrolment_codes WHERE code_hash = :h",
                     h=hashlib.sha256(code.encode()).hexdigest()) == 1


def test_second_device_gets_the_next_range_of_the_series(hq):
    first = SimDevice(hq).enrol(series="AI", range_size=100)
    second = SimDevice(hq).enrol(series="AI", range_size=100)
    assert (first.first, second.first) == (1, 101)


def test_a_used_code_is_refused_for_another_key(hq):
    code = hq.enrol_code()
    assert post_enrol(hq, code).status_code == 200
    again = post_enrol(hq, code)
    assert again.status_code == 400
    assert "já utilizado" in again.json()["detail"]


def test_a_used_code_never_issues_a_token_again_not_even_with_the_same_key(hq):
    """Finding 8: the public key is in every signed PDF's certificate; replaying the used
    code with it must not log the real device out."""
    code, key = hq.enrol_code(), DeviceKey.generate()
    first = post_enrol(hq, code, key).json()
    replay = post_enrol(hq, code, key)
    assert replay.status_code == 400
    assert "já utilizado" in replay.json()["detail"] and "token" not in replay.json()
    with hq.client(first["token"]) as client:  # the real device is still in
        assert client.get(f"{API_PREFIX}/pull").status_code == 200
    assert hq.scalar("SELECT COUNT(*) FROM devices") == 1


def test_a_new_code_replaces_a_device_whose_answer_was_lost_but_not_one_in_use(hq):
    key = DeviceKey.generate()
    lost = post_enrol(hq, hq.enrol_code(), key).json()  # the device never got this answer
    again = post_enrol(hq, hq.enrol_code(), key)
    assert again.status_code == 200
    assert again.json()["device_id"] != lost["device_id"]
    assert hq.scalar("SELECT revoked_at IS NOT NULL FROM devices WHERE id = :id",
                     id=lost["device_id"])
    with hq.client(again.json()["token"]) as client:  # in use from now on
        assert client.get(f"{API_PREFIX}/pull").status_code == 200
    third = post_enrol(hq, hq.enrol_code(), key)
    assert third.status_code == 409
    with hq.client(again.json()["token"]) as client:
        assert client.get(f"{API_PREFIX}/pull").status_code == 200


def test_an_expired_code_is_refused(hq):
    code = hq.enrol_code(ttl_minutes=5)
    past = (dt.datetime.now(dt.UTC) - dt.timedelta(seconds=1)).isoformat()
    with hq.engine.begin() as conn:
        conn.execute(update(enrolment_codes)
                     .where(enrolment_codes.c.code_hash == hash_secret(code))
                     .values(expires_at=past))
    response = post_enrol(hq, code)
    assert response.status_code == 400
    assert "expirado" in response.json()["detail"]


def test_an_unknown_code_is_refused(hq):
    response = post_enrol(hq, "AAAA-BBBB-CCCC-DDDD")
    assert response.status_code == 400
    assert response.json()["detail"] == "Código de cadastro inválido."


def test_five_failures_in_a_minute_block_wrong_codes_from_that_address_not_a_good_one(hq):
    """Issue 14 finding 12: the limit used to refuse a valid code too, locking out every
    device behind one proxy after five typos."""
    for _ in range(5):
        assert post_enrol(hq, "AAAA-BBBB-CCCC-DDDD").status_code == 400
    blocked = post_enrol(hq, "AAAA-BBBB-CCCC-DDDE")
    assert blocked.status_code == 429
    assert int(blocked.headers["Retry-After"]) >= 1
    assert post_enrol(hq, hq.enrol_code()).status_code == 200
    assert post_enrol(hq, "AAAA-BBBB-CCCC-DDDF").status_code == 429
    # Another client address (127.0.0.2 is loopback too) is not blocked.
    other = post_enrol(hq, "AAAA-BBBB-CCCC-DDDG",
                       transport=httpx.HTTPTransport(local_address="127.0.0.2", verify=TLS))
    assert other.status_code == 400


def test_a_key_already_enrolled_and_active_is_refused_with_409(hq):
    key = DeviceKey.generate()
    first = post_enrol(hq, hq.enrol_code(), key)
    assert first.status_code == 200
    with hq.client(first.json()["token"]) as client:  # the device came back: in use
        assert client.get(f"{API_PREFIX}/pull").status_code == 200
    response = post_enrol(hq, hq.enrol_code(), key)
    assert response.status_code == 409


def test_a_malformed_public_key_or_missing_field_is_422(hq):
    with hq.client() as client:
        short = client.post(f"{API_PREFIX}/enrol", json={
            "code": hq.enrol_code(), "public_key": "AAAA", "device_name": "x"})
        missing = client.post(f"{API_PREFIX}/enrol", json={"code": hq.enrol_code()})
    assert short.status_code == 422
    assert missing.status_code == 422
