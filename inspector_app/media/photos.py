"""Photo import: the original kept byte for byte, an upright working copy and a thumbnail.

Every file is content-addressed (``blob_dir/ab/abcdef….jpg``, named by its SHA-256) and
written atomically, so importing the same photo twice stores nothing new and a crash leaves
either the whole file or none. The original is never re-encoded: its SHA-256 is the
photo's identity in sealed records. The derived files are JPEGs with the EXIF orientation
applied and every metadata block (EXIF with GPS, XMP, comments) dropped; documents embed the
thumbnail, never the original (DESIGN.md §9).

Caveat: the derived bytes depend on the Pillow/libjpeg build, so a re-import after a
Pillow upgrade may give different working and thumbnail hashes for the same original.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import os
import re
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from PIL import ExifTags, Image, ImageOps, UnidentifiedImageError

from inspector_app.fileio import fsync_folder

MAX_PIXELS = 40_000_000
MAX_FILE_BYTES = 100 * 1024 * 1024
WORKING_BOX = (1280, 960)
WORKING_QUALITY = 85
# 480×360 is 40×30 mm at 300 dpi, the photo slot of the printed autos (DESIGN.md §9).
THUMB_BOX = (480, 360)
THUMB_QUALITY = 80

# Decoders tried, as Pillow names them; no other of its many plugins sees the bytes.
ACCEPTED_FORMATS = ("JPEG", "PNG", "WEBP")
# Format of the opened image -> (MIME type, suffix of the stored original). The JPEG
# decoder opens the multi-picture JPEGs many phones and cameras write as "MPO".
_TYPES: dict[str, tuple[str, str]] = {
    "JPEG": ("image/jpeg", ".jpg"),
    "MPO": ("image/jpeg", ".jpg"),
    "PNG": ("image/png", ".png"),
    "WEBP": ("image/webp", ".webp"),
}

_SHA256 = re.compile(r"[0-9a-f]{64}")
_SUFFIX = re.compile(r"\.[a-z0-9]{1,8}")
_OFFSET = re.compile(r"[+-]\d\d:\d\d")
_HEIF_BRANDS = {b"heic", b"heix", b"hevc", b"hevx", b"heim", b"heis", b"mif1", b"msf1"}
_OFFSET_TIME_ORIGINAL = 0x9011  # EXIF 2.31; not every Pillow names it in ExifTags.Base


class PhotoError(ValueError):
    """A file refused as a photo; ``message_pt`` is the sentence the GUI shows.

    ``code`` names the reason for callers and tests: ``not_an_image``, ``heic``,
    ``corrupt``, ``too_many_pixels``, ``file_too_large``, ``unreadable``.
    """

    def __init__(self, code: str, message_pt: str) -> None:
        super().__init__(message_pt)
        self.code = code
        self.message_pt = message_pt


@dataclass(frozen=True)
class PhotoFiles:
    """The three stored files of one imported photo.

    ``width`` and ``height`` are the original's, upright (EXIF orientation applied);
    ``mime`` is the original's type (the derived files are always ``image/jpeg``);
    ``taken_at`` is EXIF DateTimeOriginal as ISO 8601 (with its offset when the camera
    recorded one), or None.
    """

    original_sha256: str
    original_path: Path
    working_sha256: str
    working_path: Path
    thumb_sha256: str
    thumb_path: Path
    width: int
    height: int
    taken_at: str | None
    mime: str


def blob_path(blob_dir: Path, sha256: str, suffix: str) -> Path:
    """Where the blob with this SHA-256 lives: ``blob_dir/ab/abcdef….suffix``.

    ``suffix`` may be given with or without its dot. Raises ValueError for anything but a
    lowercase hex SHA-256 or a short alphanumeric suffix, so a name read from a record can
    never point outside ``blob_dir``.
    """
    if not _SHA256.fullmatch(sha256):
        raise ValueError(f"not a lowercase hex SHA-256: {sha256!r}")
    if not suffix.startswith("."):
        suffix = "." + suffix
    if not _SUFFIX.fullmatch(suffix):
        raise ValueError(f"not a blob suffix: {suffix!r}")
    return blob_dir / sha256[:2] / f"{sha256}{suffix}"


def verify_blob(path: Path, sha256: str) -> bool:
    """True when ``path`` exists and its content hashes to ``sha256``."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1024 * 1024), b""):
                digest.update(chunk)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return False
    return digest.hexdigest() == sha256


def import_photo(source: Path, blob_dir: Path) -> PhotoFiles:
    """Check ``source`` is a JPEG, PNG or WebP Pillow decodes whole, and store its files.

    Nothing is written unless the photo is accepted. If writing fails half-way (disk
    full), the blobs this call created are removed again; blobs that were already there
    are left alone, since other records may name them.
    """
    data = _read_source(source)
    with _decoding(), Image.open(io.BytesIO(data), formats=ACCEPTED_FORMATS) as im:
        if im.width * im.height > MAX_PIXELS:
            raise _too_many_pixels()
        mime, suffix = _TYPES[im.format or ""]
        exif = im.getexif()
        taken_at = _taken_at(exif)
        width, height = im.size
        if exif.get(ExifTags.Base.Orientation) in (5, 6, 7, 8):  # quarter turns
            width, height = height, width
        # JPEG can decode at 1/2, 1/4 or 1/8 scale, still reading every byte (truncation
        # is caught); only scales that stay at least as large as the working box are used.
        im.draft("RGB", (WORKING_BOX[0], WORKING_BOX[0]))
        im.load()
        upright = ImageOps.exif_transpose(im)
    rgb = _to_rgb(upright)
    icc = upright.info.get("icc_profile")
    working_image = _fit(rgb, WORKING_BOX)
    # From the working copy, not the original: a third of the resampling cost, same look.
    thumb_image = _fit(working_image, THUMB_BOX)
    working = _encode_jpeg(working_image, icc, WORKING_QUALITY)
    thumb = _encode_jpeg(thumb_image, icc, THUMB_QUALITY)

    created: list[Path] = []
    try:
        original_sha, original_path = store_blob(blob_dir, data, suffix, created=created)
        working_sha, working_path = store_blob(blob_dir, working, ".jpg", created=created)
        thumb_sha, thumb_path = store_blob(blob_dir, thumb, ".jpg", created=created)
    except BaseException:
        for path in created:
            with contextlib.suppress(OSError):
                path.unlink()
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # only succeeds when the shard folder is empty
        raise
    return PhotoFiles(
        original_sha256=original_sha,
        original_path=original_path,
        working_sha256=working_sha,
        working_path=working_path,
        thumb_sha256=thumb_sha,
        thumb_path=thumb_path,
        width=width,
        height=height,
        taken_at=taken_at,
        mime=mime,
    )


def store_blob(
    blob_dir: Path, data: bytes, suffix: str, *, created: list[Path] | None = None
) -> tuple[str, Path]:
    """Write ``data`` content-addressed under ``blob_dir``; return (sha256, path).

    Atomic: a temporary file in the same folder is fsynced, then renamed over the target,
    then the folder is fsynced. A blob already present with the right content is not
    rewritten; one whose content does not match (a torn copy from elsewhere) is replaced.
    When the file is new its path is appended to ``created``.
    """
    sha = hashlib.sha256(data).hexdigest()
    path = blob_path(blob_dir, sha, suffix)
    if verify_blob(path, sha):
        return sha, path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    fsync_folder(path.parent)
    if created is not None:
        created.append(path)
    return sha, path


def _read_source(source: Path) -> bytes:
    try:
        size = source.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PhotoError(
                "file_too_large",
                f"Arquivo grande demais: máximo {MAX_FILE_BYTES // (1024 * 1024)} MB.",
            )
        data = source.read_bytes()
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise PhotoError("unreadable", f"Não foi possível ler o arquivo: {reason}.") from exc
    if data[4:8] == b"ftyp" and data[8:12] in _HEIF_BRANDS:
        raise PhotoError(
            "heic",
            "Fotos HEIC não são suportadas: configure a câmera para JPEG ou converta a foto.",
        )
    return data


def _too_many_pixels() -> PhotoError:
    return PhotoError(
        "too_many_pixels", f"Imagem grande demais: máximo {MAX_PIXELS // 1_000_000} megapixels."
    )


@contextlib.contextmanager
def _decoding() -> Iterator[None]:
    """Turn whatever Pillow raises on a hostile or broken file into a PhotoError."""
    with warnings.catch_warnings():
        # Pillow only warns between its own limit and twice that; a warning is a refusal.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            yield
        except PhotoError:
            raise
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise _too_many_pixels() from exc
        except UnidentifiedImageError as exc:
            raise PhotoError(
                "not_an_image",
                "Arquivo não é uma imagem válida: use uma foto JPEG, PNG ou WebP.",
            ) from exc
        # Pillow's decoders raise many exception types on malformed data (OSError for a
        # truncated file, SyntaxError, struct.error, ValueError, ...): all mean "corrupt".
        except Exception as exc:
            raise PhotoError(
                "corrupt", "Imagem incompleta ou corrompida: copie o arquivo novamente."
            ) from exc


def _taken_at(exif: Image.Exif) -> str | None:
    sub = exif.get_ifd(ExifTags.IFD.Exif)
    raw = sub.get(ExifTags.Base.DateTimeOriginal)
    if isinstance(raw, bytes):
        raw = raw.decode("ascii", "replace")
    if not isinstance(raw, str):
        return None
    try:
        taken = dt.datetime.strptime(raw.strip("\x00 "), "%Y:%m:%d %H:%M:%S")
    except ValueError:  # blank "    :  :  " or "0000:00:00 00:00:00" from unset clocks
        return None
    offset = sub.get(_OFFSET_TIME_ORIGINAL)
    if isinstance(offset, bytes):
        offset = offset.decode("ascii", "replace")
    text = taken.isoformat()
    if isinstance(offset, str) and _OFFSET.fullmatch(offset.strip("\x00 ")):
        text += offset.strip("\x00 ")
    return text


def _to_rgb(im: Image.Image) -> Image.Image:
    # Transparent areas go white, as on paper, not black as a plain convert("RGB") gives.
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        rgba = im.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return im if im.mode == "RGB" else im.convert("RGB")


def _fit(im: Image.Image, box: tuple[int, int]) -> Image.Image:
    """``im`` scaled down to fit ``box``, keeping its aspect; never enlarged.

    Bicubic with a reducing gap, as Pillow's own ``thumbnail``: a box-filter halving
    first, then a proper filter: 1.3–1.9× faster than Lanczos here, no visible loss.
    """
    if im.width <= box[0] and im.height <= box[1]:
        return im.copy()
    if im.width * box[1] >= im.height * box[0]:  # as wide as the box or wider
        size = (box[0], max(1, round(im.height * box[0] / im.width)))
    else:
        size = (max(1, round(im.width * box[1] / im.height)), box[1])
    return im.resize(size, Image.Resampling.BICUBIC, reducing_gap=2.0)


def _encode_jpeg(im: Image.Image, icc_profile: object, quality: int) -> bytes:
    # Pillow carries im.info (EXIF with GPS, XMP, comments) through convert and resize,
    # and its JPEG writer reuses some of it: clear it so only pixels and colour profile
    # are written.
    im.info = {}
    buf = io.BytesIO()
    options: dict[str, object] = {"quality": quality}
    if isinstance(icc_profile, bytes):
        options["icc_profile"] = icc_profile
    im.save(buf, "JPEG", **options)
    return buf.getvalue()
