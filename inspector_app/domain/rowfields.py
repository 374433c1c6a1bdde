"""Field readers shared by the registry imports of the device and of HQ.

Each reader takes a row (a mapping read from CSV or JSON) and a field name, and returns the
clean value or raises :class:`FieldError` with a Portuguese message naming the problem.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from inspector_app.domain.identity import IdentityError

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
TRUE_WORDS = frozenset({"1", "true", "t", "sim", "s", "yes", "y"})
FALSE_WORDS = frozenset({"0", "false", "f", "não", "nao", "n", "no"})


class FieldError(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def text(row: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = row.get(name)
    if isinstance(value, (bool, dict, list)):
        raise FieldError(name, f"esperado texto, recebido {value!r}.")
    if isinstance(value, (int, float)):
        value = str(value)
    if isinstance(value, str):
        value = value.strip()
    if value is None or value == "":
        if required:
            raise FieldError(name, "campo obrigatório não informado.")
        return None
    return str(value)


def required(row: Mapping[str, Any], name: str) -> str:
    value = text(row, name, required=True)
    assert value is not None
    return value


def integer(row: Mapping[str, Any], name: str, lo: int, hi: int) -> int | None:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise FieldError(name, f"esperado número inteiro, recebido {value!r}.")
    if isinstance(value, str):
        stripped = value.strip()
        if not re.fullmatch(r"[+-]?\d+", stripped):
            raise FieldError(name, f"esperado número inteiro, recebido {value!r}.")
        value = int(stripped)
    if not isinstance(value, int):
        raise FieldError(name, f"esperado número inteiro, recebido {value!r}.")
    if not lo <= value <= hi:
        raise FieldError(name, f"valor {value} fora do intervalo {lo}–{hi}.")
    return value


def iso_date(row: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = text(row, name, required=required)
    if value is None:
        return None
    if not ISO_DATE.fullmatch(value):
        raise FieldError(name, f"data inválida {value!r}: use o formato AAAA-MM-DD.")
    try:
        parsed = dt.date.fromisoformat(value)
    except ValueError:
        raise FieldError(name, f"data inexistente {value!r}.") from None
    if not 1900 <= parsed.year <= 2100:
        raise FieldError(name, f"ano fora do intervalo 1900–2100: {value!r}.")
    return value


def flag(row: Mapping[str, Any], name: str, default: int) -> int:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        return default
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int) and value in (0, 1):
        return value
    if isinstance(value, str):
        lowered = value.strip().lower()
        if lowered in TRUE_WORDS:
            return 1
        if lowered in FALSE_WORDS:
            return 0
    raise FieldError(name, f"esperado sim/não (1/0), recebido {value!r}.")


def choice(row: Mapping[str, Any], name: str, allowed: Iterable[str]) -> str:
    value = required(row, name)
    options = sorted(allowed)
    if value not in options:
        raise FieldError(name, f"valor {value!r} não permitido; use {', '.join(options)}.")
    return value


def identity(name: str, fn: Callable[[str], str], value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return fn(value)
    except IdentityError as exc:
        raise FieldError(name, exc.message) from None
