"""Taking a checklist photo with a camera (QtMultimedia).

The dialog shows the camera's picture and saves one capture to a file in a temporary folder
(``QImageCapture.captureToFile``); the checklist imports that file like a photo chosen from
disk (``services.attach_photo``) and then deletes it. :meth:`CameraDialog.image_saved` is
the part that receives the captured file, so it is tested without a camera.

Caveat: importing this module needs QtMultimedia, which needs Debian's ``libpulse0``; the
checklist imports it lazily and disables its "Câmera" button when the import fails or
``QMediaDevices.videoInputs()`` is empty.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut, QShowEvent
from PySide6.QtMultimedia import (
    QCamera,
    QCameraDevice,
    QImageCapture,
    QMediaCaptureSession,
    QMediaDevices,
)
from PySide6.QtMultimediaWidgets import QVideoWidget
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from inspector_app.ui.widgets import Banner, big_button

CAPTURE_FAILED = (
    "A câmera não conseguiu tirar a foto ({detail}). Tente de novo; se continuar, feche e use "
    "\"Foto…\" para escolher um arquivo."
)


def default_camera() -> QCameraDevice | None:
    """The system's default camera, else the first one found; None when there is none."""
    devices = QMediaDevices.videoInputs()
    if not devices:
        return None
    default = QMediaDevices.defaultVideoInput()
    return default if not default.isNull() else devices[0]


class CameraDialog(QDialog):
    """Live picture and a "Capturar" button; ``photo`` is the saved file once accepted."""

    def __init__(self, parent: QWidget | None, device: QCameraDevice, folder: Path,
                 name: str) -> None:
        super().__init__(parent)
        self.setWindowTitle("Tirar foto")
        self.resize(800, 640)
        self.folder = folder
        self.name = name
        self.photo: Path | None = None
        self._shots = 0
        self.camera = QCamera(device, self)
        self.capture = QImageCapture(self)
        self.capture.setFileFormat(QImageCapture.FileFormat.JPEG)
        self.capture.setQuality(QImageCapture.Quality.HighQuality)
        self.preview = QVideoWidget()
        self.preview.setMinimumSize(480, 360)
        self.session = QMediaCaptureSession(self)
        self.session.setCamera(self.camera)
        self.session.setImageCapture(self.capture)
        self.session.setVideoOutput(self.preview)
        self.banner = Banner()
        self.status = QLabel(f"Câmera: {device.description() or 'padrão'}")
        self.shoot_button = big_button("&Capturar (Espaço)", primary=True)
        self.shoot_button.setEnabled(False)
        self.shoot_button.clicked.connect(self.shoot)
        self.cancel_button = big_button("&Voltar")
        self.cancel_button.clicked.connect(self.reject)
        QShortcut(QKeySequence(Qt.Key.Key_Space), self).activated.connect(self.shoot)
        self.capture.readyForCaptureChanged.connect(self.shoot_button.setEnabled)
        self.capture.imageSaved.connect(self.image_saved)
        self.capture.errorOccurred.connect(
            lambda _id, _error, message: self.capture_failed(message))
        self.camera.errorOccurred.connect(lambda _error, message: self.capture_failed(message))
        buttons = QHBoxLayout()
        buttons.addWidget(self.status, 1)
        buttons.addWidget(self.cancel_button)
        buttons.addWidget(self.shoot_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.preview, 1)
        layout.addWidget(self.banner)
        layout.addLayout(buttons)

    def showEvent(self, event: QShowEvent) -> None:
        self.camera.start()
        super().showEvent(event)

    def done(self, result: int) -> None:
        self.camera.stop()
        super().done(result)

    def shoot(self) -> None:
        if not self.capture.isReadyForCapture():
            return
        self._shots += 1
        self.shoot_button.setEnabled(False)
        self.status.setText("Gravando a foto…")
        self.capture.captureToFile(str(self.folder / f"{self.name}-{self._shots}.jpg"))

    def image_saved(self, _capture_id: int, file_name: str) -> None:
        """The camera wrote ``file_name``: keep it and close, or say what went wrong."""
        path = Path(file_name)
        if not path.is_file() or path.stat().st_size == 0:
            self.capture_failed("o arquivo da foto não foi gravado")
            return
        self.photo = path
        self.accept()

    def capture_failed(self, detail: str) -> None:
        self.status.setText("")
        self.shoot_button.setEnabled(self.capture.isReadyForCapture())
        self.banner.error(CAPTURE_FAILED.format(detail=detail or "erro desconhecido"))

    @classmethod
    def ask(cls, parent: QWidget | None, device: QCameraDevice, folder: Path,
            name: str) -> Path | None:
        """Run the dialog; the captured file, or None when cancelled."""
        dialog = cls(parent, device, folder, name)
        accepted = dialog.exec() == QDialog.DialogCode.Accepted
        return dialog.photo if accepted else None
