"""Every error the window shows, in Portuguese, saying what to do next.

Caveat: only the exceptions the layers below raise for people (``ServiceError``,
``StoreError``, ``IdentityError``, ``CaseError``, file errors) are "expected"; anything else is
a bug, shown with a generic message and logged with its traceback.
"""

from __future__ import annotations

from inspector_app.domain.case import CaseError
from inspector_app.domain.identity import IdentityError
from inspector_app.services import ServiceError
from inspector_app.store import StoreError

UNEXPECTED = (
    "Erro inesperado ({name}). O que já foi salvo não se perdeu: tente de novo e, se o erro "
    "se repetir, chame o suporte informando este texto."
)


class UiError(Exception):
    """A refusal raised by the screens themselves (``message_pt`` says what to do)."""

    def __init__(self, message_pt: str) -> None:
        super().__init__(message_pt)
        self.message_pt = message_pt


def is_expected(exc: BaseException) -> bool:
    """Whether ``exc`` is a refusal meant for the user rather than a bug."""
    return isinstance(
        exc, ServiceError | StoreError | IdentityError | CaseError | OSError | UiError
    )


def describe_error(exc: BaseException) -> str:
    """The Portuguese sentence for ``exc``."""
    if isinstance(exc, ServiceError | StoreError | UiError):
        return exc.message_pt
    if isinstance(exc, IdentityError):
        return str(exc)
    if isinstance(exc, CaseError):
        return f"{exc.message_pt} Corrija e tente de novo."
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        return (
            f"Não foi possível acessar o arquivo ({detail}). Verifique se o arquivo existe e "
            "se há espaço em disco, e tente de novo."
        )
    return UNEXPECTED.format(name=type(exc).__name__)
