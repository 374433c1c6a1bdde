"""A reference leak of the Qt binding, made harmless (imported first by ``inspector_app.ui``).

PySide6 6.12.0 on Python 3.11 drops a reference to ``None`` on every call of a method that
returns ``void`` and to ``True`` on every ``Signal.emit``; after a few thousand calls CPython
frees ``None`` and aborts ("none_dealloc: deallocating None"). PySide6 6.11.3 and Python
3.12+ (immortal singletons) are not affected.
"""

from __future__ import annotations

import ctypes
import sys

# Far more calls than any session makes, far below the counter's limit.
_PIN = 1 << 40


def _leaks_references() -> bool:
    """Measure the bug rather than trust a version number: 20 void calls and 20 emits."""
    from PySide6.QtCore import QObject, Signal

    class _Probe(QObject):
        probed = Signal()

    probe = _Probe()
    none_before, true_before = sys.getrefcount(None), sys.getrefcount(True)
    for _ in range(20):
        probe.setObjectName("probe")
        probe.probed.emit()
    lost = (none_before - sys.getrefcount(None), true_before - sys.getrefcount(True))
    return max(lost) >= 20


def pin_singletons() -> bool:
    """Make ``None``, ``True`` and ``False`` unfreeable when the Qt binding leaks their refs.

    Python 3.12+ makes them immortal itself; on 3.11 this adds 2**40 references to each
    (they are never freed anyway, so nothing is leaked). Returns whether it pinned.
    Caveat: ``sys.getrefcount`` of the three is meaningless afterwards.
    """
    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    if not _leaks_references():
        return False
    for singleton in (None, True, False):
        ctypes.c_ssize_t.from_address(id(singleton)).value += _PIN
    return True

