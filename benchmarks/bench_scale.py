"""Scale: the real shell, offscreen, on stores of 10k / 100k (/ 1M) sealed records.

For each size a store is built in bulk (``benchmarks/scale_store.py``: how long it took is
printed; built once and kept under ``BENCH_SCALE_DIR``, default the system temp folder,
while the builder is unchanged), copied, and opened by a real ``ShellWindow`` driven like a
person would (login, a whole inspection sealed and printed, the history, the retention
desk, the sync screen). A 10 ms ``QTimer`` on the GUI thread measures each screen: the
longest gap between two ticks and how many gaps were over 100 ms (the aim: none). Then
``inspector store verify`` runs in a child process: wall time and peak RSS. Bytes per
record: the database file (after a checkpoint) divided by the records, and the mean stored
payload.

Sizes: ``BENCH_SCALE_SIZES=10000,100000,1000000`` (default ``10000,100000``), after a
baseline store of ``BENCH_SCALE_BASELINE`` records (default 20; 0: none) measured in the
same run. "GUI CPU ms" is the GUI thread's own CPU time in its longest busy gap: a long gap
with little CPU is waiting (a loaded machine, the GIL held by a worker), not GUI work.

    BENCH_SCALE_SIZES=10000,100000 .venv/bin/python -m benchmarks scale
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from benchmarks import scale_store

# A small store first: the fixed cost of each screen on this machine, in the same run.
BASELINE = int(os.environ.get("BENCH_SCALE_BASELINE", "20"))
SIZES = tuple(int(s) for s in os.environ.get("BENCH_SCALE_SIZES", "10000,100000").split(",")
              if s.strip())
AIM_MS = 100.0
CONTROL_POINT = "Ponto de controle DF-130 – Rajadinha"
REFUSAL = "Condutor recusou-se a assinar após a leitura do auto em voz alta."


class GapMeter:
    """A 10 ms timer on the GUI thread: the longest wait between two of its ticks."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)
        self.last = self.last_cpu = 0.0
        self.gaps: list[tuple[float, float]] = []

    def _tick(self) -> None:
        # Wall time between ticks, and the GUI thread's own CPU time in it: a long gap with
        # little CPU is the thread waiting (the GIL held by a worker, a loaded machine),
        # a long gap full of CPU is work done on the GUI thread.
        now, cpu = time.perf_counter(), time.thread_time()
        self.gaps.append(((now - self.last) * 1000, (cpu - self.last_cpu) * 1000))
        self.last, self.last_cpu = now, cpu

    def start(self) -> None:
        self.gaps = []
        self.last, self.last_cpu = time.perf_counter(), time.thread_time()
        self.timer.start()

    def stop(self) -> tuple[float, float, int]:
        """(longest gap ms, longest GUI-thread CPU in one gap ms, gaps over 100 ms)."""
        self._tick()  # the time since the last tick counts too
        self.timer.stop()
        return (max(g for g, _c in self.gaps), max(c for _g, c in self.gaps),
                sum(1 for g, _c in self.gaps if g > AIM_MS))


def _wait(condition: Callable[[], bool], timeout: float = 900.0) -> None:
    from PySide6.QtWidgets import QApplication

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the window did not reach the expected state")
        QApplication.processEvents()
        time.sleep(0.002)


def _settle(shell: Any) -> None:
    _wait(shell.tasks.is_idle)
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.processEvents()


def _click(widget: Any) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    if not widget.isEnabled():
        raise RuntimeError(f"{widget.text()!r} is disabled")
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def _sign(pad: Any) -> None:
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    QTest.mousePress(pad, Qt.MouseButton.LeftButton, pos=QPoint(40, 120))
    for x in range(60, 400, 30):
        QTest.mouseMove(pad, QPoint(x, 100 + (x // 30 % 3) * 15))
    QTest.mouseRelease(pad, Qt.MouseButton.LeftButton, pos=QPoint(420, 110))


def _choose(combo: Any, data: str) -> None:
    combo.setCurrentIndex(combo.findData(data))


Screen = tuple[str, float, float, float, int]


def drive(built: scale_store.Built) -> list[Screen]:
    """(screen, seconds, longest gap ms, longest GUI CPU ms, gaps over 100 ms) for each
    screen, in order."""
    from inspector_app.ui.shell import ShellWindow

    meter = GapMeter()
    out: list[Screen] = []

    def measure(name: str, act: Callable[[], None], done: Callable[[], bool]) -> None:
        meter.start()
        began = time.perf_counter()
        act()
        _wait(done)
        _settle(shell)
        seconds = time.perf_counter() - began
        longest, cpu, over = meter.stop()
        out.append((name, seconds, longest, cpu, over))

    shell: Any = None

    def make() -> None:
        nonlocal shell
        shell = ShellWindow(data_dir=built.data_dir)
        shell.resize(1280, 860)
        shell.show()

    measure("open store → login", make, lambda: shell.pages.currentWidget() is shell.login)

    def login(matricula: str) -> None:
        shell.login.matricula.setText(matricula)
        shell.login.password.setText(f"demo{matricula}")
        _click(shell.login.login_button)

    measure("login → Today", lambda: login("1001"),
            lambda: shell.pages.currentWidget() is shell.main)

    def wizard_to_review() -> None:
        shell.main.go("inspection")
        _settle(shell)
        wizard = shell.main.wizard
        step = wizard.place_step
        _choose(step.pack, "DF_STPCR")
        _choose(step.location, "ponto_controle")
        step.place.setText(CONTROL_POINT)
        _click(wizard.next_button)
        wizard.vehicle_step.plate.setText(built.clean_plate)
        _click(wizard.next_button)
        _settle(shell)
        wizard.driver_step.cpf.setText(built.driver_cpf)
        _click(wizard.next_button)
        _settle(shell)
        rows = wizard.checklist.rows
        _click(rows["DF-SEG-01"].buttons["fail"])
        _click(rows["DF-SEG-02"].buttons["fail"])
        _click(rows["DF-SEG-03"].buttons["ok"])
        _settle(shell)
        _click(wizard.next_button)
        _settle(shell)
        wizard.result.narrative.setPlainText(scale_store.NARRATIVE)
        _click(wizard.next_button)
        _settle(shell)
        _sign(wizard.signatures.agent.pad)
        wizard.signatures.driver.refused_radio.setChecked(True)
        wizard.signatures.driver.note.setText(REFUSAL)
        _settle(shell)
        _click(wizard.next_button)

    measure("wizard: place → review", wizard_to_review, lambda: shell.main.wizard.step == 6)
    measure("seal → print preview", lambda: _click(shell.main.wizard.next_button),
            lambda: shell.main.wizard.step == 7
            and shell.main.wizard.print_step.panel.current is not None)
    measure("Concluir → Today refresh", lambda: _click(shell.main.wizard.next_button),
            lambda: shell.main.wizard is None)

    def search() -> None:
        shell.main.go("history")
        shell.main.history.query.setText(built.plate)
        _click(shell.main.history.search_button)

    measure("history search (busy plate)", search, lambda: True)

    def details() -> None:
        shell.main.history.table.selectRow(0)

    measure("history: first row's details", details, lambda: True)
    measure("sync screen", lambda: shell.main.go("sync"), lambda: True)

    def desk() -> None:
        _click(shell.logout_button)
        _wait(lambda: shell.pages.currentWidget() is shell.login)
        login("1003")
        _wait(lambda: shell.pages.currentWidget() is shell.main)
        shell.main.go("retention")

    measure("login (desk) → retention desk", desk, lambda: True)
    shell.close()
    shell.tasks.shutdown()
    return out


def verify(data_dir: Path) -> tuple[float, float, str]:
    """(seconds, peak RSS MiB, last line) of ``inspector store verify`` in a child process.

    The peak is the child's own ``VmHWM`` (read while it runs): ``wait4``'s ``ru_maxrss``
    would also count the bench's RSS, which a forked child carries until it execs."""
    began = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "inspector_app.cli", "--data-dir", str(data_dir), "store",
             "verify", "--quiet"], stdout=out, stderr=subprocess.DEVNULL, text=True)
        peak = 0
        status = Path(f"/proc/{child.pid}/status")
        while child.poll() is None:
            try:
                for line in status.read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
            except (OSError, ValueError):
                pass
            time.sleep(0.02)
        seconds = time.perf_counter() - began
        out.seek(0)
        lines = [line for line in out.read().splitlines() if line.strip()]
    return seconds, peak / 1024, (lines[0] if lines else "")[:90]


def sizes_of(data_dir: Path, records: int) -> tuple[float, float]:
    from inspector_app.store import open_store

    store = open_store(data_dir)
    try:
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        payload = store.conn.execute("SELECT AVG(LENGTH(payload)) FROM records").fetchone()[0]
        pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
        page = store.conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        store.close()
    return int(pages) * int(page) / records, float(payload or 0)


def run() -> list[dict[str, object]]:
    from PySide6.QtCore import QSettings

    from inspector_app.ui.app import prepare_app

    prepare_app(["inspector"])
    root = Path(os.environ.get("BENCH_SCALE_DIR", tempfile.gettempdir())) / "inspector-scale"
    rows: list[dict[str, object]] = []
    table: list[str] = []
    for size in ((BASELINE,) if BASELINE else ()) + SIZES:
        began = time.perf_counter()
        built = scale_store.cached(root, size, progress=lambda n: print(
            f"  … {n} records built", file=sys.stderr) if n % 50_000 < 5000 else None)
        fresh = time.perf_counter() - began > 1.0
        with tempfile.TemporaryDirectory(prefix="inspector-scale-run-") as tmp:
            QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope,
                              str(Path(tmp) / "qsettings"))
            work = scale_store.copy(built, Path(tmp) / "data")
            screens = drive(work)
            seconds, rss, line = verify(work.data_dir)
            per_record, payload = sizes_of(work.data_dir, work.records)
        table.append(f"## {built.records:,} sealed records (store built in "
                     f"{built.seconds:.0f} s{'' if fresh else ', cached'})")
        table.append(f"{'screen':<34} {'wall s':>8} {'longest gap ms':>15} "
                     f"{'GUI CPU ms':>11} {'gaps >100 ms':>13}")
        for name, wall, longest, cpu, over in screens:
            table.append(f"{name:<34} {wall:>8.2f} {longest:>15.1f} {cpu:>11.1f} {over:>13d}")
            rows.append({"name": f"scale {size} {name}: longest gap", "median_ms": longest,
                         "p95_ms": longest, "vs": f"{over} gap(s) > 100 ms, wall {wall:.2f} s"})
        table.append(f"store verify: {seconds:.1f} s, peak RSS {rss:.0f} MiB ({line})")
        table.append(f"bytes per record: {per_record:,.0f} on disk, payload {payload:,.0f}")
        table.append("")
        rows.append({"name": f"scale {size} store verify", "median_ms": seconds * 1000,
                     "p95_ms": seconds * 1000, "vs": f"peak RSS {rss:.0f} MiB"})
        print("\n".join(table[-(len(screens) + 5):]), file=sys.stderr)
    print("\n".join(table))
    return rows


if __name__ == "__main__":
    run()
