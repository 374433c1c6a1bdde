"""PAdES B-B signatures of the device's PDFs: valid when untouched, caught when altered."""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import re

import pytest
from asn1crypto import cms, parser
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.x509.oid import NameOID
from pyhanko.pdf_utils import generic
from pyhanko.pdf_utils.generic import pdf_name, pdf_string
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pypdf import PdfReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from inspector_app.documents.pades import SIGNATURE_FIELD, sign_pdf, validate_pdf_signature
from inspector_app.paths import resource_path
from inspector_app.security.certificates import issue_self_signed_device_certificate
from inspector_app.security.keys import DeviceKey

BRASILIA = dt.timezone(dt.timedelta(hours=-3))
SIGNED_AT = dt.datetime(2026, 4, 14, 10, 30, tzinfo=BRASILIA)
ISSUED_AT = dt.datetime(2026, 1, 5, 12, 0, tzinfo=dt.UTC)
TITLE = b"AUTO-TESTE-0001"


class Device:
    def __init__(self, device_id: str, *, valid_days: int = 3650) -> None:
        self.key = DeviceKey.generate()
        self.certificate = issue_self_signed_device_certificate(
            self.key, device_id=device_id, organ="SEMOB-DF", demo=True,
            valid_days=valid_days, now=ISSUED_AT,
        )

    def sign(self, pdf: bytes, **kwargs: object) -> bytes:
        return sign_pdf(pdf, key=self.key, certificate_der=self.certificate,
                        signed_at=SIGNED_AT, **kwargs)


@pytest.fixture(scope="module")
def device() -> Device:
    return Device("3f2a9c41-7d0e-4b8a-9f11-0c5d2e6a7b90")


@pytest.fixture(scope="module")
def reportlab_pdf() -> bytes:
    """A two-page reportlab PDF with the shipped DejaVu font and uncompressed content."""
    pdfmetrics.registerFont(TTFont("DejaVuSans", str(resource_path("fonts", "DejaVuSans.ttf"))))
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, invariant=1, pageCompression=0)
    page.setTitle(TITLE.decode())
    page.setFont("DejaVuSans", 11)
    page.drawString(72, 760, "Auto de infração n.º DF-A 000123 – 1ª via – autuado")
    page.drawString(72, 740, "Condutor recusou-se a assinar; retenção no pátio da SEMOB.")
    page.rect(72, 600, 100, 50)
    page.showPage()
    page.setFont("DejaVuSans", 11)
    page.drawString(72, 760, "Prazos: defesa prévia até 14/05/2026 – JARI")
    page.showPage()
    page.save()
    return buffer.getvalue()


@pytest.fixture(scope="module")
def signed(device: Device, reportlab_pdf: bytes) -> bytes:
    return device.sign(reportlab_pdf, location="Terminal Rodoviário de Ceilândia")


def change_byte(data: bytes, old: bytes, new: bytes) -> bytes:
    """``data`` with the single occurrence of ``old`` replaced by ``new`` (same length)."""
    assert len(old) == len(new) and data.count(old) == 1
    return data.replace(old, new)


def contents_span(pdf: bytes) -> tuple[int, int]:
    """Offsets of the hex digits of the signature container (/Contents <...>)."""
    match = re.search(rb"/Contents\s*<([0-9a-fA-F]+)>", pdf)
    assert match is not None
    return match.span(1)


def signature_container(pdf: bytes) -> cms.ContentInfo:
    start, end = contents_span(pdf)
    return cms.ContentInfo.load(bytes.fromhex(pdf[start:end].decode()), strict=False)


def append_update(pdf: bytes, change: str) -> bytes:
    """``pdf`` with an incremental update appended by pyHanko: metadata or an annotation."""
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    if change == "metadata":
        writer.root[pdf_name("/Lang")] = pdf_string("pt-BR")
        writer.update_root()
    else:
        page_ref, _resources = writer.find_page_for_modification(0)
        note = generic.DictionaryObject({
            pdf_name("/Type"): pdf_name("/Annot"),
            pdf_name("/Subtype"): pdf_name("/Text"),
            pdf_name("/Rect"): generic.ArrayObject(generic.NumberObject(n) for n in (72, 72, 92, 92)),
            pdf_name("/Contents"): pdf_string("Auto anulado"),
        })
        writer.register_annotation(page_ref, writer.add_object(note))
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def hq_certificates(key: DeviceKey) -> tuple[bytes, bytes]:
    """(device certificate, CA certificate) DER, issued by a stand-in HQ CA."""
    ca_key = Ed25519PrivateKey.generate()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "AC Fiscalização HQ")])
    ca = (
        x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
        .public_key(ca_key.public_key()).serial_number(1)
        .not_valid_before(ISSUED_AT).not_valid_after(ISSUED_AT + dt.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .sign(ca_key, algorithm=None)
    )
    device = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Dispositivo HQ 0042")]))
        .issuer_name(ca_name)
        .public_key(Ed25519PublicKey.from_public_bytes(key.public_key_bytes()))
        .serial_number(2)
        .not_valid_before(ISSUED_AT).not_valid_after(ISSUED_AT + dt.timedelta(days=365))
        .add_extension(x509.KeyUsage(True, True, False, False, False, False, False, False, False), critical=True)
        .sign(ca_key, algorithm=None)
    )
    return tuple(c.public_bytes(serialization.Encoding.DER) for c in (device, ca))


def test_signed_reportlab_pdf_is_intact_valid_and_covers_the_entire_file(device, signed):
    check = validate_pdf_signature(signed, trust_certificate_der=device.certificate)
    assert check.ok
    assert (check.intact, check.valid, check.coverage, check.modified_after_signing) == (
        True, True, "entire_file", False,
    )
    assert check.signer_cn == "Dispositivo de fiscalização 3f2a9c41"
    assert check.message_pt == (
        "Assinatura válida: documento íntegro, assinado por "
        "«Dispositivo de fiscalização 3f2a9c41» em 14/04/2026 10:30 (UTC-03:00)."
    )


def test_signing_appends_an_update_and_keeps_the_original_bytes(reportlab_pdf, signed):
    assert signed.startswith(reportlab_pdf)


def test_signed_pdf_still_reads_with_its_portuguese_text(signed):
    reader = PdfReader(io.BytesIO(signed))
    assert len(reader.pages) == 2
    assert "Auto de infração n.º DF-A 000123 – 1ª via – autuado" in reader.pages[0].extract_text()


def test_signature_is_pades_baseline_b_with_ed25519_and_sha512(signed):
    embedded = PdfFileReader(io.BytesIO(signed)).embedded_signatures
    assert [s.field_name for s in embedded] == [SIGNATURE_FIELD]
    sig = embedded[0].sig_object
    assert sig["/SubFilter"] == "/ETSI.CAdES.detached"
    assert sig["/Reason"] == "Auto de infração selado no dispositivo"
    assert sig["/Location"] == "Terminal Rodoviário de Ceilândia"
    signer_info = signature_container(signed)["content"]["signer_infos"][0]
    assert signer_info["digest_algorithm"]["algorithm"].native == "sha512"
    assert signer_info["signature_algorithm"]["algorithm"].native == "ed25519"
    attributes = {a["type"].native for a in signer_info["signed_attrs"]}
    # B-B: the signer certificate is bound by signing-certificate-v2; the time is /M only.
    assert "signing_certificate_v2" in attributes
    assert "signing_time" not in attributes


def test_signature_verifies_without_pyhanko_as_rfc_8419_prescribes(device, signed):
    # Digest of the two byte ranges = messageDigest; Ed25519 over the DER SET of signed attrs.
    ranges = re.search(rb"/ByteRange \[\s*(\d+) (\d+) (\d+) (\d+)\s*\]", signed)
    assert ranges is not None
    a, b, c, d = (int(n) for n in ranges.groups())
    assert (a, c + d) == (0, len(signed))
    signer_info = signature_container(signed)["content"]["signer_infos"][0]
    attributes = signer_info["signed_attrs"]
    digest = next(x["values"][0].native for x in attributes if x["type"].native == "message_digest")
    assert digest == hashlib.sha512(signed[a:a + b] + signed[c:c + d]).digest()
    public_key = x509.load_der_x509_certificate(device.certificate).public_key()
    assert isinstance(public_key, Ed25519PublicKey)
    public_key.verify(signer_info["signature"].native, attributes.untag().dump(force=True))


def test_signing_time_is_the_given_one(device, signed):
    embedded = PdfFileReader(io.BytesIO(signed)).embedded_signatures[0]
    assert embedded.self_reported_timestamp == SIGNED_AT
    assert validate_pdf_signature(signed, trust_certificate_der=device.certificate).signed_at == SIGNED_AT


@pytest.mark.parametrize(
    ("old", "new"),
    [
        pytest.param(b"72 600 100 50 re", b"72 601 100 50 re", id="content-stream"),
        pytest.param(TITLE, TITLE.replace(b"0001", b"0002"), id="info-title"),
    ],
)
def test_one_byte_changed_in_the_signed_content_breaks_integrity(device, signed, old, new):
    check = validate_pdf_signature(change_byte(signed, old, new), trust_certificate_der=device.certificate)
    assert not check.ok
    assert not check.intact
    assert check.message_pt == (
        "Documento adulterado: o conteúdo assinado foi alterado depois da assinatura."
    )


def test_one_byte_changed_in_the_signature_value_invalidates_it(device, signed):
    start, end = contents_span(signed)
    raw = bytes.fromhex(signed[start:end].decode())
    _cls, _method, _tag, header, content, _trailer = parser.parse(raw)
    at = start + 2 * (len(header) + len(content) - 10)  # inside the 64-byte Ed25519 signature
    flipped = signed[:at] + (b"0" if signed[at:at + 1] != b"0" else b"1") + signed[at + 1:]
    check = validate_pdf_signature(flipped, trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.intact and not check.valid
    assert check.message_pt.startswith("Assinatura inválida")


def test_a_byte_changed_anywhere_outside_the_signature_container_is_caught(device, signed):
    # Every 251st byte keeps the test quick (~3 s) while walking header, objects, font and
    # content streams, xref and trailer.
    start, end = contents_span(signed)
    for index in [*range(0, start, 251), *range(end, len(signed), 251)]:
        altered = signed[:index] + bytes([signed[index] ^ 0x01]) + signed[index + 1:]
        assert not validate_pdf_signature(altered, trust_certificate_der=device.certificate).ok, index


@pytest.mark.parametrize("change", ["metadata", "annotation"])
def test_incremental_update_after_signing_is_reported_as_a_modification(device, signed, change):
    updated = append_update(signed, change)
    assert updated.startswith(signed)
    check = validate_pdf_signature(updated, trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.intact and check.valid  # the signed revision itself is untouched
    assert check.coverage == "entire_revision"
    assert check.modified_after_signing
    assert check.message_pt.startswith("Documento modificado depois de assinado")


def test_bytes_appended_after_the_signature_are_a_modification(device, signed):
    check = validate_pdf_signature(signed + b"\n% anexado\n", trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.modified_after_signing


def test_another_devices_signature_is_not_trusted_by_this_devices_certificate(device, reportlab_pdf):
    other = Device("9b1e0c77-0000-4000-8000-000000000000")
    signed_by_other = other.sign(reportlab_pdf)
    assert validate_pdf_signature(signed_by_other, trust_certificate_der=other.certificate).ok
    check = validate_pdf_signature(signed_by_other, trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.intact and not check.valid
    assert check.signer_cn == "Dispositivo de fiscalização 9b1e0c77"
    assert check.message_pt.startswith("Assinatura não reconhecida")


def test_signing_with_a_certificate_for_another_key_is_refused(device, reportlab_pdf):
    other = Device("9b1e0c77-0000-4000-8000-000000000000")
    with pytest.raises(ValueError, match="not for this device's key"):
        sign_pdf(reportlab_pdf, key=device.key, certificate_der=other.certificate)


def test_naive_signing_time_is_refused(device, reportlab_pdf):
    with pytest.raises(ValueError, match="timezone-aware"):
        sign_pdf(reportlab_pdf, key=device.key, certificate_der=device.certificate,
                 signed_at=dt.datetime(2026, 4, 14, 10, 30))


def test_signature_made_after_the_certificate_expired_is_not_valid(reportlab_pdf):
    short_lived = Device("5c3d0a12-0000-4000-8000-000000000000", valid_days=30)
    check = validate_pdf_signature(short_lived.sign(reportlab_pdf),
                                   trust_certificate_der=short_lived.certificate)
    assert check.intact and not check.valid and not check.ok
    assert check.message_pt.startswith("Certificado fora da validade")


def test_hq_issued_certificate_validates_with_the_hq_certificate_as_trust_anchor(reportlab_pdf):
    key = DeviceKey.generate()
    device_der, ca_der = hq_certificates(key)
    signed = sign_pdf(reportlab_pdf, key=key, certificate_der=device_der, signed_at=SIGNED_AT)
    check = validate_pdf_signature(signed, trust_certificate_der=ca_der)
    assert check.ok
    assert check.signer_cn == "Dispositivo HQ 0042"


def test_unsigned_pdf_has_no_device_signature(device, reportlab_pdf):
    check = validate_pdf_signature(reportlab_pdf, trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.coverage == "none"
    assert check.message_pt == "O PDF não tem a assinatura do dispositivo."


def test_bytes_that_are_not_a_pdf_are_reported_not_raised(device):
    check = validate_pdf_signature(b"isto n\xc3\xa3o \xc3\xa9 um PDF", trust_certificate_der=device.certificate)
    assert not check.ok
    assert check.message_pt.startswith("O arquivo não pôde ser lido como PDF")


def test_hq_issued_certificate_expired_at_signing_time_is_not_valid(reportlab_pdf):
    key = DeviceKey.generate()
    device_der, ca_der = hq_certificates(key)  # the device certificate lasts 365 days
    late = ISSUED_AT + dt.timedelta(days=400)
    signed = sign_pdf(reportlab_pdf, key=key, certificate_der=device_der, signed_at=late)
    check = validate_pdf_signature(signed, trust_certificate_der=ca_der)
    assert check.intact and not check.valid and not check.ok


def test_certificates_of_odd_and_even_length_both_sign(reportlab_pdf):
    # pyHanko refuses an odd placeholder size, and the placeholder follows the certificate's
    # length. Names appear twice in a self-signed certificate; the serial number (derived
    # from key, device id and date) appears once and is one octet shorter for about one
    # device in 128: those devices could not sign a single PDF.
    key = DeviceKey(Ed25519PrivateKey.from_private_bytes(bytes(range(32))))
    by_parity: dict[int, bytes] = {}
    for n in range(2000):
        certificate = issue_self_signed_device_certificate(
            key, device_id=f"3f2a9c41-7d0e-4b8a-9f11-{n:012d}", organ="SEMOB-DF", demo=True,
            valid_days=3650, now=ISSUED_AT)
        by_parity.setdefault(len(certificate) % 2, certificate)
        if len(by_parity) == 2:
            break
    assert set(by_parity) == {0, 1}
    for certificate in by_parity.values():
        pdf = sign_pdf(reportlab_pdf, key=key, certificate_der=certificate, signed_at=SIGNED_AT)
        check = validate_pdf_signature(pdf, trust_certificate_der=certificate)
        assert check.intact and check.valid, check.message_pt
