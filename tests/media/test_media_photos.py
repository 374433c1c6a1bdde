"""Photo import: original kept byte for byte, upright working copy and thumbnail, refusals."""

from __future__ import annotations

import hashlib
import struct
import zlib
from pathlib import Path

import pytest
from PIL import ExifTags, Image

from inspector_app.media.photos import (
    THUMB_BOX,
    WORKING_BOX,
    PhotoError,
    blob_path,
    import_photo,
    verify_blob,
)

RED = (220, 20, 20)


def make_jpeg(
    path: Path,
    size: tuple[int, int] = (640, 480),
    *,
    orientation: int | None = None,
    gps: bool = False,
    taken: str | None = None,
    offset: str | None = None,
) -> Path:
    """A real JPEG with a red block in its stored top-left corner and the EXIF asked for."""
    im = Image.linear_gradient("L").resize(size).convert("RGB")
    im.paste(RED, (0, 0, size[0] // 4, size[1] // 4))
    exif = Image.Exif()
    if orientation is not None:
        exif[ExifTags.Base.Orientation] = orientation
    if taken is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[ExifTags.Base.DateTimeOriginal] = taken
    if offset is not None:
        exif.get_ifd(ExifTags.IFD.Exif)[0x9011] = offset  # OffsetTimeOriginal
    if gps:
        gps_ifd = exif.get_ifd(ExifTags.IFD.GPSInfo)
        gps_ifd[ExifTags.GPS.GPSLatitudeRef] = "S"
        gps_ifd[ExifTags.GPS.GPSLatitude] = (15.0, 47.0, 38.0)
        gps_ifd[ExifTags.GPS.GPSLongitudeRef] = "W"
        gps_ifd[ExifTags.GPS.GPSLongitude] = (47.0, 52.0, 57.0)
    im.save(path, "JPEG", quality=90, exif=exif, comment=b"Terminal Rodoviario, Asa Sul")
    return path


def png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def files_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_rotated_jpeg_gets_an_upright_working_copy_with_swapped_dimensions(tmp_path):
    source = make_jpeg(tmp_path / "rotated.jpg", (640, 480), orientation=6)
    photo = import_photo(source, tmp_path / "blobs")
    assert (photo.width, photo.height) == (480, 640)
    with Image.open(photo.working_path) as working:
        assert working.size == (480, 640)
        # Orientation 6 is "turn 90° clockwise to view": the stored top-left goes top-right.
        r, g, b = working.convert("RGB").getpixel((working.width - 20, 20))
        assert r > 180 and g < 80 and b < 80
        assert ExifTags.Base.Orientation not in working.getexif()
    with Image.open(photo.thumb_path) as thumb:
        assert thumb.size == (270, 360)


def test_original_bytes_are_kept_unchanged_and_named_by_their_sha256(tmp_path):
    source = make_jpeg(tmp_path / "IMG_0001.JPG", orientation=6, gps=True)
    blobs = tmp_path / "blobs"
    photo = import_photo(source, blobs)
    original = source.read_bytes()
    assert photo.original_path.read_bytes() == original
    assert photo.original_sha256 == hashlib.sha256(original).hexdigest()
    assert photo.original_path == blobs / photo.original_sha256[:2] / f"{photo.original_sha256}.jpg"
    assert photo.mime == "image/jpeg"
    for sha, path in (
        (photo.original_sha256, photo.original_path),
        (photo.working_sha256, photo.working_path),
        (photo.thumb_sha256, photo.thumb_path),
    ):
        assert path == blob_path(blobs, sha, ".jpg")
        assert verify_blob(path, sha)
    assert len({photo.original_sha256, photo.working_sha256, photo.thumb_sha256}) == 3


def test_gps_and_other_metadata_are_stripped_from_derived_files_but_kept_in_the_original(tmp_path):
    source = make_jpeg(tmp_path / "gps.jpg", gps=True, taken="2024:03:05 10:30:00")
    photo = import_photo(source, tmp_path / "blobs")
    with Image.open(photo.original_path) as original:
        assert original.getexif().get_ifd(ExifTags.IFD.GPSInfo)
    for path in (photo.working_path, photo.thumb_path):
        with Image.open(path) as derived:
            assert not derived.getexif().get_ifd(ExifTags.IFD.GPSInfo)
            assert "exif" not in derived.info
            assert "comment" not in derived.info
        raw = path.read_bytes()
        assert b"Exif\x00\x00" not in raw
        assert b"Asa Sul" not in raw


@pytest.mark.parametrize(
    ("taken", "offset", "expected"),
    [
        ("2024:03:05 10:30:00", None, "2024-03-05T10:30:00"),
        ("2024:03:05 10:30:00", "-03:00", "2024-03-05T10:30:00-03:00"),
        ("0000:00:00 00:00:00", None, None),  # camera clock never set
        (None, None, None),
    ],
)
def test_taken_at_is_exif_datetimeoriginal_as_iso(tmp_path, taken, offset, expected):
    source = make_jpeg(tmp_path / "dated.jpg", taken=taken, offset=offset)
    assert import_photo(source, tmp_path / "blobs").taken_at == expected


def test_large_photo_fits_the_working_and_thumbnail_boxes(tmp_path):
    source = make_jpeg(tmp_path / "big.jpg", (5000, 4000))
    photo = import_photo(source, tmp_path / "blobs")
    assert (photo.width, photo.height) == (5000, 4000)
    with Image.open(photo.working_path) as working:
        assert working.width <= WORKING_BOX[0] and working.height <= WORKING_BOX[1]
        assert working.size == (1200, 960)
    with Image.open(photo.thumb_path) as thumb:
        assert thumb.width <= THUMB_BOX[0] and thumb.height <= THUMB_BOX[1]
        assert thumb.size == (450, 360)


def test_small_photo_is_not_enlarged(tmp_path):
    source = make_jpeg(tmp_path / "small.jpg", (320, 240))
    photo = import_photo(source, tmp_path / "blobs")
    with Image.open(photo.working_path) as working, Image.open(photo.thumb_path) as thumb:
        assert working.size == thumb.size == (320, 240)


def test_transparent_png_is_kept_as_png_and_derived_on_white(tmp_path):
    source = tmp_path / "screenshot.png"
    im = Image.new("RGBA", (200, 100), (0, 0, 0, 0))
    im.paste((0, 0, 255, 255), (0, 0, 100, 100))
    im.save(source)
    photo = import_photo(source, tmp_path / "blobs")
    assert photo.mime == "image/png"
    assert photo.original_path.suffix == ".png"
    assert photo.original_path.read_bytes() == source.read_bytes()
    with Image.open(photo.working_path) as working:
        assert working.format == "JPEG"
        r, g, b = working.getpixel((150, 50))
        assert min(r, g, b) > 240  # transparent became paper white, not black


def test_importing_the_same_photo_twice_gives_the_same_hashes_and_no_new_files(tmp_path):
    source = make_jpeg(tmp_path / "again.jpg", orientation=6, gps=True)
    blobs = tmp_path / "blobs"
    first = import_photo(source, blobs)
    before = {p: p.stat().st_mtime_ns for p in files_in(blobs)}
    second = import_photo(source, blobs)
    assert second == first
    assert {p: p.stat().st_mtime_ns for p in files_in(blobs)} == before
    assert len(before) == 3


def test_a_damaged_blob_is_rewritten_on_reimport(tmp_path):
    source = make_jpeg(tmp_path / "torn.jpg")
    blobs = tmp_path / "blobs"
    photo = import_photo(source, blobs)
    photo.original_path.write_bytes(source.read_bytes()[:100])
    assert not verify_blob(photo.original_path, photo.original_sha256)
    import_photo(source, blobs)
    assert verify_blob(photo.original_path, photo.original_sha256)


def truncated_jpeg(path: Path) -> Path:
    data = make_jpeg(path, (800, 600)).read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return path


def png_declaring(path: Path, width: int, height: int) -> Path:
    """A tiny PNG whose header claims ``width``×``height`` pixels: a decompression bomb."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat)
        + png_chunk(b"IEND", b"")
    )
    return path


def real_png_of_42_megapixels(path: Path) -> Path:
    # 1-bit pixels keep a genuine 7000×6000 image small in memory and on disk.
    Image.new("1", (7000, 6000), 1).save(path)
    return path


def heic_header(path: Path) -> Path:
    path.write_bytes(b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 64)
    return path


def text_file(path: Path) -> Path:
    path.write_text("Relatório de vistoria\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (text_file, "not_an_image", "Arquivo não é uma imagem válida"),
        (truncated_jpeg, "corrupt", "Imagem incompleta ou corrompida"),
        (lambda p: png_declaring(p, 20000, 20000), "too_many_pixels", "Imagem grande demais: máximo 40 megapixels."),
        (lambda p: png_declaring(p, 10000, 10000), "too_many_pixels", "Imagem grande demais: máximo 40 megapixels."),
        (real_png_of_42_megapixels, "too_many_pixels", "Imagem grande demais: máximo 40 megapixels."),
        (heic_header, "heic", "Fotos HEIC não são suportadas"),
    ],
    ids=["text", "truncated-jpeg", "bomb-400MP", "bomb-100MP", "png-42MP", "heic"],
)
def test_bad_files_are_refused_in_portuguese_and_leave_nothing_behind(tmp_path, make, code, message):
    source = make(tmp_path / "upload.jpg")
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    with pytest.raises(PhotoError) as refused:
        import_photo(source, blobs)
    assert refused.value.code == code
    assert refused.value.message_pt.startswith(message)
    assert str(refused.value) == refused.value.message_pt
    assert list(blobs.iterdir()) == []


def test_missing_file_is_refused_with_a_photo_error(tmp_path):
    with pytest.raises(PhotoError) as refused:
        import_photo(tmp_path / "nowhere.jpg", tmp_path / "blobs")
    assert refused.value.code == "unreadable"
    assert refused.value.message_pt.startswith("Não foi possível ler o arquivo")


def test_a_write_that_fails_half_way_removes_only_the_blobs_it_created(tmp_path):
    source = make_jpeg(tmp_path / "photo.jpg")
    expected = import_photo(source, tmp_path / "first")
    blobs = tmp_path / "blobs"
    # A folder squatting on the working copy's name makes that one write fail for real.
    blocker = blob_path(blobs, expected.working_sha256, ".jpg")
    blocker.mkdir(parents=True)
    with pytest.raises(OSError):
        import_photo(source, blobs)
    assert files_in(blobs) == []
    assert not blob_path(blobs, expected.original_sha256, ".jpg").parent.exists()


def test_a_failed_write_leaves_blobs_that_were_already_stored(tmp_path):
    source = make_jpeg(tmp_path / "photo.jpg")
    expected = import_photo(source, tmp_path / "first")
    blobs = tmp_path / "blobs"
    kept = blob_path(blobs, expected.original_sha256, ".jpg")
    kept.parent.mkdir(parents=True)
    kept.write_bytes(source.read_bytes())
    blob_path(blobs, expected.working_sha256, ".jpg").mkdir(parents=True)
    with pytest.raises(OSError):
        import_photo(source, blobs)
    assert files_in(blobs) == [kept]


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "A" * 64, "ab" * 31, "g" * 64, ""]
)
def test_blob_path_refuses_names_that_are_not_a_lowercase_sha256(tmp_path, name):
    with pytest.raises(ValueError):
        blob_path(tmp_path, name, ".jpg")


@pytest.mark.parametrize("suffix", ["/x", "../jpg", ".j p g", "."])
def test_blob_path_refuses_suffixes_that_could_escape_the_folder(tmp_path, suffix):
    with pytest.raises(ValueError):
        blob_path(tmp_path, "a" * 64, suffix)


def test_blob_path_accepts_a_suffix_with_or_without_its_dot(tmp_path):
    sha = hashlib.sha256(b"x").hexdigest()
    assert blob_path(tmp_path, sha, "png") == blob_path(tmp_path, sha, ".png")
    assert blob_path(tmp_path, sha, "png") == tmp_path / sha[:2] / f"{sha}.png"


def test_verify_blob_is_false_for_a_missing_or_altered_file(tmp_path):
    path = tmp_path / "blob.bin"
    sha = hashlib.sha256(b"conteudo").hexdigest()
    assert not verify_blob(path, sha)
    path.write_bytes(b"conteudo")
    assert verify_blob(path, sha)
    path.write_bytes(b"conteudO")
    assert not verify_blob(path, sha)


@pytest.mark.parametrize(
    ("fmt", "options", "mime", "suffix"),
    [
        ("MPO", {"save_all": True, "append_images": [Image.new("RGB", (400, 300), "blue")]}, "image/jpeg", ".jpg"),
        ("WEBP", {}, "image/webp", ".webp"),
    ],
    ids=["multi-picture-jpeg", "webp"],
)
def test_phone_formats_are_accepted_with_their_own_type(tmp_path, fmt, options, mime, suffix):
    source = tmp_path / "phone.img"
    Image.new("RGB", (400, 300), "green").save(source, fmt, **options)
    photo = import_photo(source, tmp_path / "blobs")
    assert (photo.mime, photo.original_path.suffix) == (mime, suffix)
    assert photo.original_path.read_bytes() == source.read_bytes()
    with Image.open(photo.working_path) as working:
        assert (working.format, working.size) == ("JPEG", (400, 300))
