"""Every rule ID and checklist item of RULES.md (§A1, §C) exists in its pack, as the digest says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector_app.packs import get_pack

RULES_MD = Path(__file__).resolve().parents[3] / "shared" / "domain" / "RULES.md"

pytestmark = pytest.mark.skipif(
    not RULES_MD.exists(), reason=f"{RULES_MD} not found (shared/ lies beside the checkout)"
)


def _section(text: str, start: str, end: str) -> str:
    return text[text.index(start) : text.index(end)]


def _rows(section: str, prefix: str) -> list[list[str]]:
    rows = []
    for line in section.splitlines():
        if line.startswith(f"| {prefix}"):
            rows.append([c.strip().strip("*").strip() for c in line.strip("|").split("|")])
    return rows


def _text() -> str:
    return RULES_MD.read_text(encoding="utf-8")


def df_rows() -> list[list[str]]:
    return _rows(_section(_text(), "### A1.2", "### A1.4"), "DF15154.")


def jf_rows() -> list[list[str]]:
    return _rows(_section(_text(), "### A1.5", "## A2."), "JF1235.")


def checklist_ids(prefix: str) -> list[str]:
    section = _section(_text(), "## C. Inspection checklists", "### C3.")
    return re.findall(rf"^\| ({prefix}-[A-Z]+-\d+) \|", section, flags=re.M)


@pytest.mark.parametrize("pack_id", ["DF_STPCR", "DF_STPA"])
def test_every_df_rule_of_rules_md_is_in_the_pack_with_its_group(pack_id: str) -> None:
    pack = get_pack(pack_id)
    rows = df_rows() if RULES_MD.exists() else []
    assert len(rows) == 46  # art. 29 I–XXIV and art. 30 I–XXII
    for cells in rows:
        rule_id, group = cells[0], cells[3]
        rule = pack.rules[rule_id]
        if group == "?":  # art. 30 III, missing in the text (G2)
            assert not rule.selectable and rule.status == "missing_in_text"
        else:
            assert rule.group == group, rule_id
            assert rule.selectable
        assert rule.analogy is (pack_id == "DF_STPA")


def test_every_jf_code_of_rules_md_is_in_the_pack_with_its_group() -> None:
    pack = get_pack("JF_1972")
    rows = jf_rows() if RULES_MD.exists() else []
    assert len(rows) == 76
    for cells in rows:
        rule_id, group = cells[0], cells[-1]
        rule = pack.rules[rule_id]
        if group.startswith("E"):
            assert rule.group == group, rule_id
        elif "cassação" in group:
            assert rule.penalty == "cassacao_registro_profissional", rule_id
        else:
            assert rule.penalty == "defined_by_authority", rule_id


@pytest.mark.parametrize(
    ("pack_id", "prefix", "missing"),
    [
        ("DF_STPA", "DF", set()),
        ("DF_STPCR", "DF", {"DF-DOC-02", "DF-CFG-01", "DF-CFG-02"}),  # STPA-only items
        ("JF_1972", "JF", set()),
    ],
)
def test_every_checklist_item_of_rules_md_is_in_the_pack(
    pack_id: str, prefix: str, missing: set[str]
) -> None:
    expected = set(checklist_ids(prefix)) if RULES_MD.exists() else set()
    assert len(expected) > 30
    assert set(get_pack(pack_id).items) == expected - missing


@pytest.mark.parametrize(
    ("pack_id", "item_id", "rules", "retention"),
    [
        # G33 / art. 32 §2: one fact (an unregistered driver), one penalty: 30.I only
        ("DF_STPCR", "DF-DOC-08", ("DF15154.30.I",), ("DF15154.37.I",)),
        ("DF_STPCR", "DF-SEG-02", ("DF15154.29.XIII",), ("DF15154.37.IV",)),
        ("DF_STPCR", "DF-DOC-04", ("DF15154.29.XX",), ("DF15154.37.IX",)),
        ("DF_STPCR", "DF-DOC-13", ("DF15154.29.XII",), ("DF15154.37.III",)),
        ("DF_STPCR", "DF-DOOR-02", ("DF15154.30.XV",), ()),
        ("DF_STPA", "DF-OPS-01", ("DF15154.30.XVI",), ()),
        ("JF_1972", "JF-SEG-01", ("JF1235.2.4.13",), ()),
        ("JF_1972", "JF-SEG-03", ("JF1235.2.4.5",), ()),
    ],
)
def test_checklist_item_fail_maps_to_rules_and_grounds_of_rules_md_c(
    pack_id: str, item_id: str, rules: tuple[str, ...], retention: tuple[str, ...]
) -> None:
    item = get_pack(pack_id).items[item_id]
    assert (item.fail, item.retention) == (rules, retention)


def test_every_assumption_of_rules_md_gaps_is_a_named_parameter() -> None:
    gaps = {
        "DF_STPCR": {"G1", "G8", "G10", "G11", "G12", "G13", "G15", "G16", "G19", "G20"},
        "DF_STPA": {"G1", "G7", "G8", "G9", "G10", "G11", "G12", "G13", "G15", "G16", "G19", "G20"},
        "JF_1972": {"G10", "G25", "G27", "G28"},
    }
    for pack_id, expected in gaps.items():
        params = get_pack(pack_id).parameters.values()
        found = {p.gap for p in params if p.assumption}
        assert expected <= found, (pack_id, expected - found)
        assert all(p.note for p in params if p.assumption)
