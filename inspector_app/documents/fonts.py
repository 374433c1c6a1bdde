"""The DejaVu fonts shipped in ``resources/fonts``, registered with reportlab once.

Embedded (subset) in every PDF, so accents (ç ã é õ º ª) print the same on any machine.
"""

from __future__ import annotations

import threading

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont

from inspector_app.paths import resource_path

SANS = "DejaVuSans"
SANS_BOLD = "DejaVuSans-Bold"
CONDENSED = "DejaVuSansCondensed"
CONDENSED_BOLD = "DejaVuSansCondensed-Bold"

_FILES = {
    SANS: "DejaVuSans.ttf",
    SANS_BOLD: "DejaVuSans-Bold.ttf",
    CONDENSED: "DejaVuSansCondensed.ttf",
    CONDENSED_BOLD: "DejaVuSansCondensed-Bold.ttf",
}
_lock = threading.Lock()
_done = False


def register_fonts() -> None:
    """Register the four faces (idempotent, thread-safe).

    Parsing a TTF costs tens of milliseconds, so it happens once per process; reportlab
    keeps the registry globally.
    """
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        for name, filename in _FILES.items():
            path = resource_path("fonts", filename)
            pdfmetrics.registerFont(TTFont(name, str(path)))
        _done = True
