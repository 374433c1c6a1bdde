"""Brazilian identity numbers: vehicle plates, CPF, CNPJ, CNH and RENAVAM.

Parsing, normalising, formatting and check-digit validation, per RULES.md §B3 (plates) and
§B4 (check digits). Standard library only: the rules engine, the store and the GUI all call
this module, so it must not pull in anything heavier.

Every rejection raises :class:`IdentityError`, which carries the field, a machine code and a
Portuguese message ready for the GUI. The one exception is the CNH check digit: old-model
CNHs and PGU numbers exist, so a failing CNH check digit is a soft warning
(:func:`check_cnh`) that the inspector may override with a written reason
(:func:`accept_cnh`).
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "MIN_OVERRIDE_REASON_LENGTH",
    "CnhCheck",
    "CnhOverride",
    "IdentityError",
    "Plate",
    "PlateKind",
    "accept_cnh",
    "check_cnh",
    "format_cnpj",
    "format_cpf",
    "generate_cnh",
    "generate_cnpj",
    "generate_cpf",
    "generate_plate",
    "generate_renavam",
    "normalize_cnpj",
    "normalize_cpf",
    "normalize_renavam",
    "parse_plate",
    "same_vehicle_plate",
]

PlateKind = Literal["old", "mercosul"]

MIN_OVERRIDE_REASON_LENGTH = 10
"""Shortest reason (after trimming) that lets an inspector accept a CNH failing its check."""


class IdentityError(ValueError):
    """An identity number or plate was rejected.

    ``field`` names the input ("plate", "cpf", "cnpj", "cnh", "renavam"); ``code`` is one of
    "empty", "length", "format", "check_digit", "all_same", "override_reason";
    ``message`` is the Portuguese text for the GUI and is also ``str(err)``.
    """

    def __init__(self, field: str, code: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[type[IdentityError], tuple[str, str, str]]:
        # The default reduce would call IdentityError(message) and fail on unpickling.
        return (type(self), (self.field, self.code, self.message))


# --------------------------------------------------------------------------------------------
# Shared helpers

_DIGITS = frozenset(string.digits)
_UPPER = frozenset(string.ascii_uppercase)
_ASCII_ALNUM = frozenset(string.ascii_letters + string.digits)


def _strip_separators(text: str, separators: str) -> str:
    """Drop whitespace and the given punctuation; keep everything else for validation."""
    return "".join(c for c in text if c not in separators and not c.isspace())


def _mod11_check_digit(values: Iterable[int], weights: Iterable[int]) -> int:
    """``11 - (Σ value·weight mod 11)``, where remainders 0 and 1 give 0.

    CPF, CNPJ, RENAVAM and the "mod-wrap" CNH form all reduce to this (RULES.md §B4).
    """
    remainder = sum(v * w for v, w in zip(values, weights, strict=True)) % 11
    return 0 if remainder < 2 else 11 - remainder


def _first_bad_char(text: str, allowed: frozenset[str]) -> str | None:
    return next((c for c in text if c not in allowed), None)


def _require_digits(
    text: str,
    *,
    field: str,
    label: str,
    separators: str,
    lengths: Sequence[int],
) -> str:
    """Strip separators and check the rest is ASCII digits of an allowed length."""
    digits = _strip_separators(text, separators)
    if not digits:
        raise IdentityError(field, "empty", f"{label} não informado.")
    bad = _first_bad_char(digits, _DIGITS)
    if bad is not None:
        raise IdentityError(
            field, "format", f"{label} inválido: use apenas números (encontrado {bad!r})."
        )
    if len(digits) not in lengths:
        expected = " ou ".join(str(n) for n in lengths)
        raise IdentityError(
            field,
            "length",
            f"{label} inválido: deve ter {expected} dígitos (foram informados {len(digits)}).",
        )
    return digits


def _random_chars(rng: random.Random, alphabet: str, count: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(count))


# --------------------------------------------------------------------------------------------
# Plates (RULES.md §B3)

_OLD_PLATE = re.compile(r"[A-Z]{3}[0-9]{4}")
_MERCOSUL_PLATE = re.compile(r"[A-Z]{3}[0-9][A-Z][0-9]{2}")
_PLATE_SEPARATORS = "-"
_PLATE_FORMATS_HINT = "Formatos aceitos: ABC-1234 (antiga) ou ABC1D23 (Mercosul)."
# What each of the 7 positions may hold; the 5th decides old (digit) vs Mercosul (letter).
_PLATE_POSITIONS: tuple[tuple[frozenset[str], str], ...] = (
    (_UPPER, "letra"),
    (_UPPER, "letra"),
    (_UPPER, "letra"),
    (_DIGITS, "número"),
    (_UPPER | _DIGITS, "letra ou número"),
    (_DIGITS, "número"),
    (_DIGITS, "número"),
)


def _digit_to_mercosul_letter(digit: str) -> str:
    return chr(ord("A") + int(digit))


@dataclass(frozen=True)
class Plate:
    """A vehicle plate, normalised: uppercase, no dash or space.

    ``kind`` is "old" for LLLNNNN (1990–2018) and "mercosul" for LLLNLNN (from 2018).
    """

    text: str
    kind: PlateKind

    def __post_init__(self) -> None:
        if self.kind == "old":
            pattern = _OLD_PLATE
        elif self.kind == "mercosul":
            pattern = _MERCOSUL_PLATE
        else:
            raise IdentityError("plate", "format", f"Tipo de placa desconhecido: {self.kind!r}.")
        if pattern.fullmatch(self.text) is None:
            raise IdentityError(
                "plate",
                "format",
                f"Placa inválida: {self.text!r} não é uma placa {self._kind_label()}.",
            )

    def _kind_label(self) -> str:
        return "antiga" if self.kind == "old" else "Mercosul"

    def display(self) -> str:
        """Text for display: "ABC-1234" for an old plate, "ABC1D23" for a Mercosul plate."""
        if self.kind == "old":
            return f"{self.text[:3]}-{self.text[3:]}"
        return self.text

    def mercosul(self) -> str:
        """The Mercosul form: the 5th character (a digit d) becomes the letter 0→A … 9→J."""
        if self.kind == "mercosul":
            return self.text
        return self.text[:4] + _digit_to_mercosul_letter(self.text[4]) + self.text[5:]

    def old(self) -> str | None:
        """The old form without dash, or None when the 5th letter is past J.

        Newer Mercosul plates can use K–Z there and never had an old-format equivalent.
        """
        if self.kind == "old":
            return self.text
        offset = ord(self.text[4]) - ord("A")
        if offset > 9:
            return None
        return self.text[:4] + str(offset) + self.text[5:]

    def canonical_key(self) -> str:
        """One key per vehicle: ABC1234 and ABC1B34 both give "ABC1B34".

        Use it to match against registries that still hold the old format.
        """
        return self.mercosul()


def parse_plate(text: str) -> Plate:
    """Parse "abc-1234", "ABC 1234", "abc1d23" and the like; strips spaces and dashes.

    Raises IdentityError (field "plate") naming the first offending position.
    """
    compact = _strip_separators(text, _PLATE_SEPARATORS)
    if not compact:
        raise IdentityError("plate", "empty", "Placa não informada.")
    # Check ASCII before upper(): "ß".upper() is "SS" and would slip through.
    bad = _first_bad_char(compact, _ASCII_ALNUM)
    if bad is not None:
        raise IdentityError(
            "plate",
            "format",
            f"Placa inválida: caractere não permitido {bad!r}. {_PLATE_FORMATS_HINT}",
        )
    if len(compact) != 7:
        raise IdentityError(
            "plate",
            "length",
            f"Placa inválida: deve ter 7 caracteres (foram informados {len(compact)}). "
            f"{_PLATE_FORMATS_HINT}",
        )
    normalised = compact.upper()
    for position, (char, (allowed, what)) in enumerate(
        zip(normalised, _PLATE_POSITIONS, strict=True), start=1
    ):
        if char not in allowed:
            raise IdentityError(
                "plate",
                "format",
                f"Placa inválida: a {position}ª posição deve ser {what} (recebido {char!r}). "
                f"{_PLATE_FORMATS_HINT}",
            )
    kind: PlateKind = "old" if normalised[4] in _DIGITS else "mercosul"
    return Plate(normalised, kind)


def same_vehicle_plate(a: str, b: str) -> bool:
    """True when both texts are the same plate, in either the old or the Mercosul form.

    Raises IdentityError if either text is not a plate: a malformed registry entry should be
    seen, not silently count as "another vehicle".
    """
    return parse_plate(a).canonical_key() == parse_plate(b).canonical_key()


def generate_plate(rng: random.Random, kind: PlateKind) -> Plate:
    """A random valid plate of the given kind (deterministic for a seeded ``rng``)."""
    letters = _random_chars(rng, string.ascii_uppercase, 3)
    if kind == "old":
        return Plate(letters + _random_chars(rng, string.digits, 4), "old")
    text = (
        letters
        + rng.choice(string.digits)
        + rng.choice(string.ascii_uppercase)
        + _random_chars(rng, string.digits, 2)
    )
    return Plate(text, "mercosul")


# --------------------------------------------------------------------------------------------
# CPF (RULES.md §B4)

_CPF_SEPARATORS = ".-"


def _cpf_check_digits(base: str) -> str:
    values = [int(c) for c in base]
    dv1 = _mod11_check_digit(values, range(10, 1, -1))
    dv2 = _mod11_check_digit([*values, dv1], range(11, 1, -1))
    return f"{dv1}{dv2}"


def normalize_cpf(text: str) -> str:
    """The 11 CPF digits; accepts "169.440.601-67". Rejects bad check digits and 111.111.111-11."""
    cpf = _require_digits(text, field="cpf", label="CPF", separators=_CPF_SEPARATORS, lengths=(11,))
    if len(set(cpf)) == 1:
        raise IdentityError("cpf", "all_same", "CPF inválido: todos os dígitos são iguais.")
    expected = _cpf_check_digits(cpf[:9])
    if cpf[9:] != expected:
        raise IdentityError(
            "cpf",
            "check_digit",
            "CPF inválido: dígito verificador não confere. Confira o número no documento.",
        )
    return cpf


def format_cpf(cpf: str) -> str:
    """Format as "169.440.601-67". Validates first, so it raises IdentityError on a bad CPF."""
    digits = normalize_cpf(cpf)
    return f"{digits[:3]}.{digits[3:6]}.{digits[6:9]}-{digits[9:]}"


def generate_cpf(rng: random.Random) -> str:
    """A random valid CPF, 11 digits without punctuation."""
    while True:
        base = _random_chars(rng, string.digits, 9)
        if len(set(base)) > 1:
            return base + _cpf_check_digits(base)


# --------------------------------------------------------------------------------------------
# CNPJ, numeric and alphanumeric (RULES.md §B4; IN RFB 2.229/2024)

_CNPJ_SEPARATORS = "./-"
_CNPJ_BASE_ALPHABET = string.digits + string.ascii_uppercase
_CNPJ_WEIGHTS_1 = (5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)
_CNPJ_WEIGHTS_2 = (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2)


def _cnpj_check_digits(base: str) -> str:
    # IN RFB 2.229/2024: each character is worth its ASCII code minus 48, so digits keep
    # their value, A = 17 … Z = 42, and every existing numeric CNPJ is unchanged.
    values = [ord(c) - 48 for c in base]
    dv1 = _mod11_check_digit(values, _CNPJ_WEIGHTS_1)
    dv2 = _mod11_check_digit([*values, dv1], _CNPJ_WEIGHTS_2)
    return f"{dv1}{dv2}"


def normalize_cnpj(text: str) -> str:
    """The 14 CNPJ characters, uppercase, no punctuation.

    Accepts "11.222.333/0001-81" and the alphanumeric form valid from July 2026,
    "12.abc.345/01de-35": 12 characters 0–9/A–Z then 2 numeric check digits.
    """
    compact = _strip_separators(text, _CNPJ_SEPARATORS)
    if not compact:
        raise IdentityError("cnpj", "empty", "CNPJ não informado.")
    # Check ASCII before upper(): "ß".upper() is "SS" and would slip through.
    bad = _first_bad_char(compact, _ASCII_ALNUM)
    if bad is not None:
        raise IdentityError(
            "cnpj",
            "format",
            f"CNPJ inválido: caractere não permitido {bad!r} (use apenas letras e números).",
        )
    if len(compact) != 14:
        raise IdentityError(
            "cnpj",
            "length",
            f"CNPJ inválido: deve ter 14 caracteres (foram informados {len(compact)}).",
        )
    cnpj = compact.upper()
    if _first_bad_char(cnpj[12:], _DIGITS) is not None:
        raise IdentityError(
            "cnpj",
            "format",
            "CNPJ inválido: os dois últimos caracteres (dígitos verificadores) devem ser números.",
        )
    if len(set(cnpj)) == 1:
        raise IdentityError("cnpj", "all_same", "CNPJ inválido: todos os caracteres são iguais.")
    expected = _cnpj_check_digits(cnpj[:12])
    if cnpj[12:] != expected:
        raise IdentityError(
            "cnpj",
            "check_digit",
            "CNPJ inválido: dígito verificador não confere. Confira o número no documento.",
        )
    return cnpj


def format_cnpj(cnpj: str) -> str:
    """Format as "11.222.333/0001-81" or "12.ABC.345/01DE-35". Validates first (may raise)."""
    c = normalize_cnpj(cnpj)
    return f"{c[:2]}.{c[2:5]}.{c[5:8]}/{c[8:12]}-{c[12:]}"


def generate_cnpj(rng: random.Random, alphanumeric: bool = False) -> str:
    """A random valid CNPJ, 14 characters without punctuation.

    With ``alphanumeric=True`` the first 12 characters mix digits and letters, with at
    least one letter so the result really exercises the 2026 rule.
    """
    alphabet = _CNPJ_BASE_ALPHABET if alphanumeric else string.digits
    while True:
        base = _random_chars(rng, alphabet, 12)
        if len(set(base)) == 1:
            continue
        if alphanumeric and _first_bad_char(base, _DIGITS) is None:
            continue
        return base + _cnpj_check_digits(base)


# --------------------------------------------------------------------------------------------
# CNH (RULES.md §B4, "mod-wrap" form)

_CNH_SEPARATORS = ".-"


def _cnh_check_digits(base: str) -> str:
    values = [int(c) for c in base]
    dv1 = _mod11_check_digit(values, range(2, 11))
    dv2 = _mod11_check_digit([*values, dv1], [*range(3, 12), 2])
    return f"{dv1}{dv2}"


@dataclass(frozen=True)
class CnhCheck:
    """Result of :func:`check_cnh`: ``message`` is a Portuguese warning when not ``valid``."""

    number: str
    valid: bool
    message: str | None


@dataclass(frozen=True)
class CnhOverride:
    """An inspector's decision to accept a CNH that fails its check, and why."""

    number: str
    reason: str

    def __post_init__(self) -> None:
        if len(self.number) != 11 or _first_bad_char(self.number, _DIGITS) is not None:
            raise IdentityError(
                "cnh", "format", f"CNH inválida: {self.number!r} não tem 11 dígitos."
            )
        if len(self.reason.strip()) < MIN_OVERRIDE_REASON_LENGTH:
            raise IdentityError(
                "cnh",
                "override_reason",
                f"Informe um motivo com pelo menos {MIN_OVERRIDE_REASON_LENGTH} caracteres "
                "para aceitar a CNH.",
            )


def check_cnh(text: str) -> CnhCheck:
    """Check a CNH registration number (11 digits).

    Raises IdentityError for format problems (empty, letters, wrong length). A failing check
    digit, or all digits equal, does not raise: it returns ``valid=False`` with a warning,
    because old-model CNHs and PGU numbers exist and the inspector may override.
    """
    number = _require_digits(
        text, field="cnh", label="Número da CNH", separators=_CNH_SEPARATORS, lengths=(11,)
    )
    if len(set(number)) == 1:
        return CnhCheck(
            number,
            False,
            "CNH suspeita: todos os dígitos são iguais. Confira o documento; para aceitar "
            "mesmo assim, registre o motivo.",
        )
    expected = _cnh_check_digits(number[:9])
    if number[9:] != expected:
        return CnhCheck(
            number,
            False,
            "CNH suspeita: dígito verificador não confere. Confira o "
            "documento; para aceitar mesmo assim, registre o motivo.",
        )
    return CnhCheck(number, True, None)


def accept_cnh(text: str, *, override_reason: str | None = None) -> str:
    """The CNH number, if it passes its check or the inspector gives a reason.

    Raises IdentityError(code="check_digit") when the check fails and ``override_reason``
    is missing or shorter than MIN_OVERRIDE_REASON_LENGTH once trimmed. Format errors raise
    as in :func:`check_cnh`; no reason overrides those.
    """
    check = check_cnh(text)
    if check.valid:
        return check.number
    if override_reason is None or len(override_reason.strip()) < MIN_OVERRIDE_REASON_LENGTH:
        raise IdentityError(
            "cnh",
            "check_digit",
            f"{check.message} O motivo deve ter pelo menos {MIN_OVERRIDE_REASON_LENGTH} "
            "caracteres.",
        )
    return check.number


def generate_cnh(rng: random.Random) -> str:
    """A random CNH number that passes the check (11 digits)."""
    while True:
        base = _random_chars(rng, string.digits, 9)
        if len(set(base)) > 1:
            return base + _cnh_check_digits(base)


# --------------------------------------------------------------------------------------------
# RENAVAM (RULES.md §B4)

_RENAVAM_SEPARATORS = ".-"
_RENAVAM_WEIGHTS = (3, 2, 9, 8, 7, 6, 5, 4, 3, 2)


def _renavam_check_digit(base: str) -> str:
    return str(_mod11_check_digit((int(c) for c in base), _RENAVAM_WEIGHTS))


def normalize_renavam(text: str) -> str:
    """The 11 RENAVAM digits; an old 9-digit number is left-padded with "00".

    Rejects a bad check digit and the all-zero number (the only all-equal one whose
    check digit would otherwise pass).
    """
    digits = _require_digits(
        text, field="renavam", label="RENAVAM", separators=_RENAVAM_SEPARATORS, lengths=(9, 11)
    )
    renavam = digits.rjust(11, "0")
    if len(set(renavam)) == 1:
        raise IdentityError("renavam", "all_same", "RENAVAM inválido: todos os dígitos são iguais.")
    expected = _renavam_check_digit(renavam[:10])
    if renavam[10] != expected:
        raise IdentityError(
            "renavam",
            "check_digit",
            "RENAVAM inválido: dígito verificador não confere. Confira o número no CRLV.",
        )
    return renavam


def generate_renavam(rng: random.Random) -> str:
    """A random valid RENAVAM, 11 digits."""
    while True:
        base = _random_chars(rng, string.digits, 10)
        if base != "0" * 10:
            return base + _renavam_check_digit(base)
