"""Render a sealed record as a PDF: A4 pages or one long 80 mm thermal-roll page.

The PDF depends only on the record, the blobs it names and the print options, so two
renders give the same bytes: reportlab runs in invariant mode and the PDF's creation
date is the record's sealing time. A reprint years later differs from the original only
by its reprint label.
"""

from __future__ import annotations

import datetime as dt
import io
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

from reportlab import rl_config
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas
from reportlab.platypus import BaseDocTemplate, Flowable, Frame, PageTemplate

from inspector_app.store.sealing import SealedRecord

from . import fonts
from . import formatting as fmt
from . import sections as sec
from .blocks import DocContext
from .kinds import STORIES, TITLES
from .qr import qr_png_of, verification_url
from .styles import (
    A4_FOOTER,
    A4_HEADER,
    A4_MARGIN_X,
    ALERT,
    GREY,
    INK,
    ROLL_MARGIN,
    ROLL_WIDTHS_MM,
    styles_for,
)

# reportlab wraps every stream (page, font, image) in ASCII85 by default and, without the
# optional C accelerator, encodes it in pure Python: about 45 ms per embedded photo.
# Binary streams are valid PDF and a fifth smaller. Process-wide: documents/ owns reportlab.
rl_config.useA85 = 0

DOCUMENT_KINDS = tuple(STORIES)
CREATOR = "inspector_app (fiscalização de transporte público)"
A4_QR = 22 * mm


def render_document(
    record: SealedRecord,
    *,
    blob_dir: Path,
    layout: Literal["a4", "80mm"] = "a4",
    copy: Literal["1", "2"] = "1",
    reprint_number: int = 0,
    demo: bool = False,
    verify_base_url: str | None = None,
    printed_on: dt.date | None = None,
    roll_width_mm: int = 72,
    cancellation: Mapping[str, Any] | None = None,
) -> bytes:
    """The PDF of ``record`` (any kind in :data:`DOCUMENT_KINDS`); raises ValueError otherwise.

    ``copy`` "1" is the autuado's copy, "2" the órgão's (it adds a contra-recibo);
    ``reprint_number`` k > 0 prints "Reimpressão n.º k (``printed_on``)"; ``demo`` marks
    every page "DEMONSTRAÇÃO". Thumbnails and signature PNGs are read from ``blob_dir`` and
    embedded only when their SHA-256 still matches the record (A4 only: the thermal roll
    is black and white and lists photo hashes).

    Every time prints in the órgão's legal zone (the pack's, Brasília by default). The
    verification address is ``verify_base_url``, else HQ's public address sealed with the
    record; with neither, only the code is printed. ``roll_width_mm`` is the thermal
    printer's printable width (48, 64 or 72 mm). ``cancellation`` (the cancelling record's
    ``number`` and ``created_at``) marks every page "CANCELADO pelo registro n.º … em …".
    """
    if record.kind not in STORIES:
        raise ValueError(f"no document layout for record kind {record.kind!r}")
    if layout not in ("a4", "80mm"):
        raise ValueError(f"layout must be 'a4' or '80mm', not {layout!r}")
    if copy not in ("1", "2"):
        raise ValueError(f"copy must be '1' or '2', not {copy!r}")
    if not isinstance(reprint_number, int) or reprint_number < 0:
        raise ValueError(f"reprint_number must be a non-negative integer: {reprint_number!r}")
    if roll_width_mm not in ROLL_WIDTHS_MM:
        raise ValueError(f"roll_width_mm must be one of {ROLL_WIDTHS_MM}, not {roll_width_mm!r}")
    tz = legal_zone_of(record)
    context = record.envelope.get("context")
    base = verify_base_url or (context.get("verify_base_url")
                               if isinstance(context, dict) else None)
    url = verification_url(record.verification_code, verify_base_url=base) if base else ""
    if printed_on is None:
        printed_on = dt.datetime.now(tz).date()
    ctx = DocContext(
        record=record,
        blob_dir=Path(blob_dir),
        styles=styles_for(layout, roll_width_mm),
        copy=copy,
        reprint_number=reprint_number,
        demo=demo,
        title=TITLES[record.kind],
        qr=ImageReader(io.BytesIO(qr_png_of(url or record.verification_code))),
        url=url,
        tz=tz,
        printed_on=printed_on.strftime("%d/%m/%Y"),
        verify_known=bool(url),
        cancellation=dict(cancellation) if cancellation else None,
    )
    story = STORIES[record.kind](ctx)
    if layout == "a4":
        return _build_a4(ctx, story)
    return _build_roll(ctx, story)


def legal_zone_of(record: SealedRecord) -> dt.tzinfo:
    """The legal time zone of the record's pack (sealed in the body, else the pack's own
    definition, else Brasília)."""
    body = record.envelope.get("body")
    pack = body.get("pack") if isinstance(body, dict) else None
    name = pack.get("timezone") if isinstance(pack, dict) else None
    if not name and isinstance(pack, dict) and pack.get("id"):
        try:
            from inspector_app.packs import get_pack

            name = get_pack(str(pack["id"])).meta.timezone
        except Exception:
            name = None
    return fmt.legal_zone(name or fmt.LEGAL_TIMEZONE)


def verify_line(ctx: DocContext) -> str:
    if ctx.verify_known:
        return f"Verifique em {ctx.url}"
    return "Verifique pelo código na página de verificação do órgão."


# --- metadata shared by both layouts ----------------------------------------------------------


def _pdf_date(created_at: str) -> str:
    try:
        moment = dt.datetime.fromisoformat(created_at).astimezone(dt.UTC)
    except ValueError:
        moment = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    return moment.strftime("D:%Y%m%d%H%M%S+00'00'")


def _metadata(ctx: DocContext) -> dict[str, str]:
    pack = ctx.section("pack")
    return {
        "title": f"{ctx.title} {ctx.record.display_number}",
        "author": fmt.text(pack.get("organ_name") or pack.get("organ"), ""),
        "subject": f"registro {ctx.record.id} SHA-256 {ctx.record.sha256}",
        "creator": CREATOR,
        "keywords": f"verificação {ctx.record.verification_code}",
    }


def _fix_date(canvas: Canvas, ctx: DocContext) -> None:
    # invariant=1 pins reportlab's timestamp to 2000-01-01; the record's sealing time is
    # the meaningful (and equally reproducible) creation date.
    stamp = _pdf_date(ctx.record.created_at)
    canvas.setDateFormatter(lambda *_parts: stamp)


# --- A4 ---------------------------------------------------------------------------------------


class _A4Canvas(Canvas):  # type: ignore[misc]
    """Holds every page until the end, so the footer can say "página 1 de N"."""

    def __init__(self, *args: Any, ctx: DocContext, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ctx = ctx
        self._saved_pages: list[dict[str, Any]] = []
        _fix_date(self, ctx)

    def showPage(self) -> None:
        self._saved_pages.append(dict(self.__dict__))
        self._startPage()

    def save(self) -> None:
        total = len(self._saved_pages)
        for state in self._saved_pages:
            self.__dict__.update(state)
            _a4_header(self, self._ctx)
            _a4_footer(self, self._ctx, self._pageNumber, total)
            Canvas.showPage(self)
        Canvas.save(self)


def _build_a4(ctx: DocContext, story: Sequence[Flowable]) -> bytes:
    buf = io.BytesIO()
    width, height = A4
    frame = Frame(A4_MARGIN_X, A4_FOOTER, width - 2 * A4_MARGIN_X,
                  height - A4_HEADER - A4_FOOTER, leftPadding=0, rightPadding=0,
                  topPadding=0, bottomPadding=0, id="body")
    doc = BaseDocTemplate(
        buf, pagesize=A4, invariant=1, pageTemplates=[
            PageTemplate(id="page", frames=[frame], onPage=partial(_a4_watermark, ctx=ctx)),
        ], **_metadata(ctx),
    )
    doc.build(list(story), canvasmaker=partial(_A4Canvas, ctx=ctx))
    return buf.getvalue()


def _a4_watermark(canvas: Canvas, doc: BaseDocTemplate, *, ctx: DocContext) -> None:
    if ctx.cancellation:
        _a4_cancelled_watermark(canvas)
    if not ctx.demo:
        return
    width, height = A4
    canvas.saveState()
    canvas.setFillColorRGB(0.88, 0.88, 0.88)
    canvas.setFont(fonts.SANS_BOLD, 64)
    canvas.translate(width / 2, height / 2)
    canvas.rotate(50)
    canvas.drawCentredString(0, 0, sec.DEMO_LABEL)
    canvas.restoreState()


def _a4_cancelled_watermark(canvas: Canvas) -> None:
    width, height = A4
    canvas.saveState()
    canvas.setFillColorRGB(0.96, 0.80, 0.80)
    canvas.setFont(fonts.SANS_BOLD, 88)
    canvas.translate(width / 2, height / 2)
    canvas.rotate(-50)
    canvas.drawCentredString(0, -30, sec.CANCELLED_LABEL)
    canvas.restoreState()


def _fit(text: str, font: str, size: float, room: float, smallest: float = 6.5) -> float:
    while size > smallest and stringWidth(text, font, size) > room:
        size -= 0.25
    return size


def _a4_header(c: Canvas, ctx: DocContext) -> None:
    width, height = A4
    x0, x1 = A4_MARGIN_X, width - A4_MARGIN_X
    pack = ctx.section("pack")
    c.saveState()
    bands = [sec.DEMO_BAND] if ctx.demo else []
    if ctx.cancellation:  # on every page, with the cancelling record's number and date
        bands.append(sec.cancelled_line(ctx))
    if bands:
        band = " · ".join(bands)
        c.setFillColor(ALERT)
        c.rect(x0, height - 26, x1 - x0, 15, stroke=0, fill=1)
        c.setFillColorRGB(1, 1, 1)
        c.setFont(fonts.SANS_BOLD, _fit(band, fonts.SANS_BOLD, 9, x1 - x0 - 8))
        c.drawCentredString(width / 2, height - 22, band)
    copy_label = sec.copy_label(ctx)
    c.setFont(fonts.SANS_BOLD, 9)
    box_w = stringWidth(copy_label, fonts.SANS_BOLD, 9) + 10
    y = height - 42
    c.setFillColor(INK)
    c.setStrokeColor(INK)
    c.setLineWidth(0.8)
    c.roundRect(x1 - box_w, y - 4, box_w, 15, 2, stroke=1, fill=0)
    c.drawRightString(x1 - 5, y, copy_label)
    organ = fmt.text(pack.get("organ_name"), "Fiscalização do transporte público")
    size = _fit(organ, fonts.CONDENSED_BOLD, 10.5, x1 - x0 - box_w - 12)
    c.setFont(fonts.CONDENSED_BOLD, size)
    c.drawString(x0, y, organ)
    y -= 13
    c.setFont(fonts.SANS, 8.5)
    c.setFillColor(GREY)
    c.drawString(x0, y, fmt.text(pack.get("organ"), ""))
    label = sec.reprint_label(ctx.reprint_number, ctx.printed_on)
    if label:
        c.setFillColor(ALERT)
        c.setFont(fonts.SANS_BOLD, 9.5)
        c.drawRightString(x1, y, label)
    y -= 25
    c.setFillColor(INK)
    number = f"N.º {sec.number_text(ctx)}"
    c.setFont(fonts.SANS_BOLD, 13)
    c.drawRightString(x1, y, number)
    room = x1 - x0 - stringWidth(number, fonts.SANS_BOLD, 13) - 14
    c.setFont(fonts.SANS_BOLD, _fit(ctx.title, fonts.SANS_BOLD, 16, room, 10))
    c.drawString(x0, y, ctx.title)
    y -= 12
    c.setFont(fonts.SANS, 8)
    c.setFillColor(GREY)
    c.drawRightString(x1, y, f"Série {fmt.text(ctx.record.series)}")
    if pack.get("id"):
        c.drawString(x0, y, f"Regulamento: pacote {pack.get('id')} – versão "
                            f"{fmt.text(pack.get('version'))}")
    y -= 7
    c.setStrokeColor(INK)
    c.setLineWidth(1)
    c.line(x0, y, x1, y)
    c.restoreState()


def _a4_footer(c: Canvas, ctx: DocContext, page: int, total: int) -> None:
    width, _height = A4
    x0, x1 = A4_MARGIN_X, width - A4_MARGIN_X
    bottom = 24.0
    rec = ctx.record
    pack = ctx.section("pack")
    c.saveState()
    c.setStrokeColor(INK)
    c.setLineWidth(0.6)
    c.line(x0, bottom + A4_QR + 6, x1, bottom + A4_QR + 6)
    c.drawImage(ctx.qr, x0, bottom, A4_QR, A4_QR)
    tx = x0 + A4_QR + 8
    y = bottom + A4_QR - 9
    c.setFillColor(INK)
    c.setFont(fonts.SANS_BOLD, 8.5)
    c.drawString(tx, y, f"Código de verificação: {rec.verification_code}")
    y -= 10
    c.setFont(fonts.SANS, 7)
    c.drawString(tx, y, verify_line(ctx))
    y -= 9
    c.setFont(fonts.CONDENSED, 6.6)
    c.drawString(tx, y, f"Registro SHA-256: {rec.sha256}")
    y -= 9
    c.setFont(fonts.SANS, 7)
    c.drawString(tx, y, f"{rec.display_number} – lavrado em "
                        f"{fmt.datetime_br(rec.created_at, tz=ctx.tz)}")
    y -= 9
    if pack:
        c.drawString(tx, y, f"Pacote {fmt.text(pack.get('id'))} versão "
                            f"{fmt.text(pack.get('version'))} – hash "
                            f"{fmt.text(pack.get('hash'))[:16]}")
    c.setFont(fonts.SANS_BOLD, 7.5)
    parts = [sec.copy_label(ctx)]
    if ctx.reprint_number:
        parts.append(sec.reprint_label(ctx.reprint_number, ctx.printed_on))
    if ctx.demo:
        parts.append(sec.DEMO_LABEL)
    if ctx.cancellation:
        parts.append(sec.CANCELLED_LABEL)
    parts.append(f"página {page} de {total}")
    c.drawRightString(x1, bottom, " – ".join(parts))
    c.restoreState()


# --- 80 mm roll -------------------------------------------------------------------------------


def _build_roll(ctx: DocContext, story: Sequence[Flowable]) -> bytes:
    """One page as tall as the content: thermal printers cut where the document ends."""
    flowables = [*sec.roll_header(ctx), *story, *sec.roll_footer(ctx)]
    buf = io.BytesIO()
    page_width = ctx.styles.page_width
    c = Canvas(buf, pagesize=(page_width, 1000), invariant=1)
    meta = _metadata(ctx)
    c.setTitle(meta["title"])
    c.setAuthor(meta["author"])
    c.setSubject(meta["subject"])
    c.setCreator(meta["creator"])
    c.setKeywords(meta["keywords"])
    _fix_date(c, ctx)
    avail = ctx.styles.width
    placed: list[tuple[Flowable, float, float, float, float]] = []
    total = 0.0
    for i, f in enumerate(flowables):
        before = f.getSpaceBefore() if i else 0.0
        w, h = f.wrapOn(c, avail, 1e7)
        after = f.getSpaceAfter()
        placed.append((f, w, h, before, after))
        total += before + h + after
    height = total + 2 * ROLL_MARGIN
    c.setPageSize((page_width, height))
    y = height - ROLL_MARGIN
    margin = (page_width - avail) / 2
    for f, w, h, before, after in placed:
        y -= before
        x = margin + _align_offset(f, w, avail)
        f.drawOn(c, x, y - h)
        y -= h + after
    c.showPage()
    c.save()
    return buf.getvalue()


def _align_offset(f: Flowable, w: float, avail: float) -> float:
    align = getattr(f, "hAlign", "LEFT")
    if align in ("CENTER", "CENTRE"):
        return (avail - w) / 2
    if align == "RIGHT":
        return avail - w
    return 0.0
