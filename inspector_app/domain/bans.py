"""Bans on a new permission after losing one (DF, Decreto 15.154/1993), known at HQ and shown
on the vehicle/holder card.

* cassação: a new permission only after 1 year (art. 39, parágrafo único);
* revogação (art. 12, I): 1 year (art. 12, parágrafo único);
* desistência: 6 months (art. 16, §2º).

HQ records the reason and the date of the act (``ban_reason``, ``ban_from`` of the permit
holder); the period is counted by the engine's one window rule (date to date, Lei
9.784/1999 art. 66 §3, the last day included).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from inspector_app.domain.deadlines import WINDOW_LAST_DAY_INCLUDED, add_months, within_window


@dataclass(frozen=True)
class BanRule:
    months: int
    act: str
    basis: str


BAN_RULES: dict[str, BanRule] = {
    "cassacao": BanRule(
        12, "cassação da permissão", "Decreto 15.154/1993, art. 39, parágrafo único"
    ),
    "revogacao": BanRule(
        12, "revogação da permissão", "Decreto 15.154/1993, art. 12, parágrafo único"
    ),
    "desistencia": BanRule(6, "desistência da permissão", "Decreto 15.154/1993, art. 16, §2º"),
}


def ban_until(reason: str, since: dt.date) -> dt.date:
    """The last day of the ban (the period's end day, included)."""
    return add_months(since, BAN_RULES[reason].months)


def ban_warning(reason: str | None, since: dt.date | None, today: dt.date) -> str | None:
    """The card's sentence while the ban lasts, else None."""
    if reason not in BAN_RULES or since is None:
        return None
    rule = BAN_RULES[reason]
    if not within_window(since, rule.months, today, WINDOW_LAST_DAY_INCLUDED):
        return None
    return (
        f"Impedido(a) de nova permissão até {ban_until(reason, since):%d/%m/%Y}: "
        f"{rule.act} em {since:%d/%m/%Y} ({rule.basis})."
    )


class BanFieldError(ValueError):
    """A ban column of a registry row that cannot be stored: ``field`` and a Portuguese
    ``message`` (the device's and HQ's registry imports report it on the row)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def ban_columns(reason: str | None, since: str | None, today: dt.date) -> dict[str, str | None]:
    """The ``ban_reason`` / ``ban_from`` columns of a permit holder as imported: both empty,
    or a known reason with the date of the act (ISO), never after ``today``. One rule for
    the device's and HQ's registry imports."""
    if reason is None and since is None:
        return {"ban_reason": None, "ban_from": None}
    if reason not in BAN_RULES:
        raise BanFieldError("ban_reason", f"use {', '.join(BAN_RULES)} (motivo do impedimento).")
    if since is None:
        raise BanFieldError("ban_from", "informe a data do ato (AAAA-MM-DD).")
    if dt.date.fromisoformat(since) > today:
        raise BanFieldError("ban_from", "a data do ato não pode ser futura.")
    return {"ban_reason": reason, "ban_from": since}
