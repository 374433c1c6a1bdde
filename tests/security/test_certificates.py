"""The device certificate: self-issued for the device key, kept beside it, never replaced."""

from __future__ import annotations

import datetime as dt

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from inspector_app.security.certificates import (
    DOCUMENT_SIGNING,
    CertificateFileError,
    certificate_matches_key,
    issue_self_signed_device_certificate,
    load_or_create_device_certificate,
)
from inspector_app.security.keys import DeviceKey

KEY = DeviceKey.generate()
OTHER_KEY = DeviceKey.generate()
DEVICE_ID = "3f2a9c41-7d0e-4b8a-9f11-0c5d2e6a7b90"
ISSUED_AT = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
ISSUE = {"device_id": DEVICE_ID, "organ": "SEMOB-DF", "demo": True, "now": ISSUED_AT}


def certificate(der: bytes) -> x509.Certificate:
    return x509.load_der_x509_certificate(der)


def name_values(name: x509.Name, oid: x509.ObjectIdentifier) -> list[str]:
    return [str(attribute.value) for attribute in name.get_attributes_for_oid(oid)]


def hq_issued_pem(key: DeviceKey) -> tuple[bytes, bytes]:
    """A certificate for ``key`` issued by a stand-in HQ CA: (device PEM + CA PEM, CA DER)."""
    ca_key = Ed25519PrivateKey.generate()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AC Fiscalização HQ")])
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(1)
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .sign(ca_key, algorithm=None)
    )
    device = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Dispositivo HQ")]))
        .issuer_name(ca_name)
        .public_key(Ed25519PublicKey.from_public_bytes(key.public_key_bytes()))
        .serial_number(2)
        .not_valid_before(start)
        .not_valid_after(start + dt.timedelta(days=365))
        .sign(ca_key, algorithm=None)
    )
    pem = device.public_bytes(serialization.Encoding.PEM) + ca.public_bytes(
        serialization.Encoding.PEM
    )
    return pem, ca.public_bytes(serialization.Encoding.DER)


def test_demo_certificate_names_the_device_the_organ_and_the_demonstration_unit():
    cert = certificate(issue_self_signed_device_certificate(KEY, **ISSUE))
    assert name_values(cert.subject, NameOID.COMMON_NAME) == ["Dispositivo de fiscalização 3f2a9c41"]
    assert name_values(cert.subject, NameOID.ORGANIZATION_NAME) == ["SEMOB-DF"]
    assert name_values(cert.subject, NameOID.ORGANIZATIONAL_UNIT_NAME) == ["DEMONSTRAÇÃO"]


def test_production_certificate_has_no_demonstration_unit():
    der = issue_self_signed_device_certificate(
        KEY, device_id=DEVICE_ID, organ="SMU Juiz de Fora", demo=False, now=ISSUED_AT
    )
    cert = certificate(der)
    assert name_values(cert.subject, NameOID.ORGANIZATIONAL_UNIT_NAME) == []
    assert name_values(cert.subject, NameOID.ORGANIZATION_NAME) == ["SMU Juiz de Fora"]


def test_certificate_is_self_signed_by_the_device_key():
    cert = certificate(issue_self_signed_device_certificate(KEY, **ISSUE))
    assert cert.issuer == cert.subject
    public_key = cert.public_key()
    assert isinstance(public_key, Ed25519PublicKey)
    public_key.verify(cert.signature, cert.tbs_certificate_bytes)  # raises if not
    assert certificate_matches_key(cert.public_bytes(serialization.Encoding.DER), KEY)


def test_certificate_allows_document_signing_and_nothing_else():
    cert = certificate(issue_self_signed_device_certificate(KEY, **ISSUE))
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical
    assert usage.value.digital_signature and usage.value.content_commitment  # nonRepudiation
    assert not (usage.value.key_cert_sign or usage.value.crl_sign or usage.value.key_encipherment)
    extended = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(extended) == [ExtendedKeyUsageOID.EMAIL_PROTECTION, DOCUMENT_SIGNING]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False


def test_certificate_carries_the_subject_key_identifier_of_the_device_key():
    cert = certificate(issue_self_signed_device_certificate(KEY, **ISSUE))
    identifier = cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    expected = x509.SubjectKeyIdentifier.from_public_key(
        Ed25519PublicKey.from_public_bytes(KEY.public_key_bytes())
    )
    assert identifier == expected


def test_validity_starts_a_day_before_issue_and_lasts_the_given_days():
    cert = certificate(issue_self_signed_device_certificate(KEY, **ISSUE, valid_days=30))
    assert cert.not_valid_before_utc == ISSUED_AT - dt.timedelta(days=1)
    assert cert.not_valid_after_utc == ISSUED_AT + dt.timedelta(days=30)


def test_same_key_and_issue_time_give_the_same_certificate_bytes():
    assert issue_self_signed_device_certificate(KEY, **ISSUE) == (
        issue_self_signed_device_certificate(KEY, **ISSUE)
    )
    later = {**ISSUE, "now": ISSUED_AT + dt.timedelta(seconds=1)}
    first, second = (
        certificate(issue_self_signed_device_certificate(KEY, **ISSUE)),
        certificate(issue_self_signed_device_certificate(KEY, **later)),
    )
    assert first.serial_number != second.serial_number


def test_certificate_matches_only_its_own_key():
    der = issue_self_signed_device_certificate(KEY, **ISSUE)
    assert certificate_matches_key(der, KEY)
    assert not certificate_matches_key(der, OTHER_KEY)


def test_garbage_is_not_a_certificate_for_any_key():
    assert not certificate_matches_key(b"not a certificate", KEY)
    assert not certificate_matches_key(b"", KEY)


def test_first_use_writes_a_pem_certificate_beside_the_key(tmp_path):
    path = tmp_path / "keys" / "device_certificate.pem"
    der = load_or_create_device_certificate(path, KEY, **ISSUE)
    assert path.read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")
    assert x509.load_pem_x509_certificate(path.read_bytes()).public_bytes(
        serialization.Encoding.DER
    ) == der
    assert certificate_matches_key(der, KEY)
    assert [p.name for p in path.parent.iterdir()] == ["device_certificate.pem"]  # no temp file


def test_later_uses_return_the_stored_certificate_unchanged(tmp_path):
    path = tmp_path / "device_certificate.pem"
    first = load_or_create_device_certificate(path, KEY, **ISSUE)
    content = path.read_bytes()
    again = load_or_create_device_certificate(
        path, KEY, device_id="ffffffff", organ="Outro órgão", demo=False
    )
    assert again == first
    assert path.read_bytes() == content


def test_a_certificate_for_another_key_is_refused_and_left_in_place(tmp_path):
    path = tmp_path / "device_certificate.pem"
    load_or_create_device_certificate(path, OTHER_KEY, **ISSUE)
    content = path.read_bytes()
    with pytest.raises(CertificateFileError, match="another key"):
        load_or_create_device_certificate(path, KEY, **ISSUE)
    assert path.read_bytes() == content


def test_a_corrupt_certificate_file_is_refused_and_left_in_place(tmp_path):
    path = tmp_path / "device_certificate.pem"
    path.write_bytes(b"-----BEGIN CERTIFICATE-----\nnot base64\n")
    with pytest.raises(CertificateFileError, match="not a PEM X"):
        load_or_create_device_certificate(path, KEY, **ISSUE)
    assert path.read_bytes() == b"-----BEGIN CERTIFICATE-----\nnot base64\n"


def test_an_hq_issued_certificate_dropped_at_the_path_replaces_the_demo_one(tmp_path):
    path = tmp_path / "device_certificate.pem"
    demo = load_or_create_device_certificate(path, KEY, **ISSUE)
    pem, _ca_der = hq_issued_pem(KEY)
    path.write_bytes(pem)
    der = load_or_create_device_certificate(path, KEY, **ISSUE)
    assert der != demo
    assert name_values(certificate(der).subject, NameOID.COMMON_NAME) == ["Dispositivo HQ"]
    assert certificate_matches_key(der, KEY)
