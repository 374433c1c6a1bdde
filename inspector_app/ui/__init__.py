"""The desktop GUI (PySide6): the only package that imports Qt.

Importing it first applies :func:`qtbinding.pin_singletons`, which keeps a reference leak of
PySide6 6.12.0 on Python 3.11 from freeing ``None`` and aborting the app (see there).
"""

from inspector_app.ui.qtbinding import pin_singletons

PINNED = pin_singletons()
