"""Text styles and measures of the two layouts: A4 and the 80 mm thermal roll."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Literal

from reportlab.lib import colors
from reportlab.lib.colors import Color
from reportlab.lib.pagesizes import A4
from reportlab.lib.units import mm

from . import fonts

Layout = Literal["a4", "80mm"]

INK = colors.black
GREY = colors.HexColor("#555555")
RULE = colors.HexColor("#9a9a9a")
SHADE = colors.HexColor("#e4e4e4")
ALERT = colors.HexColor("#b00020")

ROLL_WIDTH = 80 * mm  # 226.8 pt: the paper; what prints is the printable width below
ROLL_WIDTHS_MM = (48, 64, 72)  # printable widths of 58 mm and 80 mm thermal printers
ROLL_MARGIN = 6.0  # top and bottom of the roll
ROLL_SIDE = 1 * mm  # inside the printable width, so nothing touches the edge
A4_MARGIN_X = 15 * mm
A4_HEADER = 100.0  # points from the top edge to the frame
A4_FOOTER = 100.0  # points from the bottom edge to the frame


@dataclass(frozen=True)
class TextStyle:
    font: str
    bold_font: str
    size: float
    leading: float
    space_before: float = 0.0
    space_after: float = 0.0
    align: str = "left"  # or "center"
    color: Color = INK

    def but(self, **changes: Any) -> TextStyle:
        return replace(self, **changes)


@dataclass(frozen=True)
class Styles:
    layout: Layout
    width: float  # usable width of the frame
    page_width: float
    columns: int  # columns of the field grids
    thumbs_per_row: int
    body: TextStyle
    small: TextStyle
    field: TextStyle
    cell: TextStyle
    cell_head: TextStyle
    heading: TextStyle
    digest: TextStyle
    statement: TextStyle
    title: TextStyle
    center: TextStyle
    label_size: float

    @property
    def narrow(self) -> bool:
        return self.layout == "80mm"

    @property
    def mono(self) -> bool:
        """Black and white only, no photos, no shaded bands: the thermal roll."""
        return self.layout == "80mm"


@functools.lru_cache(maxsize=8)
def styles_for(layout: Layout, roll_width_mm: int = 72) -> Styles:
    """The styles of ``layout``; the roll uses the condensed face, compact leading and the
    printable width of the thermal printer (``roll_width_mm``)."""
    fonts.register_fonts()
    a4 = layout == "a4"
    face = fonts.SANS if a4 else fonts.CONDENSED
    bold = fonts.SANS_BOLD if a4 else fonts.CONDENSED_BOLD
    size = 8.2 if a4 else (7.0 if roll_width_mm >= 64 else 6.6)
    leading = size * (1.25 if a4 else 1.14)
    body = TextStyle(face, bold, size, leading, space_after=1.5 if a4 else 0.6)
    small = body.but(size=size - (1.2 if a4 else 0.6), leading=(size - (1.2 if a4 else 0.6))
                     * (1.25 if a4 else 1.14))
    page_width = A4[0] if a4 else roll_width_mm * mm
    return Styles(
        layout=layout,
        page_width=page_width,
        width=(A4[0] - 2 * A4_MARGIN_X) if a4 else (page_width - 2 * ROLL_SIDE),
        columns=4 if a4 else 2,
        thumbs_per_row=4 if a4 else 2,
        body=body,
        small=small,
        field=body.but(space_after=0, leading=size * 1.2),
        cell=body.but(size=size - 0.6, leading=(size - 0.6) * 1.2, space_after=0),
        cell_head=body.but(font=bold, size=size - 1.2, leading=(size - 1.2) * 1.2,
                           space_after=0),
        heading=body.but(font=bold, size=size + 0.4,
                         leading=(size + 0.4) * (1.55 if a4 else 1.3),
                         space_before=7 if a4 else 3, space_after=3.5 if a4 else 1.2),
        digest=body.but(font=fonts.CONDENSED, bold_font=fonts.CONDENSED_BOLD,
                        size=size - (1.4 if a4 else 1.6), leading=(size - 1.4) * 1.25,
                        space_after=0.5),
        statement=body.but(font=bold, size=size + 0.6, leading=(size + 0.6) * 1.25),
        title=body.but(font=bold, size=11.5 if a4 else 10, leading=14 if a4 else 12,
                       align="center", space_after=1),
        center=body.but(align="center", space_after=1),
        label_size=size - 2.2 if a4 else size - 1.6,
    )
