"""Direct ESC/POS printing (python-escpos): the thermal roll's content, QR printed natively.

The lines come from the same story as the thermal PDF (:func:`roll_ops` walks the roll's
flowables: headings, texts, field grids, signature images, the QR), so the paper says what
the archived PDF says. The printer is any python-escpos device: ``Usb``, ``Serial``
(also Bluetooth serial ports such as ``/dev/rfcomm0`` or ``COM5``) or ``Network``
(``host:9100``).

Before printing, the printer is asked for its paper sensor (``DLE EOT 4``) and offline
cause (``DLE EOT 2``: cover open); a printer that does not answer is printed to all the
same (status not reported). A print refused or cut off is raised as :class:`PrintFailed`
(``partial`` when bytes already left), which :func:`print_output` logs as failed in
``output_failures`` and never counts; it is offered again with the same number.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from reportlab.platypus import Flowable, Spacer, Table
from reportlab.platypus.flowables import KeepTogether

from inspector_app.store.db import Store

from . import outputs
from . import sections as sec
from .blocks import Band, FieldGrid, Heading, Line, Picture, QrImage
from .kinds import STORIES, TITLES
from .qr import verification_url
from .render import legal_zone_of
from .styles import styles_for
from .text import Run, Text, wrap_plain

# Characters per line in font A (12 dots) at each printable width (8 dots per mm).
COLUMNS = {72: 48, 64: 42, 48: 32}
DLE_EOT_OFFLINE = b"\x10\x04\x02"
# Typography the printer's code page (CP860, Portuguese) lacks.
_ASCII = str.maketrans({"–": "-", "—": "-", "−": "-", "«": '"', "»": '"', "·": "-",
                        "“": '"', "”": '"', "’": "'", "…": "..."})
DLE_EOT_PAPER = b"\x10\x04\x04"


class PrintFailed(Exception):
    def __init__(self, message_pt: str, *, partial: bool) -> None:
        super().__init__(message_pt)
        self.message_pt = message_pt
        self.partial = partial


Op = tuple[Literal["text", "qr", "image", "rule", "feed"], Any, dict[str, Any]]


def _plain(parts: Sequence[Any]) -> tuple[str, bool]:
    text = "".join(p.text if isinstance(p, Run) else str(p) for p in parts)
    bold = bool(parts) and all(isinstance(p, Run) and p.bold for p in parts if str(
        p.text if isinstance(p, Run) else p).strip())
    return text, bold


def _walk(flowables: Sequence[Flowable]) -> Iterator[Flowable]:
    for f in flowables:
        if isinstance(f, KeepTogether):
            yield from _walk(f._content)
        elif isinstance(f, Table):
            for row in f._cellvalues:
                for cell in row:
                    items = cell if isinstance(cell, list | tuple) else [cell]
                    yield from _walk([c for c in items if isinstance(c, Flowable)])
        else:
            yield f


def roll_ops(record: Any, *, blob_dir: Path, copy: str, reprint_number: int,
             printed_on: str, width_mm: int = 72, demo: bool = False,
             verify_base_url: str | None = None) -> list[Op]:
    """What an ESC/POS printer prints for this output, from the thermal layout's story."""
    from reportlab.lib.utils import ImageReader

    from .blocks import DocContext
    from .qr import qr_png_of

    context = record.envelope.get("context")
    base = verify_base_url or (context.get("verify_base_url")
                               if isinstance(context, dict) else None)
    url = verification_url(record.verification_code, verify_base_url=base) if base else ""
    ctx = DocContext(
        record=record, blob_dir=Path(blob_dir), styles=styles_for("80mm", width_mm),
        copy=copy, reprint_number=reprint_number, demo=demo, title=TITLES[record.kind],
        qr=ImageReader(io.BytesIO(qr_png_of(url or record.verification_code))), url=url,
        tz=legal_zone_of(record), printed_on=printed_on, verify_known=bool(url))
    story = [*sec.roll_header(ctx), *STORIES[record.kind](ctx), *sec.roll_footer(ctx)]
    ops: list[Op] = []
    for f in _walk(story):
        if isinstance(f, Heading):
            ops.append(("text", f.title, {"bold": True}))
        elif isinstance(f, Band):
            ops.append(("text", f.label, {"bold": True, "align": "center"}))
        elif isinstance(f, Text):
            text, bold = _plain(f.parts)
            align = "center" if f.style.align == "center" else "left"
            ops.append(("text", text, {"bold": bold, "align": align}))
        elif isinstance(f, FieldGrid):
            for row in f.rows:
                for _first, _span, field in row:
                    ops.append(("text", f"{field.label}: {field.value}", {}))
        elif isinstance(f, QrImage):
            ops.append(("qr", url or record.verification_code, {}))
        elif isinstance(f, Picture):
            if f.path is not None:
                ops.append(("image", str(Path(str.__str__(f.path))), {}))
        elif isinstance(f, Line):
            ops.append(("rule", None, {}))
        elif isinstance(f, Spacer):
            continue
    ops.append(("feed", 3, {}))
    return ops


def _status(printer: Any) -> tuple[str | None, bool]:
    """(problem in Portuguese or None, whether the printer answered)."""
    try:
        paper = printer.query_status(DLE_EOT_PAPER)
    except (OSError, NotImplementedError, AttributeError, TimeoutError, Exception):
        return None, False
    if not paper:
        return None, False
    if paper[0] & 0x60 == 0x60:
        return "a impressora está sem papel", True
    try:
        offline = printer.query_status(DLE_EOT_OFFLINE)
    except Exception:
        return None, True
    if offline and offline[0] & 0x04:
        return "a tampa da impressora está aberta", True
    return None, True


def send(printer: Any, ops: Sequence[Op], *, columns: int = 48) -> None:
    """Send ``ops`` to ``printer``; raises PrintFailed (partial once bytes left)."""
    problem, answered = _status(printer)
    if problem:
        raise PrintFailed(problem, partial=False)
    started = False
    try:
        printer.charcode("CP860")  # Portuguese
        for kind, value, opts in ops:
            started = True
            if kind == "text":
                printer.set(bold=bool(opts.get("bold")), align=opts.get("align", "left"))
                for line in wrap_plain(str(value).translate(_ASCII), "Courier", 10,
                                       columns * 6.0):
                    printer.textln(line)
            elif kind == "qr":
                printer.set(align="center")
                printer.qr(value, native=True, size=4, center=False)
            elif kind == "image":
                printer.image(value, center=True)
            elif kind == "rule":
                printer.set(bold=False, align="left")
                printer.textln("_" * columns)
            elif kind == "feed":
                printer.ln(int(value))
        printer.cut()
        if answered:
            # A printer that reports its status must confirm it is still there once the
            # job is sent: a connection dropped midway is a partial print, not a delivery.
            problem, still = _status(printer)
            if problem or not still:
                raise PrintFailed(problem or "a impressora não confirmou o fim da impressão",
                                  partial=True)
    except PrintFailed:
        raise
    except (TimeoutError, OSError) as exc:
        raise PrintFailed(f"a impressão foi interrompida ({exc})", partial=started) from exc
    except Exception as exc:
        raise PrintFailed(f"a impressora recusou o trabalho ({exc})", partial=started) from exc


@dataclass(frozen=True)
class EscposResult:
    delivered: bool
    reprint_number: int
    message_pt: str


def print_output(store: Store, printer: Any, record_id: str, *, copy: str, matricula: str,
                 address: str, width_mm: int = 72) -> EscposResult:
    """The next output of ``record_id`` on an ESC/POS printer, counted only when it printed
    whole; the thermal PDF of the same content is archived with it."""
    out = outputs.prepare_output(store, record_id, copy=copy, layout="80mm",
                                 roll_width_mm=width_mm)
    ops = roll_ops(out.record, blob_dir=store.blob_dir, copy=copy,
                   reprint_number=out.reprint_number,
                   printed_on=_printed_on(out.record), width_mm=width_mm,
                   demo=(out.record.series or "").startswith("DEMO-"))
    try:
        send(printer, ops, columns=COLUMNS.get(width_mm, 48))
    except PrintFailed as exc:
        outputs.log_failure(store, out, matricula=matricula, channel="escpos",
                            detail=exc.message_pt, partial=exc.partial, target=address)
        what = "parcial" if exc.partial else "falhou"
        return EscposResult(False, out.reprint_number,
                            f"Impressão {what}: {exc.message_pt}. Nada foi contado como "
                            "entregue; imprima de novo.")
    outputs.log_output(store, out, matricula=matricula, channel="escpos", target=address)
    return EscposResult(True, out.reprint_number, "Impresso na impressora térmica.")


def _printed_on(record: Any) -> str:
    import datetime as dt

    return dt.datetime.now(legal_zone_of(record)).strftime("%d/%m/%Y")
