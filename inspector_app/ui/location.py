"""The place step's "Usar GPS" button (QtPositioning): a real fix or nothing, never a guess.

The source is the system's default position source (geoclue2 on Linux, the Windows
location service) or, when ``INSPECTOR_NMEA_SOURCE`` names one, an NMEA receiver:
``serial:ttyUSB0`` for a GPS puck on a serial port, or a ``file:///…`` NMEA log (used by
the tests to replay a real fix). Without a source the button is disabled and its tooltip
says why. A request that times out or fails shows a Portuguese message and leaves the
latitude and longitude as they were; they are filled only from a valid fix.
"""

from __future__ import annotations

import logging
import os
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QPushButton, QWidget

from inspector_app.ui.widgets import TOUCH_TARGET_PX

log = logging.getLogger(__name__)

NMEA_ENV = "INSPECTOR_NMEA_SOURCE"
REQUEST_TIMEOUT_MS = 20_000
NO_POSITIONING = ("GPS indisponível: o suporte a localização do Qt (QtPositioning) não "
                  "carregou neste computador. Digite a latitude e a longitude.")
NO_SOURCE = ("GPS indisponível: nenhuma fonte de posição encontrada neste computador "
             "(receptor GPS ou serviço de localização). Digite a latitude e a longitude.")
TIMEOUT = ("O GPS não respondeu a tempo (sem sinal de satélites?). Tente ao ar livre ou "
           "digite a latitude e a longitude.")
FAILED = ("O GPS não forneceu a posição ({detail}). Digite a latitude e a longitude, ou "
          "tente de novo.")
ACCESS = ("O sistema negou acesso à localização. Permita o acesso nas configurações do "
          "sistema ou digite a latitude e a longitude.")


def find_position_source(parent: QWidget | None) -> tuple[Any | None, str]:
    """A ``QGeoPositionInfoSource`` and "" — or None and the tooltip that says why not."""
    try:
        from PySide6.QtPositioning import QGeoPositionInfoSource
    except ImportError as exc:
        log.warning("QtPositioning is not available: %s", exc)
        return None, NO_POSITIONING
    nmea = os.environ.get(NMEA_ENV, "").strip()
    if nmea:
        source = QGeoPositionInfoSource.createSource("nmea", {"nmea.source": nmea}, parent)
    else:
        source = QGeoPositionInfoSource.createDefaultSource(parent)
    if source is None:
        return None, NO_SOURCE
    return source, ""


class GpsButton(QPushButton):
    """Asks the position source for one fix; ``position_found(lat, lon, accuracy_m)``
    (accuracy None when unknown) or ``position_failed(message)``."""

    position_found = Signal(float, float, object)
    position_failed = Signal(str)

    def __init__(self, parent: QWidget | None = None, *,
                 finder: Any = find_position_source) -> None:
        super().__init__("&Usar GPS", parent)
        self.setMinimumHeight(TOUCH_TARGET_PX)
        self.setAccessibleName("Usar GPS")
        self._finder = finder
        self.source: Any = None
        self.why_not = ""
        self._waiting = False
        self.clicked.connect(self.request)
        self.refresh()

    def refresh(self) -> None:
        """Look for a position source again (the place step calls it on each new
        inspection: a receiver may have been plugged in)."""
        if self.source is not None:
            return
        self.source, self.why_not = self._finder(self)
        if self.source is not None:
            self.source.positionUpdated.connect(self._updated)
            self.source.errorOccurred.connect(self._error)
        self.setEnabled(self.source is not None)
        self.setToolTip("Preencher latitude e longitude com a posição do GPS"
                        if self.source is not None else self.why_not)

    def request(self) -> None:
        if self.source is None or self._waiting:
            return
        self._waiting = True
        self.setText("Aguardando GPS…")
        self.source.requestUpdate(REQUEST_TIMEOUT_MS)

    def _done(self) -> None:
        self._waiting = False
        self.setText("&Usar GPS")

    def _updated(self, info: Any) -> None:
        if not self._waiting:
            return
        self._done()
        coordinate = info.coordinate() if info.isValid() else None
        if coordinate is None or not coordinate.isValid():
            self.position_failed.emit(FAILED.format(detail="posição inválida"))
            return
        from PySide6.QtPositioning import QGeoPositionInfo

        accuracy = None
        if info.hasAttribute(QGeoPositionInfo.Attribute.HorizontalAccuracy):
            accuracy = float(info.attribute(QGeoPositionInfo.Attribute.HorizontalAccuracy))
        self.position_found.emit(coordinate.latitude(), coordinate.longitude(), accuracy)

    def _error(self, error: Any) -> None:
        if not self._waiting:
            return
        self._done()
        from PySide6.QtPositioning import QGeoPositionInfoSource

        errors = QGeoPositionInfoSource.Error
        if error == errors.UpdateTimeoutError:
            self.position_failed.emit(TIMEOUT)
        elif error == errors.AccessError:
            self.position_failed.emit(ACCESS)
        else:
            self.position_failed.emit(FAILED.format(detail=str(getattr(error, "name", error))))
