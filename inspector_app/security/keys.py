"""The device's Ed25519 key: created once, kept readable by the owner only, never replaced.

Every sealed record is signed with this key and HQ pins its public half at enrolment, so a
lost or regenerated key orphans every signature the device ever made. That is why a broken
or over-exposed key file is refused with an error instead of being "repaired".
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import stat
import uuid
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from inspector_app.fileio import fsync_folder

PUBLIC_KEY_LENGTH = 32
SIGNATURE_LENGTH = 64
KEY_FILE_MODE = 0o600
# Permission bits are only meaningful on POSIX; Windows reports 0o666 for every file.
_CHECK_MODE = os.name == "posix"


class KeyFileError(Exception):
    """The key file exists but cannot be trusted or read; the message names the path."""


def device_key_id_of(public_key: bytes) -> str:
    """The short id of a raw public key: first 16 hex characters of its SHA-256."""
    return hashlib.sha256(public_key).hexdigest()[:16]


class DeviceKey:
    """An Ed25519 private key with its public half and short id.

    Immutable; ``repr`` never shows key material. Build one with
    :func:`load_or_create_device_key`, or :meth:`generate` for a throwaway key in tests.
    """

    __slots__ = ("_private_key", "_public_raw", "device_key_id")

    _private_key: Ed25519PrivateKey
    _public_raw: bytes
    device_key_id: str

    def __init__(self, private_key: Ed25519PrivateKey) -> None:
        public_raw = private_key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        object.__setattr__(self, "_private_key", private_key)
        object.__setattr__(self, "_public_raw", public_raw)
        object.__setattr__(self, "device_key_id", device_key_id_of(public_raw))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"DeviceKey is immutable (cannot set {name!r})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"DeviceKey is immutable (cannot delete {name!r})")

    def __repr__(self) -> str:
        return f"DeviceKey(device_key_id={self.device_key_id!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceKey):
            return NotImplemented
        return self._public_raw == other._public_raw

    def __hash__(self) -> int:
        return hash(self._public_raw)

    @classmethod
    def generate(cls) -> DeviceKey:
        """A new random key held in memory only (nothing is written)."""
        return cls(Ed25519PrivateKey.generate())

    def public_key_bytes(self) -> bytes:
        """The raw 32-byte public key."""
        return self._public_raw

    def public_key_b64(self) -> str:
        """The raw public key in standard base64 (what enrolment sends to HQ)."""
        return base64.b64encode(self._public_raw).decode("ascii")

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``data``."""
        return self._private_key.sign(data)

    def private_key_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM (the key file's content)."""
        return self._private_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def verify_signature(public_key: bytes, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is a valid Ed25519 signature of ``data`` by ``public_key``.

    Any invalid input (wrong lengths, not bytes, a point that is not a key) gives False.
    """
    try:
        if len(signature) != SIGNATURE_LENGTH:
            return False
        Ed25519PublicKey.from_public_bytes(public_key).verify(signature, data)
    except (InvalidSignature, ValueError, TypeError, UnsupportedAlgorithm):
        return False
    return True


def load_or_create_device_key(path: Path) -> DeviceKey:
    """Load the device key from ``path``, creating it there on first start.

    A new key is written atomically with mode 0600 from the first byte. An existing file is
    never overwritten: when it is readable by group or others (POSIX), not a regular file,
    or not an Ed25519 PKCS#8 PEM key, :class:`KeyFileError` is raised and the file is left
    as it is for a person to look at.
    """
    path = Path(path)
    try:
        return _load_device_key(path)
    except FileNotFoundError:
        pass
    key = DeviceKey.generate()
    if write_new_file(path, key.private_key_pem(), mode=KEY_FILE_MODE):
        return key
    # Another process created the file between our look and our write: use its key.
    return _load_device_key(path)


def _load_device_key(path: Path) -> DeviceKey:
    """Raises FileNotFoundError when there is no file, KeyFileError when it is unusable."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise KeyFileError(f"Cannot open device key file {path}: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise KeyFileError(f"Device key file {path} is not a regular file; refusing to use it.")
        if _CHECK_MODE and info.st_mode & 0o077:
            raise KeyFileError(
                f"Device key file {path} is readable by other users "
                f"(mode {stat.S_IMODE(info.st_mode):04o}); refusing to use it. "
                f"Restrict it with `chmod 600 {path}` if the key has not leaked, "
                "otherwise ask HQ to revoke this device and enrol it again."
            )
        with os.fdopen(fd, "rb", closefd=False) as handle:
            pem = handle.read()
    finally:
        os.close(fd)
    try:
        private_key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(
            f"Device key file {path} is corrupt or not an unencrypted PEM private key; "
            "refusing to replace it (that would orphan every signature made with it). "
            "Restore it from a backup or ask HQ to enrol this device again."
        ) from exc
    if not isinstance(private_key, Ed25519PrivateKey):
        raise KeyFileError(
            f"Device key file {path} holds a {type(private_key).__name__}, not an Ed25519 key; "
            "refusing to use or replace it."
        )
    return DeviceKey(private_key)


def write_new_file(path: Path, content: bytes, *, mode: int) -> bool:
    """Write ``content`` to ``path`` atomically with ``mode``; False if ``path`` existed.

    Temp file created with ``mode`` from the start, fsync, published with a hard link (never
    overwriting a file another process created meanwhile), folder fsynced.
    """
    folder = path.parent
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = folder / f".{path.name}.{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags, mode)
    try:
        try:
            if _CHECK_MODE:
                os.fchmod(fd, mode)  # the umask could only narrow it; be exact
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        created = _publish_without_overwriting(temporary, path)
        fsync_folder(folder)
        return created
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def _publish_without_overwriting(temporary: Path, path: Path) -> bool:
    # os.replace alone would silently clobber a key another process created after our
    # existence check; a hard link is atomic and fails if the name is taken.
    try:
        os.link(temporary, path)
    except FileExistsError:
        return False
    except OSError:
        # File systems without hard links: fall back to replace, re-checking the name first.
        if path.exists():
            return False
        os.replace(temporary, path)
    return True
