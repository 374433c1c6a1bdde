"""What a sealed record may contain, per kind: HQ checks every pushed envelope against it
before storing it or deriving anything from it (history, standing, duplicate flags).

A rogue device signs whatever it likes with its own key, so a valid signature proves only
who sent a record, not that it is sane. Checked here, without a database:

* the shape: a JSON object no deeper than :data:`MAX_DEPTH`, strings without control
  characters other than tab and line breaks (PostgreSQL refuses NUL), every string at most
  :data:`MAX_TEXT` characters and every integer within ±2^53 (what every JSON reader and
  SQLite hold exactly);
* the envelope: a known kind, a series and number for every kind (all are numbered),
  identifiers (``holder_id``, ``inspection_id``) and the plate as short printable text;
* the dates: ``created_at`` a real instant and ``occurred_on`` a real calendar date,
  neither before :data:`EARLIEST_DATE` nor more than :data:`FUTURE_TOLERANCE` after HQ's
  clock (a device clock a few hours off is tolerated; a record dated 2099 is not), and the
  act not after the sealing (beyond the same tolerance);
* the body of each kind: the fields HQ reads (an auto's infractions and points, a
  cancelamento's reason and supervisor, a voided number's reason) with their types and
  bounds.

A record that fails is rejected with ``invalid_payload`` or ``date_out_of_bounds`` and a
reason in Portuguese, which the device shows in its quarantine list; the rest of the batch
proceeds. Checks that need HQ's database (the cancelled record belongs to this device; the
supervisor's role in the registry) are in ``hq/ingest.py``.

This module imports nothing from the app (the device may use it too).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

MAX_DEPTH = 24
MAX_TEXT = 20_000
MAX_ID_TEXT = 200
MAX_SHORT_TEXT = 200
INT_BOUND = 2**53
MAX_POINTS = 1000
MAX_INFRACTIONS = 200
EARLIEST_DATE = dt.date(2000, 1, 1)
# How far ahead of HQ's clock a record may be dated: a device clock off by some hours (or
# a time zone set wrong) still syncs; anything further is quarantined until it is fixed.
FUTURE_TOLERANCE = dt.timedelta(hours=26)

RECORD_KINDS = frozenset({
    "auto_vistoria", "auto_infracao", "termo_retencao", "termo_liberacao",
    "termo_compromisso", "cancelamento", "retificacao", "numero_anulado",
})
# Every kind takes a number from the device's talonário (store/sealing.NUMBERED_KINDS).
NUMBERED_KINDS = RECORD_KINDS
# Kinds that describe an act on a vehicle on a day: occurred_on is required.
DATED_KINDS = frozenset({"auto_vistoria", "auto_infracao", "termo_retencao",
                         "termo_liberacao", "termo_compromisso", "cancelamento"})

REJECT_INVALID_PAYLOAD = "invalid_payload"
REJECT_DATE_OUT_OF_BOUNDS = "date_out_of_bounds"
# A cancelamento of another device's record, of an unknown one, or by no supervisor.
REJECT_REFERENCE = "bad_reference"

_RULE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$")
_PLATE = re.compile(r"^[A-Z0-9]{1,16}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_BAD_CHARS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069]")


class RecordInvalid(ValueError):
    """The envelope breaks the schema; ``code`` is the machine word, ``text`` Portuguese."""

    def __init__(self, code: str, text: str) -> None:
        super().__init__(f"{code}: {text}")
        self.code = code
        self.text = text


def _invalid(text: str) -> RecordInvalid:
    return RecordInvalid(REJECT_INVALID_PAYLOAD, text)


def check_shape(value: Any) -> None:
    """Depth, string and integer bounds of a parsed JSON value, without recursion."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "$")]
    while stack:
        item, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            raise _invalid(f"aninhamento acima de {MAX_DEPTH} níveis em {where[:80]}")
        if isinstance(item, dict):
            for key, inner in item.items():
                _check_text(key, f"{where}.<chave>", MAX_SHORT_TEXT)
                stack.append((inner, depth + 1, f"{where}.{key[:40]}"))
        elif isinstance(item, list):
            stack.extend((inner, depth + 1, f"{where}[{i}]") for i, inner in enumerate(item))
        elif isinstance(item, str):
            _check_text(item, where, MAX_TEXT)
        elif isinstance(item, bool) or item is None:
            pass
        elif isinstance(item, int):
            if not -INT_BOUND <= item <= INT_BOUND:
                raise _invalid(f"número fora dos limites (±2^53) em {where[:80]}")
        else:
            raise _invalid(f"valor de tipo {type(item).__name__} em {where[:80]}")


def _check_text(value: str, where: str, size: int) -> None:
    if len(value) > size:
        raise _invalid(f"texto com mais de {size} caracteres em {where[:80]}")
    if _BAD_CHARS.search(value):
        raise _invalid(f"caractere de controle em {where[:80]}")


def _instant(value: object, name: str) -> dt.datetime:
    if not isinstance(value, str):
        raise _invalid(f"{name} ausente")
    try:
        parsed = dt.datetime.fromisoformat(value)
    except ValueError:
        raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS,
                            f"{name} {value[:40]!r} não é uma data e hora válida") from None
    if parsed.tzinfo is None:
        raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS, f"{name} sem fuso horário")
    return parsed


def _date(value: object, name: str) -> dt.date:
    if not isinstance(value, str) or not _DATE.match(value):
        raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS,
                            f"{name} {str(value)[:40]!r} não é uma data AAAA-MM-DD")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS,
                            f"{name} {value!r} não é uma data do calendário") from None


def _short(envelope: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = envelope.get(name)
    if value is None:
        if required:
            raise _invalid(f"{name} ausente")
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_ID_TEXT \
            or not value.isprintable():
        raise _invalid(f"{name} deve ser um texto imprimível de 1 a {MAX_ID_TEXT} caracteres")
    return value


def _mapping(value: object, name: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(f"{name} deve ser um objeto")
    return value


def _person(value: object, name: str) -> Mapping[str, Any]:
    person = _mapping(value, name)
    for field in ("matricula", "name"):
        text = person.get(field)
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_SHORT_TEXT:
            raise _invalid(f"{name}.{field} ausente ou longo demais")
    return person


def _reason(body: Mapping[str, Any]) -> None:
    reason = body.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise _invalid("motivo (reason) ausente")


def _infractions(body: Mapping[str, Any]) -> None:
    outcome = body.get("outcome")
    if outcome is None:
        return
    outcome = _mapping(outcome, "body.outcome")
    pack = outcome.get("pack")
    if pack is not None and (not isinstance(pack, str) or len(pack) > MAX_SHORT_TEXT):
        raise _invalid("body.outcome.pack inválido")
    found = outcome.get("infractions")
    if found is None:
        return
    if not isinstance(found, list) or len(found) > MAX_INFRACTIONS:
        raise _invalid(f"body.outcome.infractions deve ser uma lista de até {MAX_INFRACTIONS}")
    for index, inf in enumerate(found):
        inf = _mapping(inf, f"body.outcome.infractions[{index}]")
        rule_id = inf.get("rule_id")
        if not isinstance(rule_id, str) or not _RULE_ID.match(rule_id):
            raise _invalid(f"infração {index}: rule_id inválido")
        points = inf.get("points")
        if points is not None and (isinstance(points, bool) or not isinstance(points, int)
                                   or not 0 <= points <= MAX_POINTS):
            raise _invalid(f"infração {index}: pontos devem ser um inteiro de 0 a {MAX_POINTS}")


def check_record(envelope: Mapping[str, Any], *, now: dt.datetime) -> None:
    """Raise :class:`RecordInvalid` unless ``envelope`` (already parsed, canonical and
    signed) fits the schema of its kind, with dates bounded by ``now`` (HQ's clock, aware)."""
    check_shape(envelope)
    kind = envelope.get("kind")
    if kind not in RECORD_KINDS:
        raise _invalid(f"tipo de registro desconhecido {str(kind)[:40]!r}")
    if kind in NUMBERED_KINDS and (envelope.get("series") is None
                                   or envelope.get("number") is None):
        raise _invalid(f"um registro {kind} exige série e número do talonário")
    _short(envelope, "holder_id")
    _short(envelope, "inspection_id")
    plate = envelope.get("plate_key")
    if plate is not None and (not isinstance(plate, str) or not _PLATE.match(plate)):
        raise _invalid("plate_key deve ter de 1 a 16 letras maiúsculas ou dígitos")
    created = _instant(envelope.get("created_at"), "created_at")
    limit = now + FUTURE_TOLERANCE
    if created > limit:
        raise RecordInvalid(
            REJECT_DATE_OUT_OF_BOUNDS,
            f"created_at {envelope['created_at']} está mais de "
            f"{int(FUTURE_TOLERANCE.total_seconds() // 3600)} h à frente do relógio da sede "
            f"({now.isoformat(timespec='seconds')}): acerte o relógio do dispositivo")
    if created.date() < EARLIEST_DATE:
        raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS,
                            f"created_at {envelope['created_at']} anterior a {EARLIEST_DATE}")
    occurred = envelope.get("occurred_on")
    if occurred is not None or kind in DATED_KINDS:
        day = _date(occurred, "occurred_on")
        latest = min(limit, created + FUTURE_TOLERANCE).date()
        if day > latest:
            raise RecordInvalid(
                REJECT_DATE_OUT_OF_BOUNDS,
                f"occurred_on {day} posterior à selagem ({created.date()}) ou ao relógio da "
                f"sede ({now.date()})")
        if day < EARLIEST_DATE:
            raise RecordInvalid(REJECT_DATE_OUT_OF_BOUNDS,
                                f"occurred_on {day} anterior a {EARLIEST_DATE}")
    body = _mapping(envelope.get("body"), "body")
    if kind in ("auto_infracao", "auto_vistoria"):
        _infractions(body)
    elif kind == "cancelamento":
        if envelope.get("refers_to") is None:
            raise _invalid("cancelamento sem o registro cancelado (refers_to)")
        _reason(body)
        _person(body.get("supervisor"), "body.supervisor")
    elif kind == "numero_anulado":
        _reason(body)
