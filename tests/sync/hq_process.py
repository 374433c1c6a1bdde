"""Run HQ in its own process so a test can kill it (SIGKILL) and start it again.

``python hq_process.py DATABASE_URL BLOB_DIR PORT [--no-idempotency]``; the database must
already be migrated. The blob store comes from the environment as for ``inspector-hq serve``
(``HQ_BLOB_STORE=s3`` with ``HQ_S3_*``: a bucket; else the folder BLOB_DIR). ``--no-idempotency`` is the negative control of the fault test: HQ
skips its "same id already held" check, so a record sent again after HQ committed it is
treated as new (and then refused for its number) instead of answered ``duplicate``.
Tests import :class:`HQProcess`, which runs this file as a child process.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import uvicorn

from inspector_app.hq import ingest
from inspector_app.hq.core.config import Settings
from inspector_app.hq.main import create_app
from inspector_app.sync.protocol import API_PREFIX


class HQProcess:
    """HQ served by uvicorn in a child process on a fixed loopback port."""

    def __init__(self, url: str, blob_dir: Path, port: int, *, idempotent: bool,
                 env: dict[str, str] | None = None) -> None:
        self.args = [sys.executable, str(Path(__file__)), url, str(blob_dir), str(port)]
        # HQ_BLOB_STORE=s3 and the HQ_S3_* variables (tests/s3kit.py) select a bucket.
        self.env = {**os.environ, **(env or {})}
        if not idempotent:
            self.args.append("--no-idempotency")
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, env=self.env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"HQ process exited with {self.proc.returncode}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"http://127.0.0.1:{self.port}{API_PREFIX}/health",
                             timeout=1).status_code == 200:
                    return
            time.sleep(0.05)
        raise RuntimeError("HQ process did not answer /health")

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(timeout=10)


def main(argv: list[str]) -> None:
    url, blob_dir, port = argv[0], Path(argv[1]), int(argv[2])
    if "--no-idempotency" in argv:
        ingest._answer_from_held = lambda record, device, held: None  # type: ignore[assignment]
    app = create_app(Settings.from_env(database_url=url, blob_dir=blob_dir,
                                       data_dir=blob_dir.parent))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")


if __name__ == "__main__":
    main(sys.argv[1:])
