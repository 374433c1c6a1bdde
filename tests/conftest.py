"""Shared fixtures; Qt runs offscreen so the suite needs no display."""

from __future__ import annotations

import os

# Before any Qt import: without a platform Qt aborts the whole process (DESIGN.md §9).
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    """The checkout's root folder (holds pyproject.toml, forms/, resources/)."""
    return REPO_ROOT


@pytest.fixture
def forms_dir() -> Path:
    """The repository's regulation packs folder, ``forms/``."""
    return REPO_ROOT / "forms"
