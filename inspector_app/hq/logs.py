"""Log hygiene: no CPF, CNH or other 11-digit identity numbers in HQ's logs.

HQ never logs payloads, and SQL parameters are hidden from database errors
(``hide_parameters``); this filter is the last guard, on every handler ``serve`` uses,
for whatever message or traceback might still quote one.
"""

from __future__ import annotations

import logging
import re

# CPF as 11 digits or 000.000.000-00; CNH and RENAVAM are 11 digits too.
_IDENTITY = re.compile(r"(?<![\w])\d{3}\.?\d{3}\.?\d{3}-?\d{2}(?![\w])")
MASK = "***"
LOGGERS = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "inspector_app.hq")


def redact(text: str) -> str:
    return _IDENTITY.sub(MASK, text)


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, ()
        if record.exc_info and not record.exc_text:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
        return True


def install_redaction() -> None:
    """Add the filter to every handler of the root, uvicorn and HQ loggers (idempotent)."""
    for name in LOGGERS:
        for handler in logging.getLogger(name).handlers:
            if not any(isinstance(f, RedactingFilter) for f in handler.filters):
                handler.addFilter(RedactingFilter())


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
