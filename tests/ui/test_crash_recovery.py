"""A crash in the middle of a checklist (SIGKILL) loses no answer that was saved."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from uikit import click, login, wait_idle

from inspector_app.ui.inspection import CHECKLIST

CHILD = Path(__file__).with_name("crash_child.py")
KILL_AFTER = 6  # answers reported saved before the kill


def read_lines(stream, lines: queue.Queue) -> None:
    for line in stream:
        lines.put(line.rstrip("\n"))
    lines.put(None)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")
def test_every_answer_saved_before_the_app_is_killed_is_shown_when_it_is_resumed(
    qtbot, make_shell, data_dir, demo_facts, settings_file, tmp_path
):
    stderr = (tmp_path / "child.err").open("w")
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(data_dir), str(settings_file), demo_facts.df_plate],
        stdout=subprocess.PIPE, stderr=stderr, text=True, encoding="utf-8",
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=read_lines, args=(child.stdout, lines), daemon=True).start()
    saved: dict[str, str] = {}
    deadline = time.monotonic() + 60
    try:
        while len(saved) < KILL_AFTER:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None and line != "DONE", (
                f"the child stopped early: {line!r}\n{(tmp_path / 'child.err').read_text()}")
            if line.startswith("SAVED "):
                _tag, item_id, result = line.split()
                saved[item_id] = result
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=10)
        stderr.close()
    assert child.returncode == -signal.SIGKILL
    assert set(saved.values()) == {"ok", "fail", "na"}

    shell = make_shell(data_dir)
    login(qtbot, shell, "1001")
    today = shell.main.today
    assert today.open_table.rowCount() == 1
    assert today.open_table.item(0, 3).text() == demo_facts.df_plate
    click(qtbot, today.resume_button)  # "Continuar inspeção"
    wait_idle(qtbot, shell)

    wizard = shell.main.wizard
    assert wizard.step == CHECKLIST
    rows = wizard.checklist.rows
    assert {item_id: rows[item_id].result for item_id in saved} == saved
    assert all(rows[item_id].saved_state == "saved" for item_id in saved)
    assert wizard.checklist.progress.value() >= len(saved)
    assert "resposta(s) já salvas foram restauradas" in wizard.banner.text()
