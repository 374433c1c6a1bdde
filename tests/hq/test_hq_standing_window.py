"""The standing read from the widest window only equals the standing of the whole history
(issue 19): a property test through the pure ``compute_standing``, then the same through
HQ's real bookkeeping on a real database (autos added, rows' status changed by a
judgement or a cancelamento, windows of another length), after every step."""

from __future__ import annotations

import datetime as dt
import json
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from inspector_app.hq.core.db import make_engine, upgrade
from inspector_app.hq.reference import upsert_tables
from inspector_app.hq.standing import (
    DF_POINT_WINDOWS,
    DRUNKENNESS_RULE,
    compute_standing,
    horizon_months,
    on_accepted_batch,
    publish_standings,
    rows_in_horizon,
    standing_of,
)
from inspector_app.hq.tables import reference_rows

DAY0 = dt.date(2023, 1, 1)
STATUSES = ("pending", "upheld", "cancelled")
# Rule 3 is art. 30 XI (drunkenness): two autos under it propose cassação with no time
# window (art. 39 II, gap G16), so the window alone must still read them however old.
RULES = ("R0", "R1", "R2", DRUNKENNESS_RULE)
WINDOWS = st.sampled_from([DF_POINT_WINDOWS, ((4, 12), (24, 30)), ((1, 3),)])


def _row(i: int, day: int, status: str, points: int, rule: int) -> dict[str, object]:
    return {"id": f"a{i}:0", "holder_id": "H1", "plate_key": None, "rule_id": RULES[rule],
            "date": (DAY0 + dt.timedelta(days=day)).isoformat(), "status": status,
            "points": points, "auto_number": None, "updated_at": "x"}


# Days spread over three years, and days on and around the windows' boundaries counted back
# from day 1200 (1, 4, 8, 12 and 24 months), where a wrong window would show.
BOUNDARY = [1200 - d for d in (0, 1, 2, 27, 28, 29, 30, 31, 32, 119, 120, 121, 122, 123, 242,
                               243, 244, 245, 246, 363, 364, 365, 366, 367, 368, 729, 730,
                               731, 732, 733)]
DAY = st.one_of(st.integers(0, 1200), st.sampled_from(BOUNDARY))
HISTORY = st.lists(st.tuples(DAY, st.sampled_from(STATUSES),
                             st.integers(0, 7), st.integers(0, 3)), max_size=40).map(
    lambda items: [_row(i, *item) for i, item in enumerate(items)])


@settings(max_examples=400, deadline=None)
@given(history=HISTORY, windows=WINDOWS)
def test_the_window_alone_gives_the_standing_of_the_whole_history(history, windows):
    end, rows = rows_in_horizon(history, horizon_months(windows))
    assert len(rows) <= len(history)
    assert compute_standing(rows, windows, holder_key="H1", pack_id=None, as_of=end) == \
        compute_standing(history, windows, holder_key="H1", pack_id=None)


# --- the same through HQ's bookkeeping on a real database ------------------------------------

HOLDERS = ("H1", "H2")
PACK = "P_TEST"

# One step: a new auto (holder, day, points, rule), or a judgement of a held row (index
# into the rows so far, new status).
STEP = st.one_of(
    st.tuples(st.just("auto"), st.sampled_from(HOLDERS), DAY,
              st.integers(0, 7), st.integers(0, 3)),
    st.tuples(st.just("judge"), st.integers(0, 1000), st.sampled_from(STATUSES)),
)


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('hq') / 'hq.db'}")
    upgrade(engine)
    yield engine
    engine.dispose()


def _envelope(holder: str, day: int, points: int, rule: int) -> dict[str, object]:
    rid = str(uuid.uuid4())
    return {"id": rid, "kind": "auto_infracao", "series": "AI", "number": 1,
            "holder_id": holder, "plate_key": None,
            "occurred_on": (DAY0 + dt.timedelta(days=day)).isoformat(),
            "body": {"outcome": {"pack": PACK, "infractions": [
                {"rule_id": RULES[rule], "points": points}]}}}


def _history(conn) -> list[dict[str, object]]:
    return [json.loads(t) for t in conn.execute(select(reference_rows.c.row).where(
        reference_rows.c.table_name == "history", reference_rows.c.deleted.is_(False))
        .order_by(reference_rows.c.key)).scalars()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=1, max_size=14), windows=WINDOWS)
def test_hq_standing_after_each_auto_and_judgement_equals_full_recomputation(
        engine, steps, windows):
    with engine.begin() as conn:
        for table in ("reference_rows", "history_facts", "changes"):
            conn.exec_driver_sql(f"DELETE FROM {table}")
        upsert_tables(conn, [("parameters", [{
            "pack_id": PACK, "name": "cassacao.point_windows", "value_json": json.dumps(
                [{"months": m, "points": p} for m, p in windows])}])])
        for step in steps:
            if step[0] == "auto":
                on_accepted_batch(conn, [_envelope(*step[1:])], "dev-1", "now")
            else:
                held = _history(conn)
                if not held:
                    continue
                row = dict(held[step[1] % len(held)])
                row["status"] = step[2]
                upsert_tables(conn, [("history", [row])])
                publish_standings(conn, {str(row["holder_id"]): PACK})
            history = _history(conn)
            for holder in {str(h["holder_id"]) for h in history}:
                mine = [h for h in history if h["holder_id"] == holder]
                # No authority has decided on a proposal here (hq/process.py publishes that).
                expected = {**compute_standing(mine, windows, holder_key=holder, pack_id=PACK),
                            "cassacao_decision_json": None}
                assert standing_of(conn, holder) == expected, (step, mine)


def test_two_drunkenness_autos_years_apart_still_propose_cassacao(engine):
    """Art. 39 II (gap G16: no time window): an upheld auto under art. 30 XI three years
    old and a new one. The window read alone would miss the old one."""
    old, new = (DAY0 + dt.timedelta(days=d) for d in (0, 1150))
    rows = [{**_row(0, 0, "upheld", 3, 3), "holder_id": "H9", "date": old.isoformat()},
            {**_row(1, 0, "upheld", 3, 3), "holder_id": "H9", "id": "a1:1",
             "date": new.isoformat()}]
    with engine.begin() as conn:
        for table in ("reference_rows", "history_facts", "changes"):
            conn.exec_driver_sql(f"DELETE FROM {table}")
        upsert_tables(conn, [("history", rows)])
        publish_standings(conn, {"H9": None})
        standing = standing_of(conn, "H9")
    assert standing is not None and standing["cassacao_proposed"]
    proposal = json.loads(standing["cassacao_json"])
    assert proposal["ground"] == "DF15154.39.II" and proposal["provisional"] is False


def test_migration_0006_i19_copies_the_history_held_into_history_facts(tmp_path):
    from alembic import command
    from sqlalchemy import text

    from inspector_app.hq.core.db import alembic_config

    engine = make_engine(f"sqlite:///{tmp_path / 'hq.db'}")
    command.upgrade(alembic_config(engine), "0004_i14a")
    row = _row(1, 100, "upheld", 5, 1)
    with engine.begin() as conn:
        conn.execute(text("INSERT INTO reference_rows (table_name, key, row, deleted, seq, "
                          "holder_key) VALUES ('history', :k, :r, false, 1, 'H1')"),
                     {"k": row["id"], "r": json.dumps(row)})
    command.upgrade(alembic_config(engine), "head")
    with engine.begin() as conn:
        facts = conn.execute(text("SELECT key, holder_key, date, status FROM history_facts")
                             ).all()
        assert [tuple(f) for f in facts] == [("a1:0", "H1", row["date"], "upheld")]
        publish_standings(conn, {"H1": None})
        assert json.loads(standing_of(conn, "H1")["points_json"])["4"] == 5
    command.downgrade(alembic_config(engine), "0004_i14a")
    engine.dispose()
