"""Reading rendered PDFs back: text, images, a page as pixels."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader


def pdf_text(pdf: bytes) -> str:
    """All pages' text, whitespace collapsed (wrapped lines join with one space)."""
    reader = PdfReader(io.BytesIO(pdf))
    return " ".join(" ".join(page.extract_text().split()) for page in reader.pages)


def squeeze(text: str) -> str:
    """Without any whitespace: hashes print in groups on the roll and may wrap anywhere."""
    return re.sub(r"\s+", "", text)


def page_png(pdf: bytes, tmp_path: Path, *, page: int = 1, dpi: int = 50) -> Image.Image:
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    source = tmp_path / "page.pdf"
    source.write_bytes(pdf)
    subprocess.run(["pdftoppm", "-png", "-r", str(dpi), "-f", str(page), "-l", str(page),
                    "-singlefile", str(source), str(tmp_path / "page")], check=True,
                   timeout=60)
    return Image.open(tmp_path / "page.png").convert("L")


def non_white_share(image: Image.Image) -> float:
    histogram = image.histogram()
    dark = sum(histogram[:240])
    return dark / (image.width * image.height)
