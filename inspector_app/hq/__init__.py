"""HQ server: FastAPI + SQLAlchemy Core + Alembic (DESIGN.md §5).

Layout after the FastAPI full-stack template's ``backend/app``: ``core/`` (settings, engine,
token hashing), ``tables.py`` (the schema), ``alembic/`` (its migrations), ``api/`` (routes
and dependencies), one module per concern (``devices``, ``ingest``, ``reference``,
``registry``, ``numbering``, ``verification``, ``blobs``) and ``cli.py`` (``inspector-hq``).
HQ never imports the device's store or the GUI: only ``domain``, ``security`` and
``sync.protocol`` (checked by import-linter). The app: ``inspector_app.hq.main.create_app``.
"""

