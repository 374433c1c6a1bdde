"""Public verification of a printed auto from its code (the QR on the paper).

Says whether HQ holds a record with that code, and its number, kind, date, plate and status
(valid, or cancelled when a ``cancelamento`` record refers to it). Nothing personal is
shown: no names, CPF or CNH. A code HQ does not know may belong to an auto issued offline
that has not reached HQ yet; the page says so.
"""

from __future__ import annotations

import datetime as dt
import html
import json
from typing import Any

from sqlalchemy import Engine, select

from inspector_app.domain.documents import RECORD_KIND_LABELS
from inspector_app.hq.tables import records
from inspector_app.sync.protocol import VerifyResult, display_number

KIND_LABELS = RECORD_KIND_LABELS


def normalize_verify_code(text: str) -> str:
    raw = "".join(ch for ch in text.upper() if ch.isalnum())
    return "-".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _plate(envelope: dict[str, Any]) -> str | None:
    body = envelope.get("body")
    vehicle = body.get("vehicle") if isinstance(body, dict) else None
    if isinstance(vehicle, dict) and isinstance(vehicle.get("plate"), str):
        return str(vehicle["plate"])
    key = envelope.get("plate_key")
    return key if isinstance(key, str) else None


def _date(envelope: dict[str, Any], fallback: str) -> str:
    body = envelope.get("body")
    occurred = body.get("occurred_at") if isinstance(body, dict) else None
    text = occurred if isinstance(occurred, str) else envelope.get("occurred_on") or fallback
    return str(text)[:10]


def verify_code(engine: Engine, code: str) -> VerifyResult:
    normalized = normalize_verify_code(code)
    with engine.connect() as conn:
        row = conn.execute(
            select(records).where(records.c.verification_code == normalized)
        ).first()
        if row is None:
            return VerifyResult(code=normalized, authentic=False)
        cancel = conn.execute(
            select(records.c.created_at)
            .where(records.c.refers_to == row.id, records.c.kind == "cancelamento")
            .order_by(records.c.created_at)
            .limit(1)
        ).first()
    envelope = json.loads(row.payload)
    body = envelope.get("body")
    pack = body.get("pack") if isinstance(body, dict) else None
    organ = (pack.get("organ_name") or pack.get("organ")) if isinstance(pack, dict) else None
    return VerifyResult(
        code=normalized,
        authentic=True,
        kind=row.kind,
        number=display_number(row.series, row.number),
        date=_date(envelope, row.created_at),
        plate=_plate(envelope),
        status="cancelled" if cancel is not None else "valid",
        cancelled_on=None if cancel is None else str(cancel.created_at)[:10],
        organ=str(organ) if organ else None,
        received_at=str(row.received_at)[:10],
    )


def _br(iso: str | None) -> str:
    if not iso:
        return "—"
    try:
        return dt.date.fromisoformat(iso[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return html.escape(iso)


_PAGE = """<!DOCTYPE html>
<html lang="pt-BR">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 0; padding: 0 1rem; background: #f4f5f7;
       color: #1d1d1f; }}
main {{ max-width: 34rem; margin: 2rem auto; background: #fff; border-radius: 8px;
       padding: 1.5rem 2rem; box-shadow: 0 1px 4px rgba(0,0,0,.12); }}
@media (max-width: 30rem) {{ main {{ margin: 1rem auto; padding: 1.25rem; }} }}
h1 {{ font-size: 1.4rem; margin-top: 0; }}
.ok {{ color: #0a6b2b; }} .bad {{ color: #a4161a; }} .warn {{ color: #8a5a00; }}
dl {{ display: grid; grid-template-columns: max-content 1fr; gap: .4rem 1rem; }}
dt {{ font-weight: 600; }} dd {{ margin: 0; }}
footer {{ font-size: .85rem; color: #555; margin-top: 1.5rem; }}
</style>
</head>
<body>
<main>
{content}
<footer>Código consultado: <code>{code}</code></footer>
</main>
</body>
</html>
"""


def render_busy_page() -> str:
    """The page for a client over the verification rate limit."""
    content = (
        '<h1 class="warn" id="veredito">Muitas consultas</h1>\n'
        "<p>Este endereço fez muitas consultas em pouco tempo. Aguarde um minuto e "
        "tente novamente.</p>"
    )
    return _PAGE.format(title="Verificação de documento", content=content, code="—")


def render_page(result: VerifyResult) -> str:
    """The Portuguese HTML page for ``result``."""
    code = html.escape(result.code)
    if not result.authentic:
        content = (
            '<h1 class="bad" id="veredito">Documento não encontrado</h1>\n'
            "<p>Não há na sede um documento com este código de verificação. Confira o "
            "código impresso. Um auto emitido há pouco, sem conexão, pode ainda não ter "
            "chegado à sede: tente novamente mais tarde.</p>"
        )
        return _PAGE.format(title="Verificação de documento", content=content, code=code)
    cancelled = result.status == "cancelled"
    status_html = (
        f'<span class="bad">Cancelado em {_br(result.cancelled_on)}</span>' if cancelled
        else '<span class="ok">Válido</span>'
    )
    kind = KIND_LABELS.get(result.kind or "", result.kind or "")
    rows = [
        ("Documento", html.escape(kind)),
        ("Número", html.escape(result.number or "—")),
        ("Data", _br(result.date)),
        ("Placa", html.escape(result.plate or "—")),
        ("Situação", status_html),
    ]
    if result.organ:
        rows.append(("Órgão", html.escape(result.organ)))
    items = "\n".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in rows)
    headline = (
        '<h1 class="warn" id="veredito">Documento autêntico — CANCELADO</h1>' if cancelled
        else '<h1 class="ok" id="veredito">Documento autêntico</h1>'
    )
    content = (
        f"{headline}\n<p>Este documento foi emitido por um agente de fiscalização e "
        f"registrado na sede em {_br(result.received_at)}.</p>\n<dl>\n{items}\n</dl>"
    )
    return _PAGE.format(title=f"Verificação — {html.escape(result.number or kind)}",
                        content=content, code=code)
