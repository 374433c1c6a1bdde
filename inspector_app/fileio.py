"""Small file-system helpers shared by the device (key, blobs) and HQ (blobs)."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_folder(folder: Path) -> None:
    """Make a rename inside ``folder`` durable (POSIX).

    Windows cannot open a folder this way, and NTFS journals the rename itself.
    """
    if os.name != "posix":
        return
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
