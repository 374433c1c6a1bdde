"""Building blocks of the story: the render context, text, field grids, images, rules."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reportlab.lib.utils import ImageReader
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable, Table, TableStyle
from reportlab.platypus.flowables import KeepTogether

from inspector_app.media.photos import blob_path
from inspector_app.store.sealing import SealedRecord

from . import fonts
from .formatting import MISSING
from .styles import ALERT, GREY, INK, RULE, SHADE, Styles, TextStyle
from .text import Part, Text, wrap_plain


@dataclass(frozen=True)
class DocContext:
    """Everything a story builder may read: the sealed record and how it is printed."""

    record: SealedRecord
    blob_dir: Path
    styles: Styles
    copy: str
    reprint_number: int
    demo: bool
    title: str
    qr: ImageReader
    url: str
    tz: Any = None  # the órgão's legal time zone (tzinfo); every time prints in it
    printed_on: str = ""  # dd/mm/aaaa of this output (the reprint label)
    verify_known: bool = True  # False: no HQ address known, only the code is printed

    @property
    def context(self) -> Mapping[str, Any]:
        """What the device knew at sealing (clock, registry, filing); {} on old records."""
        value = self.record.envelope.get("context")
        return value if isinstance(value, Mapping) else {}
    # The record that cancelled this one ({"number", "created_at"}): every page is marked.
    cancellation: Mapping[str, Any] | None = None

    @property
    def body(self) -> Mapping[str, Any]:
        body = self.record.envelope.get("body", {})
        return body if isinstance(body, Mapping) else {}

    def section(self, key: str) -> Mapping[str, Any]:
        """A JSON object of the body (an empty one when missing or not an object)."""
        value = self.body.get(key)
        return value if isinstance(value, Mapping) else {}


def txt(parts: Part | Sequence[Part], style: TextStyle, *, keep_with_next: bool = False) -> Text:
    """Wrapped text from plain strings and :class:`~.text.Run` pieces (never parsed)."""
    seq = [parts] if isinstance(parts, str) or not isinstance(parts, Sequence) else parts
    return Text(list(seq), style, keep_with_next=keep_with_next)


def bullet(parts: Part | Sequence[Part], style: TextStyle) -> Text:
    """A "• " item whose following lines hang under the text."""
    seq = [parts] if isinstance(parts, str) or not isinstance(parts, Sequence) else parts
    mark = "• "
    return Text([mark, *seq], style, indent=stringWidth(mark, style.font, style.size))


class Heading(Flowable):  # type: ignore[misc]
    """A section title on a grey band; kept with what follows it."""

    keepWithNext = 1

    def __init__(self, title: str, style: TextStyle, *, mono: bool = False) -> None:
        super().__init__()
        self.title = title
        self.style = style
        self.mono = mono  # thermal paper: a black rule under bold text, no grey band
        self.spaceBefore = style.space_before
        self.spaceAfter = style.space_after

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        self.width = avail_width
        self.height = self.style.leading
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        if self.mono:
            c.setStrokeColor(INK)
            c.setLineWidth(0.7)
            c.line(0, 0.4, self.width, 0.4)
        else:
            c.setFillColor(SHADE)
            c.rect(0, 0, self.width, self.height, stroke=0, fill=1)
        c.setFillColor(INK)
        c.setFont(self.style.font, self.style.size)
        c.drawString(2, self.height * 0.5 - self.style.size * 0.36, self.title)


def heading(ctx: DocContext, title: str) -> Heading:
    return Heading(title.upper(), ctx.styles.heading, mono=ctx.styles.mono)


class Band(Flowable):  # type: ignore[misc]
    """White bold text on a red band across the width (the DEMONSTRAÇÃO mark)."""

    def __init__(self, label: str, style: TextStyle, *, mono: bool = False) -> None:
        super().__init__()
        self.label = label
        self.style = style
        self.mono = mono  # thermal paper: black text in a black frame, no red fill
        self.spaceBefore = 2
        self.spaceAfter = 5

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        self.width = avail_width
        # A label wider than the band wraps onto more lines (never clipped).
        self.lines = wrap_plain(self.label, self.style.bold_font, self.style.size,
                                max(avail_width - 6, 10)) or [self.label]
        self.height = self.style.size * (1.8 + 1.25 * (len(self.lines) - 1))
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        if self.mono:
            c.setStrokeColor(INK)
            c.setLineWidth(1.2)
            c.rect(0.6, 0.6, self.width - 1.2, self.height - 1.2, stroke=1, fill=0)
            c.setFillColor(INK)
        else:
            c.setFillColor(ALERT)
            c.rect(0, 0, self.width, self.height, stroke=0, fill=1)
            c.setFillColorRGB(1, 1, 1)
        c.setFont(self.style.bold_font, self.style.size)
        size = self.style.size
        y = self.height - size * 0.9 - size * 0.36
        for line in self.lines:
            c.drawCentredString(self.width / 2, y, line)
            y -= size * 1.25


@dataclass(frozen=True)
class Field:
    label: str
    value: str
    span: int = 1  # columns of the A4 grid (4 across); the roll has 2


# A laid-out grid cell: (left edge, label, value lines).
Cell = tuple[float, str, list[str]]


class FieldGrid(Flowable):  # type: ignore[misc]
    """A form grid: each field a small grey label over its value (A4) or "label: value" on
    one line (the roll), packed row by row, the last field of a row taking what is left.

    Drawn directly (one text object, one path for the rules): a reportlab Table of
    paragraphs costs several times as much. Splits between pages at a row, or inside a
    row taller than what is left of the page.
    """

    PAD_X = 2.5
    PAD_TOP = 1.5
    PAD_BOTTOM = 2.0

    def __init__(self, items: Sequence[Field], *, style: TextStyle, label_size: float,
                 columns: int, inline: bool, _cells: list[list[Cell]] | None = None,
                 _width: float | None = None) -> None:
        super().__init__()
        self.style = style
        self.label_size = label_size
        self.inline = inline
        self.columns = columns
        # Rows of (first column, span, field); the last field of a row runs to the edge.
        self.rows: list[list[tuple[int, int, Field]]] = []
        row: list[tuple[int, int, Field]] = []
        used = 0
        for item in items:
            span = min(columns, item.span if columns == 4 else (2 if item.span >= 2 else 1))
            if used + span > columns:
                self.rows.append(row)
                row, used = [], 0
            row.append((used, span, item))
            used += span
        if row:
            self.rows.append(row)
        for r in self.rows:
            first, _span, item = r[-1]
            r[-1] = (first, columns - first, item)
        self._wrapped_at = _width
        self._cells: list[list[Cell]] = _cells or []
        if _cells is not None and _width is not None:
            self.width = _width
            self.height = sum(self._row_height(c) for c in _cells)

    def _lead(self, label: str) -> float:
        return float(stringWidth(label + ": ", self.style.font, self.label_size))

    def _cell_height(self, lines: list[str]) -> float:
        label = 0.0 if self.inline else self.label_size * 1.25
        return label + max(1, len(lines)) * self.style.leading

    def _row_height(self, cells: list[Cell]) -> float:
        return max(self._cell_height(lines) for _x, _l, lines in cells) + (
            self.PAD_TOP + self.PAD_BOTTOM)

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        if avail_width != self._wrapped_at:
            st = self.style
            col = avail_width / self.columns
            self._cells = []
            for row in self.rows:
                cells: list[Cell] = []
                for first, span, item in row:
                    room = col * span - 2 * self.PAD_X
                    indent = self._lead(item.label) if self.inline else 0.0
                    lines = wrap_plain(item.value or MISSING, st.font, st.size, room,
                                       first_indent=indent)
                    cells.append((first * col, item.label, lines))
                self._cells.append(cells)
            self._wrapped_at = avail_width
            self.width = avail_width
            self.height = sum(self._row_height(c) for c in self._cells)
        return self.width, self.height

    def split(self, avail_width: float, avail_height: float) -> list[Flowable]:
        self.wrap(avail_width, avail_height)
        used, i = 0.0, 0
        while i < len(self._cells) and used + self._row_height(self._cells[i]) <= avail_height:
            used += self._row_height(self._cells[i])
            i += 1
        if i == len(self._cells):
            return [self]
        cells = self._cells[i]  # the row that does not fit
        label = 0.0 if self.inline else self.label_size * 1.25
        fit = int((avail_height - used - self.PAD_TOP - self.PAD_BOTTOM - label)
                  // self.style.leading)
        if fit >= 1:  # the row itself continues on the next page
            head = [(x, name, lines[:fit]) for x, name, lines in cells]
            tail = [(x, f"{name} (continuação)" if lines[fit:] else "", lines[fit:])
                    for x, name, lines in cells]
            first, rest = [*self._cells[:i], head], [tail, *self._cells[i + 1:]]
        elif i:
            first, rest = self._cells[:i], self._cells[i:]
        else:
            return []
        return [self._part(first), self._part(rest)]

    def _part(self, cells: list[list[Cell]]) -> FieldGrid:
        return FieldGrid([], style=self.style, label_size=self.label_size,
                         columns=self.columns, inline=self.inline, _cells=cells,
                         _width=self.width)

    def draw(self) -> None:
        c = self.canv
        st = self.style
        text = c.beginText()
        path = c.beginPath()
        top = self.height
        for cells in self._cells:
            height = self._row_height(cells)
            path.moveTo(0, top)
            path.lineTo(self.width, top)
            for x0, label, lines in cells:
                if x0:
                    path.moveTo(x0, top)
                    path.lineTo(x0, top - height)
                x = x0 + self.PAD_X
                y = top - self.PAD_TOP - st.size
                indent = 0.0
                text.setFillColor(INK if self.inline else GREY)
                text.setFont(st.font, self.label_size)
                if self.inline:
                    if label:
                        text.setTextOrigin(x, y)
                        text.textLine(label + ": ")
                        indent = self._lead(label)
                else:
                    text.setTextOrigin(x, top - self.PAD_TOP - self.label_size)
                    text.textLine(label)
                    y = top - self.PAD_TOP - self.label_size * 1.25 - st.size
                text.setFillColor(INK)
                text.setFont(st.font, st.size)
                for line in lines:
                    text.setTextOrigin(x + indent, y)
                    text.textLine(line)
                    indent = 0.0
                    y -= st.leading
            top -= height
        for x0, y0, x1, y1 in ((0, 0, self.width, 0), (0, 0, 0, self.height),
                               (self.width, 0, self.width, self.height)):
            path.moveTo(x0, y0)
            path.lineTo(x1, y1)
        c.saveState()
        c.setStrokeColor(INK if self.inline else RULE)
        c.setLineWidth(0.3 if self.inline else 0.4)
        c.drawPath(path, stroke=1, fill=0)
        c.restoreState()
        c.drawText(text)


_GRID = (
    ("GRID", (0, 0), (-1, -1), 0.4, RULE),
    ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ("LEFTPADDING", (0, 0), (-1, -1), 2.5),
    ("RIGHTPADDING", (0, 0), (-1, -1), 2.5),
    ("TOPPADDING", (0, 0), (-1, -1), 1.5),
    ("BOTTOMPADDING", (0, 0), (-1, -1), 2),
)


def fields(ctx: DocContext, items: Sequence[Field]) -> FieldGrid:
    st = ctx.styles
    return FieldGrid(items, style=st.field, label_size=st.label_size, columns=st.columns,
                     inline=st.narrow)


def table(data: list[list[Any]], widths: Sequence[float], *, header: bool = True,
          extra: Iterable[tuple[Any, ...]] = ()) -> Table:
    commands: list[tuple[Any, ...]] = list(_GRID)
    if header:
        commands.append(("BACKGROUND", (0, 0), (-1, 0), SHADE))
    commands.extend(extra)
    # splitInRow: a row taller than what is left of the page (a very long note) continues
    # on the next page instead of failing the whole document.
    t = Table(data, colWidths=list(widths), style=TableStyle(commands),
              repeatRows=1 if header else 0, splitInRow=1)
    t.hAlign = "LEFT"
    return t


def layout_grid(data: list[list[Any]], widths: Sequence[float], gap: float) -> Table:
    """Cells side by side without rules (thumbnails, signature blocks)."""
    t = Table(data, colWidths=list(widths), style=TableStyle([
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
        ("LEFTPADDING", (0, 0), (-1, -1), 0),
        ("RIGHTPADDING", (0, 0), (-1, -1), gap),
        ("TOPPADDING", (0, 0), (-1, -1), 0),
        ("BOTTOMPADDING", (0, 0), (-1, -1), 4),
    ]))
    t.hAlign = "LEFT"
    return t


def keep(ctx: DocContext, flowables: list[Flowable]) -> list[Flowable]:
    """Kept on one page in A4; the roll is one page, so there the flowables go as they are."""
    return list(flowables) if ctx.styles.narrow else [KeepTogether(list(flowables))]


def verified_blob(blob_dir: Path, sha256: object, suffix: str) -> Path | None:
    """The blob's path when it exists and still hashes to ``sha256``; otherwise None.

    A reprint never embeds a file that is not the one the record names.
    """
    if not isinstance(sha256, str):
        return None
    try:
        path = blob_path(blob_dir, sha256, suffix)
        data = path.read_bytes()
    except (ValueError, OSError):
        return None
    return path if hashlib.sha256(data).hexdigest() == sha256 else None


class _BlobFile(str):
    """A blob's file path that reportlab names by content, not by location.

    reportlab names an image drawn from a file by a digest of ``"%s" % path``; printing as
    ``blob:<sha256>`` keeps the PDF's bytes the same wherever the data folder is, while
    the string itself (what reportlab opens) is still the path.
    """

    def __new__(cls, path: Path, sha256: str) -> _BlobFile:
        obj = super().__new__(cls, str(path))
        obj.sha256 = sha256
        return obj

    sha256: str

    def __str__(self) -> str:
        return f"blob:{self.sha256}"


class Picture(Flowable):  # type: ignore[misc]
    """A blob image fitted (aspect kept, centred) into a fixed box, or a placeholder.

    Drawn by file name, so reportlab embeds a JPEG's bytes as they are instead of decoding
    and re-compressing them (DESIGN.md §9).
    """

    def __init__(self, path: Path | None, width: float, height: float, *,
                 frame: bool = True, missing: str = "imagem indisponível",
                 mask: object = None) -> None:
        super().__init__()
        self.path = None if path is None else _BlobFile(path, path.stem)
        self.width = width
        self.height = height
        self.frame = frame
        self.missing = missing
        self.mask = mask

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        c = self.canv
        if self.path is not None:
            c.drawImage(self.path, 0, 0, self.width, self.height,
                        preserveAspectRatio=True, anchor="c", mask=self.mask)
        else:
            c.setFillColor(GREY)
            c.setFont(fonts.CONDENSED, 6.5)
            c.drawCentredString(self.width / 2, self.height / 2 - 2, self.missing)
        if self.frame:
            c.setStrokeColor(RULE)
            c.setLineWidth(0.4)
            c.rect(0, 0, self.width, self.height)


class QrImage(Flowable):  # type: ignore[misc]
    """The verification QR (a PNG) drawn as a square."""

    def __init__(self, reader: ImageReader, size: float) -> None:
        super().__init__()
        self.reader = reader
        self.width = self.height = size

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        self.canv.drawImage(self.reader, 0, 0, self.width, self.height)


class Line(Flowable):  # type: ignore[misc]
    """A horizontal rule of ``width`` points: the line a signature sits on."""

    def __init__(self, width: float, *, space: float = 2) -> None:
        super().__init__()
        self.width = width
        self.height = space

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        return self.width, self.height

    def draw(self) -> None:
        self.canv.setStrokeColor(GREY)
        self.canv.setLineWidth(0.6)
        self.canv.line(0, self.height, self.width, self.height)
