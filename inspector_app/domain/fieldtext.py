"""What form fields show and accept, in Portuguese, without Qt: dates typed as dd/mm/aaaa,
plates in their one display form, CPF/CNPJ with their punctuation, checklist search.

Everything here is pure (stdlib and ``identity``): the widgets in ``ui.fields`` call it and
the tests call it directly.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
import unicodedata
from collections.abc import Iterable

from inspector_app.domain.identity import (
    IdentityError,
    format_cnpj,
    format_cpf,
    normalize_cnpj,
    normalize_cpf,
    parse_plate,
)

MONTHS_PT = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto",
             "setembro", "outubro", "novembro", "dezembro")
DATE_HINT = "use dd/mm/aaaa, por exemplo 05/03/2026"
_DATE_RE = re.compile(r"^\s*(\d{1,2})\s*[/.\-]\s*(\d{1,2})\s*[/.\-]\s*(\d{4})\s*$")
_COMPACT_RE = re.compile(r"^\s*(\d{2})(\d{2})(\d{4})\s*$")
MIN_YEAR, MAX_YEAR = 1900, 2100


class DateTextError(ValueError):
    """A typed date that is not a date; ``message`` is the Portuguese text for the screen."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def parse_date_br(text: str) -> dt.date | None:
    """``"05/03/2026"`` (also ``5/3/2026``, ``05-03-2026``, ``05032026``) → a date; an empty
    text (or only the mask's separators) → None. An impossible date such as 31/02/2026 is
    refused with a message that says why, never silently changed or dropped."""
    stripped = text.replace("_", "").strip()
    if not stripped.replace("/", "").strip():
        return None
    match = _DATE_RE.match(stripped) or _COMPACT_RE.match(stripped)
    if match is None:
        raise DateTextError(f"Data incompleta ou em formato inválido ({stripped}): {DATE_HINT}.")
    day, month, year = (int(g) for g in match.groups())
    if not MIN_YEAR <= year <= MAX_YEAR:
        raise DateTextError(f"Ano {year} fora do intervalo aceito ({MIN_YEAR} a {MAX_YEAR}).")
    if not 1 <= month <= 12:
        raise DateTextError(f"Mês {month:02d} não existe: o mês vai de 01 a 12.")
    last = calendar.monthrange(year, month)[1]
    if not 1 <= day <= last:
        raise DateTextError(
            f"Data impossível: {day:02d}/{month:02d}/{year} não existe ({MONTHS_PT[month - 1]} "
            f"de {year} tem {last} dias).")
    return dt.date(year, month, day)


def format_date_br(value: dt.date | None) -> str:
    return value.strftime("%d/%m/%Y") if value else ""


def plate_display(text: str | None) -> str:
    """The one form a plate is shown in: ``ABC-1234`` (old) or ``ABC1D23`` (Mercosul), from
    any typed or stored variant (``abc1234``, ``ABC 1234``); "" for none. Text that is not a
    plate is shown uppercased as it is (a malformed registry entry stays visible)."""
    if not text or not str(text).strip():
        return ""
    try:
        return parse_plate(str(text)).display()
    except IdentityError:
        return str(text).strip().upper()


def document_display(text: str | None) -> str:
    """A CPF (``169.440.601-67``) or CNPJ (``12.345.678/0001-95``) with its punctuation when
    its check digits are right; otherwise the text as stored (never a guess)."""
    if not text:
        return ""
    raw = str(text).strip()
    compact = re.sub(r"[.\-/\s]", "", raw)
    try:
        if len(compact) == 11 and compact.isdigit():
            return format_cpf(normalize_cpf(compact))
        if len(compact) == 14:
            return format_cnpj(normalize_cnpj(compact))
    except IdentityError:
        return raw
    return raw


def fold(text: str) -> str:
    """Lowercase without accents: "Extintor VÁLIDO" → "extintor valido"."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def match_items(query: str, items: Iterable[tuple[str, str]]) -> list[str]:
    """Ids of the (id, searchable text) pairs that match ``query``: an exact code first,
    then codes that contain it, then texts holding every word of it (accents and case
    ignored), each group in the given order."""
    q = fold(query).strip()
    if not q:
        return []
    pairs = list(items)
    words = q.split()
    exact = [i for i, _t in pairs if fold(i) == q]
    codes = [i for i, _t in pairs if q in fold(i) and i not in exact]
    texts = [i for i, t in pairs if i not in exact and i not in codes
             and all(w in fold(f"{i} {t}") for w in words)]
    return exact + codes + texts
