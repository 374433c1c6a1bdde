"""Offline login policy: lockout with growing delay, stale offline logins, clock rollback.

Pure functions over a :class:`LoginState` the caller persists (one per inspector): no
database, no clock of its own. ``attempt_login`` returns the next state to save whatever
the outcome, so the store writes it in the same transaction as the audit entry.

The device clock is not trusted: the highest time ever seen is kept, and the stale check
and the lockout are measured from ``max(now, highest_clock_seen)``, so setting the clock
back neither revives an expired offline login nor stretches a lockout. Setting it forward
can shorten a lockout; that is bounded by the stale-login window, which it uses up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from typing import Literal

from .passwords import verify_password

LoginCode = Literal["ok", "wrong_password", "locked", "stale_offline", "clock_rollback"]

CLOCK_ROLLBACK_TOLERANCE = timedelta(minutes=5)
# Dates in messages are shown in Brasília time (UTC−3, no daylight saving since 2019),
# the time of every regime shipped (DF and Juiz de Fora).
DISPLAY_TIMEZONE = timezone(timedelta(hours=-3), "BRT")

ROLES = ("inspector", "retention_desk", "supervisor")
# Which roles may perform each action. Roles come from HQ's reference data; actions are
# fixed by the code, so an unknown action is a bug and `can` raises on it.
PERMISSIONS: dict[str, frozenset[str]] = {
    "start_inspection": frozenset({"inspector", "supervisor"}),
    "seal_inspection": frozenset({"inspector", "supervisor"}),
    "retain_vehicle": frozenset({"inspector", "supervisor"}),
    "release_vehicle": frozenset({"retention_desk", "supervisor"}),
    "cancel_auto": frozenset({"supervisor"}),
    "reprint": frozenset(ROLES),
}


def can(role: str, action: str) -> bool:
    """Whether ``role`` may perform ``action``; an unknown role may do nothing.

    Raises ValueError for an action missing from :data:`PERMISSIONS`.
    """
    try:
        allowed = PERMISSIONS[action]
    except KeyError:
        raise ValueError(f"unknown action {action!r}; known: {sorted(PERMISSIONS)}") from None
    return role in allowed


@dataclass(frozen=True)
class LoginState:
    """What the device remembers about one inspector's logins (aware UTC datetimes)."""

    failures: int = 0
    locked_until: datetime | None = None
    last_success_at: datetime | None = None
    last_online_auth_at: datetime | None = None
    highest_clock_seen: datetime | None = None


@dataclass(frozen=True)
class LoginPolicy:
    """Lockout and staleness limits.

    The ``free_attempts``-th consecutive failure locks for ``base_delay_s``, and every
    failure after it doubles the delay up to ``max_delay_s`` (defaults: the 5th wrong
    password locks for 30 s, the 6th for 60 s, the 7th for 120 s, … up to one hour).
    ``max_offline_days=None`` disables the stale-login check.
    """

    free_attempts: int = 5
    base_delay_s: int = 30
    max_delay_s: int = 3600
    max_offline_days: int | None = 30

    def lockout_delay(self, failures: int) -> timedelta | None:
        """How long the ``failures``-th consecutive failure locks; None below the limit."""
        beyond = failures - self.free_attempts
        if beyond < 0:
            return None
        # Cap the exponent first: 2**failures for a huge count would be a huge integer.
        seconds = self.base_delay_s * 2 ** min(beyond, 62)
        return timedelta(seconds=min(seconds, self.max_delay_s))


@dataclass(frozen=True)
class LoginResult:
    """The outcome of one attempt: ``state`` must be persisted whatever ``ok`` is."""

    ok: bool
    state: LoginState
    message_pt: str
    code: LoginCode


def attempt_login(
    *,
    state: LoginState,
    policy: LoginPolicy,
    password_hash: str,
    password: str,
    now: datetime,
) -> LoginResult:
    """Check an offline login at ``now`` (aware) and return the result and next state.

    In order: a stale offline login is refused (nothing offline can fix it); a device
    clock more than five minutes behind the highest time seen is refused; a locked
    account is refused without looking at the password; only then is the password
    verified. Refusals other than a wrong password do not count as failures.
    """
    _require_aware("now", now)
    seen = state.highest_clock_seen
    effective_now = now if seen is None or now > seen else seen
    state = replace(state, highest_clock_seen=effective_now)

    stale_since = _stale_since(state, policy, effective_now)
    if stale_since is not None:
        last = _format_date(stale_since)
        return LoginResult(
            ok=False,
            state=state,
            code="stale_offline",
            message_pt=(
                "Login offline expirado: faça login online com a sede "
                f"(último login online em {last})."
            ),
        )

    if seen is not None and seen - now > CLOCK_ROLLBACK_TOLERANCE:
        return LoginResult(
            ok=False,
            state=state,
            code="clock_rollback",
            message_pt=(
                "O relógio do dispositivo está atrasado: marca "
                f"{_format_datetime(now)}, mas já foi visto {_format_datetime(seen)}. "
                "Acerte a data e a hora do dispositivo e tente novamente."
            ),
        )

    if state.locked_until is not None and effective_now < state.locked_until:
        wait = _format_wait(state.locked_until - effective_now)
        return LoginResult(
            ok=False,
            state=state,
            code="locked",
            message_pt=f"Acesso bloqueado por tentativas erradas. Tente novamente em {wait}.",
        )

    if not verify_password(password_hash, password):
        failures = state.failures + 1
        delay = policy.lockout_delay(failures)
        if delay is None:
            remaining = policy.free_attempts - failures
            plural = "Resta 1 tentativa" if remaining == 1 else f"Restam {remaining} tentativas"
            message = f"Senha incorreta. {plural} antes do bloqueio."
            locked_until = None
        else:
            message = f"Senha incorreta. Acesso bloqueado por {_format_wait(delay)}."
            locked_until = effective_now + delay
        return LoginResult(
            ok=False,
            state=replace(state, failures=failures, locked_until=locked_until),
            code="wrong_password",
            message_pt=message,
        )

    state = replace(state, failures=0, locked_until=None, last_success_at=now)
    if state.last_online_auth_at is None:
        message = "Login offline aceito. Este usuário ainda não fez login online com a sede."
    elif policy.max_offline_days is None:
        message = (
            "Login offline aceito (último login online em "
            f"{_format_date(state.last_online_auth_at)})."
        )
    else:
        deadline = state.last_online_auth_at + timedelta(days=policy.max_offline_days)
        message = (
            f"Login offline aceito. Faça login online com a sede até {_format_date(deadline)}."
        )
    return LoginResult(ok=True, state=state, code="ok", message_pt=message)


def record_online_login(state: LoginState, *, now: datetime) -> LoginState:
    """The state after HQ authenticated the inspector online at ``now`` (HQ's time).

    Clears failures and lockout, and raises ``highest_clock_seen`` if needed.
    """
    _require_aware("now", now)
    seen = state.highest_clock_seen
    return replace(
        state,
        failures=0,
        locked_until=None,
        last_success_at=now,
        last_online_auth_at=now,
        highest_clock_seen=now if seen is None or now > seen else seen,
    )


def _stale_since(
    state: LoginState, policy: LoginPolicy, effective_now: datetime
) -> datetime | None:
    """The last online login when it is older than the policy allows, else None."""
    last = state.last_online_auth_at
    if policy.max_offline_days is None or last is None:
        return None  # no limit, or an enrolment/demo credential never used online
    if effective_now - last > timedelta(days=policy.max_offline_days):
        return last
    return None


def _require_aware(name: str, value: datetime) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got {value!r}")


def _format_date(moment: datetime) -> str:
    return moment.astimezone(DISPLAY_TIMEZONE).strftime("%d/%m/%Y")


def _format_datetime(moment: datetime) -> str:
    return moment.astimezone(DISPLAY_TIMEZONE).strftime("%d/%m/%Y %H:%M")


def _format_wait(duration: timedelta) -> str:
    """A wait in Portuguese, rounded up: "30 s", "2 min", "1 h", "1 h 5 min"."""
    seconds = max(1, math.ceil(duration.total_seconds()))
    if seconds < 60:
        return f"{seconds} s"
    minutes = math.ceil(seconds / 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" if minutes == 0 else f"{hours} h {minutes} min"
