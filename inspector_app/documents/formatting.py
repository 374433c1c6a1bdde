"""How values from a sealed record are written on paper (Brazilian conventions).

Every function takes what the record holds (strings from JSON, possibly missing) and
returns text; none raises on a malformed value, since a reprint must never fail on data
that was sealed years ago: it prints the value as it is instead.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation

from inspector_app.domain.identity import IdentityError, format_cnpj, format_cpf

MISSING = "—"
# Brasília time (UTC−3, no daylight saving since 2019): the time of every regime shipped.
DISPLAY_TIMEZONE = dt.timezone(dt.timedelta(hours=-3), "BRT")

LOCATION_TYPES = {
    "terminal": "terminal",
    "ponto_controle": "ponto de controle",
    "via_publica": "via pública",
    "patio_vistoria": "pátio de vistoria",
}
RESULTS = {"ok": "Conforme", "fail": "Não conforme", "na": "Não se aplica"}
PENALTIES = {"multa": "Multa", "advertencia": "Advertência"}
UNITS = {"business_days": "dias úteis", "calendar_days": "dias corridos", "months": "meses"}
TRIGGERS = {
    "ciencia_auto": "da ciência deste auto",
    "ciencia_penalidade": "da ciência da penalidade",
    "ciencia_cassacao": "da ciência da cassação",
    "notificacao_multa": "da notificação da multa",
    "fim_prazo_pagamento": "do fim do prazo de pagamento",
}


def text(value: object, default: str = MISSING) -> str:
    """``value`` as text; None and blank strings become ``default``."""
    if value is None:
        return default
    out = str(value).strip()
    return out or default


def money(value: object) -> str:
    """``"1234.5"`` → ``"R$ 1.234,50"``; None → "não estimado"."""
    if value is None or value == "":
        return "não estimado"
    try:
        amount = Decimal(str(value)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        return str(value)
    sign = "-" if amount < 0 else ""
    whole, cents = f"{abs(amount):.2f}".split(".")
    groups: list[str] = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    return f"{sign}R$ {'.'.join(groups)},{cents}"


def date_br(value: object) -> str:
    """``"2026-12-10"`` (or an ISO timestamp) → ``"10/12/2026"``."""
    raw = text(value, "")
    if not raw:
        return MISSING
    try:
        day = dt.date.fromisoformat(raw[:10])
    except ValueError:
        return raw
    return day.strftime("%d/%m/%Y")


def _timestamp(value: object) -> dt.datetime | None:
    raw = text(value, "")
    try:
        return dt.datetime.fromisoformat(raw) if raw else None
    except ValueError:
        return None


def offset_label(moment: dt.datetime) -> str:
    offset = moment.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "−" if minutes < 0 else "+"
    return f"UTC{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def datetime_br(value: object, *, tz: dt.tzinfo | None = None) -> str:
    """An ISO timestamp as ``"25/11/2026 08:47 (UTC−03:00)"``.

    A timestamp with an offset keeps its own wall-clock time unless ``tz`` is given; one
    in UTC (as records store ``created_at``) is shown in ``tz`` or Brasília time.
    """
    moment = _timestamp(value)
    if moment is None:
        return text(value)
    if moment.tzinfo is None:
        return moment.strftime("%d/%m/%Y %H:%M")
    if tz is not None or moment.utcoffset() == dt.timedelta(0):
        moment = moment.astimezone(tz or DISPLAY_TIMEZONE)
    return f"{moment.strftime('%d/%m/%Y %H:%M')} ({offset_label(moment)})"


def time_br(value: object) -> str:
    """The wall-clock time of an ISO timestamp with its offset: ``"08:47 (UTC−03:00)"``."""
    moment = _timestamp(value)
    if moment is None:
        return MISSING
    if moment.tzinfo is None:
        return moment.strftime("%H:%M")
    return f"{moment.strftime('%H:%M')} ({offset_label(moment)})"


def zone_of(value: object) -> dt.tzinfo:
    """The time zone of an ISO timestamp (Brasília when it has none or is unreadable)."""
    moment = _timestamp(value)
    if moment is None or moment.tzinfo is None:
        return DISPLAY_TIMEZONE
    return moment.tzinfo


def person_document(value: object) -> tuple[str, str]:
    """(label, formatted) for a CPF (11 digits) or CNPJ (14 characters); raw if invalid."""
    raw = text(value, "")
    if not raw:
        return "CPF/CNPJ", MISSING
    compact = "".join(c for c in raw if c.isalnum()).upper()
    try:
        if len(compact) == 11 and compact.isdigit():
            return "CPF", format_cpf(compact)
        if len(compact) == 14:
            return "CNPJ", format_cnpj(compact)
    except IdentityError:
        pass
    return "CPF/CNPJ", raw


def cpf(value: object) -> str:
    raw = text(value, "")
    if not raw:
        return MISSING
    try:
        return format_cpf(raw)
    except IdentityError:
        return raw


def location_type(value: object) -> str:
    raw = text(value, "")
    return LOCATION_TYPES.get(raw, raw.replace("_", " ") or MISSING)


def result(value: object) -> str:
    raw = text(value, "")
    return RESULTS.get(raw, raw or MISSING)


def penalty(value: object) -> str:
    raw = text(value, "")
    return PENALTIES.get(raw, raw.replace("_", " ").capitalize() or MISSING)


def deadline_span(days: object, unit: object) -> str:
    """``10, "business_days"`` → ``"10 dias úteis"``."""
    unit_text = UNITS.get(text(unit, ""), text(unit, "").replace("_", " "))
    return f"{text(days)} {unit_text}".strip()


def trigger(value: object) -> str:
    raw = text(value, "")
    return TRIGGERS.get(raw, raw.replace("_", " "))


def grouped_hex(digest: str, *, group: int = 8) -> str:
    """A hex digest in groups of ``group`` characters separated by spaces (wraps cleanly)."""
    return " ".join(digest[i:i + group] for i in range(0, len(digest), group))


def coordinates(latitude: object, longitude: object) -> str:
    if latitude in (None, "") or longitude in (None, ""):
        return "não registradas"
    return f"{latitude}, {longitude}"
