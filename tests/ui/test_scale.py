"""Issue 17: with 10,000 sealed records the GUI thread never stalls on the day's screens.

The store is built in bulk once per session (``benchmarks/scale_store.py``: real records,
signed, chained and numbered; ``inspector store verify`` accepts it) and driven like a
person would by the scale benchmark's driver (login, a whole inspection sealed and printed,
history search, sync screen, retention desk), with a 10 ms QTimer on the GUI thread.

Bound: 250 ms of the GUI thread's own CPU time in any gap between two ticks (the benchmark
holds the 100 ms aim; CPU time rather than wall time, so a machine shared with other work
does not fail the test), and 1.5 s of wall time (a GUI thread kept waiting – on the GIL or
on the store – fails too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import bench_scale, scale_store

RECORDS = 10_000
SCREENS = ("login → Today", "seal → print preview", "Concluir → Today refresh",
           "history search (busy plate)", "sync screen", "login (desk) → retention desk")
CPU_BOUND_MS = 250.0
WALL_BOUND_MS = 1500.0


@pytest.fixture(scope="session")
def big_store(tmp_path_factory) -> scale_store.Built:
    return scale_store.build(tmp_path_factory.mktemp("scale") / "data", RECORDS)


def test_ten_thousand_records_leave_every_screen_without_a_gui_stall(qtbot, big_store,
                                                                     tmp_path: Path):
    work = scale_store.copy(big_store, tmp_path / "data")
    screens = {name: (wall, longest, cpu, over)
               for name, wall, longest, cpu, over in bench_scale.drive(work)}
    assert set(SCREENS) <= set(screens), screens
    report = "\n".join(f"{name}: {wall:.2f} s, longest gap {longest:.0f} ms "
                       f"(GUI CPU {cpu:.0f} ms), {over} over 100 ms"
                       for name, (wall, longest, cpu, over) in screens.items())
    stalls = [name for name in SCREENS
              if screens[name][2] > CPU_BOUND_MS or screens[name][1] > WALL_BOUND_MS]
    assert not stalls, f"GUI-thread stalls in {stalls}:\n{report}"


def test_a_bulk_store_is_one_inspector_store_verify_accepts(big_store, tmp_path: Path):
    from inspector_app.store import open_store
    from inspector_app.store.verify import verify_store

    small = scale_store.build(tmp_path / "small", 300)
    for built, check in ((small, True), (big_store, False)):
        store = open_store(built.data_dir)
        try:
            report = verify_store(store) if check else None
            held = store.conn.execute(
                "SELECT COUNT(*) FROM records WHERE kind = 'termo_retencao'").fetchone()[0]
            count = store.conn.execute("SELECT COUNT(*) FROM records").fetchone()[0]
        finally:
            store.close()
        assert report is None or report.ok, report.problems[:5]
        assert count == built.records
        assert held > built.records // 4  # the worst case the issue measured: many held
