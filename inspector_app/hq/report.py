"""What HQ received: records per device, and number accounting per range."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Engine, func, select

from inspector_app.hq.devices import list_devices
from inspector_app.hq.numbering import account
from inspector_app.hq.standing import count_suspected_duplicates, list_suspected_duplicates
from inspector_app.hq.tables import records

DUPLICATES_PAGE = 100


def build_report(engine: Engine, *, duplicates_limit: int = DUPLICATES_PAGE,
                 duplicates_offset: int = 0) -> dict[str, Any]:
    """Records per device, the accounting of every range, and one page of the suspected
    duplicates (``duplicates_limit`` from ``duplicates_offset``; their total count too)."""
    with engine.connect() as conn:
        counts = {
            row.device_id: (int(row.n), row.last)
            for row in conn.execute(
                select(records.c.device_id, func.count().label("n"),
                       func.max(records.c.received_at).label("last"))
                .group_by(records.c.device_id)
            )
        }
        kinds: dict[str, dict[str, int]] = {}
        for row in conn.execute(
            select(records.c.device_id, records.c.kind, func.count().label("n"))
            .group_by(records.c.device_id, records.c.kind)
        ):
            kinds.setdefault(row.device_id, {})[row.kind] = int(row.n)
        duplicates = list_suspected_duplicates(conn, limit=max(0, duplicates_limit),
                                               offset=max(0, duplicates_offset))
        duplicates_total = count_suspected_duplicates(conn)
    devices = [
        {
            "device_id": d.id, "name": d.name, "enrolled_at": d.enrolled_at,
            "revoked_at": d.revoked_at, "last_seen_at": d.last_seen_at,
            "records": counts.get(d.id, (0, None))[0],
            "last_received_at": counts.get(d.id, (0, None))[1],
            "by_kind": dict(sorted(kinds.get(d.id, {}).items())),
        }
        for d in list_devices(engine)
    ]
    return {"devices": devices, "ranges": [a.as_json() for a in account(engine)],
            "suspected_duplicates": duplicates,
            "suspected_duplicates_total": duplicates_total,
            "suspected_duplicates_offset": max(0, duplicates_offset)}


def report_lines(report: dict[str, Any]) -> list[str]:
    """The report as text for a terminal (Portuguese)."""
    out = ["Dispositivos:"]
    for d in report["devices"]:
        state = f"revogado em {d['revoked_at'][:10]}" if d["revoked_at"] else "ativo"
        out.append(f"  {d['device_id']}  {d['name']}  ({state})  registros recebidos: "
                   f"{d['records']}")
    out.append("Numeração (por faixa):")
    for r in report["ranges"]:
        out.append(
            f"  {r['series']} {r['first']}..{r['last']}  dispositivo {r['device_id']}: "
            f"emitidos {r['issued']}, anulados {r['voided']}, faltando {r['missing']}, "
            f"não usados {r['unused']}"
        )
        if r["missing"]:
            shown = ", ".join(str(n) for n in r["missing_numbers"])
            out.append(f"    números faltando: {shown}{' …' if r['missing'] > 50 else ''}")
    duplicates = report.get("suspected_duplicates") or []
    total = int(report.get("suspected_duplicates_total") or len(duplicates))
    if total:
        first = int(report.get("suspected_duplicates_offset") or 0)
        shown = (f"{first + 1} a {first + len(duplicates)} de {total}" if duplicates
                 else f"nenhuma a partir de {first + 1}; total {total}")
        out.append("Suspeitas de duplicidade (mesma placa, regra e dia, dispositivos "
                   f"diferentes): {shown}")
        for d in duplicates:
            out.append(
                f"  {d['plate_key']}  {d['rule_id']}  {d['occurred_on']}: auto {d['record_id']} "
                f"(dispositivo {d['device_id']}) e auto {d['other_record_id']} "
                f"(dispositivo {d['other_device_id']})"
            )
        if first + len(duplicates) < total:
            out.append(f"  … mais {total - first - len(duplicates)}: use --duplicates-from "
                       f"{first + len(duplicates)}")
    return out
