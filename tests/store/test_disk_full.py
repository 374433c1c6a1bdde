"""Disk full and failing writes while sealing: a clear message, nothing partial, then it works again."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap

import pytest

from inspector_app.store.db import StoreError, StoreFullError, open_store
from inspector_app.store.sealing import RecordDraft, ensure_device, seal_records
from inspector_app.store.verify import verify_store

TABLES = ("records", "journal", "number_usage", "outbox")


def _draft(i: int) -> RecordDraft:
    return RecordDraft(
        "auto_infracao",
        {"seq": i, "observacao": f"Veículo {i} sem extintor; condutor ciente. " * 40},
        plate_key="JKL1A23",
    )


def _counts(store) -> dict[str, int]:
    return {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def _numbers(store) -> list[int]:
    return [r[0] for r in store.conn.execute("SELECT number FROM records ORDER BY journal_seq")]


@pytest.fixture
def store(tmp_path):
    store = open_store(tmp_path)
    ensure_device(store)
    seal_records(store, [_draft(0)])
    yield store
    store.close()


def test_a_full_database_refuses_the_seal_in_portuguese_and_leaves_nothing_partial(store):
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count = {pages + 3}")
    sealed = 1
    with pytest.raises(StoreFullError) as caught:
        for i in range(1, 200):
            before = _counts(store)
            # Five autos per call: the page limit is hit in the middle of the transaction.
            sealed += len(seal_records(store, [_draft(10 * i + k) for k in range(5)]))
    assert "libere espaço" in caught.value.message_pt
    assert "disco cheio" in caught.value.message_pt
    assert not store.conn.in_transaction
    assert _counts(store) == before == {t: sealed for t in TABLES}
    assert verify_store(store).ok, verify_store(store).problems

    store.conn.execute("PRAGMA max_page_count = 1073741823")
    after = seal_records(store, [_draft(9999)])
    assert _numbers(store) == list(range(1, sealed + 2))
    assert after[0].number == sealed + 1
    assert verify_store(store).ok


def test_a_write_refused_in_the_middle_of_a_seal_rolls_back_every_row_of_it(store):
    # A trace callback cannot abort a statement (sqlite3 swallows its exceptions); an
    # authorizer can: the journal INSERT fails after the number and the record were written.
    def refuse_journal(action, table, *_):
        return sqlite3.SQLITE_DENY if action == sqlite3.SQLITE_INSERT and table == "journal" \
            else sqlite3.SQLITE_OK

    before = _counts(store)
    store.conn.set_authorizer(refuse_journal)
    with pytest.raises(StoreError) as caught:
        seal_records(store, [_draft(1), _draft(2)])
    store.conn.set_authorizer(None)
    assert "not authorized" in str(caught.value)
    assert caught.value.message_pt.startswith("Erro ao gravar")
    assert not store.conn.in_transaction
    assert _counts(store) == before
    assert verify_store(store).ok

    again = seal_records(store, [_draft(3)])
    assert again[0].number == before["records"] + 1
    assert verify_store(store).ok


# The child limits its own file size (RLIMIT_FSIZE) to the database's size after a
# checkpoint: the WAL may grow only that far, so a later COMMIT's write() fails with EFBIG,
# a real I/O error from the kernel (root ignores permissions, not this limit).
_CHILD = textwrap.dedent(
    """
    import json, resource, signal, sys
    from pathlib import Path
    from inspector_app.store.db import StoreError, open_store
    from inspector_app.store.sealing import RecordDraft, ensure_device, seal_records

    store = open_store(Path(sys.argv[1]))
    ensure_device(store)
    last = []
    store.conn.set_trace_callback(lambda sql: last.append(sql.split()[0]))
    store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    size = Path(store.path).stat().st_size
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
    out = {"sealed": [], "error": None}
    for i in range(10_000):
        del last[:]
        body = {"seq": i, "observacao": "Pneu careca; condutor ciente. " * 60}
        try:
            [r] = seal_records(store, [RecordDraft("auto_infracao", body)])
        except StoreError as exc:
            out["error"] = {"type": type(exc).__name__, "message": str(exc),
                            "message_pt": exc.message_pt, "statements": last[:]}
            break
        out["sealed"].append(r.id)
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    [r] = seal_records(store, [RecordDraft("auto_infracao", {"seq": "after"})])
    out["after"] = {"id": r.id, "number": r.number}
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(os.name != "posix", reason="RLIMIT_FSIZE is POSIX")
def test_an_io_error_at_commit_rolls_back_and_sealing_works_once_space_is_back(tmp_path):
    store = open_store(tmp_path)
    ensure_device(store)
    seal_records(store, [_draft(0)])
    store.close()
    child = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path)],
                           capture_output=True, text=True, timeout=120)
    assert child.returncode == 0, child.stderr
    out = json.loads(child.stdout)
    error = out["error"]
    assert error is not None, "the file-size limit was never reached"
    assert "disk I/O error" in error["message"]
    # The kernel refused the WAL write of the COMMIT (then, maybe, our ROLLBACK ran).
    statements = error["statements"]
    assert "COMMIT" in statements, statements
    assert statements[statements.index("COMMIT") + 1:] in ([], ["ROLLBACK"]), statements
    assert "Nada foi gravado" in error["message_pt"]

    store = open_store(tmp_path)
    try:
        assert verify_store(store).ok, verify_store(store).problems
        ids = [r[0] for r in store.conn.execute("SELECT id FROM records ORDER BY journal_seq")]
        assert ids[1:] == [*out["sealed"], out["after"]["id"]]
        assert _counts(store) == {t: len(ids) for t in TABLES}
        assert out["after"]["number"] == len(ids)
        assert [r[0] for r in store.conn.execute("PRAGMA quick_check")] == ["ok"]
    finally:
        store.close()
