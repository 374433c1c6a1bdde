"""Log hygiene: no CPF, CNH or other 11-digit identity numbers in HQ's logs.

HQ never logs payloads, and SQL parameters are hidden from database errors
(``hide_parameters``); this formatter is the last guard, on every handler ``serve`` uses,
for whatever message, URL (uvicorn's access line: ``/verify/CPF16944060167``, a query
string) or traceback might still quote one.

It masks the *formatted* line and leaves the record alone: uvicorn's access formatter
reads the record's arguments (client, method, path, version, status), so rewriting
``record.msg``/``record.args`` in a filter broke every access line that needed masking
("--- Logging error ---" and a traceback instead of the line).
"""

from __future__ import annotations

import logging
import re

# CPF as 11 digits or 000.000.000-00 (the dots and dash maybe percent-encoded, as in a
# query string); CNH and RENAVAM are 11 digits too. Letters may touch it (``CPF169…`` in a
# verify URL); a longer run of digits is something else.
_DOT, _DASH = r"(?:\.|%2[eE])?", r"(?:-|%2[dD])?"
_IDENTITY = re.compile(rf"(?<!\d)\d{{3}}{_DOT}\d{{3}}{_DOT}\d{{3}}{_DASH}\d{{2}}(?!\d)")
MASK = "***"
LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "inspector_app.hq")


def redact(text: str) -> str:
    return _IDENTITY.sub(MASK, text)


class RedactingFormatter(logging.Formatter):
    """Formats with the handler's own formatter, then masks identity numbers in the text."""

    def __init__(self, inner: logging.Formatter | None = None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record))


def install_redaction() -> None:
    """Wrap the formatter of every handler of the root, uvicorn and HQ loggers (idempotent)."""
    for name in LOGGERS:
        for handler in logging.getLogger(name).handlers:
            if not isinstance(handler.formatter, RedactingFormatter):
                handler.setFormatter(RedactingFormatter(handler.formatter))


def configure_serve_logging(level: str) -> None:
    """The HQ logger at ``level`` on stderr, then redaction on every handler: what
    ``inspector-hq serve`` does in its process and in each worker process."""
    hq_log = logging.getLogger("inspector_app.hq")
    if not hq_log.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s:     %(name)s: %(message)s"))
        hq_log.addHandler(handler)
    hq_log.setLevel(level.upper())
    hq_log.propagate = False
    install_redaction()
