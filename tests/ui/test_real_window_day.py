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
TIMEOUT = 170  # seconds for one walk; both take about 70 side by side

pytestmark = pytest.mark.skipif(shutil.which("xvfb-run") is None,
                                reason="xvfb-run is not installed (apt-get install xvfb)")


def free_displays(count: int) -> list[int]:
    free = [n for n in DISPLAYS if not Path(f"/tmp/.X{n}-lock").exists()
            and not Path(f"/tmp/.X11-unix/X{n}").exists()]
    if len(free) < count:
        pytest.fail(f"no {count} free X displays in :{DISPLAYS.start}–:{DISPLAYS.stop - 1}")
    return free[:count]


def start_walk(out: Path, size: str, display: int, *extra: str) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items()
           if key not in ("DISPLAY", "QT_QPA_PLATFORM", "WAYLAND_DISPLAY", "XAUTHORITY")}
    command = ["xvfb-run", "-n", str(display), "-s", f"-screen 0 {size}x24 -nolisten tcp",
               sys.executable, str(DAY), str(out), "--timeout", str(TIMEOUT - 30), *extra]
    return subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def finish_walk(proc: subprocess.Popen, out: Path, size: str) -> dict:
    try:
        _out, stderr = proc.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, stderr = proc.communicate()
        pytest.fail(f"the walk at {size} took more than {TIMEOUT} s; screenshots in {out}\n"
                    f"{stderr[-4000:]}")
    report_file = out / "report.json"
    assert report_file.exists(), f"no report (exit {proc.returncode}):\n{stderr[-4000:]}"
    return json.loads(report_file.read_text())


SIZES = ("1024x600", "1366x768")
BARE = "1024x600-sem-gerenciador"  # no window manager, no decorations: the pages only


@pytest.fixture(scope="module")
def walks(tmp_path_factory):
    """Both screen sizes walked at the same time (two X servers), about a minute."""
    base = tmp_path_factory.mktemp("real-window-day")
    displays = free_displays(len(SIZES) + 1)
    started = {size: (base / size, start_walk(base / size, size, display))
               for size, display in zip(SIZES, displays, strict=False)}
    started[BARE] = (base / BARE, start_walk(base / BARE, "1024x600", displays[-1], "--no-wm"))
    return {size: (out, finish_walk(proc, out, size)) for size, (out, proc) in started.items()}


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


@pytest.mark.parametrize("size", SIZES)
def test_the_day_at_a_checkpoint_fits_the_screen(walks, size):
    out, report = walks[size]
    print(f"{size}: {report['seconds']} s, screenshots in {out}")
    assert_walked(report, out, DAY_STEPS)


def test_without_a_window_manager_the_pages_fit_too(walks):
    out, report = walks[BARE]
    assert_walked(report, out, {"primeiro-uso", "login", "hoje", "pagina-history", "local"})
