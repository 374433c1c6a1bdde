"""The background sync worker: with a real HQ (its own process) going down and coming back,
it reports offline with the error and the pending count, backs off, and drains the outbox by
itself once HQ answers; ``wake()`` syncs at once; the backoff schedule is full jitter capped
at 5 minutes (checked with an injected random source and sleep)."""

from __future__ import annotations

import random
import threading
import time

import pytest
from hq_process import HQProcess
from hqkit import free_port
from synckit import void_numbers

from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.devices import create_enrolment_code
from inspector_app.store.db import open_store
from inspector_app.sync import client as sync
from inspector_app.sync.worker import MAX_DELAY, SyncStatus, SyncWorker, backoff_delay


def wait_for(predicate, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.02)


class _Top(random.Random):
    """Draws the top of every jitter interval: the schedule's upper bound."""

    def uniform(self, a: float, b: float) -> float:
        return b


@pytest.fixture
def hq_process(tmp_path):
    url = f"sqlite:///{tmp_path / 'hq.db'}"
    engine = make_engine(url)
    upgrade(engine)
    hq = HQProcess(url, tmp_path / "hq-blobs", free_port(), idempotent=True)
    hq.start()
    hq.engine = engine
    yield hq
    if hq.proc is not None and hq.proc.poll() is None:
        hq.kill()
    engine.dispose()


def test_backoff_is_full_jitter_doubling_up_to_five_minutes():
    assert [backoff_delay(n, rng=_Top()) for n in range(1, 11)] == [
        2, 4, 8, 16, 32, 64, 128, 256, 300, 300]
    assert backoff_delay(10_000, rng=_Top()) == MAX_DELAY
    rng = random.Random(3)
    draws = [backoff_delay(6, rng=rng) for _ in range(500)]
    assert all(0 <= d <= 64 for d in draws) and min(draws) < 8 and max(draws) > 56


def test_the_loop_sleeps_the_backoff_schedule_while_hq_is_unreachable(make_store):
    store = make_store()
    store.set_meta(sync.META_HQ_URL, f"http://127.0.0.1:{free_port()}")
    store.set_meta(sync.META_TOKEN, "x")
    folder = store.data_dir
    slept: list[float] = []
    seen: list[SyncStatus] = []
    done = threading.Event()

    def sleep(delay: float) -> None:
        slept.append(delay)
        if len(slept) == 10:
            worker.stop(timeout=0)
            done.set()

    worker = SyncWorker(lambda: open_store(folder), rng=_Top(), sleep=sleep,
                        on_status=seen.append).start()
    assert done.wait(20)
    worker.stop()
    assert slept == [2, 4, 8, 16, 32, 64, 128, 256, 300, 300]
    last = worker.status
    assert last.online is False and last.failures == 10 and not last.running
    assert last.last_error and "inacessível" in last.last_error
    assert any(s.running for s in seen)


def test_a_broken_callback_or_store_never_stops_the_worker(tmp_path):
    attempts: list[int] = []

    def broken_store():
        attempts.append(1)
        raise OSError("disco indisponível")

    slept: list[float] = []
    worker = SyncWorker(broken_store, base_delay=0.01, max_delay=0.02, sleep=slept.append,
                        on_status=lambda s: 1 / 0).start()
    wait_for(lambda: len(attempts) >= 3)
    worker.stop()
    assert not worker.alive
    assert "disco indisponível" in (worker.status.last_error or "")


def test_worker_goes_offline_backs_off_and_drains_the_outbox_when_hq_returns(
        make_store, hq_process):
    store = make_store()
    sync.enrol(store, hq_url=f"http://127.0.0.1:{hq_process.port}",
               code=create_enrolment_code(hq_process.engine, series="AI", range_size=50))
    void_numbers(store, 5)
    hq_process.kill()  # HQ down before the worker's first attempt
    statuses: list[SyncStatus] = []
    worker = SyncWorker(lambda: open_store(store.data_dir), on_status=statuses.append,
                        base_delay=0.05, max_delay=0.2, poll_interval=30.0)
    worker.start()
    try:
        wait_for(lambda: worker.status.failures >= 2)
        down = worker.status
        assert down.online is False and down.pending == 5 and down.last_success is None
        assert down.last_error and down.next_attempt_in is not None
        assert down.next_attempt_in <= 0.2

        hq_process.start()  # back on the same port: the worker finds it by itself
        wait_for(lambda: worker.status.online and worker.status.pending == 0)
        up = worker.status
        assert up.last_success and up.last_error is None and up.failures == 0
        assert up.next_attempt_in == 30.0
        with hq_process.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT COUNT(*) FROM records").scalar() == 5

        # Poll interval is 30 s: only wake() makes the next two go now.
        void_numbers(store, 2)
        before = up.last_success
        worker.wake()
        wait_for(lambda: worker.status.last_success != before and worker.status.pending == 0,
                 timeout=10)
        with hq_process.engine.connect() as conn:
            assert conn.exec_driver_sql("SELECT COUNT(*) FROM records").scalar() == 7
    finally:
        worker.stop()
    assert not worker.alive and not worker.status.running
    assert any(s.online is False for s in statuses) and statuses[-1].online


def test_the_status_counts_every_reference_change_the_worker_applied(hq, make_store, tmp_path):
    """The GUI reloads its screens when ``reference_changes`` grows (shell.reference_changed):
    it grows by what each run pulled and never when nothing came."""
    import json

    from inspector_app.hq.registry import import_registry

    store = make_store()
    sync.enrol(store, hq_url=hq.url, code=hq.enrol_code(series="RC", range_size=10))
    worker = SyncWorker(lambda: store)
    worker.step(store)
    first = worker.status.reference_changes
    assert worker.status.last_success and first == 1  # the device's own number range
    worker.step(store)
    assert worker.status.reference_changes == first  # nothing new: nothing to reload

    holder = dict(zip(("id", "kind", "name", "cnpj", "permit_number", "permit_status",
                       "pack_id"),
                      ("rc-h1", "pj", "Viação Planalto Ltda", "11.222.333/0001-81", "P-77",
                       "active", "DF_STPCR"), strict=True))
    path = tmp_path / "registry.json"
    path.write_text(json.dumps({"permit_holders": [holder]}), encoding="utf-8")
    assert import_registry(hq.engine, path).ok
    worker.step(store)
    assert worker.status.reference_changes == first + 1
