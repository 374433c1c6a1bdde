"""Record signatures: canonical JSON bytes, their SHA-256 and the device's Ed25519 signature.

The canonical form is what HQ verifies and what the journal chains, so it must be one exact
byte string per record: sorted keys, no spaces, UTF-8 (not ``\\u`` escapes). Only strings,
integers, booleans, None, lists and string-keyed dicts are accepted. Floats are refused
because money must travel as decimal strings ("123.45"), and datetimes must already be ISO
8601 strings, so that no formatting choice hides inside the signature. Strings are not
Unicode-normalised: the caller's bytes are what gets signed.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Mapping

from .keys import DeviceKey, verify_signature


def canonical_json(obj: object) -> bytes:
    """The canonical UTF-8 JSON bytes of ``obj``.

    Raises TypeError for floats (NaN and infinities included), non-string dict keys and
    any other type (Decimal, datetime, bytes, ...), naming where in ``obj`` it was found.
    """
    _check_json_value(obj, "$")
    text = json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    return text.encode("utf-8")


def sha256_hex(data: bytes) -> str:
    """The lowercase hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sign_record(key: DeviceKey, payload: Mapping[str, object]) -> tuple[bytes, str, str]:
    """(canonical bytes, their SHA-256 hex, base64 Ed25519 signature of the canonical bytes)."""
    canonical = canonical_json(dict(payload))
    signature = base64.b64encode(key.sign(canonical)).decode("ascii")
    return canonical, sha256_hex(canonical), signature


def verify_record(public_key: bytes, canonical: bytes, signature_b64: str) -> bool:
    """Whether ``signature_b64`` signs exactly ``canonical`` with ``public_key``.

    False on any malformed input (bad base64 included); never raises.
    """
    try:
        signature = base64.b64decode(signature_b64, validate=True)
    except (binascii.Error, ValueError, TypeError):
        return False
    return verify_signature(public_key, canonical, signature)


def _plain_json(value: object) -> bool:
    """Whether ``value`` holds only exact str/int/bool/None, dicts with str keys and lists:
    the common case, checked without building a path per value (issue 17: this check ran
    for every value of every record sealed and verified)."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is dict:
        return all(type(k) is str and _plain_json(v)
                   for k, v in value.items())  # type: ignore[attr-defined]
    if kind is list or kind is tuple:
        return all(_plain_json(v) for v in value)  # type: ignore[attr-defined]
    return False  # a float, a subclass or another type: the full check says which


def _check_json_value(value: object, where: str) -> None:
    if _plain_json(value):
        return
    _check_json_path(value, where)


def _check_json_path(value: object, where: str) -> None:
    # bool is an int subclass and is fine; float must be caught before anything else.
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        raise TypeError(
            f"{where}: float {value!r} is not allowed in a signed record; "
            "money must be strings (e.g. '123.45')"
        )
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: dict key {key!r} is not a string")
            _check_json_path(item, f"{where}.{key}")
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json_path(item, f"{where}[{index}]")
        return
    raise TypeError(
        f"{where}: {type(value).__name__} is not allowed in a signed record; "
        "use strings (ISO 8601 for dates and times, decimal strings for money)"
    )
