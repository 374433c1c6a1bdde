"""Charts as server-rendered SVG (no script): horizontal bars with their labels and counts.

Only presentation attributes (no ``style``), so the console's Content-Security-Policy
(``style-src 'self'``) lets them render; every text is escaped. The chart carries a
``<title>`` and ``role="img"`` with an ``aria-label`` summarising it; the page shows the
same numbers in a table for screen readers and copying.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from markupsafe import Markup

WIDTH, ROW, LABEL_W, PAD = 560, 24, 230, 6
BAR, OTHER = "#1f5fa8", "#8a96a3"


def _short(text: str, size: int = 34) -> str:
    return text if len(text) <= size else text[:size - 1] + "…"


def bar_chart(title: str, items: Sequence[tuple[str, int]]) -> Markup:
    """Bars for ``items`` (label, count), in the given order."""
    if not items:
        return Markup(f'<p class="muted">{escape(title)}: nenhum auto.</p>')
    top = max(n for _, n in items) or 1
    height = PAD * 2 + ROW * len(items)
    span = WIDTH - LABEL_W - 60
    summary = "; ".join(f"{label}: {n}" for label, n in items)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} '
           f'{height}" width="{WIDTH}" height="{height}" role="img" '
           f'aria-label="{escape(title)} – {escape(summary)}">',
           f"<title>{escape(title)}</title>"]
    for i, (label, n) in enumerate(items):
        y = PAD + i * ROW
        w = max(2, round(span * n / top))
        colour = OTHER if label == "outros" else BAR
        out.append(f'<text x="{LABEL_W - 8}" y="{y + 16}" text-anchor="end" font-size="13" '
                   f'fill="#1d2733">{escape(_short(label))}<title>{escape(label)}</title></text>'
                   f'<rect x="{LABEL_W}" y="{y + 4}" width="{w}" height="{ROW - 8}" '
                   f'fill="{colour}"/>'
                   f'<text x="{LABEL_W + w + 6}" y="{y + 16}" font-size="13" '
                   f'fill="#1d2733">{n}</text>')
    out.append("</svg>")
    return Markup("".join(out))
