"""The background sync worker (no Qt): a thread that probes HQ, pushes and pulls as soon as
HQ is reachable, and backs off with full jitter (capped at 5 minutes) while it is not.

It never gives up and never fails silently: every step ends in a :class:`SyncStatus`
(online, pending, quarantined, last success, last error, next attempt, reference changes
applied so far) handed to the ``on_status`` callback and readable at any time from
:attr:`SyncWorker.status`. ``wake()`` makes it try now (after sealing, or the
"sincronizar agora" button); ``stop()`` ends it.

The worker opens its own store connection (``open_store``) inside its thread, so the GUI's
connection is never used from two threads. The GUI adapts the callback to a Qt signal;
this module imports no Qt.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

import httpx

from inspector_app.store.db import Store, utc_now
from inspector_app.sync.client import (
    META_HQ_URL,
    SyncError,
    pending_count,
    quarantined,
    sync_once,
)
from inspector_app.sync.protocol import API_PREFIX

BASE_DELAY = 2.0
MAX_DELAY = 300.0  # 5 minutes
POLL_INTERVAL = 60.0  # between runs while everything goes well
PROBE_TIMEOUT = httpx.Timeout(5.0, connect=3.0)


def backoff_delay(failures: int, *, base: float = BASE_DELAY, cap: float = MAX_DELAY,
                  rng: random.Random | None = None) -> float:
    """Full jitter: a uniform draw in ``[0, min(cap, base · 2^(failures-1))]``."""
    bound = min(cap, base * 2 ** max(0, min(failures - 1, 62)))
    return (rng or random).uniform(0.0, bound)


@dataclass(frozen=True)
class SyncStatus:
    """What the status bar shows. ``online`` is None before the first probe."""

    online: bool | None = None
    pending: int = 0
    quarantined: int = 0
    last_success: str | None = None
    last_error: str | None = None
    last_attempt: str | None = None
    failures: int = 0
    next_attempt_in: float | None = None
    running: bool = False
    # Reference changes (registry rows, tombstones, number ranges) this worker has applied
    # to the store since it started, pages of failed runs included: it only grows, so the
    # GUI reloads its screens whenever it is larger than the value it last saw.
    reference_changes: int = 0


class SyncWorker:
    """``SyncWorker(open_store, on_status=...)``; ``start()``, ``wake()``, ``stop()``.

    ``sleep`` replaces the interruptible wait between steps (tests record the schedule);
    ``rng`` draws the jitter; ``transport`` and ``timeout`` go to every request.
    """

    def __init__(
        self,
        open_store: Callable[[], Store],
        *,
        on_status: Callable[[SyncStatus], None] | None = None,
        base_delay: float = BASE_DELAY,
        max_delay: float = MAX_DELAY,
        poll_interval: float = POLL_INTERVAL,
        rng: random.Random | None = None,
        sleep: Callable[[float], None] | None = None,
        transport: httpx.BaseTransport | None = None,
        timeout: httpx.Timeout | float | None = None,
    ) -> None:
        self._open_store = open_store
        self._on_status = on_status
        self.base_delay, self.max_delay, self.poll_interval = base_delay, max_delay, poll_interval
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._transport = transport
        self._timeout = timeout
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._status = SyncStatus()
        self._thread: threading.Thread | None = None

    # --- control ----------------------------------------------------------------------------

    @property
    def status(self) -> SyncStatus:
        with self._lock:
            return self._status

    def start(self) -> SyncWorker:
        if self._thread is not None:
            raise RuntimeError("sync worker already started")
        self._thread = threading.Thread(target=self._run, name="sync-worker", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        """Try now instead of waiting for the next scheduled attempt."""
        self._wake.set()

    def stop(self, timeout: float | None = 30.0) -> None:
        """Ask the loop to end and wait for it (a request under way finishes first)."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # --- the loop ---------------------------------------------------------------------------

    def _run(self) -> None:
        store: Store | None = None
        try:
            while not self._stopping.is_set():
                if store is None:
                    try:
                        store = self._open_store()
                    except Exception as exc:  # shown, then retried with backoff
                        delay = self._failed(f"não foi possível abrir o banco local: {exc}")
                        self._wait(delay)
                        continue
                delay = self.step(store)
                self._wait(delay)
        finally:
            if store is not None:
                with contextlib.suppress(Exception):
                    store.close()
            self._publish(running=False, next_attempt_in=None)

    def _wait(self, delay: float) -> None:
        if self._stopping.is_set():
            return
        if self._sleep is not None:
            self._sleep(delay)
            return
        self._wake.wait(delay)
        self._wake.clear()

    def step(self, store: Store) -> float:
        """One probe (and, when HQ answers, one full sync); returns the delay before the
        next. Never raises: every failure becomes ``last_error`` and a backoff."""
        self._publish(running=True, last_attempt=utc_now())
        try:
            url = store.meta(META_HQ_URL)
            if not url:
                return self._failed("dispositivo não cadastrado na sede", store)
            problem = self._probe(url)
            if problem is not None:
                return self._failed(problem, store, online=False)
            kwargs: dict[str, object] = {}
            if self._timeout is not None:
                kwargs["timeout"] = self._timeout
            summary = sync_once(store, transport=self._transport, **kwargs)  # type: ignore[arg-type]
        except SyncError as exc:
            return self._failed(exc.message_pt, store)
        except Exception as exc:  # never give up silently
            return self._failed(f"erro inesperado na sincronização: {type(exc).__name__}: {exc}",
                                store)
        # Pages are applied one transaction each: a run that failed half-way may still have
        # changed the registry, so the count grows on both paths.
        applied = self.status.reference_changes + summary.pulled
        if not summary.ok:
            return self._failed(summary.error or "falha na sincronização", store,
                                online=summary.online, reference_changes=applied)
        delay = self.poll_interval
        self._publish(online=True, pending=summary.pending, quarantined=summary.quarantined,
                      last_success=summary.finished_at, last_error=None, failures=0,
                      running=False, next_attempt_in=delay, reference_changes=applied)
        return delay

    def _probe(self, url: str) -> str | None:
        try:
            with httpx.Client(base_url=url, timeout=PROBE_TIMEOUT,
                              transport=self._transport) as client:
                response = client.get(f"{API_PREFIX}/health")
        except httpx.HTTPError as exc:
            return f"sede inacessível: {type(exc).__name__}"
        if response.status_code != 200:
            return f"sede indisponível (HTTP {response.status_code})"
        return None

    def _failed(self, error: str, store: Store | None = None, *,
                online: bool | None = None, reference_changes: int | None = None) -> float:
        failures = self.status.failures + 1
        delay = backoff_delay(failures, base=self.base_delay, cap=self.max_delay, rng=self._rng)
        changes: dict[str, object] = {"last_error": error, "failures": failures,
                                      "running": False, "next_attempt_in": delay}
        if online is not None:
            changes["online"] = online
        if reference_changes is not None:
            changes["reference_changes"] = reference_changes
        if store is not None:
            with contextlib.suppress(Exception):
                changes["pending"] = pending_count(store)
                changes["quarantined"] = len(quarantined(store))
        self._publish(**changes)
        return delay

    def _publish(self, **changes: object) -> None:
        with self._lock:
            self._status = replace(self._status, **changes)  # type: ignore[arg-type]
            status = self._status
        if self._on_status is not None:
            with contextlib.suppress(Exception):  # a broken callback must not stop syncing
                self._on_status(status)
