"""``inspector-hq``: the HQ administrator's command.

Every command takes ``--database-url`` (else ``DATABASE_URL``, else SQLite in the data
folder) and ``--data-dir``. Exit codes: 0 done, 1 done with problems (rows refused), 2
refused (bad arguments, database not initialised, operation not allowed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from inspector_app import __version__
from inspector_app.hq.blobs import open_blob_store
from inspector_app.hq.core.config import Settings
from inspector_app.hq.core.db import is_up_to_date, make_engine, upgrade

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class CommandError(Exception):
    """Refused with a one-line message (exit 2)."""


def _settings(args: argparse.Namespace) -> Settings:
    try:
        return Settings.from_env(
            database_url=args.database_url,
            data_dir=Path(args.data_dir) if args.data_dir else None,
            blob_dir=Path(args.blob_dir) if getattr(args, "blob_dir", None) else None,
        )
    except ValueError as exc:
        raise CommandError(f"configuração inválida: {exc}") from None


def _engine(args: argparse.Namespace, *, migrated: bool = True) -> Engine:
    engine = make_engine(_settings(args).database_url)
    if migrated and not is_up_to_date(engine):
        raise CommandError("o banco de dados da sede não está inicializado ou está "
                           "desatualizado: rode `inspector-hq init`")
    return engine


def _cmd_init(args: argparse.Namespace) -> int:
    settings = _settings(args)
    engine = make_engine(settings.database_url)
    upgrade(engine)
    blobs = open_blob_store(settings)
    try:
        blobs.check()
    except OSError as exc:
        raise CommandError(f"arquivos: {exc}") from None
    print(f"banco de dados pronto: {engine.url.render_as_string(hide_password=True)}")
    print(f"arquivos: {blobs.description}")
    return EXIT_OK


def _cmd_serve(args: argparse.Namespace) -> int:
    import os

    import uvicorn

    from inspector_app.hq.core.limits import server_options
    from inspector_app.hq.logs import configure_serve_logging
    from inspector_app.hq.main import LOG_LEVEL_ENV, create_app

    settings = _settings(args)
    _engine(args).dispose()
    if args.workers < 1:
        raise CommandError("--workers deve ser pelo menos 1")
    if args.workers == 1:
        try:
            app = create_app(settings)
        except OSError as exc:
            raise CommandError(f"arquivos: {exc}") from None
        config = uvicorn.Config(app, host=args.host, port=args.port,
                                log_level=args.log_level, **server_options(settings))
        configure_serve_logging(args.log_level)
        # uvicorn shuts down cleanly on Ctrl+C / SIGINT, then re-raises the signal: the
        # administrator gets the shutdown lines, not a traceback.
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(config).run()
        return EXIT_OK
    try:
        open_blob_store(settings).check()
    except OSError as exc:
        raise CommandError(f"arquivos: {exc}") from None
    # Each worker process builds its own app from the environment (HQ_BLOB_STORE and the
    # HQ_S3_* variables reach them as they are).
    os.environ.update({"DATABASE_URL": settings.database_url,
                       "HQ_BLOB_DIR": str(settings.blob_dir), LOG_LEVEL_ENV: args.log_level})
    configure_serve_logging(args.log_level)
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.run("inspector_app.hq.main:create_app_from_env", factory=True,
                    workers=args.workers, host=args.host, port=args.port,
                    log_level=args.log_level, **server_options(settings, by_name=True))
    return EXIT_OK


def _cmd_enrol_code(args: argparse.Namespace) -> int:
    from inspector_app.hq.devices import create_enrolment_code

    code = create_enrolment_code(_engine(args), ttl_minutes=args.ttl_minutes,
                                 series=args.series, range_size=args.range_size)
    print(code)
    return EXIT_OK


def _cmd_inspector_add(args: argparse.Namespace) -> int:
    from inspector_app.hq.inspectors import add_inspector

    if not args.password_stdin:
        raise CommandError("a senha é lida da entrada padrão: use --password-stdin")
    password = sys.stdin.readline().rstrip("\r\n")
    inspector_id = add_inspector(_engine(args), matricula=args.matricula, name=args.name,
                                 role=args.role, password=password, organ=args.organ)
    print(inspector_id)
    return EXIT_OK


def _cmd_inspector_disable(args: argparse.Namespace) -> int:
    from inspector_app.hq.inspectors import disable_inspector

    changed = disable_inspector(_engine(args), matricula=args.matricula)
    print("desativado" if changed else "já estava desativado")
    return EXIT_OK


def _read_password(args: argparse.Namespace) -> str:
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    import getpass

    first = getpass.getpass("Senha: ")
    if getpass.getpass("Repita a senha: ") != first:
        raise CommandError("as senhas não conferem")
    return first


def _cmd_staff_add(args: argparse.Namespace) -> int:
    from inspector_app.hq.console.staff import add_staff

    who = add_staff(_engine(args), args.login, args.name, args.role, _read_password(args))
    print(f"{who.login}: {who.name} ({who.role})")
    return EXIT_OK


def _cmd_staff_disable(args: argparse.Namespace) -> int:
    from inspector_app.hq.console.staff import disable_staff

    changed = disable_staff(_engine(args), args.login)
    print("desativado (sessões encerradas)" if changed else "já estava desativado")
    return EXIT_OK


def _cmd_staff_list(args: argparse.Namespace) -> int:
    from inspector_app.hq.console.staff import list_staff

    print(json.dumps(list_staff(_engine(args)), ensure_ascii=False, indent=2))
    return EXIT_OK


def _cmd_registry_import(args: argparse.Namespace) -> int:
    from inspector_app.hq.registry import import_registry

    report = import_registry(_engine(args), Path(args.file), table=args.table)
    for line in report.lines():
        print(line)
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def _cmd_registry_delete(args: argparse.Namespace) -> int:
    from inspector_app.hq.registry import delete_reference

    delete_reference(_engine(args), args.table, args.key)
    print(f"{args.table} {args.key}: apagado (publicado aos dispositivos)")
    return EXIT_OK


def _cmd_range_allocate(args: argparse.Namespace) -> int:
    from inspector_app.hq.numbering import allocate_range

    with _engine(args).begin() as conn:
        allocated = allocate_range(conn, device_id=args.device, series=args.series,
                                   first=args.first, last=args.last)
    print(f"{allocated.id}: {allocated.series} {allocated.first}..{allocated.last} → "
          f"{allocated.device_id}")
    return EXIT_OK


def _cmd_device_revoke(args: argparse.Namespace) -> int:
    from inspector_app.hq.devices import revoke_device

    device = revoke_device(_engine(args), args.device)
    print(f"{device.id}: revogado em {device.revoked_at}")
    return EXIT_OK


def _cmd_device_list(args: argparse.Namespace) -> int:
    from inspector_app.hq.devices import list_devices

    rows = [{"device_id": d.id, "name": d.name, "key_id": d.key_id,
             "enrolled_at": d.enrolled_at, "revoked_at": d.revoked_at,
             "last_seen_at": d.last_seen_at} for d in list_devices(_engine(args))]
    print(json.dumps(rows, ensure_ascii=False, indent=2))
    return EXIT_OK


def _cmd_report(args: argparse.Namespace) -> int:
    from inspector_app.hq.report import build_report, report_lines

    report = build_report(_engine(args), duplicates_limit=args.duplicates,
                          duplicates_offset=args.duplicates_from)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        for line in report_lines(report):
            print(line)
    return EXIT_OK


def _cmd_blobs_prune(args: argparse.Namespace) -> int:
    import datetime as dt

    from inspector_app.hq.blob_quota import prune

    if args.older_than_days < 1:
        raise CommandError("--older-than-days deve ser pelo menos 1")
    settings = _settings(args)
    files, size = prune(_engine(args), open_blob_store(settings),
                        older_than=dt.timedelta(days=args.older_than_days))
    print(f"{files} arquivos sem auto removidos ({size} bytes)")
    return EXIT_OK


def _cmd_blobs_reindex(args: argparse.Namespace) -> int:
    from inspector_app.hq.blob_index import reindex

    listed, written, removed = reindex(_engine(args), open_blob_store(_settings(args)))
    print(f"{listed} arquivos no armazenamento; {written} acrescentados à lista da sede; "
          f"{removed} retirados dela (ausentes do armazenamento)")
    return EXIT_OK


def _cmd_compact(args: argparse.Namespace) -> int:
    from inspector_app.hq.compaction import compact

    if args.keep_days < 0:
        raise CommandError("--keep-days deve ser pelo menos 0")
    print(compact(_engine(args), keep_days=args.keep_days).line())
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--database-url", default=None,
                        help="SQLAlchemy URL (default: DATABASE_URL, else SQLite in --data-dir)")
    common.add_argument("--data-dir", default=None,
                        help="folder for hq.db and blobs (default: INSPECTOR_HQ_DATA_DIR or "
                        "the user data folder)")

    parser = _Parser(prog="inspector-hq", description="Administração da sede (HQ).")
    parser.add_argument("--version", action="version", version=f"inspector-hq {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def leaf(group: argparse._SubParsersAction[_Parser], name: str, help_text: str,
             func: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
        p = group.add_parser(name, help=help_text, parents=[common])
        p.set_defaults(func=func)
        return p

    p = leaf(sub, "init", "create or migrate the database (alembic upgrade head)", _cmd_init)
    p.add_argument("--blob-dir", default=None)
    p = leaf(sub, "serve", "run the HQ server (uvicorn)", _cmd_serve)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080)
    p.add_argument("--blob-dir", default=None)
    p.add_argument("--log-level", default="info",
                   choices=("critical", "error", "warning", "info", "debug"))
    p.add_argument("--workers", type=int, default=1,
                   help="worker processes (default 1; rate limits are counted in the "
                   "database, shared by all)")
    p = leaf(sub, "enrol-code", "print a one-time enrolment code", _cmd_enrol_code)
    p.add_argument("--ttl-minutes", type=int, default=60)
    p.add_argument("--series", default="AI", help="talonário series of the first range")
    p.add_argument("--range-size", type=int, default=1000, help="numbers in the first range")

    insp = sub.add_parser("inspector", help="agents (inspectors)")
    insp_sub = insp.add_subparsers(dest="inspector_command", required=True, parser_class=_Parser)
    p = leaf(insp_sub, "add", "add or update an agent (argon2id password)", _cmd_inspector_add)
    p.add_argument("matricula")
    p.add_argument("name")
    p.add_argument("role", choices=("inspector", "retention_desk", "supervisor"))
    p.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of standard input")
    p.add_argument("--organ", default=None)
    p = leaf(insp_sub, "disable", "disable an agent", _cmd_inspector_disable)
    p.add_argument("matricula")

    stf = sub.add_parser("staff", help="HQ console accounts (administrador, supervisor, "
                         "julgador, consulta)")
    stf_sub = stf.add_subparsers(dest="staff_command", required=True, parser_class=_Parser)
    p = leaf(stf_sub, "add", "add a console account (argon2id; password prompted)",
             _cmd_staff_add)
    p.add_argument("login")
    p.add_argument("name")
    p.add_argument("role", choices=("administrador", "supervisor", "julgador", "consulta"))
    p.add_argument("--password-stdin", action="store_true",
                   help="read the password from the first line of standard input")
    p = leaf(stf_sub, "disable", "disable a console account and end its sessions",
             _cmd_staff_disable)
    p.add_argument("login")
    leaf(stf_sub, "list", "list console accounts (JSON)", _cmd_staff_list)

    reg = sub.add_parser("registry", help="reference data")
    reg_sub = reg.add_subparsers(dest="registry_command", required=True, parser_class=_Parser)
    p = leaf(reg_sub, "import", "import CSV/JSON (row-by-row errors)", _cmd_registry_import)
    p.add_argument("file")
    p.add_argument("--table", default=None)
    p = leaf(reg_sub, "delete", "delete a row (tombstone)", _cmd_registry_delete)
    p.add_argument("table")
    p.add_argument("key")

    rng = sub.add_parser("range", help="number ranges (talonário)")
    rng_sub = rng.add_subparsers(dest="range_command", required=True, parser_class=_Parser)
    p = leaf(rng_sub, "allocate", "assign SERIES FIRST..LAST to DEVICE", _cmd_range_allocate)
    p.add_argument("device")
    p.add_argument("series")
    p.add_argument("first", type=int)
    p.add_argument("last", type=int)

    dev = sub.add_parser("device", help="devices")
    dev_sub = dev.add_subparsers(dest="device_command", required=True, parser_class=_Parser)
    p = leaf(dev_sub, "revoke", "revoke a device (its token is refused)", _cmd_device_revoke)
    p.add_argument("device")
    leaf(dev_sub, "list", "list devices (JSON)", _cmd_device_list)

    blb = sub.add_parser("blobs", help="uploaded files")
    blb_sub = blb.add_subparsers(dest="blobs_command", required=True, parser_class=_Parser)
    p = leaf(blb_sub, "prune", "delete files no record references, uploaded more than "
             "--older-than-days ago (frees the devices' quota)", _cmd_blobs_prune)
    p.add_argument("--older-than-days", type=int, default=30)
    p.add_argument("--blob-dir", default=None)
    p = leaf(blb_sub, "reindex", "list the file store and make HQ's list of files equal "
             "to it (after restoring a bucket or upgrading)", _cmd_blobs_reindex)
    p.add_argument("--blob-dir", default=None)

    p = leaf(sub, "compact", "expire history outside every window from the devices and "
             "compact the pull log (superseded upserts, tombstones) older than --keep-days",
             _cmd_compact)
    p.add_argument("--keep-days", type=int, default=30,
                   help="changes younger than this are kept as they are (default 30): a "
                        "device that pulled within them needs no snapshot")

    p = leaf(sub, "report", "records per device and number accounting per range", _cmd_report)
    p.add_argument("--json", action="store_true")
    p.add_argument("--duplicates", type=int, default=100, metavar="N",
                   help="suspected duplicates shown (a page; the total is always given)")
    p.add_argument("--duplicates-from", type=int, default=0, metavar="OFFSET",
                   help="first suspected duplicate shown (0 = the oldest)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from inspector_app.hq.console.staff import StaffError
    from inspector_app.hq.devices import DeviceError
    from inspector_app.hq.numbering import RangeError
    from inspector_app.hq.registry import RegistryError

    args = build_parser().parse_args(argv)
    try:
        result: int = args.func(args)
    except (CommandError, DeviceError, RangeError, RegistryError, StaffError) as exc:
        print(f"inspector-hq: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except SQLAlchemyError as exc:
        print(f"inspector-hq: erro no banco de dados: {type(exc).__name__}: "
              f"{str(exc).splitlines()[0]}", file=sys.stderr)
        return EXIT_USAGE
    return result


if __name__ == "__main__":
    sys.exit(main())
