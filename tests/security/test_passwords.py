"""Offline-login password hashes: argon2id only, other schemes refused."""

from __future__ import annotations

import pytest
from argon2 import PasswordHasher, Type

from inspector_app.security.passwords import (
    DEFAULT_PARAMETERS,
    FAST_PARAMETERS,
    HashParameters,
    hash_password,
    needs_rehash,
    verify_password,
)


def other_argon2(kind: Type, password: str) -> str:
    return PasswordHasher(time_cost=1, memory_cost=8, parallelism=1, type=kind).hash(password)


# A hash in bcrypt's modular-crypt format ($2b$, cost 4), as passlib or PHP would store it.
BCRYPT_SENHA = "$2b$04$8qJ5N8V3gHn3J6cZ0y7gUe0Y8sS0n7R2m9lYc1q3w5e7r9t1y3u5O"


@pytest.mark.parametrize("password", ["senha", "", "Fiscal@2026", "ção-São João 🚌", "x" * 1000])
def test_argon2id_hash_round_trips(password):
    password_hash = hash_password(password, parameters=FAST_PARAMETERS)
    assert password_hash.startswith("$argon2id$v=19$")
    assert verify_password(password_hash, password)


def test_default_parameters_use_64_mib_three_passes_one_lane():
    password_hash = hash_password("senha")
    assert password_hash.startswith("$argon2id$v=19$m=65536,t=3,p=1$")
    assert verify_password(password_hash, "senha")
    assert not needs_rehash(password_hash)


def test_the_same_password_hashes_differently_each_time():
    assert hash_password("senha", parameters=FAST_PARAMETERS) != hash_password(
        "senha", parameters=FAST_PARAMETERS
    )


@pytest.mark.parametrize("attempt", ["Senha", "senha ", " senha", "senh", "", "senha\x00"])
def test_wrong_password_is_refused(attempt):
    password_hash = hash_password("senha", parameters=FAST_PARAMETERS)
    assert verify_password(password_hash, attempt) is False


@pytest.mark.parametrize(
    "password_hash",
    [
        pytest.param(other_argon2(Type.I, "senha"), id="argon2i"),
        pytest.param(other_argon2(Type.D, "senha"), id="argon2d"),
        pytest.param(BCRYPT_SENHA, id="bcrypt"),
        pytest.param("5e8848 plain sha256 hex", id="not-a-hash"),
        pytest.param("", id="empty"),
        pytest.param("$argon2id$v=19$m=8,t=1,p=1$garbage", id="truncated-argon2id"),
        pytest.param("$ARGON2ID$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g", id="wrong-case"),
        pytest.param(None, id="none"),
    ],
)
def test_hash_that_is_not_a_wellformed_argon2id_is_refused(password_hash):
    assert verify_password(password_hash, "senha") is False


def test_argon2i_hash_is_refused_even_though_argon2_itself_would_accept_it():
    # The point of the prefix check: a downgraded hash in the registry must not open the app.
    password_hash = other_argon2(Type.I, "senha")
    assert PasswordHasher().verify(password_hash, "senha")
    assert verify_password(password_hash, "senha") is False


@pytest.mark.parametrize(
    ("password_hash", "parameters", "expected"),
    [
        pytest.param(
            hash_password("s", parameters=FAST_PARAMETERS),
            DEFAULT_PARAMETERS,
            True,
            id="fast-hash-default-policy",
        ),
        pytest.param(
            hash_password("s", parameters=FAST_PARAMETERS),
            FAST_PARAMETERS,
            False,
            id="fast-hash-fast-policy",
        ),
        pytest.param(
            hash_password("s", parameters=FAST_PARAMETERS),
            HashParameters(time_cost=2, memory_cost_kib=8),
            True,
            id="more-passes-wanted",
        ),
        pytest.param(other_argon2(Type.I, "s"), FAST_PARAMETERS, True, id="argon2i"),
        pytest.param(BCRYPT_SENHA, FAST_PARAMETERS, True, id="bcrypt"),
        pytest.param("garbage", FAST_PARAMETERS, True, id="garbage"),
        pytest.param("$argon2id$garbage", FAST_PARAMETERS, True, id="truncated-argon2id"),
    ],
)
def test_needs_rehash_when_parameters_or_scheme_differ(password_hash, parameters, expected):
    assert needs_rehash(password_hash, parameters=parameters) is expected


def test_verification_reads_the_cost_from_the_hash_not_from_the_defaults():
    password_hash = hash_password(
        "senha", parameters=HashParameters(time_cost=2, memory_cost_kib=16)
    )
    assert "m=16,t=2,p=1" in password_hash
    assert verify_password(password_hash, "senha")
