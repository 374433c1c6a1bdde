"""Inspectors (agents) as HQ publishes them: argon2id password hashes for offline login.

The plain password reaches HQ only through ``inspector-hq inspector add --password-stdin``
and is hashed at once; devices receive the hash with the reference data.
"""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import Connection, Engine

from inspector_app.hq.reference import live_rows
from inspector_app.hq.registry import INSPECTOR_ROLES, RegistryError, publish_row
from inspector_app.security.passwords import (
    DEFAULT_PARAMETERS,
    HashParameters,
    hash_password,
)

MIN_PASSWORD_LENGTH = 8


def add_inspector(
    engine: Engine,
    *,
    matricula: str,
    name: str,
    role: str,
    password: str,
    organ: str | None = None,
    parameters: HashParameters = DEFAULT_PARAMETERS,
) -> str:
    """Add (or update, keeping its id) the inspector with ``matricula``; returns the id."""
    matricula, name = matricula.strip(), name.strip()
    if not matricula or not name:
        raise RegistryError("informe a matrícula e o nome.")
    if role not in INSPECTOR_ROLES:
        raise RegistryError(f"papel {role!r} inválido; use {', '.join(sorted(INSPECTOR_ROLES))}.")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise RegistryError(f"a senha deve ter pelo menos {MIN_PASSWORD_LENGTH} caracteres.")
    password_hash = hash_password(password, parameters=parameters)
    with engine.begin() as conn:
        current = next(
            (r for r in live_rows(conn, "inspectors") if r.get("matricula") == matricula), None
        )
        inspector_id = str(current["id"]) if current else str(uuid.uuid4())
        publish_row(conn, "inspectors", {
            "id": inspector_id, "matricula": matricula, "name": name, "role": role,
            "password_hash": password_hash, "organ": organ, "active": 1,
        })
    return inspector_id


def disable_inspector(engine: Engine, *, matricula: str) -> bool:
    """Mark the inspector inactive (devices refuse their login); False if already inactive."""
    with engine.begin() as conn:
        current = _by_matricula(conn, matricula)
        return publish_row(conn, "inspectors", {**current, "active": 0})


def _by_matricula(conn: Connection, matricula: str) -> dict[str, Any]:
    current = next(
        (r for r in live_rows(conn, "inspectors") if r.get("matricula") == matricula), None
    )
    if current is None:
        raise RegistryError(f"não há agente com a matrícula {matricula}.")
    current.pop("updated_at", None)
    return current


def reset_inspector_password(
    engine: Engine, *, matricula: str, password: str,
    parameters: HashParameters = DEFAULT_PARAMETERS,
) -> None:
    """Give the inspector a new password (its hash reaches the devices by the pull log);
    everything else of the row stays."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise RegistryError(f"a senha deve ter pelo menos {MIN_PASSWORD_LENGTH} caracteres.")
    password_hash = hash_password(password, parameters=parameters)
    with engine.begin() as conn:
        current = _by_matricula(conn, matricula.strip())
        publish_row(conn, "inspectors", {**current, "password_hash": password_hash})


def list_inspectors(conn: Connection) -> list[dict[str, Any]]:
    """The inspectors HQ publishes, by name, without their password hashes."""
    rows = [{k: v for k, v in r.items() if k != "password_hash"}
            for r in live_rows(conn, "inspectors")]
    return sorted(rows, key=lambda r: (str(r.get("name") or "").lower(), str(r["matricula"])))
