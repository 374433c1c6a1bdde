"""Crash safety of sealing: a child sealing autos is SIGKILLed at random points, again and again."""

from __future__ import annotations

import os

import pytest
from crashkit import COMMITTING, IN_TRANSACTION, PHASE_NAMES, iter_problem_lines, run_kills

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

INSIDE = (PHASE_NAMES[IN_TRANSACTION], PHASE_NAMES[COMMITTING])


def _assert_survived(run, kills):
    print(run.summary())
    assert run.kills == kills
    assert run.problems == [], "\n".join(iter_problem_lines(run))
    assert run.acknowledged > 0  # the children really sealed (fewer when the machine is busy)
    # The harness is only worth something if kills land inside transactions.
    assert sum(run.phases[name] for name in INSIDE) >= kills // 4, run.phases


def test_200_kills_while_sealing_lose_no_acknowledged_auto_and_leave_no_partial_record(tmp_path):
    run = run_kills(tmp_path / "data", tmp_path / "work", kills=200)
    _assert_survived(run, 200)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_1000_kills_while_sealing_lose_no_acknowledged_auto_and_leave_no_partial_record(
    tmp_path, request
):
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("1,000 kills take minutes: run with `make test-slow` (pytest -m slow)")
    # verify_store (Ed25519 of every record) after every 10th kill and the last; the other
    # checks of crashkit.check_store after every kill.
    run = run_kills(tmp_path / "data", tmp_path / "work", kills=1000, seed=1000, verify_every=10)
    _assert_survived(run, 1000)


def test_the_harness_catches_partial_records_when_each_insert_commits_on_its_own(tmp_path):
    # Negative control: the same harness, with Store.atomic() defeated in the child.
    run = run_kills(
        tmp_path / "data", tmp_path / "work", kills=200, mode="split_transaction",
        stop_at_first_problem=True,
    )
    print(run.summary(), *iter_problem_lines(run), sep="\n")
    assert run.problems, "the harness saw nothing wrong without the transaction"
    assert any("partial records" in text or "verify:" in text for _, text in run.problems)


def test_the_harness_catches_an_auto_acknowledged_before_it_was_committed(tmp_path):
    # Negative control: the child tells the inspector "saved" before sealing. (Dropping the
    # fsync instead is no control: SIGKILL does not lose what the kernel already holds.)
    run = run_kills(
        tmp_path / "data", tmp_path / "work", kills=200, mode="early_ack",
        stop_at_first_problem=True,
    )
    print(run.summary(), *iter_problem_lines(run), sep="\n")
    assert any("is missing" in text for _, text in run.problems), run.summary()
