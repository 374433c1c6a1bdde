"""The device's Ed25519 key file: created once with mode 0600, reloaded, never replaced."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from inspector_app.security.keys import (
    DeviceKey,
    KeyFileError,
    load_or_create_device_key,
    verify_signature,
)

posix_only = pytest.mark.skipif(os.name != "posix", reason="permission bits are POSIX")


def flip_bit(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 0x01]) + data[index + 1 :]


@posix_only
def test_first_start_creates_the_key_readable_by_the_owner_only(tmp_path):
    path = tmp_path / "keys" / "device.pem"
    key = load_or_create_device_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    assert len(key.public_key_bytes()) == 32


def test_first_start_leaves_no_temporary_file_behind(tmp_path):
    load_or_create_device_key(tmp_path / "device.pem")
    assert [p.name for p in tmp_path.iterdir()] == ["device.pem"]


@posix_only
def test_key_is_created_with_mode_0600_even_under_a_permissive_umask(tmp_path):
    previous = os.umask(0)
    try:
        load_or_create_device_key(tmp_path / "device.pem")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "device.pem").stat().st_mode) == 0o600


def test_later_starts_load_the_same_key(tmp_path):
    path = tmp_path / "device.pem"
    first = load_or_create_device_key(path)
    content = path.read_bytes()
    second = load_or_create_device_key(path)
    assert second.public_key_bytes() == first.public_key_bytes()
    assert second.device_key_id == first.device_key_id
    assert path.read_bytes() == content


def test_device_key_id_is_the_first_16_hex_of_the_public_key_sha256(tmp_path):
    key = load_or_create_device_key(tmp_path / "device.pem")
    assert key.device_key_id == hashlib.sha256(key.public_key_bytes()).hexdigest()[:16]
    assert len(key.device_key_id) == 16


def test_public_key_base64_decodes_to_the_raw_public_key():
    key = DeviceKey.generate()
    assert base64.b64decode(key.public_key_b64()) == key.public_key_bytes()


def test_repr_shows_the_key_id_and_no_key_material():
    key = DeviceKey.generate()
    assert repr(key) == f"DeviceKey(device_key_id={key.device_key_id!r})"


def test_device_key_cannot_be_modified():
    key = DeviceKey.generate()
    with pytest.raises(AttributeError):
        key.device_key_id = "0" * 16


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o666])
def test_key_file_readable_by_group_or_others_is_refused_and_left_alone(tmp_path, mode):
    path = tmp_path / "device.pem"
    load_or_create_device_key(path)
    content = path.read_bytes()
    path.chmod(mode)
    with pytest.raises(KeyFileError, match=str(path)) as info:
        load_or_create_device_key(path)
    assert "readable by other users" in str(info.value)
    assert path.read_bytes() == content
    assert stat.S_IMODE(path.stat().st_mode) == mode


def make_ec_pem() -> bytes:
    return generate_private_key(SECP256R1()).private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_encrypted_pem() -> bytes:
    return Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"secret"),
    )


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"not a key at all\n", id="garbage"),
        pytest.param(
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", id="truncated"
        ),
        pytest.param(make_ec_pem(), id="not-ed25519"),
        pytest.param(make_encrypted_pem(), id="encrypted"),
    ],
)
def test_corrupt_key_file_is_refused_and_not_overwritten(tmp_path, content):
    path = tmp_path / "device.pem"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(content)
    with pytest.raises(KeyFileError, match=str(path)):
        load_or_create_device_key(path)
    assert path.read_bytes() == content


def test_half_written_key_file_is_refused_and_not_overwritten(tmp_path):
    path = tmp_path / "device.pem"
    load_or_create_device_key(path)
    content = path.read_bytes()[:60]
    path.write_bytes(content)
    with pytest.raises(KeyFileError, match="corrupt"):
        load_or_create_device_key(path)
    assert path.read_bytes() == content


def test_a_folder_in_place_of_the_key_file_is_refused(tmp_path):
    path = tmp_path / "device.pem"
    path.mkdir(mode=0o700)
    with pytest.raises(KeyFileError, match=str(path)):
        load_or_create_device_key(path)
    assert path.is_dir()


@posix_only
def test_a_symlink_in_place_of_the_key_file_is_refused(tmp_path):
    target = tmp_path / "elsewhere.pem"
    load_or_create_device_key(target)
    link = tmp_path / "device.pem"
    link.symlink_to(target)
    with pytest.raises(KeyFileError, match=str(link)):
        load_or_create_device_key(link)


def test_signature_verifies_with_the_public_key():
    key = DeviceKey.generate()
    data = b"auto de infra\xc3\xa7\xc3\xa3o 000123"
    signature = key.sign(data)
    assert len(signature) == 64
    assert verify_signature(key.public_key_bytes(), data, signature)


def test_signature_made_by_a_reloaded_key_verifies_with_the_first_public_key(tmp_path):
    path = tmp_path / "device.pem"
    public_key = load_or_create_device_key(path).public_key_bytes()
    signature = load_or_create_device_key(path).sign(b"record")
    assert verify_signature(public_key, b"record", signature)


@pytest.mark.parametrize("bit", [0, 7, 100, 255])
def test_one_flipped_bit_in_the_data_fails_verification(bit):
    key = DeviceKey.generate()
    data = bytes(range(32))
    signature = key.sign(data)
    assert not verify_signature(key.public_key_bytes(), flip_bit(data, bit // 8), signature)


@pytest.mark.parametrize("index", [0, 31, 32, 63])
def test_one_flipped_bit_in_the_signature_fails_verification(index):
    key = DeviceKey.generate()
    signature = key.sign(b"record")
    assert not verify_signature(key.public_key_bytes(), b"record", flip_bit(signature, index))


def test_signature_by_another_device_fails_verification():
    signature = DeviceKey.generate().sign(b"record")
    assert not verify_signature(DeviceKey.generate().public_key_bytes(), b"record", signature)


@pytest.mark.parametrize(
    ("public_key", "signature"),
    [
        pytest.param(b"", b"\x00" * 64, id="empty-key"),
        pytest.param(b"\x00" * 31, b"\x00" * 64, id="short-key"),
        pytest.param(b"\x00" * 33, b"\x00" * 64, id="long-key"),
        pytest.param("not bytes", b"\x00" * 64, id="key-not-bytes"),
        pytest.param(None, b"\x00" * 64, id="key-none"),
        pytest.param(b"\x01" * 32, b"", id="empty-signature"),
        pytest.param(b"\x01" * 32, b"\x00" * 63, id="short-signature"),
        pytest.param(b"\x01" * 32, None, id="signature-none"),
    ],
)
def test_invalid_input_to_verify_gives_false_without_raising(public_key, signature):
    assert verify_signature(public_key, b"record", signature) is False


def test_creating_the_key_in_a_missing_folder_creates_the_folder(tmp_path):
    path = tmp_path / "a" / "b" / "device.pem"
    load_or_create_device_key(path)
    assert path.is_file()


def test_processes_starting_together_all_end_with_the_one_key_on_disk(tmp_path):
    # Threads stand in for two app instances started at once: whoever loses the race to
    # create the file must adopt the winner's key, never replace it.
    path = tmp_path / "device.pem"
    barrier = threading.Barrier(8)

    def start() -> bytes:
        barrier.wait()
        return load_or_create_device_key(path).public_key_bytes()

    with ThreadPoolExecutor(max_workers=8) as pool:
        public_keys = set(pool.map(lambda _: start(), range(8)))
    assert public_keys == {load_or_create_device_key(path).public_key_bytes()}
    assert [p.name for p in tmp_path.iterdir()] == ["device.pem"]
