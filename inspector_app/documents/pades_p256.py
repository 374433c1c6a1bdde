"""A P-256 (ECDSA, SHA-256) PAdES signature for readers without EdDSA.

The device's Ed25519 signature (:mod:`.pades`) is ISO/TS 32002; Adobe Acrobat and
poppler's ``pdfsig`` (22.12 here) do not know EdDSA and report the file as unsigned or the
signature as unsupported. When the setting ``document_signature`` is ``"p256"`` the PDFs
are signed instead with a P-256 document-signing key kept next to the store
(``document_signing_p256.pem``, created on first use, owner-only) and its self-issued
certificate (``document_signing_p256.crt``), which names the same device. The sealed
record itself stays signed with the Ed25519 device key: the P-256 signature only protects
the PDF file.
"""

from __future__ import annotations

import datetime as dt
import io
import os
from pathlib import Path

from asn1crypto import x509 as asn1_x509
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID, ObjectIdentifier
from pyhanko.keys import load_private_key_from_pemder_data
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.sign import signers
from pyhanko.sign.fields import SigSeedSubFilter
from pyhanko_certvalidator.registry import SimpleCertificateStore

from .pades import DEFAULT_REASON, SIGNATURE_FIELD, _PdfSignerAt

KEY_FILE = "document_signing_p256.pem"
CERT_FILE = "document_signing_p256.crt"
SIGNATURES = ("ed25519", "p256")
DOCUMENT_SIGNING = ObjectIdentifier("1.3.6.1.4.1.311.10.3.12")


def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_or_create_p256(data_dir: Path, *, device_id: str, organ: str, demo: bool,
                        now: dt.datetime | None = None) -> tuple[bytes, bytes]:
    """(private key PEM, certificate DER) of the device's P-256 document-signing key."""
    key_path, cert_path = Path(data_dir) / KEY_FILE, Path(data_dir) / CERT_FILE
    if key_path.exists():
        key_pem = key_path.read_bytes()
        key = serialization.load_pem_private_key(key_pem, password=None)
    else:
        key = ec.generate_private_key(ec.SECP256R1())
        key_pem = key.private_bytes(serialization.Encoding.PEM,
                                    serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption())
        _write_private(key_path, key_pem)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{key_path} is not an EC private key")
    if cert_path.exists():
        cert = x509.load_der_x509_certificate(cert_path.read_bytes())
        if cert.public_key() == key.public_key():
            return key_pem, cert_path.read_bytes()
    issued = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME,
                                f"Dispositivo de fiscalização {device_id[:8]} (P-256)"),
             x509.NameAttribute(NameOID.ORGANIZATION_NAME, organ)]
    if demo:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "DEMONSTRAÇÃO"))
    name = x509.Name(attrs)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(issued - dt.timedelta(days=1))
        .not_valid_after(issued + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=True,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=False, crl_sign=False,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.EMAIL_PROTECTION,
                                              DOCUMENT_SIGNING]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    der = cert.public_bytes(serialization.Encoding.DER)
    cert_path.write_bytes(der)
    return key_pem, der


def sign_pdf_p256(pdf: bytes, *, key_pem: bytes, certificate_der: bytes,
                  reason: str = DEFAULT_REASON, location: str = "",
                  signed_at: dt.datetime | None = None) -> bytes:
    """``pdf`` with an invisible PAdES B-B signature (ECDSA P-256, SHA-256)."""
    if signed_at is None:
        signed_at = dt.datetime.now(dt.UTC)
    signer = signers.SimpleSigner(
        signing_cert=asn1_x509.Certificate.load(certificate_der),
        signing_key=load_private_key_from_pemder_data(key_pem, passphrase=None),
        cert_registry=SimpleCertificateStore(),  # type: ignore[no-untyped-call]
    )
    metadata = signers.PdfSignatureMetadata(
        field_name=SIGNATURE_FIELD, subfilter=SigSeedSubFilter.PADES, md_algorithm="sha256",
        reason=reason, location=location or None)
    size = len(certificate_der) + 2048
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    out = _PdfSignerAt(metadata, signer, signed_at=signed_at).sign_pdf(
        writer, bytes_reserved=size + size % 2)
    return bytes(out.getvalue())
