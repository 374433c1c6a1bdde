"""Use cases shared by the GUI and the command line.

Small verb-named functions with keyword-only arguments; callers never touch packs, the
engine or (later) the store directly. Inspection, sealing and sync operations join this
module with the local store.
"""

from __future__ import annotations

from pathlib import Path

from inspector_app.calendars import calendar_around
from inspector_app.domain.case import Case, CaseError, parse_case
from inspector_app.domain.engine import Outcome, evaluate
from inspector_app.packs import get_pack


def evaluate_case(*, data: object, forms_root: Path | None = None) -> Outcome:
    """Evaluate a case given in the JSON shape of ``inspector rules evaluate``.

    Raises :class:`CaseError` for invalid input (unknown pack too) and ``PackError`` when
    the pack itself is broken.
    """
    case = parse_case(data)
    return evaluate_parsed(case=case, forms_root=forms_root)


def evaluate_parsed(*, case: Case, forms_root: Path | None = None) -> Outcome:
    try:
        pack = get_pack(case.pack_id, forms_root)
    except KeyError as exc:
        raise CaseError("pack", str(exc.args[0])) from None
    return evaluate(pack, case, calendar_around(pack, case.date))
