"""A realistic, deterministic demo registry, so the app has something true to show.

``seed_registry`` fills the reference tables the way HQ would: DF permit holders (STPA
autonomous vans, STPCR rural buses) and Juiz de Fora bus companies, their lines, vehicles
with valid old and Mercosul plates and RENAVAMs, drivers with CPF and CNH, inspectors, and
an infraction history using the packs' real rule IDs. The mix is on purpose: about 10 % of
the vehicles have expired insurance, about 10 % an overdue vistoria, some are over the
pack's age limit, some permits are suspended or cassadas, and some drivers are not
registered, so every warning of the plate lookup shows up somewhere.

The same ``seed`` and ``today`` give the same data (password hashes included: their salts
are derived from the matrícula). Dates are relative to ``today`` so the mix holds whatever
the day the demo is seeded.

Demo inspectors (matrícula / senha — public, for demonstration only):

======  =========  ==============================  ==============  ==========
Login   Senha      Nome                            Papel           Órgão
======  =========  ==============================  ==============  ==========
1001    demo1001   João Batista Ferreira           inspector       SEMOB-DF
1002    demo1002   Maria da Conceição Araújo       inspector       SEMOB-DF
1003    demo1003   Antônio Carlos Gonçalves        retention_desk  SEMOB-DF
1004    demo1004   Luíza Helena Magalhães          supervisor      SEMOB-DF
2001    demo2001   José Geraldo Assunção           inspector       SETTRA-JF
2002    demo2002   Sebastiana Lúcia Brandão        supervisor      SETTRA-JF
1099    demo1099   Raimundo Nonato Simões          inspector       SEMOB-DF (inactive)
======  =========  ==============================  ==============  ==========

Caveat: the hashes use the FAST argon2id parameters (milliseconds per check), far too cheap
for real passwords; HQ ships real hashes with the default parameters.
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import random
import string
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from argon2 import Type
from argon2.low_level import hash_secret
from sqlite_utils import Database

from inspector_app.domain.deadlines import add_months
from inspector_app.domain.identity import (
    Plate,
    generate_cnh,
    generate_cnpj,
    generate_cpf,
    generate_renavam,
)
from inspector_app.domain.pack import Pack
from inspector_app.packs import get_pack, list_packs
from inspector_app.security.passwords import HASH_LENGTH, MINIMUM_PARAMETERS
from inspector_app.store.db import Store, StoreError
from inspector_app.store.reference import counts

if TYPE_CHECKING:
    from _typeshed import SupportsLenAndGetItem

_T = TypeVar("_T")

__all__ = [
    "DEMO_INSPECTORS",
    "DemoInspector",
    "seed_history",
    "seed_parameters",
    "seed_registry",
]


@dataclass(frozen=True)
class DemoInspector:
    matricula: str
    name: str
    role: str
    organ: str
    active: bool = True

    @property
    def password(self) -> str:
        """The documented demo password: "demo" + matrícula."""
        return f"demo{self.matricula}"


DEMO_INSPECTORS = (
    DemoInspector("1001", "João Batista Ferreira", "inspector", "SEMOB-DF"),
    DemoInspector("1002", "Maria da Conceição Araújo", "inspector", "SEMOB-DF"),
    DemoInspector("1003", "Antônio Carlos Gonçalves", "retention_desk", "SEMOB-DF"),
    DemoInspector("1004", "Luíza Helena Magalhães", "supervisor", "SEMOB-DF"),
    DemoInspector("2001", "José Geraldo Assunção", "inspector", "SETTRA-JF"),
    DemoInspector("2002", "Sebastiana Lúcia Brandão", "supervisor", "SETTRA-JF"),
    DemoInspector("1099", "Raimundo Nonato Simões", "inspector", "SEMOB-DF", active=False),
)

# --------------------------------------------------------------------------------------------
# Name and place pools

_FIRST_NAMES = (
    "João", "José", "Antônio", "Francisco", "Carlos", "Paulo", "Pedro", "Lucas", "Luiz",
    "Marcos", "Luís", "Gabriel", "Rafael", "Daniel", "Marcelo", "Bruno", "Eduardo", "Felipe",
    "Raimundo", "Rodrigo", "Sebastião", "Joaquim", "Valdir", "Edvaldo", "Josué", "Cícero",
    "Gonçalo", "Júlio", "Fábio", "Márcio", "Vinícius", "Otávio", "Conceição", "Maria", "Ana",
    "Francisca", "Antônia", "Adriana", "Juliana", "Márcia", "Fernanda", "Patrícia", "Aline",
    "Sandra", "Camila", "Letícia", "Júlia", "Luzia", "Cláudia", "Vânia", "Rosângela",
    "Lúcia", "Débora", "Mônica", "Sônia", "Inês", "Luíza", "Taís", "Irene",
)
_MIDDLE_NAMES = (
    "Aparecida", "Batista", "Carlos", "Henrique", "Eduardo", "Augusto", "de Jesus",
    "da Conceição", "das Graças", "de Fátima", "José", "Antônio", "Cristina", "Luís",
    "Nonato", "Rosário", "do Carmo", "Helena", "Vitória",
)
_SURNAMES = (
    "Silva", "Santos", "Oliveira", "Souza", "Rodrigues", "Ferreira", "Alves", "Pereira",
    "Lima", "Gomes", "Ribeiro", "Carvalho", "Araújo", "Almeida", "Lopes", "Soares",
    "Fernandes", "Vieira", "Barbosa", "Rocha", "Dias", "Nascimento", "Andrade", "Moreira",
    "Nunes", "Marques", "Machado", "Mendes", "Freitas", "Cardoso", "Ramos", "Gonçalves",
    "Santana", "Teixeira", "Conceição", "Magalhães", "Brandão", "Guimarães", "Assunção",
    "Galvão", "Simões", "Falcão", "Lobão", "Antunes", "Patrício", "Custódio", "Estêvão",
)
_PARTICLES = ("", "", "", "da ", "de ", "dos ")

_DF_TOWNS = (
    "Planaltina", "Sobradinho", "Brazlândia", "Ceilândia", "Taguatinga", "Gama",
    "Santa Maria", "São Sebastião", "Paranoá", "Recanto das Emas", "Samambaia",
    "Riacho Fundo", "Núcleo Bandeirante", "Guará", "Itapoã", "Vicente Pires", "Águas Claras",
    "Estrutural", "Sol Nascente", "Jardim Botânico",
)
_DF_DESTINATIONS = (
    "Rodoviária", "Esplanada dos Ministérios", "W3 Sul", "W3 Norte", "Setor Comercial Sul",
    "Hospital de Base", "UnB", "Asa Norte",
)
_DF_RURAL = (
    "Núcleo Rural Pipiripau", "Rajadinha", "Taquara", "Lago Oeste", "Alexandre Gusmão",
    "Incra 8", "Café sem Troco", "Capão Seco", "Tabatinga", "Jardim II", "Rio Preto",
    "Vargem Bonita", "PAD-DF", "Santos Dumont", "Ponte Alta", "Córrego do Arrozal",
    "Monjolo", "Chapadinha", "Sítio das Araras",
)
_JF_NEIGHBOURHOODS = (
    "São Pedro", "Santa Luzia", "Benfica", "Bairro Industrial", "Grama", "Santos Dumont",
    "Cascatinha", "Alto dos Passos", "Granbery", "Manoel Honório", "Vitorino Braga",
    "Linhares", "Bom Pastor", "Jardim Glória", "Teixeiras", "Monte Castelo",
    "Barbosa Lage", "Nova Era", "Borboleta", "Morro da Glória", "Progresso", "Dom Bosco",
    "Ipiranga", "Vila Ideal", "São Benedito", "Santa Cândida", "Costa Carvalho",
    "Bandeirantes", "Jóquei Clube", "Cidade Universitária", "Aeroporto", "Retiro",
    "Poço Rico", "Santa Terezinha", "Milho Branco", "Francisco Bernardino",
    "Barreira do Triunfo", "Marumbi", "Floresta", "Caiçaras", "Mariano Procópio",
    "Santo Antônio", "Jardim Natal", "Parque Guarani", "Nossa Senhora Aparecida",
)
_JF_COMPANY_PREFIXES = ("Viação", "Auto Viação", "Transportes", "Empresa de Ônibus", "Expresso")
_JF_COMPANY_NAMES = (
    "São Mateus", "Ansal", "Santa Luzia", "Tusmil", "Goretti", "Princesa de Minas",
    "Paraibuna", "Mariano Procópio", "Serra da Mantiqueira", "Zona da Mata", "Imperial",
    "Santa Cruz", "Halfeld", "Morro do Imperador",
)

# (make/model, WMI, seats range, doors range, same body and chassis year)
_STPA_MODELS = (
    ("Mercedes-Benz Sprinter 416 CDI", "8AC", (14, 16), (4, 4), True),
    ("Renault Master Minibus L3H2", "93Y", (15, 16), (4, 4), True),
    ("Fiat Ducato Minibus", "9BD", (14, 16), (4, 4), True),
    ("Peugeot Boxer Minibus", "936", (14, 15), (4, 4), True),
    ("Iveco Daily 45-170 Minibus", "93Z", (12, 16), (4, 5), True),
    ("Mercedes-Benz Sprinter 415 CDI Van", "8AC", (7, 12), (4, 4), True),
)
_BUS_MODELS_STPCR = (
    ("Marcopolo Volare W9", "93P", (28, 31), (1, 2), True),
    ("Mercedes-Benz OF-1721 / Caio Apache Vip", "9BM", (40, 44), (2, 3), False),
    ("Volkswagen 17.230 OD / Marcopolo Torino", "953", (40, 44), (2, 3), False),
    ("Mercedes-Benz LO-916 / Marcopolo Senior", "9BM", (24, 28), (1, 2), False),
)
_BUS_MODELS_JF = (
    ("Mercedes-Benz OF-1721 / Caio Apache Vip", "9BM", (36, 44), (2, 3), False),
    ("Volkswagen 17.230 OD / Caio Apache Vip", "953", (38, 44), (2, 3), False),
    ("Mercedes-Benz O-500U / Caio Millennium", "9BM", (40, 48), (2, 3), False),
    ("Volkswagen 15.190 OD / Neobus Mega", "953", (36, 40), (2, 3), False),
    ("Mercedes-Benz OF-1519 / Marcopolo Torino", "9BM", (36, 42), (2, 3), False),
)

_VIN_ALPHABET = "".join(c for c in string.ascii_uppercase + string.digits if c not in "IOQ")
# Model-year code (VIN 10th character): a 30-year cycle, 1980 = A … 2000 = Y, 2001 = 1 …
# 2009 = 9, 2010 = A again.
_VIN_YEARS = "ABCDEFGHJKLMNPRSTVWXY123456789"

# Share of each kind of vehicle in the demo fleet.
_SHARE_STPA = 0.45
_SHARE_STPCR = 0.20


# --------------------------------------------------------------------------------------------
# Generators


class _FastRandom(random.Random):
    """``random.Random`` with a cheaper ``choice``: most of the seeding time went into
    ``choice`` (one call per digit of every CPF, CNH and RENAVAM). Same seed, same data."""

    def choice(self, seq: SupportsLenAndGetItem[_T]) -> _T:
        return seq[int(self.random() * len(seq))]

    def randint(self, a: int, b: int) -> int:
        # Only for spans far below 2**53, where random() has the resolution needed.
        return a + int(self.random() * (b - a + 1))


class _Gen:
    """Random choices for one seeding run, all drawn from one seeded ``random.Random``."""

    def __init__(self, seed: int, today: dt.date) -> None:
        self.rng = _FastRandom(seed)
        self.today = today
        self.plate_keys: set[str] = set()
        self.cpfs: set[str] = set()
        self.cnpjs: set[str] = set()
        self.cnhs: set[str] = set()
        self.renavams: set[str] = set()

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def name(self) -> str:
        r = self.rng
        first = r.choice(_FIRST_NAMES)
        middle = f" {r.choice(_MIDDLE_NAMES)}" if r.random() < 0.45 else ""
        last = f"{r.choice(_PARTICLES)}{r.choice(_SURNAMES)}"
        if r.random() < 0.6:
            last = f"{r.choice(_SURNAMES)} {last}"
        return f"{first}{middle} {last}"

    def cpf(self) -> str:
        while True:
            cpf = generate_cpf(self.rng)
            if cpf not in self.cpfs:
                self.cpfs.add(cpf)
                return cpf

    def cnpj(self, *, alphanumeric: bool = False) -> str:
        while True:
            cnpj = generate_cnpj(self.rng, alphanumeric=alphanumeric)
            if cnpj not in self.cnpjs:
                self.cnpjs.add(cnpj)
                return cnpj

    def cnh(self) -> str:
        while True:
            cnh = generate_cnh(self.rng)
            if cnh not in self.cnhs:
                self.cnhs.add(cnh)
                return cnh

    def renavam(self) -> str:
        while True:
            renavam = generate_renavam(self.rng)
            if renavam not in self.renavams:
                self.renavams.add(renavam)
                return renavam

    def plate(self, first: str, seconds: str, chassis_year: int) -> Plate:
        """A unique plate in the UF's letter range; old format for part of the older fleet.

        Vehicles first registered from 2019 on got Mercosul plates (5th letter A–Z); older
        ones keep the old plate or carry its converted Mercosul form (5th letter A–J).
        """
        r = self.rng
        while True:
            letters = first + r.choice(seconds) + r.choice(string.ascii_uppercase)
            digit = r.choice(string.digits)
            tail = f"{r.randint(0, 99):02d}"
            if chassis_year >= 2019:
                fifth = r.choice(string.ascii_uppercase)
                plate = Plate(f"{letters}{digit}{fifth}{tail}", "mercosul")
            elif r.random() < 0.6:
                plate = Plate(f"{letters}{digit}{r.randint(0, 9)}{tail}", "old")
            else:
                plate = Plate(f"{letters}{digit}{r.choice('ABCDEFGHIJ')}{tail}", "mercosul")
            key = plate.canonical_key()
            if key not in self.plate_keys:
                self.plate_keys.add(key)
                return plate

    def vin(self, wmi: str, year: int) -> str:
        r = self.rng
        vds = "".join(r.choice(_VIN_ALPHABET) for _ in range(6))
        year_code = _VIN_YEARS[(year - 1980) % len(_VIN_YEARS)]
        return f"{wmi}{vds}{year_code}{r.choice(_VIN_ALPHABET)}{r.randint(0, 999_999):06d}"

    def days(self, lo: int, hi: int) -> dt.date:
        """``today`` + a random number of days in [lo, hi]."""
        return self.today + dt.timedelta(days=self.rng.randint(lo, hi))

    def insurance_until(self) -> str:
        # About 10 % expired (up to ~6 months ago), the rest valid for up to a year.
        if self.chance(0.10):
            return self.days(-200, -1).isoformat()
        return self.days(1, 364).isoformat()

    def last_vistoria(self, period_months: int) -> str:
        """About 10 % overdue; the rest inside the pack's vistoria period."""
        window_start = add_months(self.today, -period_months)
        if self.chance(0.10):
            return (window_start - dt.timedelta(days=self.rng.randint(1, 120))).isoformat()
        span = (self.today - window_start).days
        last = self.today - dt.timedelta(days=self.rng.randint(0, span - 1))
        if add_months(last, period_months) < self.today:  # month-end corner: keep it valid
            last = self.today
        return last.isoformat()


def _pack_int(pack: Pack, name: str) -> int | None:
    parameter = pack.parameters.get(name)
    if parameter is None or isinstance(parameter.value, bool):
        return None
    return parameter.value if isinstance(parameter.value, int) else None


@functools.lru_cache(maxsize=64)
def _demo_hash(matricula: str, password: str) -> str:
    """argon2id at the import floor (``MINIMUM_PARAMETERS``: the device's registry import
    refuses cheaper hashes) with a salt derived from the matrícula: reproducible, computed
    once per process."""
    salt = hashlib.sha256(f"inspector-demo:{matricula}".encode()).digest()[:16]
    return hash_secret(
        password.encode(),
        salt,
        time_cost=MINIMUM_PARAMETERS.time_cost,
        memory_cost=MINIMUM_PARAMETERS.memory_cost_kib,
        parallelism=MINIMUM_PARAMETERS.parallelism,
        hash_len=HASH_LENGTH,
        type=Type.ID,
    ).decode()


def _split(total: int) -> tuple[int, int, int]:
    """Vehicles per regime (STPA, STPCR, JF): every regime gets one from 3 vehicles on."""
    if total <= 0:
        return 0, 0, 0
    stpa = max(1, round(total * _SHARE_STPA))
    stpcr = max(1 if total >= 2 else 0, round(total * _SHARE_STPCR))
    jf = total - stpa - stpcr
    if jf < 1 and total >= 3:
        stpa -= 1
        jf += 1
    return stpa, stpcr, max(jf, 0)


def _line_names(
    rng: random.Random, origins: Sequence[str], destinations: Sequence[str], count: int
) -> list[tuple[str, str]]:
    pairs = [(o, d) for o in origins for d in destinations if o != d]
    rng.shuffle(pairs)
    return pairs[: max(1, min(count, len(pairs)))]


# --------------------------------------------------------------------------------------------
# The registry


class _Registry:
    """Rows for every reference table, built in memory then written in one transaction."""

    def __init__(self, gen: _Gen) -> None:
        self.gen = gen
        self.stamp = f"{gen.today.isoformat()}T00:00:00+00:00"
        self.holders: list[dict[str, Any]] = []
        self.lines: list[dict[str, Any]] = []
        self.vehicles: list[dict[str, Any]] = []
        self.drivers: list[dict[str, Any]] = []
        self.history: list[tuple[Any, ...]] = []
        # holder id → (pack id, plate keys of its vehicles)
        self.fleet: dict[str, tuple[str, list[str]]] = {}

    # -- ids ---------------------------------------------------------------------------------
    def _holder_id(self) -> str:
        return f"H{len(self.holders) + 1:06d}"

    def _vehicle_id(self) -> str:
        return f"V{len(self.vehicles) + 1:06d}"

    def _driver_id(self) -> str:
        return f"D{len(self.drivers) + 1:07d}"

    # -- rows --------------------------------------------------------------------------------
    def add_line(self, pack_id: str, code: str, origin: str, destination: str) -> str:
        line_id = f"L{len(self.lines) + 1:04d}"
        self.lines.append(
            {
                "id": line_id,
                "code": code,
                "name": f"{origin} / {destination}",
                "pack_id": pack_id,
                "route": f"{origin} – {destination}",
                "updated_at": self.stamp,
            }
        )
        return line_id

    def add_holder(
        self,
        *,
        kind: str,
        name: str,
        cpf: str | None,
        cnpj: str | None,
        permit_number: str,
        pack_id: str,
        city: str,
        stable: bool = False,
    ) -> str:
        g = self.gen
        status = "active"
        valid_until = g.days(365, 3650)
        if not stable:
            roll = g.rng.random()
            if roll < 0.03:
                status = "suspended"
            elif roll < 0.05:
                status = "revoked"
            elif roll < 0.08:
                valid_until = g.days(-400, -1)  # active on paper, renewal overdue
        holder_id = self._holder_id()
        self.holders.append(
            {
                "id": holder_id,
                "kind": kind,
                "name": name,
                "cpf": cpf,
                "cnpj": cnpj,
                "permit_number": permit_number,
                "permit_status": status,
                "permit_valid_until": valid_until.isoformat(),
                "pack_id": pack_id,
                "city": city,
                "updated_at": self.stamp,
            }
        )
        self.fleet[holder_id] = (pack_id, [])
        return holder_id

    def add_vehicle(
        self,
        *,
        holder_id: str,
        line_id: str,
        pack: Pack,
        model: tuple[str, str, tuple[int, int], tuple[int, int], bool],
        chassis_year: int,
        body_year: int,
        uf: str,
        plate_letters: tuple[str, str],
        fleet_number: str | None,
    ) -> None:
        g = self.gen
        make_model, wmi, seats, doors, _ = model
        plate = g.plate(plate_letters[0], plate_letters[1], chassis_year)
        period = _pack_int(pack, "vistoria.period_months") or 12
        self.vehicles.append(
            {
                "id": self._vehicle_id(),
                "plate": plate.text,
                "plate_key": plate.canonical_key(),
                "renavam": g.renavam(),
                "chassis": g.vin(wmi, chassis_year),
                "make_model": make_model,
                "species": "passageiro",
                "fleet_number": fleet_number,
                "chassis_year": chassis_year,
                "body_year": body_year,
                "seats": g.rng.randint(*seats),
                "doors": g.rng.randint(*doors),
                "category": "aluguel",
                "uf": uf,
                "holder_id": holder_id,
                "line_id": line_id,
                "insurance_policy": f"{g.rng.randint(10**12, 10**13 - 1)}",
                "insurance_valid_until": g.insurance_until(),
                "last_vistoria": g.last_vistoria(period),
                "pack_id": pack.id,
                "updated_at": self.stamp,
            }
        )
        self.fleet[holder_id][1].append(plate.canonical_key())

    def add_driver(
        self,
        *,
        holder_id: str,
        role: str,
        name: str | None = None,
        cpf: str | None = None,
        unregistered_share: float = 0.0,
    ) -> None:
        g = self.gen
        registered = not g.chance(unregistered_share)
        category = "D" if g.chance(0.8) else "E"
        if not registered and g.chance(0.3):
            category = "B"  # an unregistered driver without the category for passengers
        valid_until = g.days(-120, -1) if g.chance(0.03) else g.days(30, 5 * 365)
        self.drivers.append(
            {
                "id": self._driver_id(),
                "name": name or g.name(),
                "cpf": cpf or g.cpf(),
                "cnh": g.cnh(),
                "cnh_category": category,
                "cnh_valid_until": valid_until.isoformat(),
                "holder_id": holder_id,
                "role": role,
                "registered": int(registered),
                "updated_at": self.stamp,
            }
        )


def _age_years(gen: _Gen, normal: tuple[int, int], over: tuple[int, int], p_over: float) -> int:
    lo, hi = over if gen.chance(p_over) else normal
    return gen.today.year - gen.rng.randint(lo, hi)


def _build_df_stpa(reg: _Registry, count: int) -> None:
    if count <= 0:
        return
    g, pack = reg.gen, get_pack("DF_STPA")
    pairs = _line_names(g.rng, _DF_TOWNS, _DF_DESTINATIONS, max(2, count // 20))
    lines = [
        reg.add_line(pack.id, f"0.{110 + i:03d}", origin, dest)
        for i, (origin, dest) in enumerate(pairs)
    ]
    for n in range(count):
        name = g.name()
        cpf = g.cpf()
        holder = reg.add_holder(
            kind="pf",
            name=name,
            cpf=cpf,
            cnpj=None,
            permit_number=f"STPA-{n + 1:05d}/{g.rng.randint(1998, g.today.year - 1)}",
            pack_id=pack.id,
            city=g.rng.choice(_DF_TOWNS),
        )
        # Entry at most 6 years old (Lei 194 art. 9); no maximum operating age (gap G7).
        chassis_year = g.today.year - g.rng.randint(0, 9)
        model = g.rng.choice(_STPA_MODELS)
        reg.add_vehicle(
            holder_id=holder,
            line_id=g.rng.choice(lines),
            pack=pack,
            model=model,
            chassis_year=chassis_year,
            body_year=chassis_year,
            uf="DF",
            plate_letters=("J", "DEFGHIJK"),
            fleet_number=f"{n + 1:05d}",
        )
        reg.add_driver(holder_id=holder, role="titular", name=name, cpf=cpf)
        for _ in range(g.rng.choice((0, 1, 1, 2))):  # up to 3 drivers (Lei 194 art. 8)
            reg.add_driver(holder_id=holder, role="auxiliar", unregistered_share=0.08)


def _build_df_stpcr(reg: _Registry, count: int) -> None:
    if count <= 0:
        return
    g, pack = reg.gen, get_pack("DF_STPCR")
    pairs = _line_names(g.rng, _DF_RURAL, _DF_TOWNS, max(2, count // 15))
    lines = [
        reg.add_line(pack.id, f"0.{610 + i:03d}", origin, dest)
        for i, (origin, dest) in enumerate(pairs)
    ]
    made = 0
    number = 0
    while made < count:
        number += 1
        owner, owner_cpf = g.name(), g.cpf()
        if g.chance(0.3):  # microempreendedor individual: the company name starts with the CNPJ
            cnpj = g.cnpj(alphanumeric=g.chance(0.25))
            holder = reg.add_holder(
                kind="pj",
                name=f"{cnpj[:2]}.{cnpj[2:5]}.{cnpj[5:8]} {owner}",
                cpf=owner_cpf,
                cnpj=cnpj,
                permit_number=f"STPCR-{number:04d}",
                pack_id=pack.id,
                city=g.rng.choice(_DF_TOWNS),
            )
        else:
            holder = reg.add_holder(
                kind="pf",
                name=owner,
                cpf=owner_cpf,
                cnpj=None,
                permit_number=f"STPCR-{number:04d}",
                pack_id=pack.id,
                city=g.rng.choice(_DF_TOWNS),
            )
        line = g.rng.choice(lines)
        # One operational vehicle and sometimes a reserve (Dec. 15.154 art. 24).
        for slot in range(2 if g.chance(0.3) and made + 1 < count else 1):
            chassis_year = _age_years(g, (0, 8), (9, 12), 0.08)
            body_year = min(g.today.year, chassis_year + g.rng.choice((0, 0, 1)))
            reg.add_vehicle(
                holder_id=holder,
                line_id=line,
                pack=pack,
                model=g.rng.choice(_BUS_MODELS_STPCR),
                chassis_year=chassis_year,
                body_year=body_year,
                uf="DF",
                plate_letters=("J", "DEFGHIJK"),
                fleet_number=f"R{number:04d}{'-R' if slot else ''}",
            )
            made += 1
        reg.add_driver(holder_id=holder, role="titular", name=owner, cpf=owner_cpf)
        for _ in range(g.rng.choice((0, 1, 2))):  # up to 2 substitutes (art. 18 I, 19)
            reg.add_driver(holder_id=holder, role="substituto", unregistered_share=0.08)


def _build_jf(reg: _Registry, count: int) -> None:
    if count <= 0:
        return
    g, pack = reg.gen, get_pack("JF_1972")
    companies = max(min(3, count), count // 120)
    holders = []
    for i in range(companies):
        base = _JF_COMPANY_NAMES[i % len(_JF_COMPANY_NAMES)]
        prefix = _JF_COMPANY_PREFIXES[(i // len(_JF_COMPANY_NAMES)) % len(_JF_COMPANY_PREFIXES)]
        generation = i // (len(_JF_COMPANY_NAMES) * len(_JF_COMPANY_PREFIXES))
        suffix = f" {generation + 1}" if generation else ""
        holders.append(
            reg.add_holder(
                kind="pj",
                name=f"{prefix} {base}{suffix} Ltda.",
                cpf=None,
                cnpj=g.cnpj(alphanumeric=False),
                permit_number=f"CONC-{i + 1:03d}/{g.rng.randint(1975, 2005)}",
                pack_id=pack.id,
                city="Juiz de Fora",
                stable=True,
            )
        )
    # Radial lines to the Centro first, then neighbourhood to neighbourhood; every company
    # operates at least one line.
    wanted = max(2, companies, count // 10)
    pairs = _line_names(g.rng, _JF_NEIGHBOURHOODS, ("Centro",), wanted)
    if wanted > len(pairs):
        pairs += _line_names(g.rng, _JF_NEIGHBOURHOODS, _JF_NEIGHBOURHOODS, wanted - len(pairs))
    codes = g.rng.sample(range(100, 1000), k=min(len(pairs), 900))
    company_lines: dict[str, list[str]] = {h: [] for h in holders}
    for i, ((origin, dest), code) in enumerate(zip(pairs, codes, strict=False)):
        company_lines[holders[i % companies]].append(reg.add_line(pack.id, str(code), origin, dest))
    for n in range(count):
        holder = holders[n % companies]
        lines = company_lines[holder]
        body_age = g.rng.randint(0, 7)
        chassis_age = body_age + g.rng.choice((0, 0, 1))
        if g.chance(0.07):  # over-age: body beyond 8 years, sometimes chassis beyond 12
            body_age = g.rng.randint(9, 11)
            chassis_age = body_age + g.rng.randint(0, 4)
        reg.add_vehicle(
            holder_id=holder,
            line_id=g.rng.choice(lines),
            pack=pack,
            model=g.rng.choice(_BUS_MODELS_JF),
            chassis_year=g.today.year - chassis_age,
            body_year=g.today.year - body_age,
            uf="MG",
            plate_letters=("H", "ABCDEFGHIJKLMN"),
            fleet_number=f"{(n % companies) + 1}{n // companies + 1:04d}",
        )
        for _ in range(1 if g.chance(0.5) else 2):
            reg.add_driver(holder_id=holder, role="motorista", unregistered_share=0.04)


_HISTORY_COLUMNS = (
    "id", "holder_id", "plate_key", "rule_id", "date", "status", "points", "auto_number",
    "updated_at",
)


def _history_rules(pack_ids: Iterable[str]) -> dict[str, list[tuple[str, int | None]]]:
    """Selectable rules per pack with the group's base points (None where the regime has
    no points, as in Juiz de Fora)."""
    out: dict[str, list[tuple[str, int | None]]] = {}
    for pack_id in sorted(set(pack_ids)):
        try:
            pack = get_pack(pack_id)
        except KeyError:
            continue
        entries = []
        for rule in pack.rules.values():
            if not rule.selectable or rule.group is None:
                continue
            group = pack.groups.get(rule.group)
            points = None
            if group is not None and group.points_parameter:
                points = _pack_int(pack, group.points_parameter)
            entries.append((rule.id, points))
        if entries:
            out[pack_id] = entries
    return out


def _history_rows(
    gen: _Gen,
    fleet: dict[str, tuple[str, list[str]]],
    rows: int | None,
    *,
    id_prefix: str,
    stamp: str,
    auto_tag: str = "",
) -> list[tuple[Any, ...]]:
    """Past autos for holders of ``fleet`` (holder → pack, plate keys), as table tuples.

    ``rows=None``: about 15 % of the holders get 1–4 autos; else exactly ``rows`` autos
    spread at random. Dates within the last two years; 70 % upheld, 20 % pending, 10 %
    cancelled (cancelled autos carry no points).
    """
    rules = _history_rules(pack for pack, _ in fleet.values())
    holders = [h for h, (pack, plates) in fleet.items() if plates and pack in rules]
    if not holders:
        return []
    rnd = gen.rng.random
    if rows is None:
        plan: Iterable[str] = (
            h for h in holders if rnd() < 0.15 for _ in range(gen.rng.randint(1, 4))
        )
    else:
        plan = (holders[int(rnd() * len(holders))] for _ in range(rows))
    days = [gen.today - dt.timedelta(days=k) for k in range(1, 731)]
    dates = [(d.isoformat(), d.year) for d in days]
    prefixes = {pack: pack.split("_")[0] for pack in rules}
    out: list[tuple[Any, ...]] = []
    for n, holder_id in enumerate(plan, start=1):
        pack_id, plates = fleet[holder_id]
        choices = rules[pack_id]
        rule_id, points = choices[int(rnd() * len(choices))]
        roll = rnd()
        status = "upheld" if roll < 0.7 else "pending" if roll < 0.9 else "cancelled"
        date, year = dates[int(rnd() * len(dates))]
        out.append(
            (
                f"{id_prefix}{n:08d}",
                holder_id,
                plates[int(rnd() * len(plates))],
                rule_id,
                date,
                status,
                None if status == "cancelled" else points,
                f"{prefixes[pack_id]}-{year}-{auto_tag}{n:07d}",
                stamp,
            )
        )
    return out


def _inspector_rows(stamp: str) -> list[dict[str, Any]]:
    return [
        {
            "id": f"I{i.matricula}",
            "matricula": i.matricula,
            "name": i.name,
            "role": i.role,
            "password_hash": _demo_hash(i.matricula, i.password),
            "organ": i.organ,
            "active": int(i.active),
            "updated_at": stamp,
        }
        for i in DEMO_INSPECTORS
    ]


# --------------------------------------------------------------------------------------------
# Entry points

_CLEAR_ORDER = (
    "ref_history",
    "ref_drivers",
    "ref_vehicles",
    "ref_lines",
    "ref_permit_holders",
    "ref_inspectors",
)


def _json_value(value: object) -> str:
    def default(obj: object) -> object:
        if isinstance(obj, Decimal):
            return str(obj)
        if isinstance(obj, dt.date):
            return obj.isoformat()
        raise TypeError(f"cannot serialise {type(obj).__name__}")

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=default)


@contextmanager
def _large_cache(store: Store) -> Iterator[None]:
    """A 128 MiB page cache while seeding: index pages of big tables stay in memory
    instead of being spilled and re-read (a quarter faster for 1,000,000 history rows)."""
    previous = store.conn.execute("PRAGMA cache_size").fetchone()[0]
    store.conn.execute("PRAGMA cache_size = -131072")
    try:
        yield
    finally:
        store.conn.execute(f"PRAGMA cache_size = {int(previous)}")


def _insert(db: Database, table: str, rows: list[dict[str, Any]], *, replace: bool = False) -> None:
    """One prepared INSERT over every row (the caller holds the transaction).

    ``executemany`` rather than sqlite-utils ``insert_all``: for 100,000 vehicles (about
    350,000 rows in all) it writes in 6 s where ``insert_all`` took 14 s, because
    ``insert_all`` inspects every value of every row in Python.
    """
    if rows:
        columns = tuple(rows[0])
        values = [tuple(row[c] for c in columns) for row in rows]
        _insert_tuples(db, table, columns, values, replace=replace)


def _insert_tuples(
    db: Database,
    table: str,
    columns: Sequence[str],
    rows: Sequence[tuple[Any, ...]],
    *,
    replace: bool = False,
) -> None:
    verb = "INSERT OR REPLACE" if replace else "INSERT"
    sql = f"{verb} INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
    db.conn.executemany(sql, rows)


def _write_parameters(db: Database, stamp: str) -> dict[str, int]:
    versions: list[dict[str, Any]] = []
    parameters: list[dict[str, Any]] = []
    for listing in list_packs():
        if listing.problems:
            continue
        pack = get_pack(listing.id)
        versions.append(
            {
                "pack_id": pack.id,
                "version": pack.meta.version,
                "content_hash": pack.content_hash,
                "published_at": pack.meta.effective_from.isoformat(),
            }
        )
        parameters += [
            {
                "pack_id": pack.id,
                "name": p.name,
                "value_json": _json_value(p.value),
                "updated_at": stamp,
            }
            for p in pack.parameters.values()
        ]
    _insert(db, "ref_pack_versions", versions, replace=True)
    _insert(db, "ref_parameters", parameters, replace=True)
    return {"pack_versions": len(versions), "parameters": len(parameters)}


def seed_parameters(store: Store) -> dict[str, int]:
    """Copy every valid pack's version, content hash and parameters into the reference
    tables (``ref_pack_versions``, ``ref_parameters``), as HQ would publish them."""
    with store.atomic() as db:
        return _write_parameters(db, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"))


def seed_registry(
    store: Store,
    *,
    vehicles: int = 200,
    seed: int = 1,
    today: dt.date | None = None,
    history: int | None = None,
    replace: bool = False,
) -> dict[str, int]:
    """Replace the registry with a demo one of ``vehicles`` vehicles; rows per table.

    ``history`` fixes the number of infraction-history rows (default: 1–4 for about 15 %
    of the holders). Refuses (:class:`StoreError`) to overwrite a registry that did not
    come from a previous demo seed unless ``replace=True``. One transaction: all or
    nothing.
    """
    if vehicles < 0:
        raise ValueError("vehicles must be >= 0")
    day = today or dt.date.today()
    existing = sum(
        n for name, n in counts(store).items() if name not in ("parameters", "pack_versions")
    )
    if existing and store.meta("registry_source") not in (None, "demo") and not replace:
        raise StoreError(
            "the registry holds imported data; pass replace=True to overwrite it with demo data",
            "O cadastro contém dados importados da sede. Para substituí-lo por dados de "
            "demonstração, confirme a substituição (--replace).",
        )
    gen = _Gen(seed, day)
    reg = _Registry(gen)
    stpa, stpcr, jf = _split(vehicles)
    _build_df_stpa(reg, stpa)
    _build_df_stpcr(reg, stpcr)
    _build_jf(reg, jf)
    reg.history = _history_rows(gen, reg.fleet, history, id_prefix="HI", stamp=reg.stamp)
    inspectors = _inspector_rows(reg.stamp)
    with _large_cache(store), store.atomic() as db:
        for table in _CLEAR_ORDER:
            db.execute(f"DELETE FROM {table}")
        _insert(db, "ref_permit_holders", reg.holders)
        _insert(db, "ref_lines", reg.lines)
        _insert(db, "ref_vehicles", reg.vehicles)
        _insert(db, "ref_drivers", reg.drivers)
        _insert(db, "ref_inspectors", inspectors)
        _insert_tuples(db, "ref_history", _HISTORY_COLUMNS, reg.history)
        written = _write_parameters(db, reg.stamp)
        store.set_meta("registry_source", "demo")
        store.set_meta(
            "demo_seed", json.dumps({"seed": seed, "vehicles": vehicles, "today": day.isoformat()})
        )
    return {
        "permit_holders": len(reg.holders),
        "lines": len(reg.lines),
        "vehicles": len(reg.vehicles),
        "drivers": len(reg.drivers),
        "inspectors": len(inspectors),
        "history": len(reg.history),
        **written,
    }


def seed_history(
    store: Store, *, rows: int, seed: int = 1, today: dt.date | None = None
) -> int:
    """Add ``rows`` demo infraction-history rows for the holders and plates already in the
    registry (demo or imported); returns the number written.

    Ids are ``HS<seed>-…``: the same call again rewrites the same rows rather than adding
    more. One transaction.
    """
    if rows < 0:
        raise ValueError("rows must be >= 0")
    day = today or dt.date.today()
    fleet: dict[str, tuple[str, list[str]]] = {}
    for holder_id, pack_id, plate_key in store.conn.execute(
        "SELECT v.holder_id, h.pack_id, v.plate_key FROM ref_vehicles v "
        "JOIN ref_permit_holders h ON h.id = v.holder_id ORDER BY v.holder_id, v.plate_key"
    ):
        fleet.setdefault(holder_id, (pack_id, []))[1].append(plate_key)
    stamp = f"{day.isoformat()}T00:00:00+00:00"
    history = _history_rows(
        _Gen(seed, day), fleet, rows, id_prefix=f"HS{seed}-", stamp=stamp, auto_tag=f"S{seed}-"
    )
    with _large_cache(store), store.atomic() as db:
        _insert_tuples(db, "ref_history", _HISTORY_COLUMNS, history, replace=True)
    return len(history)
