"""Which regulation packs an inspector's órgão enforces (issue 11: packs by órgão).

An inspector belongs to one órgão (``ref_inspectors.organ``, e.g. ``SEMOB-DF``,
``SETTRA-JF``); a pack names its órgão (``organ = "SMU Juiz de Fora"``) and jurisdiction
(``DF``, ``JF``). A pack is the inspector's when the órgão is the pack's own, or when the
órgão's name carries the pack's jurisdiction as a word (``SETTRA-JF`` → ``JF``: SMU is
SETTRA's successor, Lei 13.830/2019) or the jurisdiction's city name. An inspector without
an órgão, or whose órgão matches no pack, is offered every pack (nothing is hidden by a
guess). Pure Python: the GUI and the services call it.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# City names a jurisdiction code stands for, as they appear in órgão names.
JURISDICTION_NAMES = {"DF": ("DISTRITO FEDERAL", "BRASILIA"), "JF": ("JUIZ DE FORA",)}


@dataclass(frozen=True)
class PackChoice:
    pack_id: str
    jurisdiction: str
    organ: str


def _plain(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text)
    return "".join(c for c in folded if not unicodedata.combining(c)).upper()


def organ_jurisdiction(organ: str | None, jurisdictions: Iterable[str]) -> str | None:
    """The jurisdiction an órgão's name belongs to, among ``jurisdictions``; None if none."""
    if not organ:
        return None
    plain = _plain(organ)
    words = set(re.split(r"[^0-9A-Z]+", plain))
    for code in jurisdictions:
        if code.upper() in words:
            return code
        if any(name in plain for name in JURISDICTION_NAMES.get(code.upper(), ())):
            return code
    return None


def packs_for_organ(organ: str | None, packs: Sequence[PackChoice]) -> list[str]:
    """The pack ids offered to an inspector of ``organ``, in the order given."""
    if not organ:
        return [p.pack_id for p in packs]
    own = [p.pack_id for p in packs if _plain(p.organ) == _plain(organ)]
    code = organ_jurisdiction(organ, sorted({p.jurisdiction for p in packs}))
    if code is not None:
        own += [p.pack_id for p in packs if p.jurisdiction == code and p.pack_id not in own]
    return own or [p.pack_id for p in packs]


def start_of_operation_label(grounds: Iterable[object]) -> str | None:
    """The checkbox text for the pack's ground that applies only at the start of the day's
    operation (DF art. 37, V), or None: the pack has none and the question is not asked."""
    for ground in grounds:
        if getattr(ground, "only_start_of_operation", False):
            article = str(getattr(ground, "article", "")).strip()
            return f"Início da operação do dia ({article})" if article else \
                "Início da operação do dia"
    return None
