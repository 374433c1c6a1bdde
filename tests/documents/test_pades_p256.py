"""The P-256 document signature validates with poppler's pdfsig (which lacks EdDSA), and
pdfsig detects one changed byte. Chosen by the store setting ``document_signature``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from inspector_app import services
from inspector_app.documents.pades import SIGNATURE_FIELD

pytestmark = pytest.mark.skipif(shutil.which("pdfsig") is None, reason="poppler-utils absent")


def _pdfsig(pdf: bytes, tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(pdf)
    done = subprocess.run(["pdfsig", str(path)], capture_output=True, text=True, timeout=60)
    return done.stdout + done.stderr


def test_pdfsig_validates_the_p256_signature_and_sees_a_changed_byte(kit, tmp_path):
    record = kit.records["termo_compromisso"]
    store = kit.store
    store.set_meta("document_signature", "p256")
    try:
        doc = services.render_record(store=store, record_id=record.id, copy="2",
                                     target="p256.pdf")
    finally:
        store.set_meta("document_signature", "ed25519")
    report = _pdfsig(doc.pdf, tmp_path, "signed.pdf")
    assert "Signature Validation: Signature is Valid." in report, report
    assert "ECDSA" in report or "Signature Type: ETSI.CAdES.detached" in report
    assert "SHA256" in report or "SHA-256" in report
    # One byte of the document's own text changed (inside the signed range).
    at = doc.pdf.index(b"TERMO DE COMPROMISSO") if b"TERMO DE COMPROMISSO" in doc.pdf else \
        doc.pdf.index(b"/Producer")
    tampered = doc.pdf[:at] + bytes([doc.pdf[at] ^ 0x01]) + doc.pdf[at + 1:]
    report = _pdfsig(tampered, tmp_path, "tampered.pdf")
    assert "Signature is Valid." not in report, report
    assert "Signature Validation: Digest Mismatch." in report, report


def test_the_ed25519_default_is_what_pdfsig_cannot_read(kit, tmp_path):
    """Why the option exists: poppler has no EdDSA (docs/ARCHITECTURE.md lists readers)."""
    doc = services.render_record(store=kit.store, record_id=kit.records["cancelamento"].id,
                                 target="ed.pdf")
    report = _pdfsig(doc.pdf, tmp_path, "ed.pdf")
    assert "Signature is Valid." not in report  # poppler 22.12: "Document isn't signed …"
    assert SIGNATURE_FIELD.encode() in doc.pdf
