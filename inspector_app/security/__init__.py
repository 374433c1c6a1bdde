"""Device keys (Ed25519), record signatures and offline login (argon2id passwords, roles).

Depends on nothing above the domain: the store and the services call it, never the reverse.
"""

from .keys import (
    DeviceKey,
    KeyFileError,
    device_key_id_of,
    load_or_create_device_key,
    verify_signature,
)
from .login import (
    ROLES,
    LoginPolicy,
    LoginResult,
    LoginState,
    attempt_login,
    can,
    record_online_login,
)
from .passwords import (
    DEFAULT_PARAMETERS,
    FAST_PARAMETERS,
    HashParameters,
    hash_password,
    needs_rehash,
    verify_password,
)
from .records import canonical_json, sha256_hex, sign_record, verify_record

__all__ = [
    "DEFAULT_PARAMETERS",
    "FAST_PARAMETERS",
    "ROLES",
    "DeviceKey",
    "HashParameters",
    "KeyFileError",
    "LoginPolicy",
    "LoginResult",
    "LoginState",
    "attempt_login",
    "can",
    "canonical_json",
    "device_key_id_of",
    "hash_password",
    "load_or_create_device_key",
    "needs_rehash",
    "record_online_login",
    "sha256_hex",
    "sign_record",
    "verify_password",
    "verify_record",
    "verify_signature",
]
