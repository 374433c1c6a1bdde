"""Record signatures: canonical JSON bytes, SHA-256 and Ed25519 signature of sealed records."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector_app.security.keys import DeviceKey
from inspector_app.security.records import canonical_json, sha256_hex, sign_record, verify_record

KEY = DeviceKey.generate()
AUTO = {
    "kind": "auto_de_infracao",
    "number": "DF-A 000123",
    "rule_id": "DF15154.29.XIII",
    "fine": "1234.50",
    "issued_at": "2026-10-10T09:00:00-03:00",
    "place": "Terminal Rodoviário de Ceilândia",
    "narrative": "Extintor de incêndio com validade vencida; condutor recusou-se a assinar.",
    "points": 4,
    "reincidence": True,
    "driver_cpf": None,
    "photos": [{"sha256": "ab" * 32}, {"sha256": "cd" * 32}],
}


def test_canonical_json_is_compact_with_sorted_keys():
    assert canonical_json({"b": 1, "a": [True, None, "x"], "c": {"z": 0, "y": -1}}) == (
        b'{"a":[true,null,"x"],"b":1,"c":{"y":-1,"z":0}}'
    )


def test_canonical_json_does_not_depend_on_key_order():
    reordered = dict(reversed(list(AUTO.items())))
    assert list(reordered) != list(AUTO)
    assert canonical_json(reordered) == canonical_json(AUTO)


@pytest.mark.parametrize(
    ("text", "utf8"),
    [
        ("ç", b"\xc3\xa7"),
        ("ã", b"\xc3\xa3"),
        ("São João", b"S\xc3\xa3o Jo\xc3\xa3o"),
        ("retenção", b"reten\xc3\xa7\xc3\xa3o"),
        ("🚌", b"\xf0\x9f\x9a\x8c"),
    ],
)
def test_canonical_json_keeps_accents_as_utf8_bytes_not_escapes(text, utf8):
    encoded = canonical_json({"t": text})
    assert encoded == b'{"t":"' + utf8 + b'"}'
    assert b"\\u" not in encoded


@pytest.mark.parametrize(
    "value",
    [
        pytest.param(1234.5, id="float"),
        pytest.param(0.0, id="zero-float"),
        pytest.param(float("nan"), id="nan"),
        pytest.param(float("inf"), id="infinity"),
    ],
)
def test_canonical_json_rejects_floats_because_money_must_be_strings(value):
    with pytest.raises(TypeError, match="money must be strings"):
        canonical_json({"fine": value})


@pytest.mark.parametrize(
    ("payload", "where"),
    [
        pytest.param({"items": [{"fine": 1.5}]}, r"\$\.items\[0\]\.fine", id="nested-float"),
        pytest.param({"fine": Decimal("1.50")}, r"\$\.fine: Decimal", id="decimal"),
        pytest.param(
            {"at": datetime(2026, 10, 10, tzinfo=UTC)}, r"\$\.at: datetime", id="datetime"
        ),
        pytest.param({"on": date(2026, 10, 10)}, r"\$\.on: date", id="date"),
        pytest.param({"blob": b"\x00"}, r"\$\.blob: bytes", id="bytes"),
        pytest.param({"tags": {"a"}}, r"\$\.tags: set", id="set"),
        pytest.param({1: "x"}, r"dict key 1", id="int-key"),
        pytest.param({"m": {None: "x"}}, r"\$\.m: dict key None", id="none-key"),
    ],
)
def test_canonical_json_rejects_values_that_json_would_reformat(payload, where):
    with pytest.raises(TypeError, match=where):
        canonical_json(payload)


def test_tuples_are_written_as_lists():
    assert canonical_json({"a": (1, "x")}) == b'{"a":[1,"x"]}'


def test_sha256_hex_is_lowercase_hex_of_the_bytes():
    assert sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert sha256_hex(b"abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


def test_signed_record_returns_canonical_bytes_hash_and_verifiable_signature():
    canonical, digest, signature_b64 = sign_record(KEY, AUTO)
    assert canonical == canonical_json(AUTO)
    assert digest == hashlib.sha256(canonical).hexdigest()
    assert len(base64.b64decode(signature_b64, validate=True)) == 64
    assert verify_record(KEY.public_key_bytes(), canonical, signature_b64)


def test_signature_is_over_the_canonical_form_whatever_the_key_order():
    _, _, signature_b64 = sign_record(KEY, dict(reversed(list(AUTO.items()))))
    assert verify_record(KEY.public_key_bytes(), canonical_json(AUTO), signature_b64)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("fine", "1234.51"),
        ("number", "DF-A 000124"),
        ("narrative", AUTO["narrative"].replace("recusou-se a assinar", "assinou")),
        ("points", 5),
        ("reincidence", False),
    ],
)
def test_altered_record_fails_verification(field, value):
    _, _, signature_b64 = sign_record(KEY, AUTO)
    altered = canonical_json({**AUTO, field: value})
    assert not verify_record(KEY.public_key_bytes(), altered, signature_b64)


@pytest.mark.parametrize("byte_index", [0, 1, 17, 100, -1])
def test_one_flipped_bit_in_the_canonical_bytes_fails_verification(byte_index):
    canonical, _, signature_b64 = sign_record(KEY, AUTO)
    tampered = bytearray(canonical)
    tampered[byte_index] ^= 0x01
    assert not verify_record(KEY.public_key_bytes(), bytes(tampered), signature_b64)


@pytest.mark.parametrize("byte_index", [0, 31, 32, 63])
def test_one_flipped_bit_in_the_signature_fails_verification(byte_index):
    canonical, _, signature_b64 = sign_record(KEY, AUTO)
    signature = bytearray(base64.b64decode(signature_b64))
    signature[byte_index] ^= 0x80
    tampered = base64.b64encode(bytes(signature)).decode("ascii")
    assert not verify_record(KEY.public_key_bytes(), canonical, tampered)


@pytest.mark.parametrize(
    "signature_b64",
    [
        pytest.param("", id="empty"),
        pytest.param("not base64!", id="not-base64"),
        pytest.param("AAAA", id="too-short"),
        pytest.param(None, id="none"),
    ],
)
def test_malformed_signature_fails_verification_without_raising(signature_b64):
    canonical, _, _ = sign_record(KEY, AUTO)
    assert verify_record(KEY.public_key_bytes(), canonical, signature_b64) is False


def test_record_signed_by_another_device_fails_verification():
    canonical, _, signature_b64 = sign_record(DeviceKey.generate(), AUTO)
    assert not verify_record(KEY.public_key_bytes(), canonical, signature_b64)


# Surrogates cannot be encoded as UTF-8, so they are not text a record could hold.
TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
JSON_SCALARS = st.none() | st.booleans() | st.integers() | TEXT
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(TEXT, children, max_size=5),
    max_leaves=15,
)
JSON_DICTS = st.dictionaries(TEXT, JSON_VALUES, max_size=8)


@given(JSON_DICTS)
def test_canonical_json_is_a_fixed_point_of_parsing(payload):
    canonical = canonical_json(payload)
    assert canonical_json(json.loads(canonical)) == canonical


@given(JSON_DICTS)
def test_canonical_json_parses_back_to_the_same_data(payload):
    assert json.loads(canonical_json(payload)) == payload
