"""Rules of the retention desk and of sealing (issue 11), pure Python.

* Release for "falta sanada" (Decreto 15.154/1993 art. 38, I): every fault that grounded
  the retention must be checked again and found corrected; a partial re-check is refused.
* Who receives the vehicle, and a witness: name, a valid CPF, the document shown.
* No auto de infração without an identified autuado (permissionário / empresa: name and a
  valid CPF or CNPJ; for an unregistered vehicle the owner from the CRLV typed by hand) and
  a valid vehicle identification (RENAVAM check digit, make/model).

Each check returns problems as ``(field, Portuguese message)``; the services raise them,
the GUI shows them all and puts the focus on the first field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspector_app.domain.identity import (
    IdentityError,
    normalize_cnpj,
    normalize_cpf,
    normalize_renavam,
)

Problem = tuple[str, str]
OVER_AGE_SUFFIX = ".37.III"  # art. 37, III: released only with a termo de compromisso


@dataclass(frozen=True)
class Fault:
    """One fault to check again before a release for "falta sanada"."""

    key: str  # the checklist item id, or "ground:<id>" for a ground no item explains
    label: str


def faults_to_recheck(
    grounds: Sequence[str],
    failed_items: Mapping[str, tuple[str, Iterable[str]]],
    ground_labels: Mapping[str, str] | None = None,
) -> list[Fault]:
    """The faults that grounded a retention: each failed item whose retention grounds
    (mandatory or possible) include one of ``grounds``; when no failed item explains the
    grounds, every failed item; and each ground no item explains (except over-age, which
    is released by a termo de compromisso, art. 38, parágrafo único).

    ``failed_items``: item id → (label, retention grounds the item may lead to).
    """
    wanted = set(grounds)
    explained: set[str] = set()
    faults = []
    for item_id, (label, item_grounds) in failed_items.items():
        hit = wanted & set(item_grounds)
        if hit:
            explained |= hit
            faults.append(Fault(item_id, label))
    if not faults:
        faults = [Fault(item_id, label) for item_id, (label, _g) in failed_items.items()]
        explained = wanted if faults else set()
    labels = ground_labels or {}
    for ground in grounds:
        if ground not in explained and not ground.endswith(OVER_AGE_SUFFIX):
            faults.append(Fault(f"ground:{ground}", labels.get(ground, ground)))
    return faults


def release_problems(faults: Sequence[Fault], rechecked: Iterable[str]) -> list[Problem]:
    """Art. 38, I: the release for "falta sanada" needs every fault checked again."""
    done = set(rechecked)
    missing = [f for f in faults if f.key not in done]
    if not missing:
        return []
    names = "; ".join(f.label for f in missing)
    return [("rechecked_items",
             f"Liberação por falta sanada (art. 38, I) só quando todas as faltas que "
             f"fundamentaram a retenção forem verificadas novamente e estiverem corrigidas. "
             f"Falta(m) verificar: {names}. Se o veículo vai a uma oficina, use o art. 38, II.")]


def person_problems(person: Mapping[str, Any], *, field: str, who: str) -> list[Problem]:
    """A person identified at the desk (receiver, witness): name, valid CPF, document.
    ``who`` is the person with its article ("o recebedor do veículo", "a testemunha")."""
    out: list[Problem] = []
    name = str(person.get("name") or "").strip()
    if len(name.split()) < 2:
        out.append((f"{field}.name", f"Informe o nome completo d{who}."))
    cpf = str(person.get("cpf") or "").strip()
    try:
        normalize_cpf(cpf)
    except IdentityError as exc:
        out.append((f"{field}.cpf", f"CPF d{who}: {exc.message}"))
    if not str(person.get("document") or "").strip():
        out.append((f"{field}.document",
                    f"Informe o documento apresentado pel{who} (tipo e número, ex.: CNH "
                    "01234567890, RG 1.234.567 SSP/DF)."))
    return out


def normalized_person(person: Mapping[str, Any]) -> dict[str, str]:
    """The person as sealed: trimmed name and document, CPF as its 11 digits."""
    return {"name": " ".join(str(person.get("name") or "").split()),
            "cpf": normalize_cpf(str(person.get("cpf") or "")),
            "document": " ".join(str(person.get("document") or "").split())}


def document_problem(text: str, field: str) -> Problem | None:
    """The problem with a permissionário's CPF or CNPJ, or None when it is valid."""
    try:
        parse_document(text)
    except IdentityError as exc:
        return field, exc.message
    return None


def parse_document(text: str) -> tuple[str, str]:
    """("cpf"|"cnpj", normalized) of a permissionário's document; IdentityError if bad."""
    raw = "".join(c for c in text if c.isalnum())
    if not raw:
        raise IdentityError("document", "empty",
                            "CPF ou CNPJ do autuado não informado.")
    if len(raw) == 11 and raw.isdigit():
        return "cpf", normalize_cpf(text)
    if len(raw) == 14:
        return "cnpj", normalize_cnpj(text)
    raise IdentityError("document", "length",
                        f"CPF (11 dígitos) ou CNPJ (14 caracteres) do autuado inválido: "
                        f"foram informados {len(raw)}.")


def autuado_problems(vehicle: Mapping[str, Any]) -> list[Problem]:
    """No auto de infração without an identified autuado and vehicle (issue 11).

    ``vehicle`` is the inspection's snapshot: a registered vehicle carries the
    registry's ``holder_name`` / ``holder_document``; an unregistered one carries the
    owner typed from the CRLV and its ``renavam`` and ``make_model``.
    """
    out: list[Problem] = []
    registered = bool(vehicle.get("registered"))
    name = str(vehicle.get("holder_name") or "").strip()
    document = str(vehicle.get("holder_document") or "").strip()
    whose = ("do permissionário ou da empresa" if registered else
             "do proprietário do veículo, como no CRLV (permissionário ou empresa)")
    if not name:
        out.append(("vehicle.holder_name",
                    f"Auto de infração sem autuado: informe o nome {whose}."))
    if not document:
        out.append(("vehicle.holder_document",
                    f"Auto de infração sem autuado: informe o CPF ou CNPJ {whose}."))
    else:
        problem = document_problem(document, "vehicle.holder_document")
        if problem:
            out.append(problem)
    if not registered:
        renavam = str(vehicle.get("renavam") or "").strip()
        try:
            normalize_renavam(renavam)
        except IdentityError as exc:
            out.append(("vehicle.renavam", exc.message))
        if not str(vehicle.get("make_model") or "").strip():
            out.append(("vehicle.make_model",
                        "Informe a marca/modelo do veículo (CRLV): o auto precisa "
                        "identificar o veículo."))
    return out
