"""The inspector's day in a real X window (Xvfb + openbox, xdotool mouse and keyboard) at
the screens inspectors have: 1024×600 and 1366×768 (``tests/ui/desktop_day.py`` walks it).

At every step each action button and the status bar are visible, unclipped, with their
text in full and inside ``QScreen.availableGeometry()``; the screenshots of each step stay
in the test's tmp folder (their paths are printed on failure). Skipped only when
``xvfb-run`` is missing (``.ci/run`` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DAY = Path(__file__).with_name("desktop_day.py")
DISPLAYS = range(11, 20)  # X displays this suite may use
TIMEOUT = 150  # seconds for one walk; it takes about 30

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None,
                                reason="xvfb-run is not installed (apt-get install xvfb)")


def free_display() -> int:
    for number in DISPLAYS:
        if not Path(f"/tmp/.X{number}-lock").exists() and \
                not Path(f"/tmp/.X11-unix/X{number}").exists():
            return number
    pytest.fail(f"no free X display in :{DISPLAYS.start}–:{DISPLAYS.stop - 1}")


def walk(out: Path, size: str, *extra: str) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XAUTHORITY")}
    command = ["xvfb-run", "-n", str(free_display()), "-s", f"-screen 0 {size}x24 -nolisten tcp",
               sys.executable, str(DAY), str(out), *extra]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the walk at {size} took more than {TIMEOUT} s; screenshots in {out}\n"
                    f"{exc.stderr}")
    report_file = out / "report.json"
    assert report_file.exists(), f"no report (exit {done.returncode}):\n{done.stderr[-4000:]}"
    report = json.loads(report_file.read_text())
    report["stderr"] = done.stderr
    return report


def assert_walked(report: dict, out: Path, expected_steps: set[str]) -> None:
    assert report["error"] is None, f"{report['error']}\nscreenshots in {out}"
    assert report["problems"] == [], "\n".join(report["problems"]) + f"\nscreenshots in {out}"
    walked = {step["step"] for step in report["steps"]}
    assert expected_steps <= walked, expected_steps - walked
    for step in report["steps"]:
        assert (out / step["screenshot"]).stat().st_size > 1000


DAY_STEPS = {"primeiro-uso", "login", "hoje", "pagina-history", "local", "checklist",
             "checklist-data", "resultado", "assinaturas", "conferencia-selar", "impressao",
             "salvar-pdf", "imprimir", "patio", "liberacao", "liberado", "historico",
             "historico-reimpresso", "historico-cancelado", "jf-checklist", "jf-impressao"}


@pytest.mark.parametrize("size", ["1024x600", "1366x768"])
def test_the_day_at_a_checkpoint_fits_the_screen(tmp_path, size):
    out = tmp_path / size
    report = walk(out, size)
    print(f"{size}: {report['seconds']} s, screenshots in {out}")
    assert_walked(report, out, DAY_STEPS)
