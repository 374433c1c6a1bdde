"""Fixtures for the GUI flows: a demo store seeded once per session, copied per test."""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from inspector_app import demo
from inspector_app.store import open_store, reference


@dataclass(frozen=True)
class DemoFacts:
    """Registry entries the flows use (found once in the seeded template)."""

    data_dir: Path
    df_plate: str  # DF_STPCR vehicle without registry warnings
    df_driver_cpf: str  # a registered DF_STPCR driver of that vehicle's holder
    jf_plate: str  # JF_1972 vehicle without registry warnings


def _clean_plate(store, pack_id: str, max_age: int) -> str:
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? AND chassis_year >= ? ORDER BY id",
        [pack_id, dt.date.today().year - max_age],
    ).fetchall()
    for (plate,) in rows:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings:
            return str(plate)
    raise AssertionError(f"the demo registry has no clean {pack_id} vehicle")


@pytest.fixture(scope="session")
def demo_facts(tmp_path_factory) -> DemoFacts:
    data_dir = tmp_path_factory.mktemp("ui-template") / "data"
    store = open_store(data_dir)
    try:
        demo.seed_registry(store, vehicles=30, seed=1)
        df_plate = _clean_plate(store, "DF_STPCR", 8)
        holder = reference.find_vehicle(store, df_plate).holder
        row = store.conn.execute(
            "SELECT cpf FROM ref_drivers WHERE holder_id = ? AND registered = 1 ORDER BY id",
            [holder.id],
        ).fetchone()
        cpf = row[0] if row else store.conn.execute(
            "SELECT cpf FROM ref_drivers WHERE registered = 1 ORDER BY id").fetchone()[0]
        jf_plate = _clean_plate(store, "JF_1972", 8)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return DemoFacts(data_dir, df_plate, str(cpf), jf_plate)


@pytest.fixture
def data_dir(demo_facts: DemoFacts, tmp_path: Path) -> Path:
    """A fresh copy of the seeded demo store for one test."""
    target = tmp_path / "data"
    shutil.copytree(demo_facts.data_dir, target)
    return target


@pytest.fixture(autouse=True)
def settings_file(tmp_path: Path) -> Path:
    """Device settings go to a temporary INI file, never to the user's configuration."""
    from PySide6.QtCore import QSettings

    folder = tmp_path / "qsettings"
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(folder))
    return folder


@pytest.fixture
def make_shell(qtbot):
    """Build a ``ShellWindow`` on a data folder; fails the test on any unexpected error."""
    from inspector_app.ui.shell import ShellWindow

    shells = []

    def make(data_dir: Path, **kwargs):
        shell = ShellWindow(data_dir=data_dir, **kwargs)
        qtbot.addWidget(shell)
        shell.show()
        shells.append(shell)
        return shell

    yield make
    for shell in shells:
        assert shell.tasks.unexpected_errors == []
