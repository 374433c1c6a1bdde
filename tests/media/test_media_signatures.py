"""Signature images: pen strokes and imported PNGs stored as transparent, content-addressed PNGs."""

from __future__ import annotations

import hashlib

import pytest
from PIL import Image

from inspector_app.media.signatures import (
    SignatureError,
    save_signature_png,
    signature_from_png,
)

EMPTY = "Assinatura vazia: assine no quadro ou marque 'recusou-se a assinar'."
STROKES = [
    [(20.0, 60.0), (60.0, 40.0), (100.0, 80.0), (140.0, 50.0)],
    [(160.0, 30.0), (170.0, 90.0)],
]


def test_signature_png_is_transparent_in_the_corners_and_inked_along_the_strokes(tmp_path):
    sha, path = save_signature_png(STROKES, width=200, height=120, blob_dir=tmp_path)
    assert path == tmp_path / sha[:2] / f"{sha}.png"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    with Image.open(path) as im:
        assert (im.format, im.mode, im.size) == ("PNG", "RGBA", (200, 120))
        for corner in [(0, 0), (199, 0), (0, 119), (199, 119)]:
            assert im.getpixel(corner)[3] == 0
        for x, y in [(20, 60), (40, 50), (60, 40), (80, 60), (120, 65), (165, 60)]:
            r, g, b, a = im.getpixel((x, y))
            assert a > 128, (x, y)
            assert max(r, g, b) < 128  # dark ink
        # Anti-aliased: edges hold partial alpha, not only 0 and 255.
        assert any(im.getchannel("A").histogram()[1:255])


def test_lines_are_about_three_pixels_wide(tmp_path):
    _, path = save_signature_png([[(10.0, 50.0), (190.0, 50.0)]], width=200, height=100, blob_dir=tmp_path)
    with Image.open(path) as im:
        column = [im.getpixel((100, y))[3] for y in range(100)]
    assert 2 <= sum(a > 128 for a in column) <= 4


def test_a_one_point_stroke_draws_a_dot(tmp_path):
    _, path = save_signature_png([[(50.0, 50.0)]], width=100, height=100, blob_dir=tmp_path)
    with Image.open(path) as im:
        assert im.getpixel((50, 50))[3] > 128


def test_the_same_strokes_give_the_same_sha256_and_one_file(tmp_path):
    first = save_signature_png(STROKES, width=200, height=120, blob_dir=tmp_path)
    second = save_signature_png(STROKES, width=200, height=120, blob_dir=tmp_path)
    assert first == second
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == [first[1]]


@pytest.mark.parametrize(
    "strokes",
    [[], [[]], [[], []], [[(-50.0, -50.0), (-10.0, -20.0)]]],
    ids=["no-strokes", "one-empty-stroke", "empty-strokes", "all-off-the-pad"],
)
def test_an_empty_signature_is_refused_in_portuguese(tmp_path, strokes):
    with pytest.raises(SignatureError) as refused:
        save_signature_png(strokes, width=200, height=120, blob_dir=tmp_path / "blobs")
    assert refused.value.message_pt == EMPTY
    assert not (tmp_path / "blobs").exists()


def test_non_finite_points_are_a_programming_error(tmp_path):
    with pytest.raises(ValueError):
        save_signature_png([[(float("nan"), 1.0)]], width=10, height=10, blob_dir=tmp_path)


def test_a_png_on_white_paper_is_imported_with_transparent_paper_and_opaque_ink(tmp_path):
    scan = tmp_path / "scan.png"
    im = Image.new("RGB", (300, 100), (250, 250, 248))
    im.paste((10, 10, 60), (50, 40, 250, 46))
    im.save(scan)
    sha, path = signature_from_png(scan, tmp_path / "blobs")
    assert path.name == f"{sha}.png"
    with Image.open(path) as out:
        assert (out.mode, out.size) == ("RGBA", (300, 100))
        assert out.getpixel((5, 5))[3] == 0
        assert out.getpixel((100, 42)) == (10, 10, 60, 255)


def test_a_png_with_transparency_keeps_its_alpha(tmp_path):
    drawn = tmp_path / "drawn.png"
    im = Image.new("RGBA", (120, 60), (255, 255, 255, 0))
    im.paste((0, 0, 0, 200), (10, 20, 110, 24))
    im.save(drawn)
    _, path = signature_from_png(drawn, tmp_path / "blobs")
    with Image.open(path) as out:
        assert out.getpixel((0, 0))[3] == 0
        assert out.getpixel((50, 22)) == (0, 0, 0, 200)


def test_a_large_scan_is_scaled_down_to_fit(tmp_path):
    scan = tmp_path / "big.png"
    im = Image.new("L", (4000, 1000), 255)
    im.paste(0, (100, 400, 3900, 600))
    im.save(scan)
    _, path = signature_from_png(scan, tmp_path / "blobs")
    with Image.open(path) as out:
        assert out.size == (1600, 400)


def test_a_blank_png_is_refused_as_an_empty_signature(tmp_path):
    blank = tmp_path / "blank.png"
    Image.new("RGB", (200, 80), "white").save(blank)
    with pytest.raises(SignatureError) as refused:
        signature_from_png(blank, tmp_path / "blobs")
    assert refused.value.message_pt == EMPTY


def test_a_file_that_is_not_a_png_is_refused(tmp_path):
    jpeg = tmp_path / "assinatura.png"
    Image.new("RGB", (200, 80), "white").save(jpeg, "JPEG")
    with pytest.raises(SignatureError) as refused:
        signature_from_png(jpeg, tmp_path / "blobs")
    assert refused.value.message_pt == "Arquivo de assinatura inválido: use uma imagem PNG."
    assert not (tmp_path / "blobs").exists()
