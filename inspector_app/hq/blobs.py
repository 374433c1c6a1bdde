"""Content-addressed blob folder: ``<blob_dir>/ab/abcdef…`` named by the file's SHA-256.

A PUT streams to a temporary file while hashing; only a body whose SHA-256 equals the name
it was sent under is renamed into place (atomic, fsynced). Sending a blob that is already
there is harmless: the copy is checked and discarded.

A bundle (``put_bundle``, the framing in ``sync.protocol.bundle_part_header``) carries many
files in one request: each is hashed as it streams into its own temporary file; at the end
the verified ones are fsynced, renamed into place and each touched folder fsynced once (not
once per file), in a worker thread so the event loop keeps serving. Every file received
whole and verified is kept even when the request breaks off after it, so an interrupted
upload resumes without sending it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Literal

import anyio

from inspector_app.fileio import fsync_folder

_SHA256 = re.compile(r"[0-9a-f]{64}")
_PART_HEADER = re.compile(rb"([0-9a-f]{64}) ([0-9]{1,15})")
_MAX_HEADER = 96

PartStatus = Literal["stored", "present", "refused"]


@dataclass
class _Part:
    """One file of a bundle while its bytes arrive."""

    sha256: str
    size: int
    received: int = 0
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    tmp: str | None = None
    handle: BinaryIO | None = None  # None: refused up front, its bytes are skipped
    refused: str | None = None


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

    async def put_bundle(self, chunks: AsyncIterator[bytes], *, max_bytes: int,
                         max_parts: int) -> list[tuple[str, PartStatus, str | None]]:
        """Store every file of the streamed bundle; ``(sha256, status, reason)`` per part,
        in order. Raises :class:`BlobError` (400) for a body that is empty, not framed as a
        bundle, truncated, or has more than ``max_parts`` parts; files before the fault
        that arrived whole and verified are kept all the same."""
        answers: list[tuple[str, PartStatus, str | None]] = []
        verified: dict[str, str] = {}  # sha256 -> temporary file, to rename into place
        header = bytearray()
        part: _Part | None = None
        try:
            async for chunk in chunks:
                pos = 0
                while pos < len(chunk):
                    if part is None:
                        end = chunk.find(b"\n", pos)
                        header += chunk[pos:] if end < 0 else chunk[pos:end]
                        if len(header) > _MAX_HEADER:
                            raise BlobError(400, f"parte {len(answers) + 1} do pacote sem "
                                            "cabeçalho '<sha256> <tamanho>'")
                        if end < 0:
                            break
                        pos = end + 1
                        if len(answers) >= max_parts:
                            raise BlobError(400, f"pacote com mais de {max_parts} arquivos")
                        part = self._open_part(bytes(header), max_bytes, len(answers) + 1)
                        header.clear()
                    else:
                        take = min(part.size - part.received, len(chunk) - pos)
                        piece = chunk[pos:pos + take]
                        part.received += take
                        pos += take
                        if part.handle is not None:
                            part.digest.update(piece)
                            part.handle.write(piece)
                    if part is not None and part.received == part.size:
                        answers.append(self._close_part(part, verified))
                        part = None
            if part is not None or header:
                raise BlobError(400, f"pacote truncado na parte {len(answers) + 1}")
            if not answers:
                raise BlobError(400, "pacote vazio: nenhum arquivo")
        finally:
            if part is not None:
                self._discard(part)
            if verified:
                await anyio.to_thread.run_sync(self._commit, verified)
        return answers

    def _open_part(self, header: bytes, max_bytes: int, index: int) -> _Part:
        match = _PART_HEADER.fullmatch(header)
        if match is None:
            raise BlobError(400, f"parte {index} do pacote sem cabeçalho '<sha256> <tamanho>'")
        part = _Part(sha256=match.group(1).decode("ascii"), size=int(match.group(2)))
        if part.size > max_bytes:
            part.refused = f"arquivo maior que o limite de {max_bytes} bytes"
            return part
        target = self.path(part.sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, part.tmp = tempfile.mkstemp(prefix=".upload-", dir=target.parent)
        part.handle = os.fdopen(fd, "wb")
        return part

    def _close_part(self, part: _Part,
                    verified: dict[str, str]) -> tuple[str, PartStatus, str | None]:
        if part.refused is not None:
            return part.sha256, "refused", part.refused
        assert part.handle is not None and part.tmp is not None
        part.handle.close()
        actual = part.digest.hexdigest()
        if actual != part.sha256:
            self._discard(part)
            return part.sha256, "refused", f"o conteúdo recebido tem SHA-256 {actual}"
        if part.sha256 in verified or self.has(part.sha256):
            self._discard(part)
            return part.sha256, "present", None
        verified[part.sha256] = part.tmp
        return part.sha256, "stored", None

    @staticmethod
    def _discard(part: _Part) -> None:
        if part.handle is not None:
            part.handle.close()
        if part.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part.tmp)

    def _commit(self, verified: dict[str, str]) -> None:
        """fsync each file, rename it into place, then fsync each touched folder once."""
        folders = set()
        for sha256, tmp in verified.items():
            fd = os.open(tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            target = self.path(sha256)
            os.replace(tmp, target)
            folders.add(target.parent)
        for folder in sorted(folders):
            fsync_folder(folder)
