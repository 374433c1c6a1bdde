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

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
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
    # --- HTTP limits (docs/hq-operations.md, "HTTP limits"); env HQ_<NAME upper case> ----
    # Every request body that is not a file upload (push, blobs/missing, enrol): a 100-record
    # push of real autos is well under 1 MiB.
    max_json_bytes: int = 8 * 1024 * 1024
    # A request head must be complete this many seconds after the connection opened (or the
    # previous answer was sent); a body must not pause longer than ``body_idle_timeout``
    # between chunks, nor take longer than ``body_total_timeout`` in all.
    header_timeout: float = 10.0
    body_idle_timeout: float = 30.0
    body_total_timeout: float = 900.0
    keep_alive_timeout: int = 5
    # Open connections per server process beyond which uvicorn answers 503.
    limit_concurrency: int = 1000
    # Requests with a body being read at once: in all, and per device.
    max_concurrent_uploads: int = 32
    max_uploads_per_device: int = 4
    # Addresses (or networks) of reverse proxies whose X-Forwarded-For is believed.
    trusted_proxies: tuple[str, ...] = ()
    # /verify lookups per minute per client address (page and JSON together).
    verify_per_minute: int = 60
    # Files a device uploaded that no record of its own references yet.
    blob_quota_bytes: int = 512 * 1024 * 1024
    blob_quota_files: int = 5000
    # /api/v1/docs (Swagger UI from a CDN) and /api/v1/openapi.json: off in production.
    api_docs: bool = False

    # --- the web console (/console; docs/hq-console.md) ------------------------------------
    # Session cookie with the Secure flag (HTTPS only). Off only for a plain-HTTP loopback
    # test server: HQ_CONSOLE_SECURE_COOKIE=0.
    console_secure_cookie: bool = True
    # A session ends after this many idle minutes, and in any case this many hours after login.
    console_idle_minutes: int = 30
    console_session_hours: int = 12
    # Failed logins that lock a login (and, more, an address) for ``console_lockout_minutes``.
    console_lockout_failures: int = 5
    console_lockout_ip_failures: int = 20
    console_lockout_minutes: int = 15
    # Map tiles of the auto page ("https://tile.example.org/{z}/{x}/{y}.png"); "" = no map,
    # the coordinates as a list (the console works offline).
    console_tile_url: str = ""

    # The public address documents print for verification (QR and "Verifique em"),
    # e.g. https://fiscalizacao.example.gov.br; "" = the address a device enrolled at.
    public_url: str = ""
    blob_backend: str = "folder"
    s3: S3Settings | None = None

    def __post_init__(self) -> None:
        for proxy in self.trusted_proxies:
            ipaddress.ip_network(proxy, strict=False)  # ValueError on a typo
        if self.console_tile_url and not self.console_tile_url.startswith(("http://",
                                                                             "https://")):
            raise ValueError(f"HQ_CONSOLE_TILE_URL must be an http(s) URL, not "
                             f"{self.console_tile_url!r}")
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
        public = os.environ.get("HQ_PUBLIC_URL", "").strip()
        if public and not public.startswith(("http://", "https://")):
            raise ValueError(f"HQ_PUBLIC_URL must be an http(s) URL, not {public!r}")
        backend = os.environ.get("HQ_BLOB_STORE", "folder").strip().lower() or "folder"
        return cls(database_url=url, blob_dir=Path(blobs), blob_backend=backend,
                   public_url=public,
                   s3=S3Settings.from_env(base) if backend == "s3" else None,
                   **limits_from_env())  # type: ignore[arg-type]


_ENV_LIMITS = ("enrol_failures_per_minute", "max_blob_bytes", "max_bundle_bytes",
               "max_json_bytes", "header_timeout", "body_idle_timeout", "body_total_timeout",
               "keep_alive_timeout", "limit_concurrency", "max_concurrent_uploads",
               "max_uploads_per_device", "trusted_proxies", "verify_per_minute",
               "blob_quota_bytes", "blob_quota_files", "api_docs",
               "console_secure_cookie", "console_idle_minutes", "console_session_hours",
               "console_lockout_failures", "console_lockout_ip_failures",
               "console_lockout_minutes", "console_tile_url")


def limits_from_env(environ: Mapping[str, str] | None = None) -> dict[str, object]:
    """The limits set in the environment as ``HQ_<FIELD>`` (``HQ_MAX_JSON_BYTES=4194304``,
    ``HQ_TRUSTED_PROXIES=10.0.0.5,10.1.0.0/16``, ``HQ_API_DOCS=1``); ValueError on a bad one."""
    env = os.environ if environ is None else environ
    types = {f.name: f.type for f in fields(Settings)}
    values: dict[str, object] = {}
    for name in _ENV_LIMITS:
        raw = env.get(f"HQ_{name.upper()}")
        if raw is None or raw.strip() == "":
            continue
        kind = types[name]
        try:
            if name == "trusted_proxies":
                values[name] = tuple(p.strip() for p in raw.split(",") if p.strip())
            elif name == "console_tile_url":
                values[name] = raw.strip()
            elif kind in ("bool", bool):
                values[name] = raw.strip().lower() in ("1", "true", "yes", "on")
            elif kind in ("float", float):
                values[name] = float(raw)
            else:
                values[name] = int(raw)
        except ValueError:
            raise ValueError(f"HQ_{name.upper()}: invalid value {raw!r}") from None
    return values
