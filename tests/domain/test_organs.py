"""Packs offered by the inspector's órgão (issue 11, "Must not mislead")."""

from __future__ import annotations

import pytest

from inspector_app.domain.organs import (
    PackChoice,
    organ_jurisdiction,
    packs_for_organ,
    start_of_operation_label,
)
from inspector_app.packs import get_pack

PACKS = [
    PackChoice("DF_STPA", "DF", "SEMOB-DF"),
    PackChoice("DF_STPCR", "DF", "SEMOB-DF"),
    PackChoice("JF_1972", "JF", "SMU Juiz de Fora"),
]


@pytest.mark.parametrize(
    ("organ", "offered", "why"),
    [
        ("SEMOB-DF", ["DF_STPA", "DF_STPCR"], "the DF packs' own órgão"),
        ("SETTRA-JF", ["JF_1972"], "SETTRA, SMU's predecessor (Lei 13.830/2019): JF word"),
        ("SMU Juiz de Fora", ["JF_1972"], "the JF pack's own órgão"),
        ("Secretaria de Mobilidade de Juiz de Fora", ["JF_1972"], "the city's name"),
        (None, ["DF_STPA", "DF_STPCR", "JF_1972"], "no órgão: nothing hidden by a guess"),
        ("DETRAN-SP", ["DF_STPA", "DF_STPCR", "JF_1972"], "unknown órgão: every pack"),
    ],
)
def test_packs_are_offered_by_the_inspectors_organ(organ, offered, why):
    assert packs_for_organ(organ, PACKS) == offered, why


def test_a_word_inside_another_word_is_not_a_jurisdiction():
    assert organ_jurisdiction("DFTRANS", ["DF", "JF"]) is None
    assert organ_jurisdiction("DFTrans-DF", ["DF", "JF"]) == "DF"


def test_the_start_of_operation_question_exists_only_where_a_ground_depends_on_it():
    # DF art. 37, V: retention at the start of the day's operation; JF has no retention.
    assert start_of_operation_label(get_pack("DF_STPCR").measure.grounds.values()) == \
        "Início da operação do dia (art. 37, V)"
    assert start_of_operation_label(get_pack("JF_1972").measure.grounds.values()) is None
