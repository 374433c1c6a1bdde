"""The two blob stores behind one interface: the folder and an S3-compatible bucket (a real
S3 server on loopback, tests/s3kit.py). Same guarantees: the hash is checked before a file is
visible, a stored file is never rewritten, a broken bundle keeps the whole files before the
break, an interrupted upload leaves nothing visible, a bundle streams (never whole in memory).
"""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from s3kit import new_bucket, s3_environment

from inspector_app.hq.blobs import BlobError, BlobStore, FolderBlobStore
from inspector_app.hq.blobs_s3 import S3BlobStore
from inspector_app.hq.core.config import S3Settings, Settings
from inspector_app.sync.protocol import bundle_part_header

MIB = 1024 * 1024


@pytest.fixture(params=["folder", "s3"])
def store(request, tmp_path) -> Iterator[BlobStore]:
    if request.param == "folder":
        blobs: BlobStore = FolderBlobStore(tmp_path / "blobs")
    else:
        blobs = S3BlobStore(new_bucket(tmp_path / "staging"))
    blobs.check()
    yield blobs


async def _chunks(data: bytes, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


def _put(store: BlobStore, sha: str, data: bytes, max_bytes: int = 8 * MIB) -> bool:
    return asyncio.run(store.put(sha, _chunks(data), max_bytes=max_bytes))


def _bundle(store: BlobStore, body: bytes, max_bytes: int = 8 * MIB):
    return asyncio.run(store.put_bundle(_chunks(body), max_bytes=max_bytes, max_parts=100))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_file_is_stored_once_under_its_hash_and_listed(store):
    data = b"\xff\xd8 foto do tacografo" * 100
    sha = _sha(data)
    assert not store.has(sha) and store.size(sha) is None
    assert _put(store, sha, data) is True
    assert _put(store, sha, data) is False  # already there: nothing written
    assert store.read(sha) == data and store.size(sha) == len(data)
    assert list(store.hashes()) == [sha]
    assert store.missing([_sha(b"outro"), sha, _sha(b"outro")]) == [_sha(b"outro")]
    assert store.partial_uploads() == 0
    store.delete(sha)  # an unreferenced file pruned
    assert not store.has(sha) and list(store.hashes()) == []
    store.delete(sha)  # absent is fine


def test_a_body_that_does_not_hash_to_its_name_leaves_nothing(store):
    sha = _sha(b"original")
    with pytest.raises(BlobError) as refused:
        _put(store, sha, b"adulterado")
    assert refused.value.status == 422
    assert not store.has(sha) and list(store.hashes()) == [] and store.partial_uploads() == 0


def test_a_body_over_the_limit_is_413_and_leaves_nothing(store):
    data = b"x" * (MIB + 1)
    with pytest.raises(BlobError) as refused:
        _put(store, _sha(data), data, max_bytes=MIB)
    assert refused.value.status == 413
    assert list(store.hashes()) == [] and store.partial_uploads() == 0


def test_a_stored_file_is_never_rewritten_even_by_a_racing_writer(store, tmp_path):
    """The check before writing is not enough with several HQ instances: the write itself
    refuses to replace an existing file (rename onto a file that appeared is skipped; S3's
    ``If-None-Match: *``)."""
    data = b"assinatura do condutor"
    sha = _sha(data)
    assert _put(store, sha, data)
    other = tmp_path / "other"
    other.write_bytes(b"bytes diferentes sob o mesmo nome")
    assert store._publish(sha, str(other)) is False  # the racing writer is told it is there
    assert store.read(sha) == data


def test_a_broken_bundle_keeps_the_whole_files_before_the_break(store):
    first, second, third = b"primeiro" * 50, b"segundo" * 5000, b"terceiro" * 300
    body = b"".join(bundle_part_header(_sha(f), len(f)) + f for f in (first, second, third))
    with pytest.raises(BlobError, match="truncado na parte 3"):
        _bundle(store, body[:-100])
    assert store.has(_sha(first)) and store.has(_sha(second))
    assert not store.has(_sha(third)) and store.partial_uploads() == 0
    # Sent again, the two kept are answered present and only the third is stored.
    parts = _bundle(store, body)
    assert [status for _, status, _ in parts] == ["present", "present", "stored"]
    assert store.read(_sha(third)) == third


def test_a_bundle_streams_through_bounded_memory(store):
    """Five 6 MiB files (30 MiB): the store holds at most its 16 MiB in-memory budget plus a
    chunk, never the whole bundle."""
    files = [bytes([i]) * (6 * MIB) for i in range(5)]
    body = b"".join(bundle_part_header(_sha(f), len(f)) + f for f in files)

    async def stream() -> AsyncIterator[bytes]:
        for start in range(0, len(body), 256 * 1024):
            yield body[start:start + 256 * 1024]

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        parts = asyncio.run(store.put_bundle(stream(), max_bytes=8 * MIB, max_parts=10))
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert [status for _, status, _ in parts] == ["stored"] * 5
    assert all(store.read(_sha(f)) == f for f in files)
    assert peak < 20 * MIB, f"peak {peak / MIB:.1f} MiB for a 30 MiB bundle"


def test_s3_settings_come_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("HQ_BLOB_STORE", "s3")
    monkeypatch.delenv("HQ_S3_BUCKET", raising=False)
    with pytest.raises(ValueError, match="HQ_S3_BUCKET"):
        Settings.from_env(data_dir=tmp_path)
    monkeypatch.setenv("HQ_S3_BUCKET", "evidencias")
    monkeypatch.setenv("HQ_S3_PREFIX", "df")
    monkeypatch.setenv("HQ_S3_ENDPOINT_URL", "http://minio.interno:9000")
    settings = Settings.from_env(data_dir=tmp_path)
    assert settings.blob_backend == "s3"
    assert settings.s3 == S3Settings(bucket="evidencias", prefix="df/",
                                     endpoint_url="http://minio.interno:9000",
                                     staging_dir=tmp_path / "blob-staging")
    assert "SECRET" not in repr(S3Settings(bucket="b", staging_dir=tmp_path,
                                           secret_access_key="SECRET"))
    monkeypatch.setenv("HQ_BLOB_STORE", "nfs")
    with pytest.raises(ValueError, match="folder, s3"):
        Settings.from_env(data_dir=tmp_path)


def _hq(args: list[str], env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspector_app.hq.cli", *args, "--data-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env})


def test_init_names_the_bucket_and_refuses_one_it_cannot_reach(tmp_path):
    s3 = new_bucket(tmp_path / "staging")
    ok = _hq(["init"], s3_environment(s3), tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert f"bucket S3 {s3.bucket}/blobs/" in ok.stdout
    missing = _hq(["init"], {**s3_environment(s3), "HQ_S3_BUCKET": "nao-existe"}, tmp_path)
    assert missing.returncode == 2
    assert "bucket nao-existe inacessível" in missing.stderr
    assert "Traceback" not in missing.stderr and len(missing.stderr.strip().splitlines()) == 1
    wrong = _hq(["init"], {"HQ_BLOB_STORE": "s3"}, tmp_path)
    assert wrong.returncode == 2 and "HQ_S3_BUCKET" in wrong.stderr
