"""docs/samples/: one PNG per document kind (A4 page 1 at 60 dpi) and two thermal autos
(72 mm printable width, black and white: the kit's long one and a two-infraction one).

``INSPECTOR_WRITE_SAMPLES=1 pytest tests/documents/test_samples.py`` regenerates them;
otherwise the test only checks that each is there and is a real page.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from pdfcheck import non_white_share
from PIL import Image

from inspector_app.documents import DOCUMENT_KINDS

SAMPLES = Path(__file__).resolve().parents[2] / "docs" / "samples"
# Which record of the kit shows each kind, and how.
SHOWN = {
    "auto_infracao": ("auto_infracao", {}),
    "auto_vistoria": ("auto_vistoria_aprovado", {"demo": True}),
    "termo_retencao": ("termo_retencao", {}),
    "termo_liberacao": ("termo_liberacao", {}),
    "termo_compromisso": ("termo_compromisso", {}),
    "cancelamento": ("cancelamento", {}),
}
ROLL = "auto_infracao_80mm"
ROLL_TWO = "auto_infracao_2_infracoes_80mm"  # the length figure of issue 12 (≤ 35 cm)


def _png(pdf: bytes, target: Path, tmp: Path, *, dpi: int, first_page_only: bool) -> None:
    source = tmp / "sample.pdf"
    source.write_bytes(pdf)
    pages = ["-f", "1", "-l", "1"] if first_page_only else []
    subprocess.run(["pdftoppm", "-png", "-r", str(dpi), *pages, "-singlefile", str(source),
                    str(tmp / "sample")], check=True, timeout=60)
    shutil.move(tmp / "sample.png", target)


def test_every_kind_has_a_sample(rendered, tmp_path):
    assert set(SHOWN) == set(DOCUMENT_KINDS)
    if os.environ.get("INSPECTOR_WRITE_SAMPLES") == "1":
        if shutil.which("pdftoppm") is None:
            pytest.skip("pdftoppm (poppler-utils) is not installed")
        SAMPLES.mkdir(parents=True, exist_ok=True)
        for kind, (name, options) in SHOWN.items():
            _png(rendered(name, **options), SAMPLES / f"{kind}.png", tmp_path, dpi=60,
                 first_page_only=True)
        _png(rendered("auto_infracao", "80mm"), SAMPLES / f"{ROLL}.png", tmp_path, dpi=90,
             first_page_only=False)
        _png(rendered("auto_infracao_jf", "80mm"), SAMPLES / f"{ROLL_TWO}.png", tmp_path,
             dpi=90, first_page_only=False)
    for name in [*SHOWN, ROLL, ROLL_TWO]:
        image = Image.open(SAMPLES / f"{name}.png").convert("L")
        assert non_white_share(image) > 0.03, name
