"""Crash benchmark: 1,000 SIGKILLs of a child sealing autos, and the two negative controls.

The harness is ``tests/store/crashkit.py`` (the same code the test suite runs with 200
kills). Each row's times are what the parent spends after a kill: reopen the store (WAL
recovery, ``quick_check``), check every payload hash and acknowledged auto, and every 10th
time (and after the last kill) ``verify_store`` with every signature.
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import stats

HARNESS_DIR = Path(__file__).resolve().parent.parent / "tests" / "store"


def _harness() -> Any:
    if str(HARNESS_DIR) not in sys.path:
        sys.path.insert(0, str(HARNESS_DIR))
    return importlib.import_module("crashkit")


def _row(name: str, run: Any, verdict: str) -> dict[str, object]:
    return stats.row(name, [float(ms) for ms in run.check_ms], verdict)


def run(kills: int = 1000, seed: int = 20260414) -> list[dict[str, object]]:
    crashkit = _harness()
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench-crash-") as tmp:
        base = Path(tmp)
        sound = crashkit.run_kills(
            base / "sound", base / "sound-work", kills=kills, seed=seed, verify_every=10
        )
        where = ", ".join(f"{n} {phase}" for phase, n in sound.phases.most_common())
        if sound.problems:
            first = "; ".join(crashkit.iter_problem_lines(sound, 3))
            verdict = f"FAILED: {len(sound.problems)} problems ({first})"
        else:
            verdict = (
                f"0 problems in {sound.kills} kills ({sound.seconds:.0f} s): 0 acknowledged "
                f"missing of {sound.acknowledged}, 0 partial of {sound.records}, quick_check "
                f"ok every time; killed {where}"
            )
        rows.append(_row(f"crash: {sound.kills} SIGKILLs while sealing, reopen + check",
                         sound, verdict))
        for mode, label in (
            ("split_transaction", "each INSERT committed on its own"),
            ("early_ack", "auto acknowledged before COMMIT"),
        ):
            control = crashkit.run_kills(
                base / mode, base / f"{mode}-work", kills=kills, seed=seed, mode=mode,
                stop_at_first_problem=True,
            )
            if control.problems:
                kill, text = control.problems[0]
                verdict = f"caught at kill {kill + 1}: {text}"
            else:
                verdict = f"NOT CAUGHT in {control.kills} kills: the harness is blind"
            rows.append(_row(f"crash control: {label} (must be caught)", control, verdict))
    return rows
