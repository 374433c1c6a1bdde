"""Device tokens and enrolment codes (stored only as SHA-256); the enrolment rate limit is
in ``hq/ratelimit.py``.

A token is 32 random bytes (URL-safe base64): hashing it with plain SHA-256 is enough,
since nobody can guess a 256-bit secret, and it keeps the lookup a single indexed equality.
An enrolment code is 16 characters of Crockford-like base32 (80 bits) that a person types:
``ABCD-EFGH-JKMN-PQRS``; dashes, spaces and case do not matter.
"""

from __future__ import annotations

import hashlib
import secrets

# No I, L, O, U: nothing to mistake for 1, 0 or V when typed from paper.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTVWXYZ0123456789"
CODE_LENGTH = 16


def new_token() -> str:
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def new_enrolment_code() -> str:
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
    return "-".join(raw[i : i + 4] for i in range(0, CODE_LENGTH, 4))


def normalize_code(text: str) -> str:
    """The code as generated (upper case, dashes every 4), whatever the person typed."""
    raw = "".join(ch for ch in text.upper() if ch.isalnum())
    return "-".join(raw[i : i + 4] for i in range(0, len(raw), 4))
