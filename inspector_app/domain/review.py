"""What the driver reviews before signing, and proof that it is what gets sealed (issue 11).

``build_review`` puts in one JSON object everything the driver must see before signing:
the autuado, the driver, each infraction with its article and description, the totals and
the measures (retention / withdrawal), and the agent's narrative. ``review_digest`` is the
SHA-256 of its canonical JSON: the GUI shows the review and keeps the digest; sealing
rebuilds the review from what it is about to seal and refuses when the digest differs, and
seals the review with the auto. Pure Python.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any


def _money(value: object) -> Decimal | None:
    if value in (None, ""):
        return None
    return Decimal(str(value))


def build_review(
    *,
    vehicle: Mapping[str, Any],
    driver: Mapping[str, Any],
    infractions: Sequence[Mapping[str, Any]],
    measure: Mapping[str, Any] | None,
    retain: bool,
    retention_place: str,
    narrative: str,
    withdrawal: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The review as a JSON object (strings, numbers, lists; money as "1234.50")."""
    fines = [_money(i.get("fine_brl")) for i in infractions]
    known = [f for f in fines if f is not None]
    grounds = []
    if measure and retain:
        chosen = measure.get("details") or measure.get("possible_grounds") or []
        grounds = [f"{g.get('citation')} – {g.get('description')}" for g in chosen]
    return {
        "autuado": {"name": vehicle.get("holder_name") or "",
                    "document": vehicle.get("holder_document") or "",
                    "registered": bool(vehicle.get("registered"))},
        "vehicle": {"plate": vehicle.get("plate") or "",
                    "make_model": vehicle.get("make_model") or ""},
        "driver": {"name": driver.get("name") or "", "cpf": driver.get("cpf") or "",
                   "cnh": driver.get("cnh") or "", "absent": bool(driver.get("absent"))},
        "infractions": [{"rule_id": i.get("rule_id"), "article": i.get("article"),
                         "description": i.get("description"), "penalty": i.get("penalty"),
                         "fine_brl": i.get("fine_brl"), "points": i.get("points")}
                        for i in infractions],
        "totals": {"count": len(infractions),
                   "fine_brl": f"{sum(known, Decimal(0)):.2f}" if known else None,
                   "fine_incomplete": len(known) != len(fines),
                   "points": sum(int(i.get("points") or 0) for i in infractions)},
        "measures": {"kind": (measure or {}).get("kind") if retain else None,
                     "retain": retain, "place": retention_place.strip() if retain else "",
                     "grounds": grounds,
                     "withdrawal": [f"{g.get('citation')} – {g.get('description')}"
                                    for g in (withdrawal or {}).get("details") or []]},
        "narrative": narrative.strip(),
    }


def review_digest(review: Mapping[str, Any]) -> str:
    """SHA-256 of the review's canonical JSON (sorted keys, no spaces, UTF-8)."""
    body = {k: v for k, v in review.items() if k != "digest"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
