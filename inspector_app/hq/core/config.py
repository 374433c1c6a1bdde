"""HQ settings: where the database and the blob folder are.

``DATABASE_URL`` selects PostgreSQL in production (``postgresql+psycopg://user@host/db``);
without it HQ uses ``sqlite:///<data dir>/hq.db`` so that ``inspector-hq init`` and
``serve`` need nothing else installed. The data dir is ``INSPECTOR_HQ_DATA_DIR`` or the
platform's user data folder; blobs live in ``<data dir>/blobs`` unless ``HQ_BLOB_DIR`` says
otherwise.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import platformdirs

APP_NAME = "inspector-hq"


def default_data_dir() -> Path:
    override = os.environ.get("INSPECTOR_HQ_DATA_DIR")
    if override:
        return Path(override)
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class Settings:
    """Everything ``create_app`` needs. Build with :meth:`from_env` or directly in tests."""

    database_url: str
    blob_dir: Path
    enrol_failures_per_minute: int = 5
    max_blob_bytes: int = 64 * 1024 * 1024
    max_bundle_bytes: int = 256 * 1024 * 1024
    # The public address documents print for verification (QR and "Verifique em"),
    # e.g. https://fiscalizacao.example.gov.br; "" = the address a device enrolled at.
    public_url: str = ""

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
        return cls(database_url=url, blob_dir=Path(blobs), public_url=public)
