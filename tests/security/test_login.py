"""Offline login policy: lockout with growing delay, stale offline logins, clock rollback, roles."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from inspector_app.security.login import (
    PERMISSIONS,
    ROLES,
    LoginPolicy,
    LoginState,
    attempt_login,
    can,
    record_online_login,
)
from inspector_app.security.passwords import FAST_PARAMETERS, hash_password

PASSWORD = "Fiscal@2026"
PASSWORD_HASH = hash_password(PASSWORD, parameters=FAST_PARAMETERS)
POLICY = LoginPolicy()
LAST_ONLINE = datetime(2026, 10, 1, 12, 0, tzinfo=UTC)
T0 = datetime(2026, 10, 10, 9, 0, tzinfo=UTC)
FRESH = LoginState(last_online_auth_at=LAST_ONLINE)


def login(state, password, now, policy=POLICY):
    return attempt_login(
        state=state, policy=policy, password_hash=PASSWORD_HASH, password=password, now=now
    )


def fail_times(count, *, state=FRESH, start=T0):
    """``count`` wrong passwords, each one second after the previous lockout ends."""
    now = start
    for _ in range(count):
        result = login(state, "errada", now)
        assert result.code == "wrong_password"
        state = result.state
        now = (state.locked_until or now) + timedelta(seconds=1)
    return state, now


def test_right_password_logs_in_and_says_until_when_offline_login_lasts():
    result = login(FRESH, PASSWORD, T0)
    assert (result.ok, result.code) == (True, "ok")
    assert result.message_pt == "Login offline aceito. Faça login online com a sede até 31/10/2026."
    assert result.state == LoginState(
        failures=0, last_success_at=T0, last_online_auth_at=LAST_ONLINE, highest_clock_seen=T0
    )


@pytest.mark.parametrize(
    ("failures_before", "message"),
    [
        (0, "Senha incorreta. Restam 4 tentativas antes do bloqueio."),
        (1, "Senha incorreta. Restam 3 tentativas antes do bloqueio."),
        (2, "Senha incorreta. Restam 2 tentativas antes do bloqueio."),
        (3, "Senha incorreta. Resta 1 tentativa antes do bloqueio."),
        (4, "Senha incorreta. Acesso bloqueado por 30 s."),
    ],
)
def test_wrong_password_counts_down_the_free_attempts(failures_before, message):
    result = login(replace(FRESH, failures=failures_before), "errada", T0)
    assert (result.ok, result.code, result.message_pt) == (False, "wrong_password", message)
    assert result.state.failures == failures_before + 1


def test_five_wrong_passwords_lock_the_account():
    state, now = fail_times(4)
    assert state.locked_until is None
    result = login(state, "errada", now)
    assert result.state.failures == 5
    assert result.state.locked_until == now + timedelta(seconds=30)


@pytest.mark.parametrize(
    ("failures", "delay_s"),
    [
        (5, 30),
        (6, 60),
        (7, 120),
        (8, 240),
        (9, 480),
        (10, 960),
        (11, 1920),
        (12, 3600),
        (13, 3600),
        (50, 3600),
    ],
)
def test_each_failure_after_the_free_attempts_doubles_the_lockout_up_to_the_cap(failures, delay_s):
    state, now = fail_times(failures - 1)
    result = login(state, "errada", now)
    assert result.state.failures == failures
    assert result.state.locked_until - now == timedelta(seconds=delay_s)


@pytest.mark.parametrize(
    ("failures", "expected"),
    [(0, None), (4, None), (5, 30), (6, 60), (7, 120), (12, 3600), (10**9, 3600)],
)
def test_lockout_delay_table(failures, expected):
    delay = POLICY.lockout_delay(failures)
    assert delay == (None if expected is None else timedelta(seconds=expected))


def test_policy_parameters_change_the_lockout():
    policy = LoginPolicy(free_attempts=3, base_delay_s=10, max_delay_s=25)
    assert [policy.lockout_delay(n) for n in (2, 3, 4, 5)] == [
        None,
        timedelta(seconds=10),
        timedelta(seconds=20),
        timedelta(seconds=25),
    ]


@pytest.mark.parametrize("password", [PASSWORD, "errada"])
def test_any_password_during_lockout_is_refused_unchecked_and_not_counted(password):
    state, _ = fail_times(5)
    during = state.locked_until - timedelta(seconds=20)
    result = login(state, password, during)
    assert (result.ok, result.code) == (False, "locked")
    assert result.message_pt == "Acesso bloqueado por tentativas erradas. Tente novamente em 20 s."
    assert result.state.failures == 5
    assert result.state.locked_until == state.locked_until


@pytest.mark.parametrize(
    ("remaining", "wait"),
    [
        (timedelta(seconds=1), "1 s"),
        (timedelta(milliseconds=200), "1 s"),
        (timedelta(seconds=59), "59 s"),
        (timedelta(seconds=60), "1 min"),
        (timedelta(seconds=61), "2 min"),
        (timedelta(seconds=90), "2 min"),
        (timedelta(minutes=59, seconds=30), "1 h"),
        (timedelta(hours=1), "1 h"),
        (timedelta(hours=1, minutes=4, seconds=1), "1 h 5 min"),
    ],
)
def test_lockout_message_rounds_the_wait_up(remaining, wait):
    state = replace(FRESH, failures=7, locked_until=T0 + remaining)
    result = login(state, PASSWORD, T0)
    assert (
        result.message_pt == f"Acesso bloqueado por tentativas erradas. Tente novamente em {wait}."
    )


def test_right_password_after_the_lockout_passes_and_resets_failures():
    state, after = fail_times(7)
    result = login(state, PASSWORD, after)
    assert (result.ok, result.code) == (True, "ok")
    assert result.state.failures == 0
    assert result.state.locked_until is None
    assert result.state.last_success_at == after


def test_wrong_password_right_after_a_lockout_locks_again_for_longer():
    state, after = fail_times(5)
    result = login(state, "errada", after)
    assert result.state.locked_until - after == timedelta(seconds=60)


def test_setting_the_clock_back_a_little_does_not_stretch_a_lockout():
    # Locked until T0+30s; the device has already seen T0+40s; the clock now says T0+37s.
    state = replace(
        FRESH,
        failures=5,
        locked_until=T0 + timedelta(seconds=30),
        highest_clock_seen=T0 + timedelta(seconds=40),
    )
    result = login(state, PASSWORD, T0 + timedelta(seconds=37))
    assert result.code == "ok"


@pytest.mark.parametrize(
    ("offline_for", "code"),
    [
        (timedelta(days=29), "ok"),
        (timedelta(days=30), "ok"),
        (timedelta(days=30, seconds=1), "stale_offline"),
        (timedelta(days=400), "stale_offline"),
    ],
)
def test_offline_login_expires_30_days_after_the_last_online_login(offline_for, code):
    result = login(FRESH, PASSWORD, LAST_ONLINE + offline_for)
    assert result.code == code
    assert result.ok is (code == "ok")


def test_stale_offline_login_names_the_last_online_login_date():
    result = login(FRESH, PASSWORD, LAST_ONLINE + timedelta(days=31))
    assert result.message_pt == (
        "Login offline expirado: faça login online com a sede (último login online em 01/10/2026)."
    )


def test_stale_offline_login_is_refused_without_checking_or_counting_the_password():
    result = login(FRESH, "errada", LAST_ONLINE + timedelta(days=31))
    assert result.code == "stale_offline"
    assert result.state.failures == 0


@pytest.mark.parametrize(
    "clock_now",
    [
        pytest.param(LAST_ONLINE + timedelta(days=1), id="clock-set-back-a-month"),
        pytest.param(
            LAST_ONLINE + timedelta(days=30, minutes=58), id="clock-set-back-within-tolerance"
        ),
        pytest.param(LAST_ONLINE - timedelta(days=1), id="clock-before-the-online-login"),
    ],
)
def test_stale_offline_login_stays_refused_when_the_clock_is_set_back(clock_now):
    # The device already saw a time 31 days after the last online login.
    state = replace(FRESH, highest_clock_seen=LAST_ONLINE + timedelta(days=30, hours=1))
    result = login(state, PASSWORD, clock_now)
    assert (result.ok, result.code) == (False, "stale_offline")
    assert result.state.highest_clock_seen == state.highest_clock_seen


@pytest.mark.parametrize(
    ("behind", "code"),
    [
        (timedelta(0), "ok"),
        (timedelta(minutes=5), "ok"),
        (timedelta(minutes=5, seconds=1), "clock_rollback"),
        (timedelta(days=3), "clock_rollback"),
    ],
)
def test_clock_more_than_five_minutes_behind_the_highest_seen_is_refused(behind, code):
    state = replace(FRESH, highest_clock_seen=T0)
    result = login(state, PASSWORD, T0 - behind)
    assert result.code == code
    assert result.state.highest_clock_seen == T0


def test_clock_rollback_message_tells_the_user_to_fix_the_clock():
    state = replace(FRESH, highest_clock_seen=T0)
    result = login(state, PASSWORD, T0 - timedelta(days=2))
    assert result.message_pt == (
        "O relógio do dispositivo está atrasado: marca 08/10/2026 06:00, mas já foi visto "
        "10/10/2026 06:00. Acerte a data e a hora do dispositivo e tente novamente."
    )


def test_clock_rollback_is_refused_without_checking_or_counting_the_password():
    state = replace(FRESH, highest_clock_seen=T0)
    result = login(state, "errada", T0 - timedelta(hours=1))
    assert result.code == "clock_rollback"
    assert result.state.failures == 0


@pytest.mark.parametrize(
    ("highest_before", "now", "highest_after"),
    [
        (None, T0, T0),
        (T0 - timedelta(days=1), T0, T0),
        (T0 + timedelta(minutes=3), T0, T0 + timedelta(minutes=3)),
        (T0 + timedelta(hours=2), T0, T0 + timedelta(hours=2)),
    ],
)
@pytest.mark.parametrize("password", [PASSWORD, "errada"])
def test_every_attempt_keeps_the_highest_clock_seen(highest_before, now, highest_after, password):
    result = login(replace(FRESH, highest_clock_seen=highest_before), password, now)
    assert result.state.highest_clock_seen == highest_after


def test_user_never_logged_in_online_is_allowed_with_a_notice():
    result = login(LoginState(), PASSWORD, T0 + timedelta(days=365))
    assert (result.ok, result.code) == (True, "ok")
    assert "ainda não fez login online" in result.message_pt


def test_without_an_offline_limit_an_old_online_login_is_still_accepted():
    result = login(
        FRESH, PASSWORD, LAST_ONLINE + timedelta(days=400), LoginPolicy(max_offline_days=None)
    )
    assert result.code == "ok"
    assert result.message_pt == "Login offline aceito (último login online em 01/10/2026)."


def test_a_naive_datetime_is_a_programming_error():
    with pytest.raises(ValueError, match="timezone-aware"):
        login(FRESH, PASSWORD, datetime(2026, 10, 10, 9, 0))


def test_online_login_clears_lockout_and_restarts_the_offline_window():
    state, _ = fail_times(6)
    online_at = T0 + timedelta(days=40)
    state = record_online_login(state, now=online_at)
    assert state == LoginState(
        last_success_at=online_at, last_online_auth_at=online_at, highest_clock_seen=online_at
    )
    assert login(state, PASSWORD, online_at + timedelta(days=29)).code == "ok"


@pytest.mark.parametrize(
    ("action", "inspector", "retention_desk", "supervisor"),
    [
        ("start_inspection", True, False, True),
        ("seal_inspection", True, False, True),
        ("retain_vehicle", True, False, True),
        ("release_vehicle", False, True, True),
        ("cancel_auto", False, False, True),
        ("reprint", True, True, True),
    ],
)
def test_role_table(action, inspector, retention_desk, supervisor):
    assert [can(role, action) for role in ROLES] == [inspector, retention_desk, supervisor]


def test_every_action_in_the_table_names_only_known_roles():
    assert all(roles <= set(ROLES) for roles in PERMISSIONS.values())


@pytest.mark.parametrize("role", ["", "admin", "Supervisor", "fiscal"])
def test_unknown_role_may_do_nothing(role):
    assert not any(can(role, action) for action in PERMISSIONS)


def test_unknown_action_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown action 'delete_auto'"):
        can("supervisor", "delete_auto")
