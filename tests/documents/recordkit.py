"""Sealed records of every document kind, made through the same services the GUI uses."""

from __future__ import annotations

import datetime as dt
import math
import random
from dataclasses import dataclass
from pathlib import Path

from PIL import Image, ImageDraw

from inspector_app import services
from inspector_app.demo import seed_registry
from inspector_app.domain.identity import generate_cnh, generate_cpf
from inspector_app.packs import get_pack
from inspector_app.store.db import Store, open_store
from inspector_app.store.sealing import SealedRecord

TODAY = dt.date(2026, 4, 14)
KIT_HQ_URL = "https://fiscalizacao.example.org"
KIT_VERIFY_BASE = KIT_HQ_URL + "/verify/"
INSPECTOR = services.Session("1002", "Maria da Conceição Araújo", "inspector")
DESK = services.Session("1003", "Antônio Carlos Gonçalves", "retention_desk")
SUPERVISOR = services.Session("1004", "Luíza Helena Magalhães", "supervisor")
JF_INSPECTOR = services.Session("2001", "José Geraldo Assunção", "inspector")

LONG_NARRATIVE = (
    "Em fiscalização de rotina na plataforma D, às 08h40, abordei o veículo quando "
    "embarcava passageiros. Constatei o extintor de incêndio com a carga vencida e o "
    "lacre rompido, a ausência do dístico de lotação e a porta traseira sem acionamento "
    "pelo condutor. Mostrei as irregularidades ao condutor, que acompanhou a verificação "
    "e foi informado do prazo de defesa. As fotos anexas registram o extintor, o painel "
    "interno e a porta. " * 3
).strip()


@dataclass
class Kit:
    store: Store
    records: dict[str, SealedRecord]
    photo_dir: Path


def _strokes(rng: random.Random) -> list[list[tuple[float, float]]]:
    strokes = []
    x0 = rng.uniform(40, 120)
    for _ in range(3):
        amp, freq, length = rng.uniform(20, 50), rng.uniform(0.03, 0.08), rng.uniform(90, 170)
        strokes.append([(x0 + t, 100 + amp * math.sin(freq * t)) for t in range(0, int(length), 6)])
        x0 += length + 20
    return strokes


def _photo(folder: Path, index: int) -> Path:
    """A 1600×1200 JPEG, different for each index (so four photos have four hashes)."""
    image = Image.new("RGB", (1600, 1200), (40 + 50 * index, 90, 160 - 30 * index))
    draw = ImageDraw.Draw(image)
    for k in range(0, 1600, 80):
        draw.line([(k, 0), (1600 - k, 1200)], fill=(220, 200 - 10 * index, 60), width=9)
    draw.rectangle((500, 400, 1100, 800), fill=(250, 250, 250))
    draw.ellipse((650, 480, 950, 720), fill=(200, 30, 30))
    path = folder / f"foto_{index + 1}.jpg"
    image.save(path, "JPEG", quality=88)
    return path


def _of(result: services.SealResult, kind: str) -> SealedRecord:
    record = result.of_kind(kind)
    assert record is not None, f"no {kind} sealed"
    return record


def _plate(store: Store, pack_id: str, n: int = 0) -> str:
    rows = store.conn.execute(
        "SELECT plate FROM ref_vehicles WHERE pack_id = ? ORDER BY id", [pack_id]
    ).fetchall()
    return str(rows[n][0])


def _driver(rng: random.Random, name: str) -> dict[str, object]:
    return {"name": name, "cpf": generate_cpf(rng), "cnh": generate_cnh(rng), "registered": True}


def _fail_items(inspection_id: str, store: Store, pack_id: str, count: int, note: str) -> None:
    pack = get_pack(pack_id)
    items = [i for i in pack.items.values() if i.fail and not i.requires_facts][:count]
    for item in items:
        services.record_answer(store=store, inspection_id=inspection_id, item_id=item.id,
                               result="fail", note=note)


def build_kit(data_dir: Path, photo_dir: Path) -> Kit:
    """One store holding every document kind (see the keys of ``Kit.records``)."""
    rng = random.Random(20260414)
    store = open_store(data_dir)
    seed_registry(store, vehicles=60, seed=4, today=TODAY)
    # HQ's public address as enrolment leaves it: documents print it and put it in the QR.
    store.set_meta("hq_public_url", KIT_HQ_URL)
    records: dict[str, SealedRecord] = {}

    # DF STPA fiscalização: 4 photos, GPS, driver refuses, retention at a terminal.
    insp = services.start_inspection(
        store=store, session=INSPECTOR, pack_id="DF_STPA", kind="fiscalizacao",
        location_type="terminal", place="Rodoviária do Plano Piloto – plataforma D",
        plate=_plate(store, "DF_STPA"), occurred_at="2026-04-14T08:47:00-03:00",
        latitude=-15.793889, longitude=-47.882778,
        driver=_driver(rng, "Sebastião Gonçalves da Conceição"),
    )
    _fail_items(insp, store, "DF_STPA", 3, "Constatado na fiscalização; ver fotos.")
    for i in range(4):
        services.attach_photo(store=store, inspection_id=insp, source=_photo(photo_dir, i))
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    services.record_signature(store=store, inspection_id=insp, role="driver", status="refused",
                              note="Condutor recusou-se a assinar após a leitura do auto.")
    outcome = services.evaluate_inspection(store=store, inspection_id=insp)
    assert outcome.retention.grounds or outcome.retention.possible_grounds
    sealed = services.seal_inspection(
        store=store, session=INSPECTOR, inspection_id=insp, narrative=LONG_NARRATIVE,
        retain=True, retention_place="Pátio da Rodoviária – vaga 3",
    )
    records["auto_infracao"] = _of(sealed, "auto_infracao")
    records["termo_retencao"] = _of(sealed, "termo_retencao")

    # Juiz de Fora: company permit holder (CNPJ), the driver signs.
    insp = services.start_inspection(
        store=store, session=JF_INSPECTOR, pack_id="JF_1972", kind="fiscalizacao",
        location_type="via_publica", place="Av. Rio Branco, 2.000 – Centro",
        plate=_plate(store, "JF_1972"), occurred_at="2026-04-13T17:05:00-03:00",
        driver=_driver(rng, "Cícero Araújo Simões"),
    )
    _fail_items(insp, store, "JF_1972", 2, "Verificado com o condutor presente.")
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    services.record_signature(store=store, inspection_id=insp, role="driver", status="signed",
                              strokes=_strokes(rng))
    sealed = services.seal_inspection(
        store=store, session=JF_INSPECTOR, inspection_id=insp,
        narrative="Veículo em circulação na linha com as falhas descritas; condutor ciente.",
    )
    records["auto_infracao_jf"] = _of(sealed, "auto_infracao")

    # DF STPCR, driver not identified (absent).
    insp = services.start_inspection(
        store=store, session=INSPECTOR, pack_id="DF_STPCR", kind="fiscalizacao",
        location_type="ponto_controle", place="Ponto de controle DF-130 – Rajadinha",
        plate=_plate(store, "DF_STPCR"), occurred_at="2026-04-10T06:15:00-03:00",
    )
    _fail_items(insp, store, "DF_STPCR", 1, "Veículo estacionado sem condutor.")
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    services.record_signature(store=store, inspection_id=insp, role="driver", status="absent",
                              note="Veículo encontrado estacionado, condutor não localizado.")
    sealed = services.seal_inspection(
        store=store, session=INSPECTOR, inspection_id=insp,
        narrative="Veículo estacionado no ponto de controle sem o condutor.",
    )
    records["auto_infracao_ausente"] = _of(sealed, "auto_infracao")

    # Vistoria aprovada: every answered item conforms.
    pack = get_pack("DF_STPCR")
    insp = services.start_inspection(
        store=store, session=INSPECTOR, pack_id="DF_STPCR", kind="vistoria",
        location_type="patio_vistoria", place="Pátio de vistoria da SEMOB-DF – SIA",
        plate=_plate(store, "DF_STPCR", 1), occurred_at="2026-04-09T09:30:00-03:00",
    )
    for item in list(pack.items.values())[:12]:
        services.record_answer(store=store, inspection_id=insp, item_id=item.id, result="ok")
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    sealed = services.seal_inspection(store=store, session=INSPECTOR, inspection_id=insp)
    records["auto_vistoria_aprovado"] = _of(sealed, "auto_vistoria")

    # Vistoria reprovada: an auto de vistoria and an auto de infração.
    insp = services.start_inspection(
        store=store, session=INSPECTOR, pack_id="DF_STPCR", kind="vistoria",
        location_type="patio_vistoria", place="Pátio de vistoria da SEMOB-DF – SIA",
        plate=_plate(store, "DF_STPCR", 2), occurred_at="2026-04-09T10:45:00-03:00",
        driver=_driver(rng, "Joaquim Brandão Magalhães"),
    )
    for item in list(pack.items.values())[:6]:
        services.record_answer(store=store, inspection_id=insp, item_id=item.id, result="ok")
    _fail_items(insp, store, "DF_STPCR", 2, "Reprovado na vistoria periódica.")
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    services.record_signature(store=store, inspection_id=insp, role="driver", status="signed",
                              strokes=_strokes(rng))
    sealed = services.seal_inspection(
        store=store, session=INSPECTOR, inspection_id=insp,
        narrative="Na vistoria periódica o veículo apresentou as falhas indicadas.",
    )
    records["auto_vistoria_reprovado"] = _of(sealed, "auto_vistoria")

    # Over-age vehicle retained, then released with a termo de compromisso (art. 38 §único).
    insp = services.start_inspection(
        store=store, session=INSPECTOR, pack_id="DF_STPCR", kind="fiscalizacao",
        location_type="terminal", place="Terminal Rural de Planaltina",
        plate=_plate(store, "DF_STPCR", 3), occurred_at="2026-04-08T07:20:00-03:00",
        vehicle={"chassis_year": 2012, "body_year": 2012},
        driver=_driver(rng, "Otávio Simões Brandão"),
    )
    services.record_signature(store=store, inspection_id=insp, role="agent", status="signed",
                              strokes=_strokes(rng))
    services.record_signature(store=store, inspection_id=insp, role="driver", status="signed",
                              strokes=_strokes(rng))
    sealed = services.seal_inspection(
        store=store, session=INSPECTOR, inspection_id=insp,
        narrative="Veículo com idade acima do limite em operação na linha.",
        retain=True, retention_place="Pátio do Terminal Rural de Planaltina",
    )
    retention = _of(sealed, "termo_retencao")
    released = services.release_vehicle(
        store=store, session=DESK, retention_id=retention.id, compromisso_signed=True,
        note="Veículo retirado pelo permissionário em caminhão-guincho.",
    )
    by_kind = {r.kind: r for r in released.records}
    records["termo_compromisso"] = by_kind["termo_compromisso"]
    records["termo_liberacao"] = by_kind["termo_liberacao"]

    # Cancellation of the Juiz de Fora auto by a supervisor.
    sealed = services.cancel_auto(
        password="demo1004", store=store, session=SUPERVISOR, record_id=records["auto_infracao_jf"].id,
        reason="Auto lavrado com a placa de outro veículo da mesma empresa.",
    )
    records["cancelamento"] = sealed.records[0]
    return Kit(store, records, photo_dir)
