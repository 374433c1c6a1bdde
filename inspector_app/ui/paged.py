"""A table model that loads its rows a page at a time on the store worker (issue 17).

A screen over a store of 10^5–10^6 sealed records never fills a table row by row on the
GUI thread: ``PagedTableModel`` asks the store worker for one page (``load(store, after,
limit)`` returns the rows after the key of the last row shown), appends it with
``beginInsertRows`` and asks for the next one only when the view scrolls near the end
(Qt's ``canFetchMore`` / ``fetchMore``). Only the page crosses threads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    Signal,
)

Index = QModelIndex | QPersistentModelIndex
PAGE = 50


class PagedTableModel(QAbstractTableModel):
    """Rows of ``cells(row) -> tuple[str, ...]``, loaded by ``load(store, after, limit)``
    (``after``: ``key(last row)`` or None) through ``tasks.run_store``."""

    page_did_load = Signal()  # after each page (the first one included)
    load_did_fail = Signal(object)  # the exception (the screen shows it)

    def __init__(self, tasks: Any, columns: Sequence[str],
                 load: Callable[[Any, Any, int], Sequence[Any]],
                 cells: Callable[[Any], Sequence[str]], key: Callable[[Any], Any],
                 parent: QObject | None = None, page: int = PAGE) -> None:
        super().__init__(parent)
        self.tasks = tasks
        self.columns = tuple(columns)
        self._load, self._cells, self._key = load, cells, key
        self.page = page
        self.rows: list[Any] = []
        self._texts: list[Sequence[str]] = []
        self._more = False
        self._loading = False
        self._generation = 0

    # --- Qt model API -------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 - Qt's default
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or index.row() >= len(self._texts):
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self._texts[index.row()][index.column()]
        return None

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return self.columns[section]
        return None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and self._more and not self._loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._request(self._key(self.rows[-1]) if self.rows else None)

    # --- loading ------------------------------------------------------------------------------

    def text(self, row: int, column: int) -> str:
        return str(self._texts[row][column])

    def reload(self) -> None:
        """Forget the rows and load the first page again (a page still on its way is
        dropped when it arrives)."""
        self._generation += 1
        self.beginResetModel()
        self.rows, self._texts, self._more = [], [], False
        self.endResetModel()
        self._loading = False
        self._request(None)

    def _request(self, after: Any) -> None:
        self._loading = True
        generation, load, limit = self._generation, self._load, self.page

        def done(rows: Sequence[Any]) -> None:
            if generation != self._generation:
                return
            self._loading = False
            rows = list(rows)
            self._more = len(rows) >= limit
            if rows:
                first = len(self.rows)
                self.beginInsertRows(QModelIndex(), first, first + len(rows) - 1)
                self.rows.extend(rows)
                self._texts.extend(tuple(self._cells(r)) for r in rows)
                self.endInsertRows()
            self.page_did_load.emit()

        def failed(exc: BaseException) -> None:
            if generation == self._generation:
                self._loading = False
                self.load_did_fail.emit(exc)

        self.tasks.run_store(lambda store: load(store, after, limit), done, failed,
                             owner=self)
