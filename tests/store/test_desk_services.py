"""Issue 11, the desk and sealing made legally sound, on real SQLite stores through the
services: re-authentication, release (art. 38), autuado, review = sealed."""

from __future__ import annotations

import datetime as dt
import math
import shutil
from pathlib import Path
from typing import Any

import pytest

from inspector_app import demo, services
from inspector_app.services import ServiceError, Session
from inspector_app.store import reference
from inspector_app.store.db import Store, open_store

PACK = "DF_STPCR"
PLACE = "Terminal Rodoviário de Planaltina – plataforma B"
NARRATIVE = "Em fiscalização de rotina no terminal, constatei a irregularidade descrita."
STROKES = [[(20.0 + 6 * i, 100.0 + 40 * math.sin(i / 5)) for i in range(80)]]
REASON = "Placa digitada errada; auto refeito com a placa correta."


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    data_dir = tmp_path_factory.mktemp("desk-template") / "data"
    store = open_store(data_dir)
    demo.seed_registry(store, vehicles=30, seed=1)
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return data_dir


@pytest.fixture
def store(template: Path, tmp_path: Path):
    shutil.copytree(template, tmp_path / "data")
    opened = open_store(tmp_path / "data")
    yield opened
    opened.close()


def login(store: Store, matricula: str) -> Session:
    return services.login(store=store, matricula=matricula, password=f"demo{matricula}")


def clean_plate(store: Store, pack: str = PACK) -> str:
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? AND chassis_year >= ? ORDER BY id",
        [pack, dt.date.today().year - 8]).fetchall()
    for (plate,) in rows:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings:
            return str(plate)
    raise AssertionError("no clean vehicle")


def sign(store: Store, inspection_id: str) -> None:
    for role in ("agent", "driver"):
        services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                  status="signed", strokes=STROKES)


def inspection(store: Store, session: Session, fails: tuple[str, ...] = ("DF-SEG-02",),
               **start: Any) -> str:
    kwargs: dict[str, Any] = {"pack_id": PACK, "kind": "fiscalizacao",
                              "location_type": "terminal", "place": PLACE,
                              "plate": clean_plate(store)}
    kwargs.update(start)
    iid = services.start_inspection(store=store, session=session, **kwargs)
    for item in fails:
        services.record_answer(store=store, inspection_id=iid, item_id=item, result="fail",
                               note="Constatado na fiscalização.")
    return iid


def seal_auto(store: Store, session: Session, **seal: Any) -> services.SealResult:
    iid = inspection(store, session)
    sign(store, iid)
    return services.seal_inspection(store=store, session=session, inspection_id=iid,
                                    narrative=NARRATIVE, **seal)


def count(store: Store, kind: str) -> int:
    return store.conn.execute("SELECT COUNT(*) FROM records WHERE kind = ?",
                              [kind]).fetchone()[0]


# --- cancellation: the supervisor's password asked again ------------------------------------


@pytest.mark.parametrize(
    ("password", "fragment", "why"),
    [
        ("", "Digite a sua senha", "no password: the act is not confirmed"),
        ("demo1001", "Senha não confirmada: Senha incorreta", "another person's password"),
        ("errada", "Senha não confirmada: Senha incorreta", "wrong password"),
    ],
)
def test_a_cancellation_without_the_supervisors_password_is_refused_and_seals_nothing(
        store, password, fragment, why):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    with pytest.raises(ServiceError) as err:
        services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                             reason=REASON, password=password)
    assert err.value.field == "password", why
    assert fragment in err.value.message_pt, err.value.message_pt
    assert count(store, "cancelamento") == 0
    assert services.cancellation_of(store=store, record_id=auto.id) is None


def test_a_wrong_password_at_cancellation_counts_towards_the_login_lockout(store):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    with pytest.raises(ServiceError):
        services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                             reason=REASON, password="errada")
    failures = store.conn.execute(
        "SELECT failures FROM login_state WHERE matricula = '1004'").fetchone()[0]
    assert failures == 1


def test_the_supervisors_own_password_seals_the_cancellation_and_says_so(store):
    auto = seal_auto(store, login(store, "1001")).of_kind("auto_infracao")
    supervisor = login(store, "1004")
    [cancel] = services.cancel_auto(store=store, session=supervisor, record_id=auto.id,
                                    reason=REASON, password="demo1004").records
    assert cancel.envelope["body"]["supervisor"] == {
        "matricula": "1004", "name": "Luíza Helena Magalhães", "reauthenticated": True}
    found = services.cancellation_of(store=store, record_id=auto.id)
    assert (found.number, found.created_at) == (cancel.display_number, cancel.created_at)
