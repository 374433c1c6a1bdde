"""The device's X.509 certificate: binds the device key to a name so PDF readers can show it.

In demo mode the device issues it to itself (OU "DEMONSTRAÇÃO"); once sync exists HQ issues
one for the same key and it is dropped at the same path. Either way the certificate must
carry the device's own Ed25519 public key: a file that holds another key is refused with an
error, never replaced, because every PDF the device signed names that certificate.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .keys import DeviceKey, write_new_file

DEMO_UNIT = "DEMONSTRAÇÃO"
CERTIFICATE_FILE_MODE = 0o644
# id-kp-documentSigning (RFC 9336); not every cryptography release names it, so spell it out.
DOCUMENT_SIGNING = x509.ObjectIdentifier("1.3.6.1.5.5.7.3.36")
# Device clocks drift and get corrected; a certificate that starts exactly "now" would make a
# PDF signed right after a backwards correction look signed before the certificate existed.
_BACKDATE = dt.timedelta(days=1)


class CertificateFileError(Exception):
    """The certificate file exists but cannot be used with this device key; names the path."""


def issue_self_signed_device_certificate(
    key: DeviceKey,
    *,
    device_id: str,
    organ: str,
    demo: bool,
    valid_days: int = 3650,
    now: dt.datetime | None = None,
) -> bytes:
    """A DER X.509 certificate for the device's Ed25519 key, signed by that same key.

    Subject and issuer: CN "Dispositivo de fiscalização <first 8 of device_id>", O ``organ``,
    OU "DEMONSTRAÇÃO" when ``demo``. Key usage digitalSignature + nonRepudiation (pyHanko's
    default signer policy requires nonRepudiation), extended key usage emailProtection +
    documentSigning, subject key identifier. Not a CA.

    Deterministic for a given ``now``: the serial number is derived from the public key, the
    device id and the issue time, and Ed25519 signatures carry no randomness.
    """
    issued_at = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).replace(microsecond=0)
    public_key = Ed25519PublicKey.from_public_bytes(key.public_key_bytes())
    attributes = [
        x509.NameAttribute(NameOID.COMMON_NAME, f"Dispositivo de fiscalização {device_id[:8]}"),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, organ),
    ]
    if demo:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, DEMO_UNIT))
    name = x509.Name(attributes)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public_key)
        .serial_number(_serial_number(key, device_id, issued_at))
        .not_valid_before(issued_at - _BACKDATE)
        .not_valid_after(issued_at + dt.timedelta(days=valid_days))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=True,  # = nonRepudiation
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=False,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(
            x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION, DOCUMENT_SIGNING]),
            critical=False,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        .sign(_private_key(key), algorithm=None)  # Ed25519 hashes internally
    )
    return certificate.public_bytes(serialization.Encoding.DER)


def certificate_matches_key(cert_der: bytes, key: DeviceKey) -> bool:
    """Whether ``cert_der`` is a DER certificate for exactly this device's public key.

    Anything that is not a parseable certificate, or holds a non-Ed25519 key, gives False.
    """
    try:
        certificate = x509.load_der_x509_certificate(cert_der)
        public_key = certificate.public_key()
    except (ValueError, TypeError):
        return False
    if not isinstance(public_key, Ed25519PublicKey):
        return False
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return raw == key.public_key_bytes()


def load_or_create_device_certificate(
    path: Path,
    key: DeviceKey,
    *,
    device_id: str,
    organ: str,
    demo: bool,
    valid_days: int = 3650,
    now: dt.datetime | None = None,
) -> bytes:
    """The device certificate (DER) from the PEM file at ``path``, issuing one on first use.

    A new self-signed certificate (see :func:`issue_self_signed_device_certificate`) is
    written atomically. An existing file is used as it is (the issuing arguments are then
    ignored), so an HQ-issued certificate dropped at ``path`` takes over; when the file's
    first certificate does not hold ``key``'s public key, or the file is not a PEM
    certificate, :class:`CertificateFileError` is raised and the file is left alone.
    """
    path = Path(path)
    try:
        return _load_certificate_for(path, key)
    except FileNotFoundError:
        pass
    der = issue_self_signed_device_certificate(
        key, device_id=device_id, organ=organ, demo=demo, valid_days=valid_days, now=now
    )
    pem = x509.load_der_x509_certificate(der).public_bytes(serialization.Encoding.PEM)
    if write_new_file(path, pem, mode=CERTIFICATE_FILE_MODE):
        return der
    # Another process wrote a certificate between our look and our write: use (check) it.
    return _load_certificate_for(path, key)


def _load_certificate_for(path: Path, key: DeviceKey) -> bytes:
    """Raises FileNotFoundError when there is no file, CertificateFileError when unusable."""
    try:
        content = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CertificateFileError(
            f"Cannot read device certificate {path}: {exc.strerror or exc}"
        ) from exc
    try:
        # An HQ-issued file may carry the issuing chain after the device certificate.
        certificate = x509.load_pem_x509_certificates(content)[0]
    except (ValueError, IndexError) as exc:
        raise CertificateFileError(
            f"Device certificate {path} is not a PEM X.509 certificate; refusing to replace "
            "it. Restore it, or remove it to let the device issue a new demonstration one."
        ) from exc
    der = certificate.public_bytes(serialization.Encoding.DER)
    if not certificate_matches_key(der, key):
        raise CertificateFileError(
            f"Device certificate {path} was issued for another key, not this device's "
            f"(key id {key.device_key_id}); refusing to sign with it or replace it. "
            "Install the certificate HQ issued for this device."
        )
    return der


def _private_key(key: DeviceKey) -> Ed25519PrivateKey:
    private_key = serialization.load_pem_private_key(key.private_key_pem(), password=None)
    assert isinstance(private_key, Ed25519PrivateKey)  # DeviceKey only ever holds Ed25519
    return private_key


def _serial_number(key: DeviceKey, device_id: str, issued_at: dt.datetime) -> int:
    seed = b"|".join(
        [key.public_key_bytes(), device_id.encode("utf-8"), issued_at.isoformat().encode()]
    )
    # RFC 5280: positive, at most 20 octets; 159 bits keeps the top bit clear.
    return int.from_bytes(hashlib.sha256(seed).digest()[:20], "big") >> 1 or 1


