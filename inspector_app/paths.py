"""One resolver for files shipped with the app, from a source checkout or a PyInstaller bundle.

Caveat: in a bundle ``sys._MEIPASS`` is the root; from source it is the repository root
(the parent of the ``inspector_app`` package).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def app_root() -> Path:
    """Folder that holds ``forms/`` and ``resources/``."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle)
    return Path(__file__).resolve().parent.parent


def forms_dir() -> Path:
    """Regulation packs; ``INSPECTOR_FORMS_DIR`` overrides (tests, pack authors)."""
    override = os.environ.get("INSPECTOR_FORMS_DIR")
    return Path(override) if override else app_root() / "forms"


def resource_path(*parts: str) -> Path:
    """A file under ``resources/`` (fonts, icons, translations, demo data)."""
    return app_root().joinpath("resources", *parts)
