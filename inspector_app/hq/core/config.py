"""HQ settings: where the database and the blob folder are.

``DATABASE_URL`` selects PostgreSQL in production (``postgresql+psycopg://user@host/db``);
without it HQ uses ``sqlite:///<data dir>/hq.db`` so that ``inspector-hq init`` and
``serve`` need nothing else installed. The data dir is ``INSPECTOR_HQ_DATA_DIR`` or the
platform's user data folder; blobs live in ``<data dir>/blobs`` unless ``HQ_BLOB_DIR`` says
otherwise.

``HQ_BLOB_STORE=s3`` keeps them in an S3-compatible bucket instead, for HQ run as several
instances: ``HQ_S3_BUCKET`` (required), ``HQ_S3_PREFIX``, ``HQ_S3_ENDPOINT_URL`` (MinIO,
Ceph RGW; unset for AWS), ``HQ_S3_REGION``, and the credentials in
``HQ_S3_ACCESS_KEY_ID`` / ``HQ_S3_SECRET_ACCESS_KEY`` or boto3's own chain (``AWS_*``
variables, ``~/.aws``, an instance role). ``HQ_S3_STAGING_DIR`` is the local folder where
an upload's bytes wait while they are hashed (default ``<data dir>/blob-staging``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

APP_NAME = "inspector-hq"


def default_data_dir() -> Path:
    override = os.environ.get("INSPECTOR_HQ_DATA_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class S3Settings:
    """Where the S3 blob store is (see the module docstring for the variables)."""

    bucket: str
    staging_dir: Path
    prefix: str = ""
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.prefix and not self.prefix.endswith("/"):
            object.__setattr__(self, "prefix", self.prefix + "/")

    @classmethod
    def from_env(cls, base: Path) -> S3Settings | None:
        bucket = os.environ.get("HQ_S3_BUCKET")
        if not bucket:
            return None
        staging = os.environ.get("HQ_S3_STAGING_DIR")
        return cls(bucket=bucket, staging_dir=Path(staging) if staging else base / "blob-staging",
                   prefix=os.environ.get("HQ_S3_PREFIX", ""),
                   endpoint_url=os.environ.get("HQ_S3_ENDPOINT_URL") or None,
                   region=os.environ.get("HQ_S3_REGION") or None,
                   access_key_id=os.environ.get("HQ_S3_ACCESS_KEY_ID") or None,
                   secret_access_key=os.environ.get("HQ_S3_SECRET_ACCESS_KEY") or None)


BLOB_BACKENDS = ("folder", "s3")


@dataclass(frozen=True)
class Settings:
    """Everything ``create_app`` needs. Build with :meth:`from_env` or directly in tests."""

    database_url: str
    blob_dir: Path
    enrol_failures_per_minute: int = 5
    max_blob_bytes: int = 64 * 1024 * 1024
    max_bundle_bytes: int = 256 * 1024 * 1024
    blob_backend: str = "folder"
    s3: S3Settings | None = None

    def __post_init__(self) -> None:
        if self.blob_backend not in BLOB_BACKENDS:
            raise ValueError(f"HQ_BLOB_STORE must be one of {', '.join(BLOB_BACKENDS)}, "
                             f"not {self.blob_backend!r}")
        if self.blob_backend == "s3" and self.s3 is None:
            raise ValueError("HQ_BLOB_STORE=s3 needs HQ_S3_BUCKET")

    @classmethod
    def from_env(
        cls,
        *,
        database_url: str | None = None,
        data_dir: Path | None = None,
        blob_dir: Path | None = None,
    ) -> Settings:
        """Explicit arguments first, then ``DATABASE_URL`` / ``HQ_BLOB_DIR``, then defaults."""
        base = Path(data_dir) if data_dir is not None else default_data_dir()
        url = database_url or os.environ.get("DATABASE_URL") or f"sqlite:///{base / 'hq.db'}"
        blobs = blob_dir or (
            Path(os.environ["HQ_BLOB_DIR"]) if os.environ.get("HQ_BLOB_DIR") else base / "blobs"
        )
        backend = os.environ.get("HQ_BLOB_STORE", "folder").strip().lower() or "folder"
        return cls(database_url=url, blob_dir=Path(blobs), blob_backend=backend,
                   s3=S3Settings.from_env(base) if backend == "s3" else None)
