"""The device's local store: SQLite through sqlite-utils (DESIGN.md §4).

Reference data (owned by HQ) and field records (owned by the device) live in one database
file; field records become immutable once sealed (triggers refuse UPDATE and DELETE).
"""

from inspector_app.store.db import (
    Store,
    StoreError,
    StoreReadOnlyError,
    StoreVersionError,
    default_data_dir,
    open_store,
)

__all__ = [
    "Store",
    "StoreError",
    "StoreReadOnlyError",
    "StoreVersionError",
    "default_data_dir",
    "open_store",
]
