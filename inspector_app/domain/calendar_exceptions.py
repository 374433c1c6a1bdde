"""Dated calendar exceptions (pontos facultativos and reduced expediente decreed year by
year by the GDF or Juiz de Fora) as HQ publishes them: parameter ``calendar.exceptions`` of a
pack, a list of ``{date, kind, name, decree}``. Shared by HQ (checked when published), the
device's registry import and the device's calendar (applied offline)."""

from __future__ import annotations

import datetime as dt

from inspector_app.domain.pack import CalendarException

CALENDAR_EXCEPTIONS_PARAMETER = "calendar.exceptions"
_EXCEPTION_KEYS = frozenset({"date", "kind", "name", "decree"})
_KIND_PT = {"closed": "sem expediente", "early_close": "encerra mais cedo",
            "late_open": "abre mais tarde"}


def parse_exceptions(value: object, source: str = "hq") -> tuple[CalendarException, ...]:
    """HQ's ``calendar.exceptions`` parameter: a list of ``{date, kind, name, decree}``.

    Raises ``ValueError`` with a Portuguese message naming the entry and the field (a row
    with an unknown key, a bad date, an unknown kind or no decree is refused whole).
    """
    if not isinstance(value, list):
        raise ValueError("calendar.exceptions: esperada uma lista de exceções do calendário.")
    out = []
    seen: set[dt.date] = set()
    for i, row in enumerate(value):
        where = f"calendar.exceptions[{i}]"
        if not isinstance(row, dict):
            raise ValueError(f"{where}: esperado um objeto {{date, kind, name, decree}}.")
        extra = sorted(set(row) - _EXCEPTION_KEYS)
        if extra:
            raise ValueError(f"{where}.{extra[0]}: campo desconhecido.")
        try:
            day = dt.date.fromisoformat(str(row.get("date")))
        except ValueError:
            raise ValueError(f"{where}.date: data inválida (use AAAA-MM-DD).") from None
        if not 2000 <= day.year <= 2100:
            raise ValueError(f"{where}.date: ano {day.year} fora de 2000..2100.")
        if day in seen:
            raise ValueError(f"{where}.date: {day:%d/%m/%Y} repetida.")
        seen.add(day)
        kind = row.get("kind")
        if kind not in _KIND_PT:
            raise ValueError(
                f"{where}.kind: use closed (sem expediente), early_close (encerra mais cedo) "
                "ou late_open (abre mais tarde)."
            )
        name, decree = row.get("name"), row.get("decree")
        for key, text in (("name", name), ("decree", decree)):
            if not isinstance(text, str) or not text.strip() or len(text) > 300:
                raise ValueError(f"{where}.{key}: texto obrigatório (até 300 caracteres).")
        assert isinstance(name, str) and isinstance(decree, str)
        out.append(CalendarException(day, str(kind), name.strip(), decree.strip(), source))
    return tuple(out)


def describe_exception(exc: CalendarException) -> str:
    return f"{exc.date:%d/%m/%Y}: {exc.name} – {_KIND_PT[exc.kind]} ({exc.decree})"
