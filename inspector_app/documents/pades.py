"""PAdES signatures on the device's PDFs: sign with the device key, check them back.

The signature is PAdES baseline B-B (``/ETSI.CAdES.detached``, no timestamp, no revocation
data) made with the device's Ed25519 key and its certificate (self-issued in demo mode,
issued by HQ later). Any PDF reader that understands the signature shows when the file was
changed after signing.

Caveats: B-B carries no trusted time; the signing time is the device's own claim, and the
certificate is checked at that claimed time. Ed25519 in PDF is ISO/TS 32002, so pyHanko
marks the signed file as PDF 2.0 with that developer extension; a reader that predates
EdDSA shows the signature as unsupported rather than valid.
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from typing import Any

from asn1crypto import x509 as asn1_x509
from pyhanko.keys import load_private_key_from_pemder_data
from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
from pyhanko.pdf_utils.reader import PdfFileReader
from pyhanko.sign import signers
from pyhanko.sign.diff_analysis import ModificationLevel
from pyhanko.sign.fields import SigSeedSubFilter
from pyhanko.sign.validation import validate_pdf_signature as _pyhanko_validate
from pyhanko.sign.validation.status import SignatureCoverageLevel
from pyhanko_certvalidator import ValidationContext
from pyhanko_certvalidator.registry import SimpleCertificateStore

from inspector_app.security.certificates import certificate_matches_key
from inspector_app.security.keys import DeviceKey

SIGNATURE_FIELD = "AssinaturaDispositivo"
DEFAULT_REASON = "Auto de infração selado no dispositivo"
# Ed25519 in CMS fixes the message digest to SHA-512 (RFC 8419 §3.1).
DIGEST_ALGORITHM = "sha512"

_COVERAGE_NAMES = {
    SignatureCoverageLevel.ENTIRE_FILE: "entire_file",
    SignatureCoverageLevel.ENTIRE_REVISION: "entire_revision",
    SignatureCoverageLevel.CONTIGUOUS_BLOCK_FROM_START: "contiguous_block_from_start",
    SignatureCoverageLevel.UNCLEAR: "unclear",
}
_MODIFICATION_PT = {
    ModificationLevel.LTA_UPDATES: "dados de arquivamento",
    ModificationLevel.FORM_FILLING: "preenchimento de campos ou nova assinatura",
    ModificationLevel.ANNOTATIONS: "anotações",
    ModificationLevel.OTHER: "alterações de conteúdo",
}


@dataclass(frozen=True)
class SignatureCheck:
    """What :func:`validate_pdf_signature` found.

    ``intact``: the signed bytes hash to the digest the signature covers. ``valid``: the
    signature verifies, its certificate chains to the trusted certificate and was within its
    validity period at the signing time (checked even when not intact). ``coverage``:
    ``"entire_file"``, ``"entire_revision"`` (something was appended after the signature),
    ``"contiguous_block_from_start"``, ``"unclear"``, or ``"none"`` when no signature could
    be read. ``modified_after_signing``: bytes follow the signed revision (an incremental
    update). ``ok`` is the one answer to act on.
    """

    intact: bool
    valid: bool
    coverage: str
    modified_after_signing: bool
    signer_cn: str | None
    message_pt: str
    signed_at: dt.datetime | None = None

    @property
    def ok(self) -> bool:
        """Intact, valid, covering the whole file: nobody changed it since the device signed."""
        return (
            self.intact
            and self.valid
            and self.coverage == "entire_file"
            and not self.modified_after_signing
        )


class _PdfSignerAt(signers.PdfSigner):
    """A PdfSigner whose signing time is given instead of read from the clock.

    pyHanko 0.38 takes the time (``/M`` in the signature dictionary) from the session's
    ``system_time``, which ``init_signing_session`` fills with ``datetime.now``.
    """

    def __init__(self, *args: Any, signed_at: dt.datetime, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._signed_at = signed_at

    def init_signing_session(self, *args: Any, **kwargs: Any) -> Any:
        session = super().init_signing_session(*args, **kwargs)
        session.system_time = self._signed_at
        return session


def sign_pdf(
    pdf: bytes,
    *,
    key: DeviceKey,
    certificate_der: bytes,
    reason: str = DEFAULT_REASON,
    location: str = "",
    signed_at: dt.datetime | None = None,
) -> bytes:
    """``pdf`` with an invisible PAdES B-B signature by ``key`` in field AssinaturaDispositivo.

    The signature is appended as an incremental update, so the original bytes stay as they
    were. ``signed_at`` (timezone-aware; default: now) is written as the signing time.
    The output is not byte-for-byte reproducible even with ``signed_at``: pyHanko draws the
    second half of the trailer /ID at random and stamps /ModDate with the wall clock.
    Raises ValueError when the certificate is not for ``key`` or ``signed_at`` is naive.
    """
    if not certificate_matches_key(certificate_der, key):
        raise ValueError(
            f"The certificate is not for this device's key (key id {key.device_key_id}); "
            "a PDF signed with it would not validate."
        )
    if signed_at is None:
        signed_at = dt.datetime.now(dt.UTC)
    elif signed_at.tzinfo is None or signed_at.utcoffset() is None:
        raise ValueError("signed_at must be timezone-aware (the PDF records its UTC offset).")
    signer = signers.SimpleSigner(
        signing_cert=asn1_x509.Certificate.load(certificate_der),
        signing_key=load_private_key_from_pemder_data(key.private_key_pem(), passphrase=None),
        # Empty: only the signer's own certificate is embedded (always, by pyHanko).
        cert_registry=SimpleCertificateStore(),  # type: ignore[no-untyped-call]
    )
    metadata = signers.PdfSignatureMetadata(
        field_name=SIGNATURE_FIELD,
        subfilter=SigSeedSubFilter.PADES,
        md_algorithm=DIGEST_ALGORITHM,
        reason=reason,
        location=location or None,
    )
    writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
    output = _PdfSignerAt(metadata, signer, signed_at=signed_at).sign_pdf(
        writer, bytes_reserved=_reserved_bytes(certificate_der)
    )
    return bytes(output.getvalue())


def validate_pdf_signature(
    pdf: bytes,
    *,
    trust_certificate_der: bytes,
    at: dt.datetime | None = None,
) -> SignatureCheck:
    """Check the AssinaturaDispositivo signature of ``pdf`` against one trusted certificate.

    ``trust_certificate_der`` is the only trust anchor: the device's own certificate (demo)
    or, later, HQ's issuing certificate. No network is used (no revocation check). The
    certificate is checked at ``at`` (timezone-aware), by default at the signing time the
    signature claims.
    A PDF that cannot be parsed, or has no such signature, gives a check that is not ok.
    """
    # The bytes are untrusted and pyHanko reports malformed input with many exception types
    # (PdfReadError, but also decimal.InvalidOperation, AttributeError, ...); whatever it
    # raises, the answer is the same: this signature cannot be verified.
    try:
        reader = PdfFileReader(io.BytesIO(pdf))
        embedded = [s for s in reader.embedded_signatures if s.field_name == SIGNATURE_FIELD]
    except Exception as exc:
        return _unreadable(f"O arquivo não pôde ser lido como PDF ({_describe(exc)}).")
    if not embedded:
        return _unreadable("O PDF não tem a assinatura do dispositivo.")
    signature = embedded[0]
    try:
        signed_at = signature.self_reported_timestamp
        moment = at or signed_at or dt.datetime.now(dt.UTC)
        context = ValidationContext(
            trust_roots=[asn1_x509.Certificate.load(trust_certificate_der)],
            moment=moment,
            allow_fetching=False,
        )
        status = _pyhanko_validate(signature, context)
        # pyhanko-certvalidator does not check a trust anchor's own validity period, and in
        # demo mode the signer's certificate is the trust anchor: check it here.
        in_period = _in_validity_period(status.signing_cert, moment)
    except Exception as exc:
        return _unreadable(
            f"A assinatura está corrompida e não pôde ser verificada ({_describe(exc)})."
        )
    signer_cn = _common_name(status.signing_cert)
    intact = bool(status.intact)
    trusted = status.trust_problem_indic is None and status.validation_path is not None
    valid = bool(status.valid and trusted and in_period)
    coverage = "unclear" if status.coverage is None else _COVERAGE_NAMES[status.coverage]
    modified = status.coverage != SignatureCoverageLevel.ENTIRE_FILE
    return SignatureCheck(
        intact=intact,
        valid=valid,
        coverage=coverage,
        modified_after_signing=modified,
        signer_cn=signer_cn,
        message_pt=_message_pt(
            intact=intact,
            crypto_ok=bool(status.valid),
            trusted=trusted,
            in_period=in_period,
            modified=modified,
            modification=status.modification_level,
            signer_cn=signer_cn,
            signed_at=signed_at,
        ),
        signed_at=signed_at,
    )


def _reserved_bytes(certificate_der: bytes) -> int:
    # Without a size pyHanko signs twice, once with a dummy to measure: half the signing
    # time. The B-B container is the certificate plus about 600 bytes (three signed
    # attributes, a 64-byte Ed25519 signature); 2 KiB of slack also fits an HQ-issued
    # certificate with longer names or an RSA issuer signature. pyHanko wants an even count
    # (the placeholder is hex), and a certificate's length is odd about half the time
    # (random serial numbers): round up.
    size = len(certificate_der) + 2048
    return size + size % 2


def _unreadable(message: str) -> SignatureCheck:
    return SignatureCheck(
        intact=False,
        valid=False,
        coverage="none",
        modified_after_signing=False,
        signer_cn=None,
        message_pt=message,
    )


def _describe(exc: Exception) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _in_validity_period(certificate: Any, moment: dt.datetime) -> bool:
    if certificate is None:
        return False
    return bool(certificate.not_valid_before <= moment <= certificate.not_valid_after)


def _common_name(certificate: Any) -> str | None:
    if certificate is None:
        return None
    name = certificate.subject.native.get("common_name")
    return str(name) if name is not None else None


def _message_pt(
    *,
    intact: bool,
    crypto_ok: bool,
    trusted: bool,
    in_period: bool,
    modified: bool,
    modification: ModificationLevel | None,
    signer_cn: str | None,
    signed_at: dt.datetime | None,
) -> str:
    who = f"«{signer_cn}»" if signer_cn else "signatário desconhecido"
    if not intact:
        return "Documento adulterado: o conteúdo assinado foi alterado depois da assinatura."
    if not crypto_ok:
        return f"Assinatura inválida: a assinatura de {who} não confere com o documento."
    if not trusted:
        return (
            f"Assinatura não reconhecida: o certificado de {who} não é o do dispositivo "
            "confiável."
        )
    if not in_period:
        return (
            f"Certificado fora da validade: o certificado de {who} não era válido na data "
            "da assinatura."
        )
    if modified:
        if modification is None:
            return (
                f"Documento modificado depois de assinado: há dados acrescentados ao arquivo "
                f"depois da assinatura de {who}."
            )
        what = _MODIFICATION_PT.get(modification, "alterações")
        return (
            f"Documento modificado depois de assinado: uma atualização posterior à assinatura "
            f"de {who} acrescentou {what}."
        )
    when = f" em {_format_time(signed_at)}" if signed_at else ""
    return f"Assinatura válida: documento íntegro, assinado por {who}{when}."


def _format_time(moment: dt.datetime) -> str:
    offset = moment.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    hours, minutes = divmod(abs(minutes), 60)
    return f"{moment:%d/%m/%Y %H:%M} (UTC{sign}{hours:02d}:{minutes:02d})"
