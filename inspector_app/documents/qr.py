"""The verification QR: a PNG made by segno (reportlab's vector QR costs ~45 ms a page).

The URL points at HQ's verify page for the record's verification code: HQ's public
address, sealed with the record from enrolment (``context.verify_base_url``). A device that
never met HQ prints only the code, and the QR then holds the code alone.
"""

from __future__ import annotations

import functools
import io

import segno

DEFAULT_VERIFY_BASE_URL = "https://verifica.fiscalizacao.invalid/verify/"
# Pixels per module: a version 4 code (33 modules + 2×2 quiet zone) gives 148 px, sharp at
# the 22 mm it is printed (about 170 dpi) and on a 203 dpi thermal head.
QR_SCALE = 4
QR_BORDER = 2


def verification_url(code: str, *, verify_base_url: str = DEFAULT_VERIFY_BASE_URL) -> str:
    """``https://…/verify/{code}``; a base URL without its trailing slash gets one."""
    base = verify_base_url if verify_base_url.endswith("/") else verify_base_url + "/"
    return f"{base}{code}"


@functools.lru_cache(maxsize=64)
def _png(url: str) -> bytes:
    buf = io.BytesIO()
    segno.make(url, error="m", micro=False).save(buf, kind="png", scale=QR_SCALE,
                                                border=QR_BORDER)
    return buf.getvalue()


def qr_png_of(text: str) -> bytes:
    """PNG bytes of a QR holding ``text`` as it is (a URL, or a bare code)."""
    return _png(text)


def qr_png(code: str, *, verify_base_url: str = DEFAULT_VERIFY_BASE_URL) -> bytes:
    """PNG bytes of the QR of :func:`verification_url` (deterministic for a given URL)."""
    return _png(verification_url(code, verify_base_url=verify_base_url))
