"""The rules of each auto de infração, one ``record_rules`` row each, written at ingest so
the Painel counts autos by rule from an index, never from payloads (its órgão, agent and
place come from ``auto_index``, hq/autos_index.py). Alembic ``0006_i15c`` fills it for
autos stored before it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector_app.hq.standing import infractions_of

RULE_CHARS = 80


def _text(value: Any, size: int) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:size]


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
