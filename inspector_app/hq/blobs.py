"""Content-addressed blob folder: ``<blob_dir>/ab/abcdef…`` named by the file's SHA-256.

A PUT streams to a temporary file while hashing; only a body whose SHA-256 equals the name
it was sent under is renamed into place (atomic, fsynced). Sending a blob that is already
there is harmless: the copy is checked and discarded.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from inspector_app.fileio import fsync_folder

_SHA256 = re.compile(r"[0-9a-f]{64}")


class BlobError(ValueError):
    """A blob body that cannot be stored. ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, sha256: str) -> Path:
        if not _SHA256.fullmatch(sha256):
            raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
        return self.root / sha256[:2] / sha256

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def size(self, sha256: str) -> int | None:
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    async def put(self, sha256: str, chunks: AsyncIterator[bytes], *, max_bytes: int) -> bool:
        """Store the streamed body under ``sha256``; True if it was new.

        Raises :class:`BlobError` (422) when the body's hash differs, (413) when it is
        larger than ``max_bytes``. Nothing is left behind in either case.
        """
        target = self.path(sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(prefix=".upload-", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise BlobError(413, f"arquivo maior que o limite de {max_bytes} bytes")
                    digest.update(chunk)
                    handle.write(chunk)
                handle.flush()
                os.fsync(handle.fileno())
            actual = digest.hexdigest()
            if actual != sha256:
                raise BlobError(
                    422, f"o conteúdo recebido tem SHA-256 {actual}, não {sha256}"
                )
            if target.is_file():
                return False
            os.replace(tmp_name, target)
            fsync_folder(target.parent)
            return True
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)
