"""Document benchmarks: an A4 auto de infração with 4 photos and its QR, and the 80 mm roll,
each next to a bare reportlab canvas drawing the same elements (aim: ≤ 1.5× the bare page).

The bare page draws every piece of text the rendered document shows (read back with pypdf:
text, position, face, size), one ``drawString`` each, on as many pages of the same size,
with the same four thumbnails, the agent's signature PNG and the QR PNG on each page: what
any renderer must pay (font subsets, images, compression). The difference is the layout.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pypdf import PageObject, PdfReader
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen.canvas import Canvas

from benchmarks import stats
from benchmarks.bench_media import make_photo
from inspector_app import services
from inspector_app.demo import seed_registry
from inspector_app.documents import qr_png, render_document
from inspector_app.documents.fonts import CONDENSED, CONDENSED_BOLD, SANS, SANS_BOLD
from inspector_app.media.photos import blob_path
from inspector_app.packs import get_pack
from inspector_app.store.db import Store, open_store
from inspector_app.store.sealing import SealedRecord

AIM_RATIO = 1.5
FACES = (SANS, SANS_BOLD, CONDENSED, CONDENSED_BOLD)
Layout = Literal["a4", "80mm"]
LAYOUTS: tuple[tuple[Layout, str], ...] = (
    ("a4", "A4 auto de infração, 4 photos + QR"),
    ("80mm", "80 mm auto de infração, 4 photos + QR"),
)
SESSION = services.Session("1002", "Maria da Conceição Araújo", "inspector")


def build_auto(store: Store, photo_dir: Path) -> SealedRecord:
    """A sealed DF STPA auto: 3 failed items, 4 photos, driver refusing, retention."""
    seed_registry(store, vehicles=12, seed=3, today=dt.date(2026, 4, 14))
    plate = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = 'DF_STPA' ORDER BY id").fetchone()[0]
    insp = services.start_inspection(
        store=store, session=SESSION, pack_id="DF_STPA", kind="fiscalizacao",
        location_type="terminal", place="Rodoviária do Plano Piloto – plataforma D",
        plate=plate, occurred_at="2026-04-14T08:47:00-03:00", latitude=-15.793889,
        longitude=-47.882778,
        driver={"name": "Sebastião Gonçalves", "cpf": "16944060167", "registered": True},
    )
    items = [i for i in get_pack("DF_STPA").items.values() if i.fail and not i.requires_facts]
    for item in items[:3]:
        services.record_answer(store=store, inspection_id=insp, item_id=item.id,
                               result="fail", note="Constatado na fiscalização.")
    for n in range(4):
        services.attach_photo(store=store, inspection_id=insp,
                              source=make_photo(photo_dir / f"foto_{n}.jpg"))
    stroke = [(40 + t, 100 + 40 * math.sin(t / 15)) for t in range(0, 480, 6)]
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=[stroke])
    services.record_signature(store=store, inspection_id=insp, role="driver", status="refused",
                              note="Condutor recusou-se a assinar após a leitura do auto.")
    sealed = services.seal_inspection(
        store=store, session=SESSION, inspection_id=insp,
        narrative="Em fiscalização de rotina constatei as irregularidades descritas, "
                  "mostradas ao condutor, que acompanhou a verificação.",
        retain=True, retention_place="Pátio da Rodoviária",
    )
    auto = sealed.of_kind("auto_infracao")
    assert auto is not None
    return auto


Chunk = tuple[str, float, float, str, float]  # text, x, y, face, size


def text_chunks(page: PageObject) -> list[Chunk]:
    """Every piece of text ``page`` shows, where and in which face and size."""
    chunks: list[Chunk] = []

    def visit(text: str, cm: list[float], tm: list[float], font: Any, size: float) -> None:
        if not text.strip():
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        base = str(font.get("/BaseFont", "")) if font else ""
        face = base.rsplit("+", 1)[-1].lstrip("/")
        chunks.append((text.strip(), x, y, face if face in FACES else SANS, size))

    page.extract_text(visitor_text=visit)
    return chunks


def bare_page(pdf: bytes, record: SealedRecord, blob_dir: Path) -> Callable[[], bytes]:
    """A function drawing ``pdf``'s elements on a bare canvas (see the module docstring)."""
    reader = PdfReader(io.BytesIO(pdf))
    pages = [(float(p.mediabox.width), float(p.mediabox.height), text_chunks(p))
             for p in reader.pages]
    body = record.envelope["body"]
    thumbs = [str(blob_path(blob_dir, p["thumb_sha256"], ".jpg")) for p in body["photos"]]
    signature = str(blob_path(blob_dir, body["signatures"]["agent"]["png_sha256"], ".png"))
    qr = qr_png(record.verification_code)

    def draw() -> bytes:
        buf = io.BytesIO()
        c = Canvas(buf, invariant=1)
        for number, (width, height, chunks) in enumerate(pages):
            c.setPageSize((width, height))
            for text, x, y, face, size in chunks:
                c.setFont(face, size)
                c.drawString(x, y, text)
            c.drawImage(ImageReader(io.BytesIO(qr)), 10, 10, 62, 62)
            if number == 0:
                for k, thumb in enumerate(thumbs):
                    c.drawImage(thumb, 10 + (width / 4) * k, height / 2, width / 4 - 6,
                                (width / 4 - 6) * 0.75)
                c.drawImage(signature, 10, height / 3, 170, 48, mask="auto")
            c.showPage()
        c.save()
        return buf.getvalue()

    return draw


def _paired_times(a: Callable[[], object], b: Callable[[], object],
                  repeat: int) -> tuple[list[float], list[float]]:
    """Sorted timings of ``a`` and ``b``, run alternately so both see the same machine load."""
    a(), b()
    out_a: list[float] = []
    out_b: list[float] = []
    for _ in range(repeat):
        for fn, out in ((a, out_a), (b, out_b)):
            t0 = time.perf_counter()
            fn()
            out.append((time.perf_counter() - t0) * 1000)
    return sorted(out_a), sorted(out_b)


def _row(name: str, samples: list[float], vs: str) -> dict[str, object]:
    return stats.row(name, samples, vs)


def run(repeat: int = 25) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench-documents-") as tmp:
        root = Path(tmp)
        (root / "photos").mkdir()
        store = open_store(root / "store")
        try:
            record = build_auto(store, root / "photos")
            blobs = store.blob_dir
            for layout, label in LAYOUTS:
                def render(layout: Layout = layout) -> bytes:
                    return render_document(record, blob_dir=blobs, layout=layout)

                pdf = render()
                reader = PdfReader(io.BytesIO(pdf))
                pages = len(reader.pages)
                runs = sum(len(text_chunks(p)) for p in reader.pages)
                doc, bare = _paired_times(render, bare_page(pdf, record, blobs), repeat)
                ratio = doc[len(doc) // 2] / bare[len(bare) // 2]
                rows.append(_row(f"documents: {label} ({pages} p., {runs} text runs)", doc,
                                 f"{ratio:.2f}× the bare page (aim ≤ {AIM_RATIO}×)"))
                rows.append(_row(f"baseline: bare reportlab canvas, same {runs} text runs, "
                                 "thumbnails, signature, QR", bare, ""))
        finally:
            store.close()
    return rows
