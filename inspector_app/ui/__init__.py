"""The desktop GUI (PySide6): the only package that imports Qt.

PySide6 6.12.0 on Python 3.11 leaks a reference to ``None`` on every void call and to
``True`` on every ``Signal.emit`` and aborts after a few thousand calls; ``pyproject.toml``
excludes that release and ``tests/ui/test_qt_binding.py`` checks the installed binding.
"""
