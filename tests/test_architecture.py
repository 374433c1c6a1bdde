"""Checked layering: domain/ is stdlib-only, only ui/ imports PySide6, import contracts hold."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = REPO_ROOT / "inspector_app"
QT_PACKAGES = {"PySide6", "shiboken6"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(source: str, module: str, *, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in ``source``, relative ones resolved.

    Imports inside functions count too: a lazy import is still a dependency.
    """
    package = module.split(".") if is_package else module.split(".")[:-1]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = ".".join(package[: len(package) - (node.level - 1)])
            if node.module:
                found.append((node.lineno, f"{base}.{node.module}"))
            else:  # `from . import x`: x is a module of the package
                found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module or ""))
    return found


def imports_of(path: Path) -> list[tuple[int, str]]:
    return imported_modules(
        path.read_text(encoding="utf-8"), module_name(path), is_package=path.name == "__init__.py"
    )


def python_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import datetime as dt", "datetime"),
        ("from . import deadlines", "inspector_app.domain.deadlines"),
        ("from .pack import Pack", "inspector_app.domain.pack"),
        ("from .. import paths", "inspector_app.paths"),
        ("from ..packs import list_packs", "inspector_app.packs"),
        ("def f():\n    from PySide6 import QtCore", "PySide6"),
    ],
)
def test_imports_are_found_and_relative_ones_resolved_against_the_module(source, expected):
    # A relative import that climbs out of domain/ must not pass as domain importing itself.
    found = imported_modules(source, "inspector_app.domain.engine", is_package=False)
    assert [name for _, name in found] == [expected]


def test_domain_imports_only_the_standard_library_and_itself():
    files = python_files(PACKAGE / "domain")
    assert files, "inspector_app/domain/ has no modules"
    violations = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {name}"
        for path in files
        for line, name in imports_of(path)
        if name.split(".")[0] not in sys.stdlib_module_names
        and not (name == "inspector_app.domain" or name.startswith("inspector_app.domain."))
    ]
    assert not violations, "\n".join(violations)


def test_only_the_ui_package_imports_pyside6():
    violations = [
        f"{path.relative_to(REPO_ROOT)}:{line}: imports {name}"
        for path in python_files(PACKAGE)
        if PACKAGE / "ui" not in path.parents
        for line, name in imports_of(path)
        if name.split(".")[0] in QT_PACKAGES
    ]
    assert not violations, "\n".join(violations)


def test_import_linter_contracts_in_pyproject_are_kept():
    # Layers ui -> services -> {store, documents, media, security, sync, packs} -> domain.
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert result.returncode == 0, result.stdout + result.stderr
