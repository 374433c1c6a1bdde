"""Photos and signature images: Pillow work behind plain functions the store calls.

Every file is content-addressed by its SHA-256 under one blob folder
(``blob_dir/ab/abcdef….ext``) and written atomically; see ``photos`` and ``signatures``.
"""

from __future__ import annotations

from .photos import PhotoError, PhotoFiles, blob_path, import_photo, store_blob, verify_blob
from .signatures import SignatureError, save_signature_png, signature_from_png

__all__ = [
    "PhotoError",
    "PhotoFiles",
    "SignatureError",
    "blob_path",
    "import_photo",
    "save_signature_png",
    "signature_from_png",
    "store_blob",
    "verify_blob",
]
