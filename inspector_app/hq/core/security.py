"""Device tokens and enrolment codes (stored only as SHA-256), and the enrolment rate limit.

A token is 32 random bytes (URL-safe base64): hashing it with plain SHA-256 is enough,
since nobody can guess a 256-bit secret, and it keeps the lookup a single indexed equality.
An enrolment code is 16 characters of Crockford-like base32 (80 bits) that a person types:
``ABCD-EFGH-JKMN-PQRS``; dashes, spaces and case do not matter.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import deque

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


class FailureLimiter:
    """At most ``limit`` failures per ``window`` seconds per client address.

    In memory, per server process: enough for one ``inspector-hq serve``; behind several
    workers each counts on its own (the limit then multiplies by the number of workers).
    """

    def __init__(self, limit: int, window: float = 60.0) -> None:
        self.limit = limit
        self.window = window
        self._failures: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> deque[float]:
        stamps = self._failures.setdefault(address, deque())
        while stamps and stamps[0] <= now - self.window:
            stamps.popleft()
        return stamps

    def blocked_for(self, address: str) -> float:
        """Seconds until ``address`` may try again (0 when it may now)."""
        now = time.monotonic()
        with self._lock:
            stamps = self._recent(address, now)
            if len(stamps) < self.limit:
                return 0.0
            return max(0.0, stamps[0] + self.window - now)

    def fail(self, address: str) -> None:
        now = time.monotonic()
        with self._lock:
            self._recent(address, now).append(now)
