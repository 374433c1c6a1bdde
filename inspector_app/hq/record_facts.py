"""What the console counts a record by, taken from its signed envelope at ingest: the
órgão (``body.pack.organ``), the agent's matrícula (``body.agent.matricula``), the place
(``body.location.place``, or a termo's ``body.place``) and, for an auto de infração, its
rules (``record_rules``). Stored in indexed columns so the Painel never reads payloads
(Alembic ``0006_i15c`` fills them for records stored before it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector_app.hq.standing import infractions_of

ORGAN_CHARS, MATRICULA_CHARS, PLACE_CHARS, RULE_CHARS = 40, 40, 200, 80


def _text(value: Any, size: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:size]


def _section(body: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = body.get(key)
    return value if isinstance(value, Mapping) else {}


def facts_of(envelope: Mapping[str, Any]) -> dict[str, str | None]:
    """``organ``, ``agent_matricula`` and ``place`` of a record (None when absent)."""
    body = envelope.get("body")
    body = body if isinstance(body, Mapping) else {}
    place = _section(body, "location").get("place") or body.get("place")
    return {"organ": _text(_section(body, "pack").get("organ"), ORGAN_CHARS),
            "agent_matricula": _text(_section(body, "agent").get("matricula"), MATRICULA_CHARS),
            "place": _text(place, PLACE_CHARS)}


def rule_rows(envelope: Mapping[str, Any], record_id: str) -> list[dict[str, Any]]:
    """The ``record_rules`` rows of an auto de infração (each rule once)."""
    if envelope.get("kind") != "auto_infracao":
        return []
    occurred = envelope.get("occurred_on")
    day = occurred[:10] if isinstance(occurred, str) else None
    seen: list[str] = []
    for inf in infractions_of(envelope):
        rule = _text(inf["rule_id"], RULE_CHARS)
        if rule is not None and rule not in seen:
            seen.append(rule)
    return [{"record_id": record_id, "rule_id": r, "occurred_on": day} for r in seen]
