"""Media benchmarks: importing a 1600×1200 phone-sized JPEG next to a bare Pillow re-encode."""

from __future__ import annotations

import io
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PIL import ExifTags, Image

from benchmarks import stats
from inspector_app.media.photos import import_photo


def make_photo(path: Path, size: tuple[int, int] = (1600, 1200)) -> Path:
    """A JPEG with photo-like detail (gradients plus sensor-like noise) and EXIF."""
    noise = Image.effect_noise(size, 24)
    gradient = Image.linear_gradient("L").resize(size)
    im = Image.merge("RGB", (gradient, noise, gradient.transpose(Image.Transpose.ROTATE_180)))
    exif = Image.Exif()
    exif[ExifTags.Base.Orientation] = 1
    exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = "2026:04:14 10:30:00"
    im.save(path, "JPEG", quality=90, exif=exif)
    return path


def _times(fn: Callable[[int], object], repeat: int) -> list[float]:
    fn(-1)  # warm Pillow's plugin registry and the page cache
    out = []
    for i in range(repeat):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return sorted(out)


def _row(name: str, samples: list[float], vs: str) -> dict[str, object]:
    return stats.row(name, samples, vs)


def bench_import_photo(repeat: int = 20) -> list[dict[str, object]]:
    """Median and p95 of ``import_photo`` on a 1600×1200 JPEG, each run into a fresh blob
    folder (so every file is really written and fsynced), against ``Image.open().save()``."""
    with tempfile.TemporaryDirectory(prefix="bench-media-") as tmp:
        root = Path(tmp)
        source = make_photo(root / "photo.jpg")

        def full(i: int) -> object:
            return import_photo(source, root / f"blobs-{i}")

        def bare(_: int) -> object:
            buf = io.BytesIO()
            with Image.open(source) as im:
                im.save(buf, "JPEG")
            return buf

        imported = _times(full, repeat)
        baseline = _times(bare, repeat)
    ratio = imported[len(imported) // 2] / baseline[len(baseline) // 2]
    return [
        _row(
            "media: import_photo 1600×1200 JPEG (hash, decode, working + thumb, 3 fsynced blobs)",
            imported,
            f"{ratio:.1f}× bare Image.open().save()",
        ),
        _row("baseline: Image.open().save() of the same JPEG", baseline, ""),
    ]


def run(repeat: int = 20) -> list[dict[str, object]]:
    """Same shape as ``bench_rules.run``, for ``benchmarks/__main__``."""
    return bench_import_photo(repeat)
