"""A device's quota on files that no record references yet (issue 14, finding 14).

Every file a device stores is recorded in ``blob_uploads`` (first uploader, size). The
files of a device that no ``record_blobs`` row names are its *unreferenced* files; a new
file is refused while they would exceed ``blob_quota_bytes`` or ``blob_quota_files``. A
file is referenced – and stops counting – as soon as a record naming it is accepted, so a
device that syncs normally (files of one push batch, then the batch) never meets the quota;
one that uploads files nothing uses is stopped there. ``inspector-hq blobs prune`` deletes
unreferenced files older than a given age (and frees their quota).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import ColumnElement, Engine, and_, delete, exists, func, select
from sqlalchemy.dialects import postgresql, sqlite

from inspector_app.hq.blob_index import forget
from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import blob_uploads, process_attachments, record_blobs


def _unreferenced() -> ColumnElement[bool]:
    # A file the console attached to a process (a defence, an appeal) is referenced too.
    return and_(~exists().where(record_blobs.c.sha256 == blob_uploads.c.sha256),
                ~exists().where(process_attachments.c.sha256 == blob_uploads.c.sha256))


@dataclass
class Quota:
    """One request's view of a device's quota: loaded once, then kept up to date in memory
    as the request's files are admitted."""

    max_bytes: int
    max_files: int
    used_bytes: int = 0
    used_files: int = 0

    @classmethod
    def load(cls, engine: Engine, device_id: str, *, max_bytes: int, max_files: int) -> Quota:
        with engine.connect() as conn:
            count, total = conn.execute(
                select(func.count(), func.coalesce(func.sum(blob_uploads.c.size), 0))
                .where(blob_uploads.c.device_id == device_id, _unreferenced())).one()
        return cls(max_bytes=max_bytes, max_files=max_files, used_bytes=int(total),
                   used_files=int(count))

    def admit(self, sha256: str, size: int) -> str | None:
        """None when a new file of ``size`` bytes fits (and is counted), else the reason."""
        if self.used_files + 1 > self.max_files or self.used_bytes + size > self.max_bytes:
            return (f"cota de arquivos sem auto esgotada ({self.used_files} arquivos, "
                    f"{self.used_bytes} bytes; limite {self.max_files} arquivos, "
                    f"{self.max_bytes} bytes): envie os autos que os usam")
        self.used_files += 1
        self.used_bytes += size
        return None


def record_uploads(engine: Engine, device_id: str, files: Iterable[tuple[str, int]]) -> None:
    """Note ``device_id`` as the uploader of ``files`` (sha256, size) not noted before."""
    rows = [{"sha256": sha, "device_id": device_id, "size": size, "at": utc_now()}
            for sha, size in dict(files).items()]
    if not rows:
        return
    dialect = postgresql if engine.dialect.name == "postgresql" else sqlite
    with engine.begin() as conn:
        conn.execute(dialect.insert(blob_uploads).on_conflict_do_nothing(), rows)


def prune(engine: Engine, blobs: BlobStore, *, older_than: dt.timedelta) -> tuple[int, int]:
    """Delete the files no record references that were uploaded more than ``older_than``
    ago: ``(files, bytes)`` removed."""
    cutoff = (dt.datetime.now(dt.UTC) - older_than).isoformat(timespec="microseconds")
    stale = and_(blob_uploads.c.at < cutoff, _unreferenced())
    removed = size = 0
    with engine.begin() as conn:
        rows = conn.execute(select(blob_uploads.c.sha256, blob_uploads.c.size)
                            .where(stale)).all()
        for sha, nbytes in rows:
            blobs.delete(sha)  # absent is fine
            removed += 1
            size += int(nbytes)
        gone = [r.sha256 for r in rows]
        conn.execute(delete(blob_uploads).where(blob_uploads.c.sha256.in_(gone)))
        forget(conn, gone)
    return removed, size
