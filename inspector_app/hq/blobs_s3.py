"""The blob store in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW), through boto3.

Objects are named ``<prefix>ab/abcdef…`` by the file's SHA-256, as in the folder store. The
bytes of an upload wait in a local temporary file (``staging_dir``) while they are hashed;
only a verified file is sent, with ``If-None-Match: *`` so that an object already in the
bucket is never rewritten (two HQ instances storing the same file at once: one writes, the
other is told it is there), and with its SHA-256 as the request's checksum so that the
object store itself refuses bytes damaged on the way. A PUT is atomic in S3: an interrupted
upload leaves nothing visible. Every HQ instance may use the same bucket at once.

boto3 is imported only when this store is chosen (``HQ_BLOB_STORE=s3``); it is in the
``s3`` extra (``pip install 'inspector-app[s3]'``).
"""

from __future__ import annotations

import base64
import contextlib
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from inspector_app.hq.blobs import _SHA256, BlobStore, _Part, check_sha256
from inspector_app.hq.core.config import S3Settings

_THREADS = 32  # concurrent requests to the object store (HEAD for "missing", PUT per bundle)


class S3BlobStore(BlobStore):
    # A HEAD per file is a round trip: HQ's list of stored files answers instead.
    index_authoritative = True

    def __init__(self, settings: S3Settings, *, client: Any = None) -> None:
        self.settings = settings
        self.bucket = settings.bucket
        self.prefix = settings.prefix
        self.staging = Path(settings.staging_dir)
        where = f" em {settings.endpoint_url}" if settings.endpoint_url else ""
        self.description = f"bucket S3 {self.bucket}/{self.prefix}{where}"
        self.client = client if client is not None else _client(settings)

    def _key(self, sha256: str) -> str:
        check_sha256(sha256)
        return f"{self.prefix}{sha256[:2]}/{sha256}"

    # --- what HQ asks -------------------------------------------------------------------

    def size(self, sha256: str) -> int | None:
        from botocore.exceptions import ClientError

        try:
            head = self.client.head_object(Bucket=self.bucket, Key=self._key(sha256))
        except ClientError as exc:
            if _status(exc) == 404:
                return None
            raise OSError(f"object store: HEAD {sha256[:12]}: {_code(exc)}") from exc
        return int(head["ContentLength"])

    def missing(self, hashes: Iterable[str]) -> list[str]:
        unique = list(dict.fromkeys(hashes))
        if len(unique) < 2:
            return [sha for sha in unique if not self.has(sha)]
        with ThreadPoolExecutor(min(_THREADS, len(unique))) as pool:
            present = list(pool.map(self.has, unique))
        return [sha for sha, here in zip(unique, present, strict=True) if not here]

    def read(self, sha256: str) -> bytes:
        from botocore.exceptions import ClientError

        try:
            answer = self.client.get_object(Bucket=self.bucket, Key=self._key(sha256))
        except ClientError as exc:
            if _status(exc) == 404:
                raise FileNotFoundError(sha256) from None
            raise OSError(f"object store: GET {sha256[:12]}: {_code(exc)}") from exc
        body: bytes = answer["Body"].read()
        return body

    def hashes(self) -> Iterator[str]:
        for sha, _size in self.listing():
            yield sha

    def listing(self) -> Iterator[tuple[str, int]]:
        pages = self.client.get_paginator("list_objects_v2").paginate(
            Bucket=self.bucket, Prefix=self.prefix)
        for page in pages:
            for item in page.get("Contents", []):
                name = item["Key"].rsplit("/", 1)[-1]
                if _SHA256.fullmatch(name):
                    yield name, int(item["Size"])

    def partial_uploads(self) -> int:
        local = len(list(self.staging.glob(".upload-*"))) if self.staging.is_dir() else 0
        answer = self.client.list_multipart_uploads(Bucket=self.bucket, Prefix=self.prefix)
        return local + len(answer.get("Uploads", []))

    def check(self) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError as exc:
            raise OSError(f"bucket {self.bucket} inacessível: {_code(exc)}") from exc
        except BotoCoreError as exc:
            raise OSError(f"armazenamento S3 inacessível: {exc}") from exc
        self.staging.mkdir(parents=True, exist_ok=True)

    def delete(self, sha256: str) -> None:
        self.client.delete_object(Bucket=self.bucket, Key=self._key(sha256))

    def clear(self) -> None:
        keys = [{"Key": f"{self.prefix}{sha[:2]}/{sha}"} for sha in self.hashes()]
        for start in range(0, len(keys), 1000):
            self.client.delete_objects(Bucket=self.bucket,
                                       Delete={"Objects": keys[start:start + 1000]})

    # --- storing ------------------------------------------------------------------------

    def _staging_dir(self, sha256: str) -> Path:
        return self.staging

    def _publish(self, sha256: str, tmp_name: str) -> bool:
        with open(tmp_name, "rb") as body:
            return self._send(sha256, body, os.fstat(body.fileno()).st_size)

    def _send(self, sha256: str, body: Any, size: int) -> bool:
        """PUT the verified bytes unless the object exists; False if it did."""
        from botocore.exceptions import ClientError

        try:
            self.client.put_object(
                Bucket=self.bucket, Key=self._key(sha256), Body=body, ContentLength=size,
                ContentType="application/octet-stream", IfNoneMatch="*",
                ChecksumSHA256=base64.b64encode(bytes.fromhex(sha256)).decode("ascii"))
        except ClientError as exc:
            # 412: it is there already. 409: another writer is storing it at this moment;
            # named by its hash, what it stores is the same bytes.
            if _status(exc) in (412, 409):
                return False
            raise OSError(f"object store: PUT {sha256[:12]}: {_code(exc)}") from exc
        return True

    async def _has_async(self, sha256: str) -> bool:
        # Not asked per part while a bundle streams (a round trip each): the device sends
        # only what /blobs/missing named, and the conditional PUT at the end tells a file
        # that is there already (answered "present").
        return False

    def _commit(self, parts: list[_Part]) -> set[str]:
        def upload(part: _Part) -> bool:
            try:
                if part.tmp is None:
                    return self._send(part.sha256, bytes(part.memory or b""), part.size)
                return self._publish(part.sha256, part.tmp)
            finally:
                if part.tmp is not None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(part.tmp)

        with ThreadPoolExecutor(min(_THREADS, len(parts))) as pool:
            created = list(pool.map(upload, parts))
        return {part.sha256 for part, new in zip(parts, created, strict=True) if not new}


def _client(settings: S3Settings) -> Any:
    import boto3
    from botocore.config import Config

    config = Config(
        retries={"max_attempts": 5, "mode": "standard"},
        max_pool_connections=_THREADS * 2,
        connect_timeout=5, read_timeout=60,
        # Path-style URLs work with every S3-compatible server (MinIO, Ceph) and with AWS.
        s3={"addressing_style": "path"} if settings.endpoint_url else None,
        # Checksums only where asked: the SHA-256 sent with every PUT is the one that
        # matters, and older S3-compatible servers refuse the newer default trailers.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return boto3.session.Session().client(
        "s3", endpoint_url=settings.endpoint_url, region_name=settings.region,
        aws_access_key_id=settings.access_key_id,
        aws_secret_access_key=settings.secret_access_key, config=config)


def _status(exc: Any) -> int:
    return int(exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def _code(exc: Any) -> str:
    error = exc.response.get("Error", {})
    return f"{error.get('Code', '?')} (HTTP {_status(exc)})"
