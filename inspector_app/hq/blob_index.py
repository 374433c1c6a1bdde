"""Which files HQ has: one row per verified file in the database (``blob_index``).

An object store answers "is this file here?" with one round trip per file (a HEAD); a device
asking about a thousand photos, or a batch of autos naming them, would wait on a thousand of
them. So HQ keeps its own list, written in the database after a file is verified and
stored, and asks the list instead:

- ``POST /blobs/missing``, ``HEAD /blobs/{sha256}``, the quota check of a PUT and the
  ingest's check that every file a record names is here (:func:`missing`, :func:`size`) read
  it with one query per request or per push batch;
- ``PUT /blobs/{sha256}`` and ``POST /blobs/bundle`` write it (:func:`note`) for every file
  that is visible after the request, stored now or found there already;
- ``inspector-hq blobs prune`` removes a file's row with the file;
- ``inspector-hq blobs reindex`` lists the store and makes the list equal to it (after
  restoring a bucket, or upgrading an HQ whose files predate the list).

A row is written only after the store made the file visible, so the list never names a file
that is not there (the guarantee devices rely on: a file HQ says it has, it has). The other
way round – a file in the store without its row, if HQ stopped between the two – heals by
itself: the list says "missing", the device sends the file again, the store's conditional
write finds it there ("present"), and its row is written.

For a store whose own check is a local ``stat`` (the folder) the list is only the fast path:
a hash it does not name is looked up in the store, and written when found. For an object
store (``BlobStore.index_authoritative``) the list is the answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, Engine, delete, select
from sqlalchemy.dialects import postgresql, sqlite

from inspector_app.hq.blobs import BlobStore
from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import blob_index

_CHUNK = 1000  # hashes per IN (…) query


def _indexed(conn: Connection, hashes: Sequence[str]) -> dict[str, int | None]:
    found: dict[str, int | None] = {}
    for start in range(0, len(hashes), _CHUNK):
        rows = conn.execute(select(blob_index.c.sha256, blob_index.c.size).where(
            blob_index.c.sha256.in_(hashes[start:start + _CHUNK])))
        found.update({row.sha256: row.size for row in rows})
    return found


def _insert(conn: Connection, rows: list[dict[str, object]]) -> None:
    if not rows:
        return
    dialect = postgresql if conn.dialect.name == "postgresql" else sqlite
    conn.execute(dialect.insert(blob_index).on_conflict_do_nothing(), rows)


def _rows(files: Iterable[tuple[str, int | None]]) -> list[dict[str, object]]:
    now = utc_now()
    return [{"sha256": sha, "size": size, "stored_at": now} for sha, size in dict(files).items()]


class Presence:
    """One request's (or one push batch's) view of which files HQ has: asked once for the
    hashes given to :meth:`load`, then answered from memory."""

    def __init__(self, conn: Connection, blobs: BlobStore) -> None:
        self.conn = conn
        self.blobs = blobs
        self.present: set[str] = set()
        self.asked: set[str] = set()

    def load(self, hashes: Iterable[str]) -> None:
        new = [sha for sha in dict.fromkeys(hashes) if sha not in self.asked]
        if not new:
            return
        self.asked.update(new)
        found = _indexed(self.conn, new)
        self.present.update(found)
        rest = [sha for sha in new if sha not in found]
        if rest and not self.blobs.index_authoritative:
            there = set(rest) - set(self.blobs.missing(rest))
            if there:
                # Files in the folder from before the list existed: written on the way.
                _insert(self.conn, _rows((sha, self.blobs.size(sha)) for sha in there))
                self.present.update(there)

    def missing(self, hashes: Iterable[str]) -> list[str]:
        """The hashes of ``hashes`` HQ lacks, in order, without repeats."""
        wanted = list(dict.fromkeys(hashes))
        self.load(wanted)
        return [sha for sha in wanted if sha not in self.present]


def missing(engine: Engine, blobs: BlobStore, hashes: Iterable[str]) -> list[str]:
    """The hashes of ``hashes`` HQ lacks, in order, without repeats (``/blobs/missing``)."""
    with engine.begin() as conn:
        return Presence(conn, blobs).missing(hashes)


def size(engine: Engine, blobs: BlobStore, sha256: str) -> int | None:
    """The stored file's size, or None when HQ does not have it (``HEAD /blobs/…``)."""
    with engine.begin() as conn:
        found = _indexed(conn, [sha256])
        if sha256 in found:
            known = found[sha256]
            return known if known is not None else blobs.size(sha256)
        if blobs.index_authoritative:
            return None
        there = blobs.size(sha256)
        if there is not None:
            _insert(conn, _rows([(sha256, there)]))
        return there


def note(engine: Engine, files: Iterable[tuple[str, int | None]]) -> None:
    """Write ``files`` (sha256, size) as stored: call only once the store made them visible."""
    rows = _rows(files)
    if rows:
        with engine.begin() as conn:
            _insert(conn, rows)


def forget(conn: Connection, hashes: Sequence[str]) -> None:
    """Remove the rows of files deleted from the store (``blobs prune``)."""
    for start in range(0, len(hashes), _CHUNK):
        conn.execute(delete(blob_index).where(
            blob_index.c.sha256.in_(hashes[start:start + _CHUNK])))


def reindex(engine: Engine, blobs: BlobStore, *, batch: int = _CHUNK) -> tuple[int, int, int]:
    """Make the list equal to the store: list the store, write the rows it lacks and remove
    the rows of files it does not hold (a bucket restored from a copy older than the
    database). ``(files listed, rows written, rows removed)``. The listing costs one request
    per thousand files on an object store; the listed hashes are held in memory (about
    100 MB per million files)."""
    listed: set[str] = set()
    written = 0
    pending: list[tuple[str, int]] = []

    def flush() -> int:
        with engine.begin() as conn:
            known = _indexed(conn, [sha for sha, _ in pending])
            rows = _rows((sha, n) for sha, n in pending if sha not in known)
            _insert(conn, rows)
        pending.clear()
        return len(rows)

    for sha, nbytes in blobs.listing():
        listed.add(sha)
        pending.append((sha, nbytes))
        if len(pending) >= batch:
            written += flush()
    if pending:
        written += flush()
    removed = 0
    with engine.begin() as conn:
        gone = [sha for sha in conn.execute(select(blob_index.c.sha256)).scalars()
                if sha not in listed]
        forget(conn, gone)
        removed = len(gone)
    return len(listed), written, removed
