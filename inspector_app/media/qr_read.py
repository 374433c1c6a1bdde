"""Reading HQ's enrolment QR code from a photo (a picture of the console's screen, or a
PNG of it) with zxing-cpp, so the agent does not type the HQ address and the code.

The photo is read with Pillow (EXIF orientation applied, decompression bombs refused, at
most :data:`MAX_PHOTO_BYTES`), scaled down when huge (a QR code on a screen photo stays
readable), and every QR code in it is tried until one is an enrolment code
(``sync.protocol.parse_enrolment_uri``). Errors are ``QrReadError`` with a Portuguese
message for the dialog.
"""

from __future__ import annotations

from pathlib import Path

import zxingcpp
from PIL import Image, ImageOps, UnidentifiedImageError

from inspector_app.sync.protocol import parse_enrolment_uri

MAX_PHOTO_BYTES = 40 * 1024 * 1024
MAX_SIDE = 3000


class QrReadError(ValueError):
    """The photo has no readable enrolment QR code; the message says why (Portuguese)."""


def read_enrolment_qr(path: Path) -> tuple[str, str]:
    """(HQ address, code) from the enrolment QR code in the photo at ``path``."""
    try:
        size = path.stat().st_size
    except OSError:
        raise QrReadError("Não foi possível abrir a foto escolhida.") from None
    if size > MAX_PHOTO_BYTES:
        raise QrReadError("A foto é grande demais (mais de 40 MB); tire outra, mais próxima "
                          "do código.")
    try:
        with Image.open(path) as opened:
            image = ImageOps.exif_transpose(opened).convert("L")
    except (UnidentifiedImageError, Image.DecompressionBombError, OSError, ValueError):
        raise QrReadError("O arquivo escolhido não é uma foto legível.") from None
    if max(image.size) > MAX_SIDE:
        image.thumbnail((MAX_SIDE, MAX_SIDE))
    qr_only = zxingcpp.BarcodeFormats(zxingcpp.BarcodeFormat.QRCode)
    found = zxingcpp.read_barcodes(image, formats=qr_only)
    if not found:
        raise QrReadError("Nenhum código QR foi encontrado na foto: fotografe o código "
                          "inteiro, de frente e sem reflexo.")
    problem = "Este código QR não é um código de cadastro da sede."
    for barcode in found:
        try:
            return parse_enrolment_uri(barcode.text)
        except ValueError as exc:
            problem = str(exc)
    raise QrReadError(problem)
