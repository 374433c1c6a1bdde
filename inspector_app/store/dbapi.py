"""The DB-API module the device store runs on: SQLCipher (``sqlcipher3``), SQLite with
every page encrypted (AES-256, HMAC-SHA512 per page) — see docs/ARCHITECTURE.md, "Data at
rest".

Code that catches database errors catches these tuples, which hold both the SQLCipher and
the standard-library classes (a plain ``sqlite3`` connection — tests, support tools — raises
the latter): ``except dbapi.IntegrityError``.
"""

from __future__ import annotations

import sqlite3

import sqlcipher3.dbapi2 as sqlcipher

Connection = sqlcipher.Connection
Cursor = sqlcipher.Cursor
connect = sqlcipher.connect

Error = (sqlcipher.Error, sqlite3.Error)
DatabaseError = (sqlcipher.DatabaseError, sqlite3.DatabaseError)
OperationalError = (sqlcipher.OperationalError, sqlite3.OperationalError)
IntegrityError = (sqlcipher.IntegrityError, sqlite3.IntegrityError)

# Authorizer codes are SQLite's; both modules carry the same numbers.
SQLITE_OK, SQLITE_DENY = sqlcipher.SQLITE_OK, sqlcipher.SQLITE_DENY
