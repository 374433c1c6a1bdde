"""The ``inspector`` command: ``gui`` (default), ``packs``, ``rules``.

Errors in input exit 2 with one line on stderr naming the field or value (never a
traceback): also a database that cannot be opened (damaged, truncated, no key) and a full
disk. A broken pack exits 1 listing its problems.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector_app import __version__
from inspector_app.domain.case import CaseError
from inspector_app.packs import PackError, get_pack, list_packs, validate
from inspector_app.services import ServiceError
from inspector_app.store.db import Store, StoreError, StoreFullError, StoreOpenError

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _print_json(data: object) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def _cmd_gui(args: argparse.Namespace) -> int:
    from inspector_app.ui.app import run  # the only place the CLI reaches Qt

    if args.data_dir:
        # The window opens its store on a worker through default_data_dir().
        os.environ["INSPECTOR_DATA_DIR"] = str(Path(args.data_dir).resolve())
    return run([])


def _cmd_packs_validate(args: argparse.Namespace) -> int:
    root = Path(args.dir) if args.dir else None
    if root is not None and not root.is_dir():
        print(f"inspector: {root}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    results = validate(root)
    if not results:
        print(f"inspector: no packs found under {root or 'forms/'}", file=sys.stderr)
        return EXIT_PROBLEMS
    bad = 0
    for name, problems in results.items():
        if problems:
            bad += 1
            print(f"{name}: {len(problems)} problem(s)")
            for p in problems:
                print(f"  {name}/{p}")
        else:
            print(f"{name}: ok")
    return EXIT_PROBLEMS if bad else EXIT_OK


def _cmd_packs_list(args: argparse.Namespace) -> int:
    if args.dir and not Path(args.dir).is_dir():
        print(f"inspector: {args.dir}: not a folder", file=sys.stderr)
        return EXIT_USAGE
    rows = [
        {
            "id": p.id,
            "version": p.version,
            "title": p.title,
            "status": p.status,
            "organ": p.organ,
            "content_hash": p.content_hash,
            "problems": p.problems,
        }
        for p in list_packs(Path(args.dir) if args.dir else None)
    ]
    _print_json(rows)
    return EXIT_OK


def _read_case(source: str) -> Any:
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError("case", f"cannot read {source}: {exc}") from None
    try:
        return json.loads(text)
    except RecursionError:
        raise CaseError("case", "invalid JSON: nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise CaseError(
            "case", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def _cmd_rules_evaluate(args: argparse.Namespace) -> int:
    from inspector_app.services import evaluate_case

    data = _read_case(args.case)
    forms = Path(args.forms) if args.forms else None
    outcome = evaluate_case(data=data, forms_root=forms)
    _print_json(outcome.as_json())
    return EXIT_OK


def _cmd_rules_catalogue(args: argparse.Namespace) -> int:
    try:
        pack = get_pack(args.pack)
    except KeyError as exc:
        raise CaseError("pack", str(exc.args[0])) from None
    _print_json(
        [
            {
                "rule_id": r.id,
                "article": r.article,
                "group": r.group,
                "description": r.description,
                "selectable": r.selectable,
                "penalty": r.penalty,
                "analogy": r.analogy,
            }
            for r in pack.rules.values()
        ]
    )
    return EXIT_OK


def _open(args: argparse.Namespace) -> Store:
    from inspector_app.store import open_store

    return open_store(Path(args.data_dir) if args.data_dir else None)


VERIFY_CHECKPOINT = "verify_last_clean"


def _cmd_store_verify(args: argparse.Namespace) -> int:
    import time

    from inspector_app.store.verify import Checkpoint, verify_store

    store = _open(args)
    began = time.monotonic()
    shown = [began]  # the first line after 2 s: a small store says nothing

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if args.quiet or now - shown[0] < 2.0:
            return
        shown[0] = now
        of = f"/{total}" if total else ""
        rate = ""
        if stage == "records" and total and done:
            left = (now - began) / done * (total - done)
            rate = f", about {left:.0f} s left for the records"
        print(f"verify: {stage} {done}{of}{rate}", file=sys.stderr, flush=True)

    try:
        since = None
        last = store.meta(VERIFY_CHECKPOINT)
        previous = json.loads(last) if last else None
        if args.since_last_clean and previous:
            since = Checkpoint(int(previous["seq"]), str(previous["entry_hash"]))
        report = verify_store(store, progress=progress, since=since)
        seconds = time.monotonic() - began
        if report.ok and not store.readonly:
            full = seconds if since is None else (previous or {}).get("full_seconds")
            store.set_meta(VERIFY_CHECKPOINT, json.dumps({
                "seq": report.last_seq, "entry_hash": report.last_entry_hash,
                "full_seconds": full, "records": report.records if since is None else None}))
    finally:
        store.close()
    scope = (f"records sealed after journal entry {since.seq}" if since else "full run")
    took = f"{scope} in {seconds:.1f} s"
    if since and previous and previous.get("full_seconds"):
        took += f"; the last full run took {float(previous['full_seconds']):.1f} s"
    summary = (
        f"{report.records} records, {report.journal_entries} journal entries, "
        f"{report.numbers_issued} numbers issued, {report.numbers_voided} voided; {took}"
    )
    if report.ok:
        print(f"store ok: {summary}")
        return EXIT_OK
    print(f"store has {len(report.problems)} problem(s) ({summary}):")
    for line in report.problems:
        print(f"  {line}")
    return EXIT_PROBLEMS


def _cmd_store_status(args: argparse.Namespace) -> int:
    from inspector_app.store import numbering

    store = _open(args)
    try:
        counts = {
            table: store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("records", "outbox", "inspections", "ref_vehicles", "ref_inspectors")
        }
        pending = store.conn.execute(
            "SELECT COUNT(*) FROM outbox WHERE acked_at IS NULL"
        ).fetchone()[0]
        _print_json({
            "data_dir": str(store.data_dir),
            "device_id": store.meta("device_id"),
            "readonly": store.readonly,
            "alerts": store.alerts,
            "counts": counts,
            "outbox_pending": pending,
            "ranges": [
                {"series": st.range.series, "first": st.range.first, "last": st.range.last,
                 "source": st.range.source, "issued": st.issued, "voided": st.voided,
                 "remaining": st.remaining}
                for st in numbering.status(store)
            ],
        })
    finally:
        store.close()
    return EXIT_OK


def _cmd_registry_import(args: argparse.Namespace) -> int:
    from inspector_app.store.registry_import import RegistryImportError, import_registry

    path = Path(args.file)
    if not path.exists():
        print(f"inspector: {path}: no such file or folder", file=sys.stderr)
        return EXIT_USAGE
    store = _open(args)
    try:
        report = import_registry(store, path, table=args.table)
    except RegistryImportError as exc:
        print(f"inspector: {exc}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        store.close()
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def _cmd_demo_seed(args: argparse.Namespace) -> int:
    from inspector_app import demo, demo_autos

    if args.vehicles < 0 or args.autos < 0:
        print("inspector: --vehicles and --autos must not be negative",
              file=sys.stderr)
        return EXIT_USAGE
    store = _open(args)
    try:
        counts = demo.seed_registry(
            store, vehicles=args.vehicles, seed=args.seed, replace=args.replace
        )
        if store.meta("hq_url") is None:
            from inspector_app import services

            services.prepare_demo_numbering(store=store)
        if args.autos:
            counts["autos"] = len(demo_autos.seed_autos(store, autos=args.autos, seed=args.seed))
    finally:
        store.close()
    _print_json(counts)
    return EXIT_OK


def _cmd_render(args: argparse.Namespace) -> int:
    from inspector_app import services

    out = Path(args.out)
    store = _open(args)
    try:
        record = services.find_record(store=store, number=args.auto)
        try:
            # Written before it is counted: a file that cannot be written counts nothing.
            doc = services.render_record(
                store=store, record_id=record.id, layout=args.layout, copy=args.copy,
                target=str(out.resolve()), deliver=out.write_bytes,
            )
        except OSError as exc:
            print(f"inspector: cannot write {out}: {exc.strerror}", file=sys.stderr)
            return EXIT_PROBLEMS
    finally:
        store.close()
    label = f" (reprint {doc.reprint_number})" if doc.reprint_number else ""
    print(f"{out}: {record.kind} {record.display_number}{label}, sha256 {doc.pdf_sha256}")
    return EXIT_OK


def escpos_printer(address: str) -> object:
    """A python-escpos printer for ``tcp://host:port``, ``serial:PORT`` or ``usb:VID:PID``."""
    from escpos import printer as escpos_printer_module  # type: ignore[import-untyped]

    if address.startswith("tcp://"):
        host, _, port = address[6:].partition(":")
        return escpos_printer_module.Network(host, port=int(port or 9100), timeout=5)
    if address.startswith("serial:"):
        return escpos_printer_module.Serial(devfile=address[7:], baudrate=9600, timeout=5)
    if address.startswith("usb:"):
        vid, _, pid = address[4:].partition(":")
        return escpos_printer_module.Usb(int(vid, 16), int(pid, 16))
    raise ValueError(f"unknown printer address {address!r} (tcp://, serial:, usb:)")


def _cmd_print_escpos(args: argparse.Namespace) -> int:
    from inspector_app import services
    from inspector_app.documents import escpos_out

    try:
        printer = escpos_printer(args.printer)
    except ValueError as exc:
        print(f"inspector: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    store = _open(args)
    try:
        record = services.find_record(store=store, number=args.auto)
        result = escpos_out.print_output(store, printer, record.id, copy=args.copy,
                                         matricula=args.matricula, address=args.printer,
                                         width_mm=args.width)
    finally:
        store.close()
    print(result.message_pt, file=sys.stdout if result.delivered else sys.stderr)
    return EXIT_OK if result.delivered else EXIT_PROBLEMS


def _cmd_documents_settings(args: argparse.Namespace) -> int:
    from inspector_app.store import device_context as dc

    store = _open(args)
    try:
        if args.signature:
            store.set_meta("document_signature", args.signature)
        if args.clock_tolerance is not None:
            if not 1 <= args.clock_tolerance <= 86_400:
                print("inspector: --clock-tolerance must be 1..86400 seconds", file=sys.stderr)
                return EXIT_PROBLEMS
            store.set_meta(dc.META_TOLERANCE, str(args.clock_tolerance))
        filing = {f: getattr(args, f"filing_{f}") for f in dc.FILING_KEYS
                  if getattr(args, f"filing_{f}")}
        if filing:
            if not args.filing_pack:
                print("inspector: --filing-* needs --filing-pack PACK", file=sys.stderr)
                return EXIT_PROBLEMS
            dc.set_filing(store, args.filing_pack, filing)
        shown = {
            "signature": store.meta("document_signature") or "ed25519",
            "clock_tolerance_s": dc.tolerance_s(store),
            "verify_base_url": dc.verify_base_url(store),
        }
        if args.filing_pack:
            shown["filing"] = dc.filing_for(store, args.filing_pack)
    finally:
        store.close()
    _print_json(shown)
    return EXIT_OK


def _cmd_enroll(args: argparse.Namespace) -> int:
    import dataclasses

    from inspector_app.sync.client import SyncError, enrol

    store = _open(args)
    try:
        result = enrol(store, hq_url=args.hq, code=args.code, device_name=args.name)
    except SyncError as exc:
        print(f"inspector: {exc.message_pt}", file=sys.stderr)
        return EXIT_PROBLEMS
    finally:
        store.close()
    _print_json(dataclasses.asdict(result))
    return EXIT_OK


def _cmd_sync(args: argparse.Namespace) -> int:
    from inspector_app.sync.client import SyncError, sync_once

    store = _open(args)
    try:
        summary = sync_once(store)
    except SyncError as exc:
        print(f"inspector: {exc.message_pt}", file=sys.stderr)
        return EXIT_PROBLEMS
    finally:
        store.close()
    _print_json(summary.as_json())
    return EXIT_OK if summary.ok else EXIT_PROBLEMS


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="inspector", description="Fiscalização de transporte público")
    parser.add_argument("--version", action="version", version=f"inspector {__version__}")
    parser.add_argument(
        "--data-dir", help="data folder (default: INSPECTOR_DATA_DIR or the user data folder)"
    )
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    gui = sub.add_parser("gui", help="open the desktop app (default)")
    gui.set_defaults(func=_cmd_gui)

    packs = sub.add_parser("packs", help="regulation packs")
    packs_sub = packs.add_subparsers(dest="packs_command", required=True, parser_class=_Parser)
    pv = packs_sub.add_parser("validate", help="check packs; exit 0 only when all are valid")
    pv.add_argument("dir", nargs="?", help="a pack folder or a folder of packs (default: forms/)")
    pv.set_defaults(func=_cmd_packs_validate)
    pl = packs_sub.add_parser("list", help="list packs with version, status and hash (JSON)")
    pl.add_argument("dir", nargs="?")
    pl.set_defaults(func=_cmd_packs_list)

    rules = sub.add_parser("rules", help="the rules engine")
    rules_sub = rules.add_subparsers(dest="rules_command", required=True, parser_class=_Parser)
    ev = rules_sub.add_parser("evaluate", help="evaluate CASE.json (or - for stdin); print JSON")
    ev.add_argument("case")
    ev.add_argument("--forms", help="folder of packs (default: forms/)")
    ev.set_defaults(func=_cmd_rules_evaluate)
    cat = rules_sub.add_parser("catalogue", help="print a pack's infraction catalogue (JSON)")
    cat.add_argument("pack")
    cat.set_defaults(func=_cmd_rules_catalogue)

    store = sub.add_parser("store", help="the local database")
    store_sub = store.add_subparsers(dest="store_command", required=True, parser_class=_Parser)
    sv = store_sub.add_parser(
        "verify", help="integrity, journal chain, signatures, numbering; exit 1 on problems"
    )
    sv.add_argument("--since-last-clean", action="store_true",
                    help="check only the records sealed after the last clean run (numbering, "
                         "outbox, files and row seals are still checked whole)")
    sv.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    sv.set_defaults(func=_cmd_store_verify)
    ss = store_sub.add_parser("status", help="counts, number ranges, outbox (JSON)")
    ss.set_defaults(func=_cmd_store_status)

    registry = sub.add_parser("registry", help="reference data (until sync with HQ exists)")
    reg_sub = registry.add_subparsers(dest="registry_command", required=True,
                                      parser_class=_Parser)
    ri = reg_sub.add_parser("import", help="import CSV or JSON; bad rows reported by line")
    ri.add_argument("file")
    ri.add_argument("--table", help="table of a CSV file (default: from the file name)")
    ri.set_defaults(func=_cmd_registry_import)

    render = sub.add_parser("render", help="PDF of a sealed auto or termo (signed, archived)")
    render.add_argument("--auto", required=True, metavar="NUMBER",
                        help="printed number (SERIES-000001), verification code or record id")
    render.add_argument("--layout", choices=["a4", "80mm"], default="a4")
    render.add_argument("--copy", choices=["1", "2"], default="1")
    render.add_argument("--out", required=True, metavar="FILE.pdf")
    render.set_defaults(func=_cmd_render)

    esc = sub.add_parser("print-escpos", help="print a sealed document on an ESC/POS thermal "
                                              "printer (counted only when it printed whole)")
    esc.add_argument("--auto", required=True, metavar="NUMBER")
    esc.add_argument("--printer", required=True, metavar="ADDRESS",
                     help="tcp://HOST[:9100], serial:/dev/rfcomm0 (or COM5), usb:VID:PID")
    esc.add_argument("--copy", choices=["1", "2"], default="1")
    esc.add_argument("--width", type=int, choices=[48, 64, 72], default=72,
                     help="printable width in mm")
    esc.add_argument("--matricula", default="cli")
    esc.set_defaults(func=_cmd_print_escpos)

    docs = sub.add_parser("documents", help="how documents are signed, timed and filed")
    docs_sub = docs.add_subparsers(dest="documents_command", required=True,
                                   parser_class=_Parser)
    dset = docs_sub.add_parser("settings", help="show or change the document settings (JSON)")
    dset.add_argument("--signature", choices=["ed25519", "p256"],
                      help="PDF signature: Ed25519 device key (default) or P-256 (Acrobat, "
                           "pdfsig)")
    dset.add_argument("--clock-tolerance", type=int, metavar="SECONDS",
                      help="device clock vs HQ time allowed before documents say "
                           "'horário não confirmado' (1..86400, default 120)")
    dset.add_argument("--filing-pack", metavar="PACK",
                      help="pack whose filing place (where to defend) is set below")
    for field in ("body", "address", "protocol", "online", "hours"):
        dset.add_argument(f"--filing-{field}", metavar="TEXT")
    dset.set_defaults(func=_cmd_documents_settings)

    enroll = sub.add_parser("enroll", help="enrol this device with HQ (one-time code)")
    enroll.add_argument("--hq", required=True, metavar="URL")
    enroll.add_argument("--code", required=True)
    enroll.add_argument("--name", default=None, help="device name shown at HQ")
    enroll.set_defaults(func=_cmd_enroll)
    sync = sub.add_parser("sync", help="push sealed records and pull registry changes (JSON)")
    sync.set_defaults(func=_cmd_sync)

    demo = sub.add_parser("demo", help="demonstration data")
    demo_sub = demo.add_subparsers(dest="demo_command", required=True, parser_class=_Parser)
    ds = demo_sub.add_parser("seed", help="a realistic registry (and sealed autos)")
    ds.add_argument("--vehicles", type=int, default=200)
    ds.add_argument("--autos", type=int, default=0, help="also seal N realistic autos")
    ds.add_argument("--seed", type=int, default=1)
    ds.add_argument("--replace", action="store_true",
                    help="replace a registry that came from an import")
    ds.set_defaults(func=_cmd_demo_seed)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if not getattr(args, "func", None):
        args.func = _cmd_gui
    try:
        result: int = args.func(args)
        return result
    except CaseError as exc:
        print(f"inspector: invalid {exc.field}: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    except PackError as exc:
        print(f"inspector: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except ServiceError as exc:
        print(f"inspector: invalid {exc.field}: {exc.message_pt}", file=sys.stderr)
        return EXIT_USAGE
    except (StoreOpenError, StoreFullError) as exc:
        # A file that is not this store's database, or no room to write: nothing was done.
        print(f"inspector: store: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as exc:
        print(f"inspector: store: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
