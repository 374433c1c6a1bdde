"""HQ staff accounts (the console's users, not agents nor devices): add, disable, list,
check a password. Passwords are argon2id (``security.passwords``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from sqlalchemy import Connection, Engine, insert, select, update

from inspector_app.hq.core.db import utc_now
from inspector_app.hq.tables import staff
from inspector_app.security.passwords import (
    DEFAULT_PARAMETERS,
    HashParameters,
    hash_password,
    verify_password,
)

ROLES = ("administrador", "supervisor", "julgador", "consulta")
ROLE_LABELS = {"administrador": "Administrador(a)", "supervisor": "Supervisor(a)",
               "julgador": "Julgador(a)", "consulta": "Consulta"}
MIN_PASSWORD = 12
_LOGIN = re.compile(r"[a-z0-9][a-z0-9._-]{1,63}")


@functools.cache
def _dummy_hash() -> str:
    """A hash checked when the login is unknown, so the answer takes as long."""
    return hash_password("not-a-password-of-anyone", parameters=DEFAULT_PARAMETERS)


class StaffError(ValueError):
    """Refused (bad login, role, password; login taken or unknown)."""


@dataclass(frozen=True)
class Staff:
    """A logged-in console user, as routes see them."""

    id: int
    login: str
    name: str
    role: str

    @property
    def role_label(self) -> str:
        return ROLE_LABELS.get(self.role, self.role)


def normalize_login(login: str) -> str:
    return login.strip().lower()


def add_staff(engine: Engine, login: str, name: str, role: str, password: str, *,
              parameters: HashParameters = DEFAULT_PARAMETERS) -> Staff:
    login = normalize_login(login)
    if not _LOGIN.fullmatch(login):
        raise StaffError("login must be 2-64 characters: lower-case letters, digits, . _ -")
    name = " ".join(name.split())
    if not name or len(name) > 200 or not name.isprintable():
        raise StaffError("name must be 1-200 printable characters")
    if role not in ROLES:
        raise StaffError(f"role must be one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise StaffError(f"password must have at least {MIN_PASSWORD} characters")
    hashed = hash_password(password, parameters=parameters)
    with engine.begin() as conn:
        if conn.execute(select(staff.c.id).where(staff.c.login == login)).first():
            raise StaffError(f"login {login!r} already exists")
        staff_id = conn.execute(insert(staff).values(
            login=login, name=name, role=role, password_hash=hashed,
            created_at=utc_now()).returning(staff.c.id)).scalar_one()
    return Staff(id=int(staff_id), login=login, name=name, role=role)


def disable_staff(engine: Engine, login: str) -> bool:
    """Disable ``login`` and end its sessions; False when it was disabled already."""
    from inspector_app.hq.tables import staff_sessions

    login = normalize_login(login)
    now = utc_now()
    with engine.begin() as conn:
        row = conn.execute(select(staff.c.id, staff.c.disabled_at)
                           .where(staff.c.login == login)).first()
        if row is None:
            raise StaffError(f"no staff login {login!r}")
        conn.execute(update(staff_sessions).where(staff_sessions.c.staff_id == row.id,
                                                  staff_sessions.c.ended_at.is_(None))
                     .values(ended_at=now))
        if row.disabled_at is not None:
            return False
        conn.execute(update(staff).where(staff.c.id == row.id).values(disabled_at=now))
    return True


def list_staff(engine: Engine) -> list[dict[str, object]]:
    with engine.connect() as conn:
        rows = conn.execute(select(staff.c.login, staff.c.name, staff.c.role,
                                   staff.c.created_at, staff.c.disabled_at)
                            .order_by(staff.c.login))
        return [dict(r._mapping) for r in rows]


def check_password(conn: Connection, login: str, password: str) -> Staff | None:
    """The active staff member ``login`` when ``password`` is theirs, else None (the same
    time spent for an unknown login)."""
    row = conn.execute(select(staff).where(staff.c.login == normalize_login(login))).first()
    if row is None:
        verify_password(_dummy_hash(), password)
        return None
    if not verify_password(row.password_hash, password) or row.disabled_at is not None:
        return None
    return Staff(id=int(row.id), login=row.login, name=row.name, role=row.role)
