"""Wrapped text drawn straight on the canvas: reportlab's Paragraph without its markup.

Paragraph parses XML, builds fragments and breaks lines again each time a frame, table
or keep-together group wraps it; on a text-heavy auto that is most of the render time.
Documents need much less: runs of regular or bold text (record text is never parsed, so
nothing needs escaping), left or centred, hard line breaks, word wrap, and a split
between pages. Lines are broken once per width.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.lib.colors import Color
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.platypus import Flowable

from .styles import TextStyle


@dataclass(frozen=True)
class Run:
    """A piece of text in one face (regular or bold) and, optionally, a colour."""

    text: str
    bold: bool = False
    color: Color | None = None


def bold(value: object) -> Run:
    return Run(str(value), bold=True)


Part = str | Run


@functools.lru_cache(maxsize=65536)
def _width(word: str, font: str, size: float) -> float:
    return float(stringWidth(word, font, size))


# A token: (word, font, colour, space before it, width).
Token = tuple[str, str, Color, bool, float]
Line = list[Token]


def _tokens(parts: Sequence[Part], style: TextStyle) -> list[Token | None]:
    """Words of the runs in order; None marks a hard line break."""
    out: list[Token | None] = []
    pending_space = False
    for part in parts:
        run = part if isinstance(part, Run) else Run(part)
        font = style.bold_font if run.bold else style.font
        color = run.color or style.color
        for n, chunk in enumerate(run.text.split("\n")):
            if n:
                out.append(None)
                pending_space = False
            if chunk[:1].isspace():
                pending_space = True
            words = chunk.split()
            for i, word in enumerate(words):
                out.append((word, font, color, pending_space if i == 0 else True,
                            _width(word, font, style.size)))
                pending_space = False
            if words and chunk[-1:].isspace():
                pending_space = True
    return out


def _break(tokens: Sequence[Token | None], width: float, style: TextStyle, *,
           first_indent: float = 0.0, indent: float = 0.0) -> list[Line]:
    """Greedy breaking; the first line has ``width - first_indent``, the others
    ``width - indent``. A word wider than a line (a hash, a code) is cut."""
    lines: list[Line] = []
    line: Line = []
    used = 0.0

    def room() -> float:
        return width - (first_indent if not lines else indent)

    for token in tokens:
        if token is None:
            lines.append(line)
            line, used = [], 0.0
            continue
        word, font, color, space, w = token
        gap = _width(" ", font, style.size) if (space and line) else 0.0
        if line and used + gap + w > room():
            lines.append(line)
            line, used, gap = [], 0.0, 0.0
        while w > room() and len(word) > 1:
            if line:
                lines.append(line)
                line, used, gap = [], 0.0, 0.0
            cut = len(word) - 1
            while cut > 1 and _width(word[:cut], font, style.size) > room():
                cut -= 1
            piece = word[:cut]
            lines.append([(piece, font, color, False, _width(piece, font, style.size))])
            word = word[cut:]
            w = _width(word, font, style.size)
        line.append((word, font, color, space, w))
        used += gap + w
    if line or not lines:
        lines.append(line)
    return lines


class Text(Flowable):  # type: ignore[misc]
    """A block of wrapped text; splits between pages at a line boundary."""

    def __init__(self, parts: Sequence[Part], style: TextStyle, *, indent: float = 0.0,
                 keep_with_next: bool = False, _lines: list[Line] | None = None,
                 _continued: bool = False) -> None:
        super().__init__()
        self.parts = list(parts)
        self.style = style
        self.indent = indent  # of the lines after the first (bullets)
        self.continued = _continued  # the rest of a split: its first line is indented too
        self.spaceBefore = style.space_before
        self.spaceAfter = style.space_after
        if keep_with_next:
            self.keepWithNext = 1
        self._lines = _lines
        self._fixed = _lines is not None  # pieces of a split keep their lines
        self._wrapped_at: float | None = None
        self.width = 0.0
        self.height = 0.0

    def _layout(self, width: float) -> None:
        if self._fixed or self._wrapped_at == width:
            return
        self._lines = _break(_tokens(self.parts, self.style), width, self.style,
                             indent=self.indent)
        self._wrapped_at = width

    def wrap(self, avail_width: float, avail_height: float) -> tuple[float, float]:
        self._layout(avail_width)
        assert self._lines is not None
        self.width = avail_width
        self.height = len(self._lines) * self.style.leading
        return self.width, self.height

    def split(self, avail_width: float, avail_height: float) -> list[Flowable]:
        self.wrap(avail_width, avail_height)
        assert self._lines is not None
        fit = int(avail_height // self.style.leading)
        if fit <= 0:
            return []
        if fit >= len(self._lines):
            return [self]
        first = Text(self.parts, self.style.but(space_after=0), indent=self.indent,
                     _lines=self._lines[:fit])
        rest = Text(self.parts, self.style.but(space_before=0), indent=self.indent,
                    _lines=self._lines[fit:], _continued=True)
        first.width = rest.width = avail_width
        return [first, rest]

    def draw(self) -> None:
        assert self._lines is not None
        st = self.style
        # One text object for the block: the font and colour are set only when they change.
        pen = _Pen(self.canv.beginText())
        y = self.height - st.size
        for n, line in enumerate(self._lines):
            x = self.indent if (n or self.continued) else 0.0
            if st.align == "center":
                x = (self.width - _line_width(line, st.size)) / 2
            _draw_line(pen, line, x, y, st.size)
            y -= st.leading
        self.canv.drawText(pen.text)


class _Pen:
    """A reportlab text object that remembers its face and colour."""

    def __init__(self, text: Any) -> None:
        self.text = text
        self.font: tuple[str, float] | None = None
        self.color: Color | None = None

    def write(self, x: float, y: float, segment: str, font: str, size: float,
              color: Color) -> None:
        if self.font != (font, size):
            self.text.setFont(font, size)
            self.font = (font, size)
        if self.color is not color:
            self.text.setFillColor(color)
            self.color = color
        self.text.setTextOrigin(x, y)
        # textLine, not textOut: textOut measures the string to advance its cursor, which
        # is wasted work when every run is placed with setTextOrigin.
        self.text.textLine(segment)


def _line_width(line: Line, size: float) -> float:
    total = 0.0
    for i, (_word, font, _color, space, w) in enumerate(line):
        total += w + (_width(" ", font, size) if space and i else 0.0)
    return total


def _draw_line(pen: _Pen, line: Line, x: float, y: float, size: float) -> None:
    """Consecutive words in the same face and colour go out as one string."""
    i = 0
    while i < len(line):
        _word, font, color, space, _w = line[i]
        if i and space:
            x += _width(" ", font, size)
        words: list[str] = []
        advance = 0.0
        j = i
        while j < len(line) and line[j][1] == font and line[j][2] is color:
            word, _f, _c, word_space, w = line[j]
            if j > i and word_space:
                words.append(" ")
                advance += _width(" ", font, size)
            words.append(word)
            advance += w
            j += 1
        pen.write(x, y, "".join(words), font, size, color)
        x += advance
        i = j


def wrap_plain(text: str, font: str, size: float, width: float, *,
               first_indent: float = 0.0) -> list[str]:
    """Plain text in one face as lines no wider than ``width`` (the first line starts
    ``first_indent`` points in)."""
    style = TextStyle(font, font, size, size)
    lines = _break(_tokens([text], style), width, style, first_indent=first_indent)
    return [" ".join(t[0] for t in line) for line in lines]
