"""Password hashes for offline login: argon2id only (argon2-cffi).

HQ hashes inspectors' passwords and ships the hashes with the reference data; the device
only verifies them. Any hash that is not argon2id (bcrypt, argon2i, garbage) is refused
rather than verified, so a downgraded hash in the registry cannot open the app.
"""

from __future__ import annotations

from dataclasses import dataclass

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

ARGON2ID_PREFIX = "$argon2id$"

# Tuned for an offline login on a slow field terminal: about a quarter to half a second,
# 64 MiB of memory, one thread (the terminal may have a single core).
TIME_COST = 3
MEMORY_COST_KIB = 64 * 1024
PARALLELISM = 1
HASH_LENGTH = 32
SALT_LENGTH = 16


@dataclass(frozen=True)
class HashParameters:
    """argon2id cost parameters; ``memory_cost_kib`` is in kibibytes."""

    time_cost: int = TIME_COST
    memory_cost_kib: int = MEMORY_COST_KIB
    parallelism: int = PARALLELISM

    def hasher(self) -> PasswordHasher:
        return PasswordHasher(
            time_cost=self.time_cost,
            memory_cost=self.memory_cost_kib,
            parallelism=self.parallelism,
            hash_len=HASH_LENGTH,
            salt_len=SALT_LENGTH,
            type=Type.ID,
        )


DEFAULT_PARAMETERS = HashParameters()
# The floor below which an imported hash is refused (OWASP Password Storage Cheat Sheet,
# argon2id: 19 MiB, 2 iterations, 1 thread): HQ hashes with DEFAULT_PARAMETERS; the demo
# registry with this floor so that it passes the device's registry import.
MINIMUM_PARAMETERS = HashParameters(time_cost=2, memory_cost_kib=19 * 1024, parallelism=1)
# For tests and demo data only: milliseconds per hash, far too cheap for real passwords.
FAST_PARAMETERS = HashParameters(time_cost=1, memory_cost_kib=8, parallelism=1)


def hash_password(password: str, *, parameters: HashParameters = DEFAULT_PARAMETERS) -> str:
    """The argon2id hash string (``$argon2id$v=19$m=...``) of ``password``, random salt."""
    return parameters.hasher().hash(password)


def verify_password(password_hash: str, password: str) -> bool:
    """Whether ``password`` matches ``password_hash``.

    False on a mismatch and on anything that is not a well-formed argon2id hash; never
    raises. The cost parameters are read from the hash itself.
    """
    if not isinstance(password_hash, str) or not isinstance(password, str):
        return False
    if not password_hash.startswith(ARGON2ID_PREFIX):
        return False
    try:
        return DEFAULT_PARAMETERS.hasher().verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str, *, parameters: HashParameters = DEFAULT_PARAMETERS) -> bool:
    """Whether ``password_hash`` should be recomputed with ``parameters`` at the next login.

    True for weaker or different parameters and for anything that is not argon2id.
    """
    if not isinstance(password_hash, str) or not password_hash.startswith(ARGON2ID_PREFIX):
        return True
    try:
        return parameters.hasher().check_needs_rehash(password_hash)
    except (InvalidHashError, ValueError):
        return True
