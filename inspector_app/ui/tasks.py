"""The one helper that owns threading: store work on one worker, network work on another.

Modelled on Anki's ``aqt/taskman.py``: a caller hands a function to
:meth:`TaskManager.run_store` (or :meth:`TaskManager.run_network`); it runs on the worker
thread and ``on_done(result)`` or ``on_error(exc)`` runs later on the GUI thread, the only
thread that touches widgets.

The store is opened on the store worker and stays there: ``run_store`` passes it to the
function, so GUI code never holds it. The worker is a single thread, so store calls never
overlap and run in the order they were asked for.

Caveat: a callback whose ``owner`` widget was deleted meanwhile is skipped, and callbacks
still queued when :meth:`shutdown` runs are dropped (the work itself has finished).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal

from inspector_app.ui.errors import is_expected

log = logging.getLogger(__name__)

Done = Callable[[Any], None]
Failed = Callable[[BaseException], None]


class TaskManager(QObject):
    """Runs store and network work off the GUI thread and hands results back to it."""

    # Emitted from a worker thread; the queued connection runs the slot on the GUI thread.
    _finished = Signal(object)
    task_did_fail = Signal(object)  # an exception no caller handled (the window shows it)
    did_become_idle = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._store_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="inspector-store")
        self._network_pool = ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="inspector-network"
        )
        self._store: Any = None
        self._pending = 0
        self._closed = False
        # Unexpected exceptions (bugs, not user errors): kept so tests can fail on them.
        self.unexpected_errors: list[BaseException] = []
        self._finished.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    # --- public API -------------------------------------------------------------------------------

    @property
    def has_store(self) -> bool:
        return self._store is not None

    def is_idle(self) -> bool:
        """No work queued or running and no callback waiting (tests wait on this)."""
        return self._pending == 0

    def open_store(self, data_dir: Path | None, on_done: Done | None = None,
                   on_error: Failed | None = None, *, owner: QObject | None = None) -> None:
        """Open the store on the store worker; ``on_done`` receives nothing useful (None)."""

        def job() -> None:
            from inspector_app.store import open_store

            if self._store is not None:
                self._store.close()
            self._store = open_store(data_dir)

        self._submit(self._store_pool, job, on_done, on_error, owner)

    def run_store(self, fn: Callable[[Any], Any], on_done: Done | None = None,
                  on_error: Failed | None = None, *, owner: QObject | None = None) -> Future:
        """Run ``fn(store)`` on the store worker; ``on_done(result)`` on the GUI thread."""

        def job() -> Any:
            if self._store is None:
                from inspector_app.store import StoreError

                raise StoreError("store not open", "O banco de dados ainda não foi aberto.")
            return fn(self._store)

        return self._submit(self._store_pool, job, on_done, on_error, owner)

    def run_network(self, fn: Callable[[], Any], on_done: Done | None = None,
                    on_error: Failed | None = None, *, owner: QObject | None = None) -> Future:
        """Run ``fn()`` on the network worker (sync, HQ); results back on the GUI thread."""
        return self._submit(self._network_pool, fn, on_done, on_error, owner)

    def shutdown(self) -> None:
        """Finish queued work, close the store, stop both workers (waits for them)."""
        if self._closed:
            return
        self._closed = True

        def close() -> None:
            if self._store is not None:
                self._store.close()
                self._store = None

        self._store_pool.submit(close)
        self._store_pool.shutdown(wait=True)
        self._network_pool.shutdown(wait=True)

    # --- internals --------------------------------------------------------------------------------

    def _submit(self, pool: ThreadPoolExecutor, job: Callable[[], Any], on_done: Done | None,
                on_error: Failed | None, owner: QObject | None) -> Future:
        if self._closed:
            raise RuntimeError("TaskManager is shut down")
        self._pending += 1

        def run() -> Any:
            try:
                result = job()
            except BaseException as exc:
                if not is_expected(exc):
                    exc.__traceback_text__ = traceback.format_exc()  # type: ignore[attr-defined]
                self._finished.emit((on_done, on_error, owner, False, exc))
                return None
            self._finished.emit((on_done, on_error, owner, True, result))
            return result

        return pool.submit(run)

    def _deliver(self, payload: tuple[Done | None, Failed | None, QObject | None, bool, Any]
                 ) -> None:
        on_done, on_error, owner, ok, value = payload
        try:
            if self._closed or (owner is not None and not shiboken6.isValid(owner)):
                return
            if ok:
                if on_done is not None:
                    on_done(value)
                return
            if not is_expected(value):
                self.unexpected_errors.append(value)
                log.error("unexpected error in a background task:\n%s",
                          getattr(value, "__traceback_text__", repr(value)))
            if on_error is not None:
                on_error(value)
            else:
                self.task_did_fail.emit(value)
        finally:
            self._pending -= 1
            if self._pending == 0:
                self.did_become_idle.emit()
