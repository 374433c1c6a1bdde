"""A real S3-compatible server on loopback for the tests: moto in server mode.

No S3 server is packaged for Debian short of Ceph's radosgw (a whole cluster); moto's server
speaks the S3 REST protocol over HTTP, so HQ's boto3 client talks to it exactly as it would
to MinIO or AWS (signatures, conditional PUTs, checksums, listings). One server per test
session (``moto_server()``), one bucket per HQ under test (``new_bucket``).

``HQ_TEST_BLOBS=s3`` makes every HQ the tests start (``tests/hqkit.py``, the sync fault
suite's HQ processes) keep its files in a bucket there instead of a folder: ``make test-s3``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx

from inspector_app.hq.core.config import S3Settings

# moto accepts any credentials; boto3 insists on having some.
ACCESS_KEY, SECRET_KEY, REGION = "testing", "testing", "us-east-1"

_server: tuple[subprocess.Popen[bytes], str] | None = None


def blobs_backend() -> str:
    backend = os.environ.get("HQ_TEST_BLOBS", "folder")
    if backend not in ("folder", "s3"):
        raise RuntimeError(f"HQ_TEST_BLOBS must be folder or s3, not {backend!r}")
    return backend


def moto_server() -> str:
    """The endpoint URL of the session's moto server (started on first use, stopped at
    exit)."""
    global _server
    if _server is not None and _server[0].poll() is None:
        return _server[1]
    from hqkit import free_port

    port = free_port()
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"moto-{port}.log", "wb")  # noqa: SIM115
    process = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{url}/moto-api/", timeout=1)
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError(f"moto server did not start (see {log.name})") from None
            time.sleep(0.1)
    import atexit

    atexit.register(_stop, process)
    _server = (process, url)
    return url


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=5)
    if process.poll() is None:
        process.kill()


def new_bucket(staging: Path, *, prefix: str = "blobs/") -> S3Settings:
    """A new, empty bucket on the session's server; settings for an S3 blob store in it."""
    import boto3

    endpoint = moto_server()
    name = f"hq-test-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=endpoint, region_name=REGION,
                 aws_access_key_id=ACCESS_KEY,
                 aws_secret_access_key=SECRET_KEY).create_bucket(Bucket=name)
    return S3Settings(bucket=name, staging_dir=staging, prefix=prefix, endpoint_url=endpoint,
                      region=REGION, access_key_id=ACCESS_KEY, secret_access_key=SECRET_KEY)


def s3_environment(settings: S3Settings) -> dict[str, str]:
    """The variables that make ``Settings.from_env`` (an HQ process) use this bucket."""
    return {"HQ_BLOB_STORE": "s3", "HQ_S3_BUCKET": settings.bucket,
            "HQ_S3_PREFIX": settings.prefix, "HQ_S3_ENDPOINT_URL": settings.endpoint_url or "",
            "HQ_S3_REGION": settings.region or "", "HQ_S3_ACCESS_KEY_ID": ACCESS_KEY,
            "HQ_S3_SECRET_ACCESS_KEY": SECRET_KEY, "HQ_S3_STAGING_DIR": str(settings.staging_dir)}


@contextlib.contextmanager
def bucket_store(staging: Path) -> Iterator[S3Settings]:
    yield new_bucket(staging)
