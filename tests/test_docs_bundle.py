"""The desktop bundle builds and passes its smoke test (`make bundle`, about 2 minutes).

Marked ``slow``: runs with ``make test-slow``, not in the default suite. It needs PyInstaller
(``make bundle`` installs it into .venv when missing, which needs PyPI).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_make_bundle_builds_and_the_bundle_renders_a_sealed_auto():
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    result = subprocess.run(["make", "bundle"], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=900)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-4000:]
    assert "bundle smoke test: OK" in result.stdout
    assert (REPO_ROOT / "dist" / "inspector" / "_internal" / "forms").is_dir()
