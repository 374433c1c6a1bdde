"""Fixtures for document tests: one store with every document kind, rendered once."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from recordkit import Kit, build_kit

from inspector_app.documents import render_document


@pytest.fixture(scope="session")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    base = tmp_path_factory.mktemp("documents")
    (base / "photos").mkdir()
    built = build_kit(base / "store", base / "photos")
    yield built
    built.store.close()


@pytest.fixture(scope="session")
def rendered(kit: Kit) -> Callable[..., bytes]:
    """``rendered(name, layout="a4", copy="1", reprint_number=0, demo=False)``, cached."""
    cache: dict[tuple[object, ...], bytes] = {}

    def render(name: str, layout: str = "a4", copy: str = "1", reprint_number: int = 0,
               demo: bool = False) -> bytes:
        key = (name, layout, copy, reprint_number, demo)
        if key not in cache:
            cache[key] = render_document(kit.records[name], blob_dir=kit.store.blob_dir,
                                         layout=layout, copy=copy,
                                         reprint_number=reprint_number, demo=demo)
        return cache[key]

    return render
