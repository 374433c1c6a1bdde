"""The documentation shows only screenshots that exist and links only to files that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
DOCS = REPO_ROOT / "docs"
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s#]+)(?:#[^)]*)?\)")


def images(markdown: Path) -> list[str]:
    return IMAGE.findall(markdown.read_text(encoding="utf-8"))


def test_the_user_guide_shows_screenshots_from_docs_screenshots():
    shown = images(DOCS / "user-guide.md")
    assert len(shown) >= 10
    assert all(target.startswith("screenshots/") for target in shown), shown


@pytest.mark.parametrize("markdown", [DOCS / "user-guide.md", DOCS / "hq-operations.md",
                                      REPO_ROOT / "README.md"], ids=lambda p: p.name)
def test_every_image_and_local_link_exists(markdown):
    text = markdown.read_text(encoding="utf-8")
    targets = images(markdown) + [t for t in LINK.findall(text) if "://" not in t]
    missing = [t for t in targets if not (markdown.parent / t).exists()]
    assert not missing, f"{markdown.name} refers to missing files: {missing}"


def test_screenshots_are_commit_sized_pngs():
    from PIL import Image

    for png in sorted((DOCS / "screenshots").glob("*.png")):
        assert png.stat().st_size < 200_000, png.name
        with Image.open(png) as image:
            assert image.format == "PNG"
            assert image.width <= 1280 and image.height <= 860, png.name
