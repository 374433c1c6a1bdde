"""Crash harness: a child process seals autos until it is SIGKILLed; the parent checks the store.

Run as a script this module is the child. It imports the store, waits for ``go`` on stdin
(so the parent can start the next child's interpreter while it checks the store), opens the
store, prints ``ready`` and seals one auto de infração after another. After each
``seal_records`` returns it appends ``ref id series number sha256`` to the ack file with
``os.write`` + ``os.fsync``: that line is what the inspector saw as saved.

The parent (:func:`run_kills`) kills each child after a random delay, reopens the store and
checks (:func:`check_store`): ``quick_check`` ok; no partial record (records, journal,
number_usage and outbox hold the same number of rows, journal and numbers without gaps);
every payload still hashing to its SHA-256; every acknowledged auto present with the same
id, number and SHA-256; and ``verify_store`` ok (signatures, chain, number accounting) after
every kill, or every n-th kill and the last in long runs.

Modes (one switch, same harness):

* ``sound``: the product as it is;
* ``split_transaction`` (negative control): every INSERT of a seal is committed on its own,
  as if ``Store.atomic()`` were not there, so a kill between two INSERTs leaves a partial
  record;
* ``early_ack`` (negative control): the child acknowledges an auto *before* sealing it, so
  a kill before COMMIT leaves an acknowledged auto that is not in the store.

A lost ``fsync`` (``synchronous=OFF``) is not a control: SIGKILL ends the process, not the
kernel, so writes already handed to the OS survive it. Only a power cut or a kernel crash
(a virtual machine reset) would show that, which a test in one machine cannot do.

The test-only hook ``--insert-sleep`` makes the child sleep before each INSERT (through
``sqlite3.Connection.set_trace_callback``, product code unchanged), so that most kills land
inside a transaction. The child also writes where it is (idle, in a transaction, committing,
acknowledging) to a one-byte shared file the parent reads after each kill.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import mmap
import os
import random
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector_app.store.db import open_store
from inspector_app.store.sealing import RecordDraft, ensure_device, seal_records
from inspector_app.store.verify import verify_store

MODES = ("sound", "split_transaction", "early_ack")

# Where the child was when it died (one byte in the phase file).
IDLE, IN_TRANSACTION, COMMITTING, ACKNOWLEDGING = b"0", b"1", b"2", b"3"
PHASE_NAMES = {
    IDLE: "between seals",
    IN_TRANSACTION: "inside the transaction (before COMMIT)",
    COMMITTING: "during COMMIT",
    ACKNOWLEDGING: "committed, not yet acknowledged",
}

_PLATES = ("JKL1A23", "ABC1234", "PQR2B45", "HMG0J12", "OVP4461", "JFA3C09")
_RULES = ("DF15154.29.XIII", "DF15154.29.IV", "DF15154.30.II", "JF1235.12.V")


# --- child ---------------------------------------------------------------------------------


class _CommitEachStatement:
    """Negative control: a connection whose INSERTs are each committed at once.

    ``in_transaction`` stays true between them, so the product code runs unchanged, but a
    kill between two INSERTs leaves the ones before it saved (what ``atomic()`` prevents).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, sql: str, parameters: Any = ()) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, parameters)
        if self._conn.in_transaction and sql.lstrip().upper().startswith("INSERT"):
            self._conn.execute("COMMIT")
            self._conn.execute("BEGIN IMMEDIATE")
        return cursor


def _tracer(phase: mmap.mmap, insert_sleep: float) -> Callable[[str], None]:
    last = [""]

    def trace(statement: str) -> None:
        # SQLCipher's module reports a statement again for each trigger step it runs (the
        # row seals of store/seals.py): sleep once per statement, not once per trigger.
        if statement == last[0]:
            return
        last[0] = statement
        head = statement.lstrip()[:16].upper()
        if head.startswith("BEGIN"):
            phase[0:1] = IN_TRANSACTION
        elif head.startswith("COMMIT"):
            phase[0:1] = COMMITTING
        elif head.startswith("INSERT") and insert_sleep:
            time.sleep(insert_sleep)

    return trace


def _draft(rng: random.Random, ref: str) -> RecordDraft:
    plate = rng.choice(_PLATES)
    return RecordDraft(
        "auto_infracao",
        {
            "ref": ref,
            "rule_id": rng.choice(_RULES),
            "plate": plate,
            "place": "Terminal Rodoviário do Plano Piloto, plataforma " + str(rng.randint(1, 40)),
            "fine_estimate": f"{rng.randint(50, 2000)}.{rng.randint(0, 99):02d}",
            "observacao": "Extintor vencido; motorista ciente. " * rng.randint(1, 6),
        },
        plate_key=plate,
        occurred_on="2026-04-14",
    )


def child_main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--ack", required=True)
    parser.add_argument("--phase", required=True)
    parser.add_argument("--tag", required=True)
    parser.add_argument("--mode", choices=MODES, default="sound")
    parser.add_argument("--insert-sleep", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if sys.stdin.readline().strip() != "go":
        return
    with open(args.phase, "r+b") as handle:
        phase = mmap.mmap(handle.fileno(), 1)
    phase[0:1] = IDLE
    store = open_store(Path(args.data_dir))
    store.conn.set_trace_callback(_tracer(phase, args.insert_sleep))
    if args.mode == "split_transaction":
        store.db.conn = _CommitEachStatement(store.conn)  # type: ignore[assignment]
    ensure_device(store)
    rng = random.Random(args.seed)
    ack = os.open(args.ack, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    for i in range(10**9):
        ref = f"{args.tag}.{i}"
        if args.mode == "early_ack":
            _write_ack(ack, f"{ref} - - - -\n")
        [sealed] = seal_records(store, [_draft(rng, ref)])
        phase[0:1] = ACKNOWLEDGING
        if args.mode != "early_ack":
            line = f"{ref} {sealed.id} {sealed.series} {sealed.number} {sealed.sha256}\n"
            _write_ack(ack, line)
        phase[0:1] = IDLE


def _write_ack(fd: int, line: str) -> None:
    os.write(fd, line.encode("ascii"))
    os.fsync(fd)


# --- parent --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ack:
    ref: str
    id: str | None
    series: str | None
    number: int | None
    sha256: str | None


def read_acks(path: Path) -> list[Ack]:
    """Complete lines of the ack file (a line cut by the kill was never seen as saved)."""
    if not path.exists():
        return []
    out = []
    for line in path.read_text("ascii").splitlines(keepends=True):
        if not line.endswith("\n"):
            continue
        ref, rid, series, number, sha = line.split()
        out.append(
            Ack(
                ref,
                None if rid == "-" else rid,
                None if series == "-" else series,
                None if number == "-" else int(number),
                None if sha == "-" else sha,
            )
        )
    return out


def check_store(data_dir: Path, acks: list[Ack], *, full: bool = True) -> tuple[list[str], int]:
    """Problems found in the store after a kill, and how many records it holds.

    Every time: ``quick_check``, the four tables of a seal hold the same number of rows,
    journal and numbers have no gap, every payload still hashes to its SHA-256, and every
    acknowledged auto is there unchanged. With ``full`` also ``verify_store`` (signatures,
    chain, accounting), whose Ed25519 checks cost most of the time on a big store.
    """
    problems: list[str] = []
    store = open_store(data_dir)
    try:
        if store.readonly or store.alerts:
            problems.append(f"store opened read-only: {store.alerts}")
        quick = [str(r[0]) for r in store.conn.execute("PRAGMA quick_check").fetchall()]
        if quick != ["ok"]:
            problems.append(f"quick_check: {quick[:3]}")
        if full:
            problems.extend(f"verify: {p}" for p in verify_store(store).problems)
        sql = store.conn.execute
        counts = {
            table: sql(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("records", "journal", "number_usage", "outbox")
        }
        if len(set(counts.values())) != 1:
            problems.append(f"partial records: row counts differ {counts}")
        [(top_seq,)] = sql("SELECT coalesce(max(seq), 0) FROM journal").fetchall()
        if top_seq != counts["journal"]:
            problems.append(f"journal: {counts['journal']} entries up to seq {top_seq}")
        for series, low, high, n in sql(
            "SELECT series, min(number), max(number), count(*) FROM number_usage GROUP BY series"
        ):
            if high - low + 1 != n:
                problems.append(f"numbers {series}: {n} used between {low} and {high}")
        saved = {}
        for ref, rid, series, number, sha, payload in sql(
            "SELECT json_extract(payload, '$.body.ref'), id, series, number, sha256, payload "
            "FROM records"
        ):
            saved[str(ref)] = (rid, series, number, sha)
            if hashlib.sha256(payload.encode("utf-8")).hexdigest() != sha:
                problems.append(f"record {rid}: payload does not match its SHA-256")
        for ack in acks:
            found = saved.get(ack.ref)
            if found is None:
                problems.append(f"acknowledged auto {ack.ref} ({ack.id}) is missing")
            elif ack.id is not None and found != (ack.id, ack.series, ack.number, ack.sha256):
                problems.append(f"acknowledged auto {ack.ref} differs: {ack} vs {found}")
        return problems, counts["records"]
    finally:
        store.close()


class Child:
    """One child interpreter: started early (imports), then ``go``, ``ready``, SIGKILL."""

    def __init__(self, data_dir: Path, work: Path, *, tag: str, mode: str, insert_sleep: float,
                 seed: int) -> None:
        self.phase_path = work / "phase"
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--data-dir", str(data_dir), "--ack", str(work / "acks"),
             "--phase", str(self.phase_path), "--tag", tag, "--mode", mode,
             "--insert-sleep", str(insert_sleep), "--seed", str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def go(self, timeout: float = 60.0) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(b"go\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            line = b""  # it died while starting (its stderr says why)
        else:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            line = self.proc.stdout.readline() if ready else b""
        if line != b"ready\n":
            self.kill()
            raise RuntimeError(f"child did not start: {self.stderr()}")

    def kill(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait()

    def stderr(self) -> str:
        self.kill()
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")[-2000:]

    def close(self) -> None:
        self.kill()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(BrokenPipeError):
                    pipe.close()


@dataclass
class CrashRun:
    """What a series of kills found."""

    mode: str
    kills: int = 0
    seconds: float = 0.0
    records: int = 0
    acknowledged: int = 0
    problems: list[tuple[int, str]] = field(default_factory=list)
    phases: Counter[str] = field(default_factory=Counter)
    check_ms: list[float] = field(default_factory=list)

    @property
    def kills_with_problems(self) -> int:
        return len({kill for kill, _ in self.problems})

    def summary(self) -> str:
        where = ", ".join(f"{n} {name}" for name, n in self.phases.most_common())
        return (
            f"{self.mode}: {self.kills} kills in {self.seconds:.1f} s, {self.records} records, "
            f"{self.acknowledged} acknowledged, {len(self.problems)} problems in "
            f"{self.kills_with_problems} kills; killed: {where}"
        )


def run_kills(
    data_dir: Path,
    work: Path,
    *,
    kills: int,
    seed: int = 20260414,
    mode: str = "sound",
    insert_sleep: float = 0.002,
    max_delay: float = 0.06,
    spares: int = 3,
    verify_every: int = 1,
    stop_at_first_problem: bool = False,
) -> CrashRun:
    """Start, kill (SIGKILL ``uniform(0, max_delay)`` s after ``ready``) and check, ``kills`` times.

    One data folder for every kill, so each kill hits a bigger store. ``verify_store`` runs
    after every ``verify_every``-th kill and after the last one (records are append-only, so
    a partial record left by any kill is still there then); the cheaper checks of
    :func:`check_store` run after every kill. Python start-up costs far more than a kill, so
    ``spares`` children start their interpreters ahead of time; a spare touches nothing
    until it is told ``go``, after the previous check is done.
    """
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}")
    rng = random.Random(seed)
    work.mkdir(parents=True, exist_ok=True)
    phase_path = work / "phase"
    phase_path.write_bytes(IDLE)
    result = CrashRun(mode)
    started = time.perf_counter()
    pool: deque[Child] = deque()
    spawned = 0

    def refill() -> None:
        nonlocal spawned
        while len(pool) < spares + 1 and spawned < kills:
            pool.append(Child(data_dir, work, tag=f"k{spawned}", mode=mode,
                              insert_sleep=insert_sleep, seed=rng.randrange(2**31)))
            spawned += 1

    try:
        for k in range(kills):
            refill()
            child = pool[0]  # stays in the pool until closed, so ``finally`` can close it
            delay = rng.uniform(0.0, max_delay)
            child.go()
            time.sleep(delay)
            status = child.kill()
            if status != -signal.SIGKILL:
                result.problems.append((k, f"child ended by itself ({status}): {child.stderr()}"))
            child.close()
            pool.popleft()
            result.phases[PHASE_NAMES.get(phase_path.read_bytes()[:1], "?")] += 1
            acks = read_acks(work / "acks")
            t0 = time.perf_counter()
            full = (k + 1) % verify_every == 0 or k + 1 == kills
            problems, records = check_store(data_dir, acks, full=full)
            result.check_ms.append((time.perf_counter() - t0) * 1000)
            result.kills = k + 1
            result.records = records
            result.acknowledged = len(acks)
            result.problems.extend((k, p) for p in problems)
            if problems and stop_at_first_problem:
                break
    finally:
        for child in pool:
            child.close()
        result.seconds = time.perf_counter() - started
    return result


def iter_problem_lines(run: CrashRun, limit: int = 10) -> Iterator[str]:
    for kill, text in run.problems[:limit]:
        yield f"kill {kill}: {text}"


if __name__ == "__main__":
    child_main(sys.argv[1:])
