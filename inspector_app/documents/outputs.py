"""Every output of a sealed record goes through here: one counter for all of them.

A document leaves the device by the system printer, "Salvar PDF…", ``inspector render``
(CLI) or, later, an ESC/POS thermal printer. Each is an *output*: it is rendered with the
next reprint number of its copy (0 the first time, then "Reimpressão n.º k"), and once it
is delivered it is logged in ``print_log`` (which is the counter) and its PDF archived with
the record. A failed or partial print is logged in ``output_failures`` (migration
``0005_i12_output_failures``), offered again and never counted as delivered.

Channels (``print_log.printer`` says which): ``printer:<name>``, ``pdf:<file>``, ``cli:<file>``,
``escpos:<address>``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import Literal, cast

from inspector_app.store.db import Store, StoreError, utc_now
from inspector_app.store.sealing import SealedRecord, load_record

from .archive import archive_pdf, archived_documents
from .render import render_document

CHANNELS = ("printer", "pdf", "cli", "escpos")
COPIES = ("1", "2")
LAYOUTS = ("a4", "80mm")


class OutputError(StoreError):
    pass


@dataclass(frozen=True)
class Output:
    """One rendered output of a record, not yet delivered (``delivered`` False)."""

    record: SealedRecord
    copy: str
    layout: str
    reprint_number: int
    pdf: bytes
    pdf_sha256: str | None = None  # set once archived
    delivered: bool = False


def output_count(store: Store, record_id: str, copy: str) -> int:
    """Delivered outputs of this copy: the next output's reprint number."""
    row = store.conn.execute(
        "SELECT COUNT(*) FROM print_log WHERE record_id = ? AND copy = ?", [record_id, copy]
    ).fetchone()
    return int(row[0])


def prepare_output(store: Store, record_id: str, *, copy: str, layout: str,
                   demo: bool | None = None, roll_width_mm: int = 72,
                   printed_on: dt.date | None = None) -> Output:
    """Render the next output of ``record_id``'s ``copy`` (nothing is logged yet)."""
    if copy not in COPIES:
        raise OutputError(f"copy must be 1 or 2, not {copy!r}", "Via inválida (1ª ou 2ª).")
    if layout not in LAYOUTS:
        raise OutputError(f"layout must be a4 or 80mm, not {layout!r}",
                          "Formato inválido (A4 ou bobina térmica).")
    record = load_record(store, record_id)
    k = output_count(store, record.id, copy)
    if demo is None:
        demo = (record.series or "").startswith("DEMO-")
    pdf = render_document(record, blob_dir=store.blob_dir,
                          layout=cast(Literal["a4", "80mm"], layout),
                          copy=cast(Literal["1", "2"], copy), reprint_number=k, demo=demo,
                          roll_width_mm=roll_width_mm, printed_on=printed_on,
                          cancellation=cancellation_mark(store, record.id))
    return Output(record, copy, layout, k, pdf)


def cancellation_mark(store: Store, record_id: str) -> dict[str, str] | None:
    """``{"number", "created_at"}`` of the record that cancelled ``record_id``, or None
    while it stands: a cancelled record never leaves by any channel unmarked (every page
    says CANCELADO with this number and date)."""
    row = store.conn.execute(
        "SELECT id FROM records WHERE kind = 'cancelamento' AND refers_to = ? "
        "ORDER BY journal_seq LIMIT 1", [record_id]).fetchone()
    if row is None:
        return None
    cancel = load_record(store, str(row[0]))
    return {"number": cancel.display_number, "created_at": cancel.created_at}


def with_pdf(output: Output, pdf: bytes) -> Output:
    """The same output with other bytes (e.g. PAdES-signed)."""
    return replace(output, pdf=pdf)


def log_output(store: Store, output: Output, *, matricula: str, channel: str,
               target: str | None = None) -> Output:
    """The output was delivered: count it (``print_log``) and archive its PDF.

    Raises OutputError when another output of the same copy was delivered since this one
    was prepared (its reprint number is taken): prepare it again."""
    if channel not in CHANNELS:
        raise ValueError(f"unknown output channel {channel!r}")
    store.require_writable()
    where = f"{channel}:{target}" if target else channel
    with store.atomic():
        k = output_count(store, output.record.id, output.copy)
        if k != output.reprint_number:
            raise OutputError(
                f"reprint {output.reprint_number} of {output.record.id} copy {output.copy} "
                f"is stale (next is {k})",
                "Outra saída desta via foi registrada enquanto esta era preparada: gere o "
                "documento de novo.")
        store.conn.execute(
            "INSERT INTO print_log(record_id, copy, layout, reprint_number, matricula, "
            "printed_at, printer) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [output.record.id, output.copy, output.layout, k, matricula, utc_now(), where],
        )
    same = [d for d in archived_documents(store, output.record.id)
            if (d.layout, d.copy, d.reprint_number) == (output.layout, output.copy, k)]
    sha = same[0].pdf_sha256 if same else archive_pdf(
        store, output.record.id, output.layout, output.copy, k, output.pdf)
    return replace(output, pdf_sha256=sha, delivered=True)


def log_failure(store: Store, output: Output, *, matricula: str, channel: str,
                detail: str, partial: bool = False, target: str | None = None) -> None:
    """A failed (or partial) output: logged as such, not counted; the same reprint number
    is offered again."""
    store.require_writable()
    where = f"{channel}:{target}" if target else channel
    store.conn.execute(
        "INSERT INTO output_failures(record_id, copy, layout, reprint_number, matricula, "
        "failed_at, channel, status, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [output.record.id, output.copy, output.layout, output.reprint_number, matricula,
         utc_now(), where, "partial" if partial else "failed", detail[:500]],
    )


def failures(store: Store, record_id: str) -> list[dict[str, object]]:
    rows = store.conn.execute(
        "SELECT copy, layout, reprint_number, channel, status, detail, failed_at "
        "FROM output_failures WHERE record_id = ? ORDER BY id", [record_id]).fetchall()
    keys = ("copy", "layout", "reprint_number", "channel", "status", "detail", "failed_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]
