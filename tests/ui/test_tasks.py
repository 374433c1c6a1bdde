"""The threading helper: store work on one worker thread, results back on the GUI thread."""

from __future__ import annotations

import threading

import pytest

from inspector_app.services import ServiceError
from inspector_app.ui.tasks import TaskManager


@pytest.fixture
def tasks(qtbot, tmp_path):
    manager = TaskManager()
    opened = []
    manager.open_store(tmp_path / "data", opened.append)
    qtbot.waitUntil(lambda: bool(opened))
    yield manager
    manager.shutdown()


def test_store_work_runs_serially_on_one_worker_and_results_come_back_on_the_gui_thread(
    qtbot, tasks
):
    gui = threading.get_ident()
    workers, delivered = [], []
    for n in range(5):
        tasks.run_store(lambda store, n=n: (workers.append(threading.get_ident()), n)[1],
                        lambda result: delivered.append((threading.get_ident(), result)))
    assert not tasks.is_idle()
    with qtbot.waitSignal(tasks.did_become_idle):
        pass

    assert len(set(workers)) == 1 and workers[0] != gui
    assert delivered == [(gui, 0), (gui, 1), (gui, 2), (gui, 3), (gui, 4)]


def test_the_function_receives_the_store_opened_on_the_worker(qtbot, tasks, tmp_path):
    seen = []
    tasks.run_store(lambda store: store.path, seen.append)
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == [tmp_path / "data" / "inspector.db"]


def test_a_refusal_goes_to_on_error_and_a_bug_is_also_kept_for_the_tests(qtbot, tasks):
    errors = []

    def refuse(_store):
        raise ServiceError("place", "Informe o local da inspeção.")

    def bug(_store):
        raise KeyError("oops")

    tasks.run_store(refuse, on_error=errors.append)
    with qtbot.waitSignal(tasks.task_did_fail) as failed:
        tasks.run_store(bug)
    qtbot.waitUntil(tasks.is_idle)

    assert [e.message_pt for e in errors] == ["Informe o local da inspeção."]
    assert isinstance(failed.args[0], KeyError)
    assert [type(e) for e in tasks.unexpected_errors] == [KeyError]
    tasks.unexpected_errors.clear()


def test_a_callback_of_a_deleted_widget_is_skipped(qtbot, tasks):
    from PySide6.QtWidgets import QLabel

    label = QLabel()
    called = []
    tasks.run_store(lambda store: 1, lambda _r: called.append(label.text()), owner=label)
    label.deleteLater()
    qtbot.waitUntil(tasks.is_idle)
    assert called == []


def test_network_work_runs_on_its_own_worker(qtbot, tasks):
    threads = []
    tasks.run_store(lambda store: threads.append(("store", threading.get_ident())))
    tasks.run_network(lambda: threads.append(("network", threading.get_ident())))
    qtbot.waitUntil(tasks.is_idle)
    assert len({ident for _name, ident in threads}) == 2
