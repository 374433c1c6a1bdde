"""ruff and mypy (config in pyproject.toml: strict outside ui/) pass over the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(["ruff", "check", "--no-cache", "."], id="ruff"),
        pytest.param(["mypy"], id="mypy"),
    ],
)
def test_linter_reports_nothing(command):
    result = subprocess.run(
        [sys.executable, "-m", *command],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert result.returncode == 0, f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}"
