"""Signature images: pen strokes or an existing PNG to a transparent, content-addressed PNG.

The PNG carries only ink on a transparent background, so documents can print it over the
signature line. The bytes hold no metadata and depend only on the strokes (and the Pillow
build), so the same signature gives the same SHA-256.
"""

from __future__ import annotations

import io
import math
import warnings
from pathlib import Path

from PIL import Image, ImageDraw, UnidentifiedImageError

from .photos import MAX_PIXELS, store_blob

INK = (16, 32, 96, 255)  # dark blue, like a ballpoint pen
LINE_WIDTH = 3  # pixels in the final image
SUPERSAMPLE = 2  # drawn at twice the size, then downsampled, for smooth edges
MAX_SIDE = 4000
# Imported PNGs larger than this are scaled down: documents print a signature a few cm wide.
IMPORT_BOX = (1600, 800)
# Imported PNGs without transparency: pixels at least this light are paper, not ink.
PAPER_LEVEL = 230
SOLID_INK_LEVEL = 100

EMPTY_MESSAGE = "Assinatura vazia: assine no quadro ou marque 'recusou-se a assinar'."


class SignatureError(ValueError):
    """A signature refused; ``message_pt`` is the sentence the GUI shows."""

    def __init__(self, message_pt: str) -> None:
        super().__init__(message_pt)
        self.message_pt = message_pt


def save_signature_png(
    strokes: list[list[tuple[float, float]]], *, width: int, height: int, blob_dir: Path
) -> tuple[str, Path]:
    """Render pad strokes (points in pixels of a ``width``×``height`` pad) and store them.

    A stroke of one point is a dot. Points off the pad are clipped. Returns
    (sha256, path) of the PNG; raises SignatureError when there is no point at all.
    """
    if not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        raise ValueError(f"signature pad size out of range: {width}×{height}")
    if not any(strokes):
        raise SignatureError(EMPTY_MESSAGE)
    for stroke in strokes:
        for x, y in stroke:
            if not (math.isfinite(x) and math.isfinite(y)):
                raise ValueError(f"signature point is not a finite number: {(x, y)}")

    scale = SUPERSAMPLE
    pen = LINE_WIDTH * scale
    canvas = Image.new("RGBA", (width * scale, height * scale), (0, 0, 0, 0))
    draw = ImageDraw.Draw(canvas)
    for stroke in strokes:
        points = [(x * scale, y * scale) for x, y in stroke]
        if not points:
            continue
        if len(points) > 1:
            draw.line(points, fill=INK, width=pen, joint="curve")
        # Round caps, and a dot for a one-point stroke: Pillow's lines end square.
        r = pen / 2
        for x, y in (points[0], points[-1]):
            draw.ellipse((x - r, y - r, x + r, y + r), fill=INK)
    # Pillow resizes RGBA with premultiplied alpha, so edges do not darken or fringe.
    image = canvas.resize((width, height), Image.Resampling.LANCZOS)
    if image.getchannel("A").getextrema()[1] == 0:  # every stroke fell off the pad
        raise SignatureError(EMPTY_MESSAGE)
    return _store_png(image, blob_dir)


def signature_from_png(path: Path, blob_dir: Path) -> tuple[str, Path]:
    """Import a signature PNG (scanned, or drawn elsewhere) as a transparent PNG.

    A PNG that has transparency keeps it; one without (ink on white paper) gets its light
    pixels made transparent and its ink kept, alpha growing with darkness. Larger images
    are scaled down to fit 1600×800. Returns (sha256, path) of the stored PNG, which is
    re-encoded (metadata dropped), so its hash is not the source file's.
    """
    invalid = SignatureError("Arquivo de assinatura inválido: use uma imagem PNG.")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path, formats=["PNG"]) as im:
                if im.width * im.height > MAX_PIXELS:
                    raise invalid
                im.load()
                rgba = im.convert("RGBA")
    except (UnidentifiedImageError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise invalid from None
    except (SignatureError, FileNotFoundError):
        raise
    # Pillow's decoders raise many exception types on malformed data; all mean "invalid".
    except Exception as exc:
        raise invalid from exc

    alpha = rgba.getchannel("A")
    if alpha.getextrema()[0] == 255:  # fully opaque: paper background to transparent
        rgba.putalpha(rgba.convert("L").point(_ink_alpha))
    if rgba.getchannel("A").getextrema()[1] == 0:
        raise SignatureError(EMPTY_MESSAGE)
    if rgba.width > IMPORT_BOX[0] or rgba.height > IMPORT_BOX[1]:
        rgba.thumbnail(IMPORT_BOX, Image.Resampling.LANCZOS)
    return _store_png(rgba, blob_dir)


def _ink_alpha(level: int) -> int:
    if level >= PAPER_LEVEL:
        return 0
    return min(255, (PAPER_LEVEL - level) * 255 // (PAPER_LEVEL - SOLID_INK_LEVEL))


def _store_png(image: Image.Image, blob_dir: Path) -> tuple[str, Path]:
    image.info = {}
    buf = io.BytesIO()
    image.save(buf, "PNG", optimize=True)
    return store_blob(blob_dir, buf.getvalue(), ".png")
