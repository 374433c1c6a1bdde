"""The ``inspector`` command: ``gui`` (default), ``packs``, ``rules``.

Errors in input exit 2 with one line on stderr naming the field or value (never a
traceback); a broken pack exits 1 listing its problems.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspector_app import __version__
from inspector_app.domain.case import CaseError
from inspector_app.packs import PackError, get_pack, list_packs, validate

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _print_json(data: object) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")


def _cmd_gui(args: argparse.Namespace) -> int:
    from inspector_app.ui.app import run  # the only place the CLI reaches Qt

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


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="inspector", description="Fiscalização de transporte público")
    parser.add_argument("--version", action="version", version=f"inspector {__version__}")
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
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
