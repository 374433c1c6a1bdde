"""Where Qt's file dialogs start: the user's own folders, never the program's folder or the
current directory (which, run from a source checkout, is the source tree).

Caveat: ``QStandardPaths`` names the folder even when it does not exist yet (a fresh
account without ``~/Documents``); it is created then, and the home folder is the fallback
when it cannot be.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from PySide6.QtCore import QStandardPaths

_UNSAFE = re.compile(r'[\\/:*?"<>|\x00-\x1f]+')


def user_folder(kind: QStandardPaths.StandardLocation) -> Path:
    """The user's folder of ``kind`` (created when missing), else the home folder."""
    home = Path(QStandardPaths.writableLocation(
        QStandardPaths.StandardLocation.HomeLocation) or Path.home())
    named = QStandardPaths.writableLocation(kind)
    if not named:
        return home
    folder = Path(named)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return home
    return folder


def documents_folder() -> Path:
    return user_folder(QStandardPaths.StandardLocation.DocumentsLocation)


def pictures_folder() -> Path:
    return user_folder(QStandardPaths.StandardLocation.PicturesLocation)


def safe_file_name(name: str) -> str:
    """A document number as a file name: no folder separators or characters Windows
    refuses (``DF/2026/000001-via1.pdf`` → ``DF-2026-000001-via1.pdf``)."""
    cleaned = _UNSAFE.sub("-", name).strip(" .-")
    return cleaned or "documento.pdf"


def in_documents(name: str) -> str:
    """The path a save dialog proposes: ``name`` in the user's documents folder."""
    return str(documents_folder() / safe_file_name(name))


def portuguese_labels(dialog: Any) -> None:
    """The labels Qt's own file dialog still shows in English with ``qtbase_pt_BR``
    ("Look in:", "Files of type:"); a native dialog speaks the system's language."""
    from PySide6.QtWidgets import QFileDialog

    label = QFileDialog.DialogLabel
    dialog.setLabelText(label.LookIn, "Examinar:")
    dialog.setLabelText(label.FileName, "Nome do arquivo:")
    dialog.setLabelText(label.FileType, "Tipo de arquivo:")
    dialog.setLabelText(label.Reject, "Cancelar")
    if dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave:
        dialog.setLabelText(label.Accept, "Salvar")
