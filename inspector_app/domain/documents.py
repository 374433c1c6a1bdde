"""The kinds of sealed record (legal documents) and their names in Portuguese.

One table for the device, the documents, the GUI and HQ's verification page.
"""

from __future__ import annotations

RECORD_KIND_LABELS: dict[str, str] = {
    "auto_vistoria": "Auto de vistoria",
    "auto_infracao": "Auto de infração",
    "termo_retencao": "Termo de retenção",
    "termo_liberacao": "Termo de liberação",
    "termo_compromisso": "Termo de compromisso",
    "cancelamento": "Cancelamento",
    "retificacao": "Retificação",
    "numero_anulado": "Número anulado",
}
