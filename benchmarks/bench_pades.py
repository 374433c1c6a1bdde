"""PAdES benchmarks: signing (and checking) a typical two-page A4 auto next to writing it."""

from __future__ import annotations

import datetime as dt
import io
import time
from collections.abc import Callable
from functools import partial

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen import canvas

from benchmarks import stats
from inspector_app.documents.pades import sign_pdf, validate_pdf_signature
from inspector_app.paths import resource_path
from inspector_app.security.certificates import issue_self_signed_device_certificate
from inspector_app.security.keys import DeviceKey

SIGNED_AT = dt.datetime(2026, 4, 14, 10, 30, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
LINES = [
    "Auto de infração n.º DF-A 000123 – série A – 1ª via – autuado",
    "Órgão: SEMOB-DF · Agente: Maria da Conceição (matrícula 123.456-7)",
    "Veículo JKL1A23 · Marcopolo Torino · prefixo 40.123 · RENAVAM 01234567890",
    "Infração DF15154.29.XIII, art. 29, XIII – grupo III: extintor vencido",
    "Condutor recusou-se a assinar; retenção no pátio da SEMOB (art. 38 §único)",
    "Prazo de defesa prévia: 14/05/2026, dirigida à JARI – estimativa de multa",
]


def _fonts() -> None:
    for name in ("DejaVuSans", "DejaVuSans-Bold"):
        if name not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont(name, str(resource_path("fonts", f"{name}.ttf"))))


def write_pdf() -> bytes:
    """Two A4 pages of text, boxes and rules with embedded DejaVu: the size of a real auto."""
    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    for number in (1, 2):
        page.setFont("DejaVuSans-Bold", 14)
        page.drawString(40, 800, f"AUTO DE INFRAÇÃO – página {number} de 2")
        y = 770.0
        for row in range(45):
            page.setFont("DejaVuSans", 9)
            page.drawString(40, y, LINES[row % len(LINES)])
            if row % 5 == 4:
                page.line(40, y - 4, 555, y - 4)
            y -= 16
        page.rect(40, 40, 515, 40)
        page.showPage()
    page.save()
    return buffer.getvalue()


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    fn()  # warm caches (fonts, pyHanko imports)
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def run(repeat: int = 30) -> list[dict[str, object]]:
    _fonts()
    key = DeviceKey.generate()
    certificate = issue_self_signed_device_certificate(
        key, device_id="bench000-0000", organ="SEMOB-DF", demo=True,
        now=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
    )
    pdf = write_pdf()
    sign = partial(sign_pdf, pdf, key=key, certificate_der=certificate, signed_at=SIGNED_AT)
    signed = sign()
    bare = _times(write_pdf, repeat)
    signing = _times(sign, repeat)
    checking = _times(
        partial(validate_pdf_signature, signed, trust_certificate_der=certificate), repeat
    )
    bare_median = bare[len(bare) // 2]
    rows: list[dict[str, object]] = []
    for name, samples in (
        (f"pades: sign a 2-page A4 PDF ({len(pdf) // 1024} KiB), B-B Ed25519", signing),
        ("pades: validate that signature (intact, trust, coverage)", checking),
        ("baseline: write the same 2-page PDF with reportlab, unsigned", bare),
    ):
        ratio = f"{stats.median(samples) / bare_median:.2f}× the bare write"
        vs = "" if "baseline" in name else ratio
        rows.append(stats.row(name, samples, vs))
    return rows
