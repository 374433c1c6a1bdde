"""HQ's list of stored files (``blob_index``): "which files are missing?" is one query, not
one object-store request per file (issue 18: the S3 rows of ``make bench`` never finished,
/blobs/missing sent a HEAD per photo). Real HQ on loopback, real PostgreSQL, a real S3
server (moto, tests/s3kit.py) for the bucket.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
from collections.abc import AsyncIterator, Iterator

import pytest
from hqkit import RunningHQ, SimDevice, database_url, running_hq
from s3kit import new_bucket

from inspector_app.hq import blob_index
from inspector_app.hq.blob_quota import prune
from inspector_app.hq.blobs import BlobStore
from inspector_app.sync.protocol import API_PREFIX, bundle_part_header


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


def _store_behind_hqs_back(store: BlobStore, data: bytes) -> str:
    """A file put straight into the store (a restored bucket, an HQ stopped between writing
    the file and its row): there, but not in HQ's list."""
    sha = _sha(data)
    asyncio.run(store.put(sha, _chunks(data), max_bytes=1 << 20))
    return sha


class S3Calls:
    """Counts the requests HQ's boto3 client sends to the bucket, by operation."""

    def __init__(self, store: BlobStore) -> None:
        self.counts: dict[str, int] = {}
        store.client.meta.events.register("before-call.s3", self._count)  # type: ignore[attr-defined]

    def _count(self, model, **_kwargs) -> None:
        self.counts[model.name] = self.counts.get(model.name, 0) + 1

    def __getitem__(self, operation: str) -> int:
        return self.counts.get(operation, 0)


@pytest.fixture(scope="module")
def s3_hq(tmp_path_factory) -> Iterator[RunningHQ]:
    folder = tmp_path_factory.mktemp("hq-s3-index")
    with running_hq("postgresql", folder, blob_backend="s3",
                    s3=new_bucket(folder / "staging")) as hq:
        yield hq


@pytest.fixture
def hq3(s3_hq: RunningHQ) -> RunningHQ:
    s3_hq.reset()
    return s3_hq


def test_missing_is_answered_from_the_list_without_a_request_per_file(hq3):
    device = SimDevice(hq3).enrol()
    stored = [device.put_blob(f"foto {i}".encode()) for i in range(3)]
    unknown = [_sha(f"ainda no tablet {i}".encode()) for i in range(297)]
    calls = S3Calls(hq3.blobs)
    with device.client() as client:
        answer = client.post(f"{API_PREFIX}/blobs/missing", json={"sha256": stored + unknown})
    assert answer.status_code == 200
    assert answer.json()["missing"] == unknown
    assert calls["HeadObject"] == 0 and calls["ListObjectsV2"] == 0


def test_a_push_batch_checks_its_files_without_a_request_per_file(hq3):
    device = SimDevice(hq3).enrol()
    photos = [device.put_blob(f"foto do auto {i}".encode()) for i in range(20)]
    calls = S3Calls(hq3.blobs)
    records = [device.record(blobs=[photos[i]]) for i in range(20)]
    response = device.push(*records)
    assert response.status_code == 200, response.text
    assert [r["status"] for r in response.json()["results"]] == ["accepted"] * 20
    assert calls["HeadObject"] == 0
    # A record naming a file HQ does not have is still told which.
    absent = _sha(b"nunca enviada")
    result = device.push_one(device.record(blobs=[absent]))
    assert result["status"] == "missing_blobs" and result["missing"] == [absent]


def test_a_bundle_lists_its_files_and_head_answers_from_the_list(hq3):
    device = SimDevice(hq3).enrol()
    files = [f"assinatura {i}".encode() for i in range(5)]
    body = b"".join(bundle_part_header(_sha(f), len(f)) + f for f in files)
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=body)
        assert response.status_code == 200, response.text
        assert [p["status"] for p in response.json()["parts"]] == ["stored"] * 5
        calls = S3Calls(hq3.blobs)
        head = client.head(f"{API_PREFIX}/blobs/{_sha(files[0])}")
        assert head.status_code == 200 and head.headers["X-Blob-Size"] == str(len(files[0]))
        assert client.head(f"{API_PREFIX}/blobs/{_sha(b'outra')}").status_code == 404
    assert calls["HeadObject"] == 0
    assert hq3.scalar("SELECT COUNT(*) FROM blob_index") == 5


def test_a_file_in_the_bucket_without_its_row_heals_when_the_device_sends_it_again(hq3):
    device = SimDevice(hq3).enrol()
    data = b"foto gravada antes de a sede cair"
    sha = _store_behind_hqs_back(hq3.blobs, data)
    with device.client() as client:
        # Not in the list: the device is told to send it (never the other way round).
        assert client.post(f"{API_PREFIX}/blobs/missing",
                           json={"sha256": [sha]}).json()["missing"] == [sha]
        again = client.put(f"{API_PREFIX}/blobs/{sha}", content=data)
        assert again.status_code == 200  # there already: nothing rewritten
        assert client.post(f"{API_PREFIX}/blobs/missing",
                           json={"sha256": [sha]}).json()["missing"] == []
    assert device.push_one(device.record(blobs=[sha]))["status"] == "accepted"


def test_reindex_writes_what_the_bucket_holds_and_the_list_lacks(hq3):
    device = SimDevice(hq3).enrol()
    known = device.put_blob(b"enviada pela API")
    restored = [_store_behind_hqs_back(hq3.blobs, f"restaurada {i}".encode())
                for i in range(4)]
    assert blob_index.reindex(hq3.engine, hq3.blobs, batch=3) == (5, 4, 0)
    assert blob_index.missing(hq3.engine, hq3.blobs, [known, *restored]) == []
    assert hq3.scalar("SELECT size FROM blob_index WHERE sha256 = :s", s=restored[0]) == \
        len(b"restaurada 0")
    assert blob_index.reindex(hq3.engine, hq3.blobs) == (5, 0, 0)
    # A bucket restored from a copy older than the database: the list must not name a file
    # the bucket lost, or devices would never be asked for it again.
    hq3.blobs.delete(known)
    assert blob_index.reindex(hq3.engine, hq3.blobs) == (4, 0, 1)
    assert blob_index.missing(hq3.engine, hq3.blobs, [known]) == [known]


def test_prune_removes_the_row_with_the_file(hq3):
    device = SimDevice(hq3).enrol()
    orphan = device.put_blob(b"foto que nenhum auto usa")
    used = device.put_blob(b"foto do auto")
    assert device.push_one(device.record(blobs=[used]))["status"] == "accepted"
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=40)).isoformat()
    with hq3.engine.begin() as conn:
        conn.exec_driver_sql("UPDATE blob_uploads SET at = %s", (old,))
    assert prune(hq3.engine, hq3.blobs, older_than=dt.timedelta(days=30))[0] == 1
    assert blob_index.missing(hq3.engine, hq3.blobs, [orphan, used]) == [orphan]


def test_the_folder_finds_a_file_from_before_the_list_and_writes_its_row(hq):
    """The folder's own check is a stat: a file the list does not name is looked up there."""
    if hq.blobs.index_authoritative:
        pytest.skip("about the folder store; this run keeps HQ's files in a bucket")
    device = SimDevice(hq).enrol()
    sha = _store_behind_hqs_back(hq.blobs, b"foto de antes da lista")
    with device.client() as client:
        assert client.post(f"{API_PREFIX}/blobs/missing",
                           json={"sha256": [sha]}).json()["missing"] == []
    assert hq.scalar("SELECT size FROM blob_index WHERE sha256 = :s", s=sha) == \
        len(b"foto de antes da lista")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_fills_the_list_from_uploads_and_from_records(backend, tmp_path):
    from alembic import command
    from sqlalchemy import text

    from inspector_app.hq.core.db import alembic_config, make_engine

    with database_url(backend, tmp_path) as url:
        engine = make_engine(url)
        command.upgrade(alembic_config(engine), "0004_i14a")
        a, b, c = (_sha(x) for x in (b"a", b"b", b"c"))
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO devices (id, name, token_hash, key_id, public_key, "
                              "enrolled_at) VALUES ('d1', 't', 'h', 'k', 'p', 'now')"))
            conn.execute(text("INSERT INTO blob_uploads VALUES (:s, 'd1', 7, '2026-01-01')"),
                         {"s": a})
            for rid, at in (("r1", "2026-02-01"), ("r2", "2026-01-15")):
                conn.execute(text(
                    "INSERT INTO records (id, device_id, kind, created_at, received_at, "
                    "payload, sha256, signature, verification_code) VALUES "
                    "(:id, 'd1', 'auto_infracao', 'x', :at, '{}', 'h', 's', :id)"),
                    {"id": rid, "at": at})
                for sha in (a, b, c):  # c is named by both records: one row
                    conn.execute(text("INSERT INTO record_blobs VALUES (:r, :s)"),
                                 {"r": rid, "s": sha})
        command.upgrade(alembic_config(engine), "head")
        with engine.begin() as conn:
            rows = {r.sha256: (r.size, r.stored_at) for r in conn.execute(
                text("SELECT sha256, size, stored_at FROM blob_index"))}
        assert rows == {a: (7, "2026-01-01"), b: (None, "2026-01-15"),
                        c: (None, "2026-01-15")}
        engine.dispose()
