"""Autos and termos as PDF documents (DESIGN.md §6): A4 and 80 mm, from sealed records only.

``render_document`` turns a sealed record into PDF bytes; ``archive_pdf`` stores the bytes
content-addressed next to the photos and logs them in the ``documents`` table.
"""

from __future__ import annotations

from .archive import archive_pdf, archived_documents, next_reprint_number
from .qr import DEFAULT_VERIFY_BASE_URL, qr_png, verification_url
from .render import DOCUMENT_KINDS, render_document

__all__ = [
    "DEFAULT_VERIFY_BASE_URL",
    "DOCUMENT_KINDS",
    "archive_pdf",
    "archived_documents",
    "next_reprint_number",
    "qr_png",
    "render_document",
    "verification_url",
]
