"""How values from a sealed record are written on paper (Brazilian conventions).

Every function takes what the record holds (strings from JSON, possibly missing) and
returns text; none raises on a malformed value, since a reprint must never fail on data
that was sealed years ago: it prints the value as it is instead.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from decimal import Decimal, InvalidOperation
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from inspector_app.domain.identity import IdentityError, format_cnpj, format_cpf

MISSING = "—"
# The órgão's legal time zone when the pack names none: every regime shipped (DF, Juiz de
# Fora) is on Brasília time. Every time on a document is shown in the legal zone, whatever
# the zone of the laptop that printed it; the offset is printed once per document.
LEGAL_TIMEZONE = "America/Sao_Paulo"
ZONE_NAMES = {"America/Sao_Paulo": "horário de Brasília"}


@functools.lru_cache(maxsize=8)
def legal_zone(name: object = LEGAL_TIMEZONE) -> dt.tzinfo:
    """The IANA zone ``name`` (Brasília when missing or unknown; UTC−3 without tzdata)."""
    key = name if isinstance(name, str) and name else LEGAL_TIMEZONE
    try:
        return ZoneInfo(key)
    except (ZoneInfoNotFoundError, ValueError):
        if key != LEGAL_TIMEZONE:
            return legal_zone(LEGAL_TIMEZONE)
        return dt.timezone(dt.timedelta(hours=-3), "UTC-03:00")


DISPLAY_TIMEZONE = legal_zone()

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


def _in_zone(value: object, tz: dt.tzinfo | None) -> dt.datetime | None:
    moment = _timestamp(value)
    if moment is None or moment.tzinfo is None:
        return moment
    return moment.astimezone(tz or DISPLAY_TIMEZONE)


def datetime_br(value: object, *, tz: dt.tzinfo | None = None) -> str:
    """An ISO timestamp as ``"25/11/2026 08:47"`` in the legal zone ``tz`` (Brasília).

    Every aware timestamp is converted, whatever offset it was stored with, so a record
    sealed on a laptop set to UTC or to Manaus prints the same times; the offset is said
    once per document (:func:`zone_statement`). A naive timestamp prints as it is.
    """
    moment = _in_zone(value, tz)
    if moment is None:
        return text(value)
    return moment.strftime("%d/%m/%Y %H:%M")


def time_br(value: object, *, tz: dt.tzinfo | None = None) -> str:
    """The time of an ISO timestamp in the legal zone: ``"08:47"``."""
    moment = _in_zone(value, tz)
    if moment is None:
        return MISSING
    return moment.strftime("%H:%M")


def date_in_zone(value: object, *, tz: dt.tzinfo | None = None) -> str:
    """The calendar day of an ISO timestamp in the legal zone (a date prints as it is)."""
    raw = text(value, "")
    if len(raw) <= 10:
        return date_br(raw)
    moment = _in_zone(raw, tz)
    return moment.strftime("%d/%m/%Y") if moment is not None else date_br(raw)


def zone_statement(tz: dt.tzinfo, at: object = None) -> str:
    """``"horário de Brasília, UTC−03:00"``: the zone every time of the document is in."""
    moment = _timestamp(at)
    if moment is None or moment.tzinfo is None:
        moment = dt.datetime.now(dt.UTC)
    local = moment.astimezone(tz)
    key = getattr(tz, "key", None)
    name = ZONE_NAMES.get(str(key), f"fuso {key}" if key else "fuso legal")
    return f"{name}, {offset_label(local)}"


def zone_of(value: object) -> dt.tzinfo:
    """Kept for callers of the old API: the legal zone (Brasília)."""
    return DISPLAY_TIMEZONE


_GAPS = r"lacunas?\s+G\d+(?:\s*(?:,|e)\s*G\d+)*"
_GAP_REFERENCE = re.compile(
    rf"\s*\({_GAPS}\)|\s*[–-]?\s*{_GAPS}|\s*\(RULES\.md[^)]*\)|\s*[–-]?\s*RULES\.md\s*§?[\w.]*")


def legal(value: str) -> str:
    """Pack text as printed: references to the project's gap list ("lacuna G7",
    "RULES.md §A3") are for HQ and logs, not for paper."""
    out = _GAP_REFERENCE.sub("", value)
    return re.sub(r"\(\s*\)", "", out).strip()


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
