"""Where HQ keeps the devices' files (photos, signature images, PDFs), named by SHA-256.

:class:`BlobStore` is the one interface the routes and the ingest use; two implementations:

- :class:`FolderBlobStore` (the default, nothing to install): ``<blob_dir>/ab/abcdef…``;
- ``S3BlobStore`` (``inspector_app.hq.blobs_s3``, boto3): any S3-compatible object store
  (AWS S3, MinIO, Ceph RGW), so that several HQ instances share one evidence store.

Same guarantees in both. A PUT streams to a temporary file while hashing; only a body whose
SHA-256 equals the name it was sent under becomes visible (a rename into place, or an object
written with ``If-None-Match: *``). A blob already stored is never rewritten: sending it
again is harmless, the copy is checked and discarded.

A bundle (``put_bundle``, the framing in ``sync.protocol.bundle_part_header``) carries many
files in one request: each is hashed as it streams in (held in memory when it is small, up
to 16 MiB per bundle, else in a temporary file); a file already here is skipped unread. At
the end the verified ones are written, fsynced and renamed into place, a few at a time, and
each touched folder fsynced once (not once per file), in a worker thread so the event loop
keeps serving.
Every file received whole and verified is kept even when the request breaks off after it,
so an interrupted upload resumes without sending it again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

import anyio

from inspector_app.fileio import fsync_folder

if TYPE_CHECKING:
    from inspector_app.hq.core.config import Settings

_SHA256 = re.compile(r"[0-9a-f]{64}")
_PART_HEADER = re.compile(rb"([0-9a-f]{64}) ([0-9]{1,15})")
_MAX_HEADER = 96
# A bundled file waits for its fsync in memory when it is at most _SPILL_BYTES and the
# bundle's files in memory stay within _BUNDLE_MEMORY; otherwise in a temporary file.
_SPILL_BYTES = 1024 * 1024
_BUNDLE_MEMORY = 16 * 1024 * 1024
_COMMIT_THREADS = 8

PartStatus = Literal["stored", "present", "refused"]
Admit = Callable[[str, int], "str | None"]


@dataclass
class _Part:
    """One file of a bundle while its bytes arrive: in memory (a small file, while the
    bundle's budget lasts) or in a temporary file beside its final place."""

    sha256: str
    size: int
    received: int = 0
    digest: hashlib._Hash = field(default_factory=hashlib.sha256)
    memory: bytearray | None = field(default_factory=bytearray)
    tmp: str | None = None
    handle: BinaryIO | None = None
    # Decided from the header alone (already here, too large): the bytes are skipped.
    decided: tuple[PartStatus, str | None] | None = None


class BlobError(ValueError):
    """A blob body that cannot be stored. ``status`` is the HTTP status to answer."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def check_sha256(sha256: str) -> str:
    if not _SHA256.fullmatch(sha256):
        raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
    return sha256


class BlobStore(ABC):
    """Content-addressed files. Subclasses say where a verified file goes (``_publish``,
    ``_commit``), where its bytes wait while they are hashed (``_staging_dir``), and how to
    ask for one (``size``, ``read``, ``hashes``); the streaming, hashing and bundle framing
    are here, shared."""

    #: Shown by ``inspector-hq init`` and in the logs; never contains a secret.
    description: str = ""
    #: True when asking the store costs a round trip per file (an object store): then HQ's
    #: list of stored files (``hq/blob_index.py``) is the only answer to "is it here?";
    #: False when the store's own check is a local ``stat`` that may also be asked.
    index_authoritative: bool = False

    # --- what HQ asks -------------------------------------------------------------------

    @abstractmethod
    def size(self, sha256: str) -> int | None:
        """The stored file's size, or None when HQ does not have it."""

    def has(self, sha256: str) -> bool:
        return self.size(sha256) is not None

    def missing(self, hashes: Iterable[str]) -> list[str]:
        """The hashes of ``hashes`` HQ lacks, in order, without repeats."""
        return [sha for sha in dict.fromkeys(hashes) if not self.has(sha)]

    @abstractmethod
    def read(self, sha256: str) -> bytes:
        """The whole file (FileNotFoundError when absent): for tools, checks and tests."""

    @abstractmethod
    def hashes(self) -> Iterator[str]:
        """Every stored file's hash (a full listing: for audits, not for requests)."""

    def listing(self) -> Iterator[tuple[str, int]]:
        """Every stored file as ``(sha256, size)`` (``inspector-hq blobs reindex``)."""
        for sha in self.hashes():
            size = self.size(sha)
            if size is not None:
                yield sha, size

    @abstractmethod
    def partial_uploads(self) -> int:
        """Temporary leftovers of uploads (0 when every interrupted upload cleaned up)."""

    @abstractmethod
    def check(self) -> None:
        """Raise OSError with a one-line reason when the store cannot be used."""

    @abstractmethod
    def delete(self, sha256: str) -> None:
        """Remove one file no record references (``inspector-hq blobs prune``); absent is
        fine. Never used for a file a record names."""

    def clear(self) -> None:
        """Remove every file (tests and trial installs only)."""
        for sha in list(self.hashes()):
            self.delete(sha)

    # --- storing ------------------------------------------------------------------------

    @abstractmethod
    def _staging_dir(self, sha256: str) -> Path:
        """Where a file's bytes wait, in a temporary file, until they are verified."""

    @abstractmethod
    def _publish(self, sha256: str, tmp_name: str) -> bool:
        """Make the verified temporary file visible under ``sha256``; False if it already
        was (then the temporary file is left for the caller to remove). Blocking."""

    @abstractmethod
    def _commit(self, parts: list[_Part]) -> set[str]:
        """Make a bundle's verified parts visible (blocking, run in a worker thread); the
        hashes that turned out to be there already."""

    async def put(self, sha256: str, chunks: AsyncIterator[bytes], *, max_bytes: int) -> bool:
        """Store the streamed body under ``sha256``; True if it was new.

        Raises :class:`BlobError` (422) when the body's hash differs, (413) when it is
        larger than ``max_bytes``. Nothing is left behind in either case.
        """
        check_sha256(sha256)
        folder = self._staging_dir(sha256)
        folder.mkdir(parents=True, exist_ok=True)
        digest = hashlib.sha256()
        size = 0
        fd, tmp_name = tempfile.mkstemp(prefix=".upload-", dir=folder)
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
            return await anyio.to_thread.run_sync(self._publish, sha256, tmp_name)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp_name)

    async def put_bundle(self, chunks: AsyncIterator[bytes], *, max_bytes: int,
                         max_parts: int, admit: Admit | None = None,
                         visible: dict[str, int | None] | None = None,
                         ) -> list[tuple[str, PartStatus, str | None]]:
        """Store every file of the streamed bundle; ``(sha256, status, reason)`` per part,
        in order. Raises :class:`BlobError` (400) for a body that is empty, not framed as a
        bundle, truncated, or has more than ``max_parts`` parts; files before the fault
        that arrived whole and verified are kept all the same. ``admit(sha256, size)``
        (the device's quota) may refuse a new file from its header: it returns the reason.
        ``visible`` is filled, even when the bundle breaks off, with ``sha256: size`` of every
        file the store holds once the request is over (stored now or there already; the size
        is None for a file found there, whose header HQ does not trust): what HQ writes in
        its list of files (``hq/blob_index.py``)."""
        seen: dict[str, int | None] = {} if visible is None else visible
        answers: list[tuple[str, PartStatus, str | None]] = []
        verified: dict[str, _Part] = {}  # to write (or rename) into place at the end
        in_memory = 0  # bytes of this bundle's files held in memory
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
                        sha = self._part_hash(bytes(header), len(answers) + 1)
                        present = sha in verified or await self._has_async(sha)
                        part = self._open_part(bytes(header), max_bytes, present, in_memory,
                                               admit)
                        if part.decided == ("present", None):
                            seen[part.sha256] = None
                        if part.memory is not None:
                            in_memory += part.size
                        header.clear()
                    else:
                        take = min(part.size - part.received, len(chunk) - pos)
                        self._take(part, chunk[pos:pos + take])
                        pos += take
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
            already: set[str] = set()
            if verified:
                already = await anyio.to_thread.run_sync(self._commit, list(verified.values()))
                seen.update({p.sha256: p.size for p in verified.values()})
        # A store that does not look before it writes learns at the write that a file was
        # there already (another instance stored it meanwhile): it is "present".
        return [(sha, "present", None) if status == "stored" and sha in already
                else (sha, status, reason) for sha, status, reason in answers]

    async def _has_async(self, sha256: str) -> bool:
        """``has`` from the event loop: in a worker thread unless the store says it is a
        local, instant check."""
        return await anyio.to_thread.run_sync(self.has, sha256)

    @staticmethod
    def _part_hash(header: bytes, index: int) -> str:
        match = _PART_HEADER.fullmatch(header)
        if match is None:
            raise BlobError(400, f"parte {index} do pacote sem cabeçalho '<sha256> <tamanho>'")
        return match.group(1).decode("ascii")

    def _open_part(self, header: bytes, max_bytes: int, present: bool,
                   in_memory: int, admit: Admit | None = None) -> _Part:
        match = _PART_HEADER.fullmatch(header)
        assert match is not None  # checked by _part_hash
        part = _Part(sha256=match.group(1).decode("ascii"), size=int(match.group(2)))
        if part.size > max_bytes:
            part.decided = ("refused", f"arquivo maior que o limite de {max_bytes} bytes")
        elif present:
            part.decided = ("present", None)  # named by its hash: what is here is the same
        elif admit is not None and (reason := admit(part.sha256, part.size)) is not None:
            part.decided = ("refused", reason)
        if part.decided is not None:
            part.memory = None
        elif part.size > _SPILL_BYTES or in_memory + part.size > _BUNDLE_MEMORY:
            part.memory = None
            self._spill(part)
        return part

    def _take(self, part: _Part, piece: bytes) -> None:
        part.received += len(piece)
        if part.decided is not None:
            return
        part.digest.update(piece)
        if part.memory is not None:
            part.memory += piece
        else:
            assert part.handle is not None
            part.handle.write(piece)

    def _spill(self, part: _Part) -> None:
        folder = self._staging_dir(part.sha256)
        folder.mkdir(parents=True, exist_ok=True)
        fd, part.tmp = tempfile.mkstemp(prefix=".upload-", dir=folder)
        part.handle = os.fdopen(fd, "wb")

    def _close_part(self, part: _Part,
                    verified: dict[str, _Part]) -> tuple[str, PartStatus, str | None]:
        if part.decided is not None:
            return part.sha256, *part.decided
        if part.handle is not None:
            part.handle.close()
            part.handle = None
        actual = part.digest.hexdigest()
        if actual != part.sha256:
            self._discard(part)
            return part.sha256, "refused", f"o conteúdo recebido tem SHA-256 {actual}"
        verified[part.sha256] = part
        return part.sha256, "stored", None

    @staticmethod
    def _discard(part: _Part) -> None:
        if part.handle is not None:
            part.handle.close()
        if part.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(part.tmp)


class FolderBlobStore(BlobStore):
    """``<root>/ab/abcdef…``: a temporary file beside its final place, renamed into it."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.description = f"pasta {self.root}"

    def path(self, sha256: str) -> Path:
        check_sha256(sha256)
        return self.root / sha256[:2] / sha256

    def size(self, sha256: str) -> int | None:
        try:
            return self.path(sha256).stat().st_size
        except FileNotFoundError:
            return None

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    async def _has_async(self, sha256: str) -> bool:
        return self.has(sha256)  # one stat: not worth a thread hop

    def read(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def hashes(self) -> Iterator[str]:
        for path in sorted(self.root.glob("*/*")):
            if path.is_file() and _SHA256.fullmatch(path.name):
                yield path.name

    def partial_uploads(self) -> int:
        return len(list(self.root.glob("*/.upload-*")))

    def check(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        if not os.access(self.root, os.W_OK):
            raise OSError(f"sem permissão de escrita na pasta de arquivos {self.root}")

    def delete(self, sha256: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path(sha256).unlink()

    def clear(self) -> None:
        import shutil

        shutil.rmtree(self.root, ignore_errors=True)
        self.root.mkdir(parents=True)

    def _staging_dir(self, sha256: str) -> Path:
        return self.root / sha256[:2]

    def _publish(self, sha256: str, tmp_name: str) -> bool:
        target = self.path(sha256)
        if target.is_file():
            return False
        os.replace(tmp_name, target)
        fsync_folder(target.parent)
        return True

    def _commit(self, parts: list[_Part]) -> set[str]:
        """Write (or fsync) each file and rename it into place, several at a time (the
        file system commits concurrent fsyncs together), then fsync each touched folder
        once."""
        with ThreadPoolExecutor(_COMMIT_THREADS) as pool:
            folders = set(pool.map(self._place, parts))
        for folder in sorted(folders):
            fsync_folder(folder)
        return set()  # looked before it wrote (_has_async)

    def _place(self, part: _Part) -> Path:
        target = self.path(part.sha256)
        target.parent.mkdir(parents=True, exist_ok=True)
        if part.tmp is None:
            fd, part.tmp = tempfile.mkstemp(prefix=".upload-", dir=target.parent)
            with os.fdopen(fd, "wb") as handle:
                handle.write(part.memory or b"")
                handle.flush()
                os.fsync(handle.fileno())
        else:
            fd = os.open(part.tmp, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        os.replace(part.tmp, target)
        return target.parent


def open_blob_store(settings: Settings) -> BlobStore:
    """The store the settings name: ``HQ_BLOB_STORE=s3`` (with the bucket settings) or the
    folder (default)."""
    if settings.blob_backend == "s3":
        from inspector_app.hq.blobs_s3 import S3BlobStore

        if settings.s3 is None:
            raise ValueError("HQ_BLOB_STORE=s3 needs HQ_S3_BUCKET")
        return S3BlobStore(settings.s3)
    return FolderBlobStore(settings.blob_dir)
