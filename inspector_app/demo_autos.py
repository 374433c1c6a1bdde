"""Realistic sealed autos for the demo store, made through the same services the GUI uses.

Each auto is a real inspection of a vehicle of the demo registry: a checklist with one to
three failed items, signatures (the driver sometimes refuses), the rules engine's outcome,
retention where the law requires it and the place allows it, then sealing. So verification,
documents and sync have true data to work on.
"""

from __future__ import annotations

import datetime as dt
import math
import random

from inspector_app import services
from inspector_app.packs import get_pack
from inspector_app.store.db import Store, StoreError

PLACES = {
    "DF_STPA": ("Rodoviária do Plano Piloto – plataforma D", "Terminal de Ceilândia Sul",
                "Ponto de controle BR-020, km 8 – Sobradinho"),
    "DF_STPCR": ("Terminal Rural de Planaltina", "Ponto de controle DF-130 – Rajadinha",
                 "Terminal de Brazlândia"),
    "JF_1972": ("Terminal Rodoviário Miguel Mansur", "Av. Rio Branco, 2.000 – Centro",
                "Pátio de vistoria da SMU – Benfica"),
}
NARRATIVES = (
    "Em fiscalização de rotina, constatei as irregularidades descritas, verificadas no "
    "veículo com o condutor presente.",
    "Abordado o veículo no local indicado; as irregularidades foram mostradas ao condutor, "
    "que acompanhou a verificação.",
)


def _strokes(rng: random.Random) -> list[list[tuple[float, float]]]:
    """A plausible hand-written scribble for the signature pad (600 × 200)."""
    strokes = []
    x0 = rng.uniform(40, 120)
    for _ in range(rng.randint(2, 4)):
        amp, freq = rng.uniform(20, 50), rng.uniform(0.03, 0.08)
        length = rng.uniform(80, 180)
        strokes.append([
            (x0 + t, 100 + amp * math.sin(freq * t) + rng.uniform(-3, 3))
            for t in range(0, int(length), 6)
        ])
        x0 += length + rng.uniform(10, 30)
    return strokes


def seed_autos(store: Store, *, autos: int, seed: int = 1) -> list[str]:
    """Seal ``autos`` realistic autos de infração (with termos where due); returns ids."""
    rng = random.Random(seed)
    agents = store.conn.execute(
        "SELECT matricula, name, role FROM ref_inspectors WHERE active = 1 AND role = "
        "'inspector' ORDER BY matricula"
    ).fetchall()
    vehicles = store.conn.execute(
        "SELECT plate, pack_id, holder_id, last_vistoria FROM ref_vehicles ORDER BY id"
    ).fetchall()
    if not agents or not vehicles:
        raise StoreError("seed the registry first", "Carregue o cadastro de demonstração antes.")
    sealed: list[str] = []
    now = dt.datetime.now(dt.UTC).astimezone(dt.timezone(dt.timedelta(hours=-3)))
    attempts = 0
    while len(sealed) < autos and attempts < autos * 5:
        attempts += 1
        plate, pack_id, holder_id, last_vistoria = rng.choice(vehicles)
        drivers = store.conn.execute(
            "SELECT name, cpf, cnh, registered FROM ref_drivers WHERE holder_id = ? "
            "AND role = 'motorista' ORDER BY id", [holder_id]
        ).fetchall()
        driver = {}
        if drivers:
            d_name, cpf, cnh, registered = rng.choice(drivers)
            driver = {"name": d_name, "cpf": cpf, "cnh": cnh, "registered": bool(registered)}
        matricula, name, role = rng.choice(agents)
        session = services.Session(matricula=matricula, name=name, role=role)
        pack = get_pack(pack_id)
        when = now - dt.timedelta(days=rng.randint(0, 45), minutes=rng.randint(0, 600))
        if last_vistoria and when.date().isoformat() < str(last_vistoria):
            # A fact cannot precede the vehicle's last vistoria (impossible timeline).
            when = min(now, dt.datetime.combine(dt.date.fromisoformat(str(last_vistoria)),
                                                when.timetz()))
        location = rng.choice(("terminal", "terminal", "ponto_controle", "via_publica"))
        inspection_id = services.start_inspection(
            store=store, session=session, pack_id=pack_id, kind="fiscalizacao",
            location_type=location, place=rng.choice(PLACES[pack_id]),
            plate=plate, occurred_at=when.isoformat(timespec="seconds"),
            driver=driver,
        )
        candidates = [i for i in pack.items.values() if i.fail and not i.requires_facts]
        for item in rng.sample(candidates, k=min(len(candidates), rng.randint(1, 3))):
            services.record_answer(store=store, inspection_id=inspection_id,
                                   item_id=item.id, result="fail",
                                   note="Constatado na fiscalização.")
        services.record_signature(store=store, inspection_id=inspection_id, role="agent",
                                  status="signed", strokes=_strokes(rng))
        if rng.random() < 0.2:
            services.record_signature(
                store=store, inspection_id=inspection_id, role="driver", status="refused",
                note="Condutor recusou-se a assinar após leitura do auto.")
        else:
            services.record_signature(store=store, inspection_id=inspection_id, role="driver",
                                      status="signed", strokes=_strokes(rng))
        outcome = services.evaluate_inspection(store=store, inspection_id=inspection_id)
        retain = bool(outcome.retention.required and outcome.retention.allowed_here)
        result = services.seal_inspection(
            store=store, session=session, inspection_id=inspection_id,
            narrative=rng.choice(NARRATIVES), retain=retain,
            retention_place="Pátio do terminal" if retain else "",
        )
        sealed.extend(r.id for r in result.records if r.kind == "auto_infracao")
    return sealed
