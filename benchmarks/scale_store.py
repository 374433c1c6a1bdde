"""Build a device store holding N sealed records, fast (bulk, never through the GUI).

A few real records are sealed through ``services`` (an auto with a termo de retenção, an
auto alone, a release, a cancellation); every other record is a copy of one of them with a
new id, number, time, vehicle and verification code, canonicalised, hashed, signed with the
device key and chained in the journal exactly as ``store/sealing.py`` does, then inserted in
batches. The result passes ``inspector store verify``.

Mix (per group of records): like a demo-grown store, about half the groups are an auto with
a termo de retenção never released (the worst case for "vehicles held"), a quarter an auto
alone, the rest an auto retained and released, and 1 in 20 an auto later cancelled.

Used by ``benchmarks/bench_scale.py`` and the 10,000-record CI test
(``tests/ui/test_scale.py``).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector_app import demo, services
from inspector_app.security.records import canonical_json, sha256_hex
from inspector_app.store import numbering, open_store
from inspector_app.store.db import Store
from inspector_app.store.sealing import (
    device_key,
    journal_entry_hash,
    new_record_id,
    verification_code,
)

BUILDER_VERSION = "1"
SERIES = "SCALE-DF"
NARRATIVE = "Em fiscalização de rotina, constatei as irregularidades com o condutor presente."
STROKES = [[(20.0 + 6 * i, 100.0 + 4 * (i % 9)) for i in range(80)]]


@dataclass(frozen=True)
class Built:
    data_dir: Path
    records: int
    seconds: float
    plate: str  # a plate with many records (history search)
    clean_plate: str  # a registered DF plate without registry warnings (the wizard)
    driver_cpf: str


def _id(result: services.SealResult, kind: str) -> str:
    record = result.of_kind(kind)
    if record is None:
        raise RuntimeError(f"the template seal made no {kind}")
    return record.id


def _templates(store: Store) -> tuple[list[list[Any]], str, str]:
    """Real groups of sealed records, made through the services."""
    from inspector_app.store import reference

    plates = [str(p) for (p,) in store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = 'DF_STPCR' ORDER BY id")]
    fine = []
    for plate in plates:
        view = reference.find_vehicle(store, plate)
        if view is not None and not view.warnings and view.chassis_year and \
                view.chassis_year >= dt.date.today().year - 8:
            fine.append(plate)
            if len(fine) == 5:
                break
    clean = fine[0]
    view = reference.find_vehicle(store, clean)
    holder = view.holder if view is not None else None
    row = store.conn.execute(
        "SELECT cpf FROM ref_drivers WHERE holder_id = ? AND registered = 1 ORDER BY id",
        [holder.id if holder else ""]).fetchone() or store.conn.execute(
        "SELECT cpf FROM ref_drivers WHERE registered = 1 ORDER BY id").fetchone()
    session = services.login(store=store, matricula="1001", password="demo1001")

    def auto(plate: str, retain: bool) -> services.SealResult:
        inspection_id = services.start_inspection(
            store=store, session=session, pack_id="DF_STPCR", kind="fiscalizacao",
            location_type="terminal", place="Terminal Rural de Planaltina", plate=plate)
        services.record_answer(store=store, inspection_id=inspection_id, item_id="DF-SEG-02",
                               result="fail", note="Extintor ausente.")
        for role in ("agent", "driver"):
            services.record_signature(store=store, inspection_id=inspection_id, role=role,
                                      status="signed", strokes=STROKES)
        return services.seal_inspection(
            store=store, session=session, inspection_id=inspection_id, narrative=NARRATIVE,
            retain=retain, retention_place="Pátio do terminal" if retain else "")

    others = fine[1:]
    held = auto(others[0], True)
    alone = auto(others[1 % len(others)], False)
    released = auto(others[2 % len(others)], True)
    desk = services.login(store=store, matricula="1003", password="demo1003")
    signature = {"status": "signed", "strokes": STROKES, "size": (600, 200)}
    liberation = services.release_vehicle(
        store=store, session=desk, retention_id=_id(released, "termo_retencao"),
        fault_fixed=True, rechecked_items=["DF-SEG-02"],
        receiver={"name": "Sebastião Ferreira Lima", "cpf": "16944060167",
                  "document": "CNH 01234567890"},
        receiver_signature=signature, agent_signature=signature)
    cancelled = auto(others[3 % len(others)], False)
    boss = services.login(store=store, matricula="1004", password="demo1004")
    cancel = services.cancel_auto(store=store, session=boss,
                                  record_id=_id(cancelled, "auto_infracao"),
                                  reason="Auto lavrado em duplicidade.", password="demo1004")
    groups = [list(held.records), list(alone.records),
              [*released.records, *liberation.records], [*cancelled.records, *cancel.records]]
    return groups, clean, str(row[0])


def _remap(value: Any, mapping: dict[str, str]) -> Any:
    if isinstance(value, str):
        return mapping.get(value, value)
    if isinstance(value, dict):
        return {k: _remap(v, mapping) for k, v in value.items()}
    if isinstance(value, list):
        return [_remap(v, mapping) for v in value]
    return value


def build(data_dir: Path, records: int, *, vehicles: int = 2000, seed: int = 17,
          progress: Callable[[int], None] | None = None) -> Built:
    """A store in ``data_dir`` (must not exist) with about ``records`` sealed records."""
    started = time.perf_counter()
    store = open_store(data_dir)
    try:
        demo.seed_registry(store, vehicles=vehicles, seed=1)
        groups, clean, cpf = _templates(store)
        made = sum(len(g) for g in groups)
        numbering.add_range(store, series=SERIES, first=1, last=records + 100_000,
                            source="hq", jurisdiction="DF")
        key = device_key(store)
        fleet = [(str(p), str(k), h) for p, k, h in store.conn.execute(
            "SELECT plate, plate_key, holder_id FROM ref_vehicles WHERE pack_id = 'DF_STPCR' "
            "AND plate <> ? ORDER BY id", [clean])]
        busy = fleet[0]
        rng = random.Random(seed)
        weights = [(0, 50), (1, 25), (2, 20), (3, 5)]
        pattern = [g for g, w in weights for _ in range(w)]
        seq, prev = store.conn.execute(
            "SELECT seq, entry_hash FROM journal ORDER BY seq DESC LIMIT 1").fetchone()
        number = 0
        target = max(records - made, 0)
        span = dt.timedelta(days=3 * 365)
        start = dt.datetime.now(dt.UTC) - span - dt.timedelta(days=2)
        step = span / max(target, 1)
        k = 0
        batch: dict[str, list[Any]] = {"records": [], "journal": [], "usage": [], "outbox": []}

        def flush() -> None:
            with store.atomic():
                store.conn.executemany(
                    "INSERT INTO records(id, kind, series, number, inspection_id, refers_to, "
                    "plate_key, holder_id, occurred_on, created_at, payload, sha256, "
                    "signature, key_id, journal_seq, verification_code) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", batch["records"])
                store.conn.executemany(
                    "INSERT INTO journal(seq, record_id, kind, record_sha256, prev_hash, "
                    "entry_hash, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", batch["journal"])
                store.conn.executemany(
                    "INSERT INTO number_usage(series, number, status, record_id, at) "
                    "VALUES (?, ?, 'issued', ?, ?)", batch["usage"])
                store.conn.executemany(
                    "INSERT INTO outbox(record_id, kind, enqueued_at) VALUES (?, ?, ?)",
                    batch["outbox"])
            for rows in batch.values():
                rows.clear()

        while k < target:
            group = groups[rng.choice(pattern)]
            plate, plate_key, holder_id = busy if rng.random() < 0.01 else rng.choice(fleet)
            mapping: dict[str, str] = {}
            for rec in group:
                number += 1
                mapping[rec.id] = new_record_id()
                mapping[rec.display_number] = f"{SERIES}-{number:06d}"
            for rec in group:
                when = start + step * k
                created = when.isoformat(timespec="microseconds")
                env = _remap(json.loads(json.dumps(rec.envelope)), mapping)
                rid = mapping[rec.id]
                series, num = mapping[rec.display_number].rsplit("-", 1)
                body = env["body"]
                vehicle = body.get("vehicle")
                if isinstance(vehicle, dict):
                    vehicle["plate"] = plate
                if isinstance(body.get("occurred_at"), str):
                    body["occurred_at"] = created
                env.update(id=rid, series=series, number=int(num), created_at=created,
                           verification_code=verification_code(rid), plate_key=plate_key,
                           holder_id=holder_id, occurred_on=when.date().isoformat(),
                           inspection_id=None)
                canonical = canonical_json(env)
                digest = sha256_hex(canonical)
                signature = base64.b64encode(key.sign(canonical)).decode("ascii")
                seq += 1
                entry = journal_entry_hash(seq, rid, env["kind"], digest, prev, created)
                batch["records"].append(
                    [rid, env["kind"], series, int(num), None, env["refers_to"], plate_key,
                     holder_id, env["occurred_on"], created, canonical.decode("utf-8"),
                     digest, signature, key.device_key_id, seq, env["verification_code"]])
                batch["journal"].append([seq, rid, env["kind"], digest, prev, entry, created])
                batch["usage"].append([series, int(num), rid, created])
                batch["outbox"].append([rid, env["kind"], created])
                prev = entry
                k += 1
            if len(batch["records"]) >= 5000:
                flush()
                if progress is not None:
                    progress(k + made)
        if batch["records"]:
            flush()
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    return Built(data_dir, k + made, time.perf_counter() - started, busy[0], clean, cpf)


def cached(root: Path, records: int, **kwargs: Any) -> Built:
    """The store for ``records`` under ``root`` (built once, reused while the builder is the
    same); the build time reported is the one measured when it was built."""
    folder = root / f"scale-{records}-v{BUILDER_VERSION}"
    info = folder / "built.json"
    if info.exists():
        meta = json.loads(info.read_text())
        return Built(folder / "data", meta["records"], meta["seconds"], meta["plate"],
                     meta["clean_plate"], meta["driver_cpf"])
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    built = build(folder / "data", records, **kwargs)
    info.write_text(json.dumps({"records": built.records, "seconds": built.seconds,
                                "plate": built.plate, "clean_plate": built.clean_plate,
                                "driver_cpf": built.driver_cpf}))
    return built


def copy(built: Built, target: Path) -> Built:
    """A working copy (the app may migrate or write it)."""
    shutil.copytree(built.data_dir, target)
    return Built(target, built.records, built.seconds, built.plate, built.clean_plate,
                 built.driver_cpf)
