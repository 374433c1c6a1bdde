"""Regulation packs in forms/: loading, content hash, and the problems a broken pack reports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from inspector_app.packs import PACK_FILES, PackError, content_hash, get_pack, load_pack, validate

REPO_ROOT = Path(__file__).resolve().parent.parent
FORMS = REPO_ROOT / "forms"
SHIPPED_PACKS = ("DF_STPA", "DF_STPCR", "JF_1972")

Mutation = Callable[[Path], None]


def inspector(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "INSPECTOR_FORMS_DIR"}
    return subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", *args],
        capture_output=True, text=True, encoding="utf-8", cwd=REPO_ROOT, env=env, timeout=120,
        check=False,
    )


def copy_pack(pack: str, tmp_path: Path) -> Path:
    """A copy of a shipped pack in a folder of the same name (pack.id must match it)."""
    return Path(shutil.copytree(FORMS / pack, tmp_path / pack))


# --- mutations: each fails loudly if the text it edits is not where the test expects it ------


def set_key(file: str, anchor: str, key: str, value: str) -> Mutation:
    """In the table whose lines include ``anchor``, replace the line ``key = …`` by ``key = value``.

    The search starts at the anchor line and stops at the next table header.
    """

    def mutate(pack_dir: Path) -> None:
        path = pack_dir / file
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        starts = [i for i, line in enumerate(lines) if line.strip() == anchor]
        assert len(starts) == 1, f"{anchor!r} is not one line of {file}"
        for i in range(starts[0], len(lines)):
            if i > starts[0] and lines[i].startswith("["):
                break
            if lines[i].startswith(f"{key} = "):
                lines[i] = f"{key} = {value}\n"
                path.write_text("".join(lines), encoding="utf-8")
                return
        raise AssertionError(f"no {key!r} after {anchor!r} in {file}")

    return mutate


def append(file: str, text: str) -> Mutation:
    def mutate(pack_dir: Path) -> None:
        path = pack_dir / file
        before = path.read_text(encoding="utf-8")
        path.write_text(before + "\n" + text, encoding="utf-8")

    return mutate


def prepend(file: str, text: str) -> Mutation:
    def mutate(pack_dir: Path) -> None:
        path = pack_dir / file
        path.write_text(text + path.read_text(encoding="utf-8"), encoding="utf-8")

    return mutate


def remove(file: str) -> Mutation:
    def mutate(pack_dir: Path) -> None:
        (pack_dir / file).unlink()

    return mutate


# --- the shipped packs --------------------------------------------------------------------------


@pytest.mark.parametrize("pack", SHIPPED_PACKS)
def test_every_shipped_pack_loads_with_its_own_id_and_content_hash(pack: str) -> None:
    loaded = get_pack(pack)
    assert loaded.meta.id == pack
    assert loaded.content_hash == content_hash(FORMS / pack)
    assert loaded.rules and loaded.items and loaded.deadlines


def test_validate_finds_the_three_shipped_packs_without_problems() -> None:
    assert validate() == {pack: [] for pack in SHIPPED_PACKS}


def test_content_hash_is_the_same_on_every_load_and_for_a_byte_identical_copy(
    tmp_path: Path,
) -> None:
    copy = copy_pack("DF_STPCR", tmp_path)
    first = load_pack(FORMS / "DF_STPCR").content_hash
    assert load_pack(FORMS / "DF_STPCR").content_hash == first
    assert load_pack(copy).content_hash == first
    assert content_hash(copy) == content_hash(FORMS / "DF_STPCR") == first


@pytest.mark.parametrize("file", PACK_FILES)
def test_content_hash_changes_when_one_byte_of_any_pack_file_changes(
    file: str, tmp_path: Path
) -> None:
    copy = copy_pack("DF_STPCR", tmp_path)
    before = content_hash(copy)
    data = bytearray((copy / file).read_bytes())
    data[len(data) // 2] ^= 0x01
    (copy / file).write_bytes(bytes(data))
    assert content_hash(copy) != before


def test_get_pack_reloads_a_pack_whose_files_changed_since_it_was_cached(tmp_path: Path) -> None:
    copy = copy_pack("DF_STPCR", tmp_path)
    assert get_pack("DF_STPCR", tmp_path).meta.version == "2026.1"
    set_key("pack.toml", "[pack]", "version", '"2026.2"')(copy)
    reloaded = get_pack("DF_STPCR", tmp_path)
    assert reloaded.meta.version == "2026.2"
    assert reloaded.content_hash == content_hash(copy)


# --- broken packs: every problem names its file and key ----------------------------------------

BROKEN = [
    pytest.param(
        "DF_STPCR", remove("calendar.toml"),
        ("calendar.toml", "-", "file missing"), id="missing-file",
    ),
    pytest.param(
        "DF_STPCR", append("deadlines.toml", "[[deadlines]\nkind = \"x\"\n"),
        ("deadlines.toml", "-", "invalid TOML"), id="invalid-toml",
    ),
    pytest.param(
        "DF_STPCR", set_key("pack.toml", "[pack]", "id", '"DF_OUTRO"'),
        ("pack.toml", "pack.id", "must equal the folder name"), id="id-not-folder",
    ),
    pytest.param(
        "DF_STPCR", set_key("checklist.toml", 'id = "DF-SEG-02"', "fail", '["DF15154.29.XIIII"]'),
        ("checklist.toml", "items[DF-SEG-02].fail[0]", "unknown rule 'DF15154.29.XIIII'"),
        id="item-fails-unknown-rule",
    ),
    pytest.param(
        "DF_STPCR", set_key("checklist.toml", 'id = "DF-SEG-02"', "fail", '["DF15154.30.III"]'),
        ("checklist.toml", "items[DF-SEG-02].fail[0]", "not selectable"),
        id="item-fails-unselectable-30-III",
    ),
    pytest.param(
        "DF_STPCR", set_key("infractions.toml", 'id = "DF15154.29.XIII"', "group", '"Z"'),
        ("infractions.toml", "rules[DF15154.29.XIII].group", "unknown group 'Z'"),
        id="rule-unknown-group",
    ),
    pytest.param(
        "DF_STPCR",
        set_key("infractions.toml", 'id = "DF15154.30.I"', "retention", '["DF15154.37.X"]'),
        ("infractions.toml", "rules[DF15154.30.I].retention[0]", "unknown retencao ground"),
        id="rule-retention-unknown-ground",
    ),
    pytest.param(
        "DF_STPCR", set_key("checklist.toml", 'id = "DF-SEG-02"', "section", '"cozinha"'),
        ("checklist.toml", "items[DF-SEG-02].section", "unknown section 'cozinha'"),
        id="item-unknown-section",
    ),
    pytest.param(
        "DF_STPCR",
        set_key("vehicle.toml", 'id = "idade_chassi"', "parameters",
                '["vehicle.max_age_chassi_years"]'),
        ("vehicle.toml", "checks[idade_chassi].parameters[0]", "unknown parameter"),
        id="vehicle-check-unknown-parameter",
    ),
    pytest.param(
        "DF_STPCR", set_key("parameters.toml", '[parameters."points.group_a"]', "note", '""'),
        ("parameters.toml", "parameters.points.group_a.note", "must say what is presumed"),
        id="assumption-without-note",
    ),
    pytest.param(
        "DF_STPCR",
        append("parameters.toml", '[[tables.tariff_brl]]\nfrom = "2010-01-01"\nvalue = "2.00"\n'),
        ("parameters.toml", "tables.tariff_brl", "strictly increasing"),
        id="dated-table-out-of-order",
    ),
    pytest.param(
        "DF_STPCR", set_key("deadlines.toml", 'kind = "defesa"', "unit", '"weeks"'),
        ("deadlines.toml", "deadlines[defesa].unit", "must be one of"),
        id="deadline-bad-unit",
    ),
    pytest.param(
        "DF_STPCR",
        set_key("infractions.toml", 'id = "DF15154.29.XIV"', "id", '"DF15154.29.XIII"'),
        ("infractions.toml", "rules[DF15154.29.XIII]", "duplicate rule id"),
        id="duplicate-rule-id",
    ),
    pytest.param(
        "DF_STPCR", append("calendar.toml", '[[holidays]]\ndate = "13-45"\nname = "Impossível"\n'),
        ("calendar.toml", "holidays[0].date", "expected MM-DD or YYYY-MM-DD"),
        id="holiday-13-45",
    ),
    pytest.param(
        "JF_1972", set_key("calendar.toml", 'date = "06-13"', "date", '"13-45"'),
        ("calendar.toml", "holidays[0].date", "expected MM-DD or YYYY-MM-DD"),
        id="jf-holiday-13-45",
    ),
    pytest.param(
        "DF_STPCR", set_key("infractions.toml", 'id = "DF15154.30.I"', "retention",
                            '["DF15154.37.I"]\nretenton = ["DF15154.37.II"]'),
        ("infractions.toml", "rules[DF15154.30.I].retenton", "unknown key"),
        id="misspelled-key-is-not-ignored",
    ),
    pytest.param(  # G33 alternatives must name rules of the catalogue
        "DF_STPCR",
        append("infractions.toml", '[[alternatives]]\nrules = ["DF15154.30.I", "DF15154.29.XXXX"]'
               '\nbasis = "art. 32, §2º"\n'),
        ("infractions.toml", "alternatives[6].rules[1]", "unknown rule 'DF15154.29.XXXX'"),
        id="alternative-unknown-rule",
    ),
    pytest.param(
        "DF_STPCR",
        append("infractions.toml", '[[alternatives]]\nrules = ["DF15154.30.I"]'
               '\nbasis = "art. 32, §2º"\n'),
        ("infractions.toml", "alternatives[6].rules", "at least two rules"),
        id="alternative-of-one-rule",
    ),
    pytest.param(
        "DF_STPCR", append("calendar.toml", '[[exceptions]]\ndate = "2026-12-24"\n'
                           'kind = "half"\nname = "x"\ndecree = "d"\n'),
        ("calendar.toml", "exceptions[0].kind", "must be one of"),
        id="calendar-exception-bad-kind",
    ),
    pytest.param(
        "DF_STPCR", prepend("vehicle.toml", "verificacoes = []\n"),
        ("vehicle.toml", "verificacoes", "unknown key"),
        id="unknown-top-level-key",
    ),
]


@pytest.mark.parametrize(("pack", "mutation", "expected"), BROKEN)
def test_a_broken_pack_is_refused_naming_the_file_and_key(
    pack: str, mutation: Mutation, expected: tuple[str, str, str], tmp_path: Path
) -> None:
    copy = copy_pack(pack, tmp_path)
    mutation(copy)
    file, key, message = expected
    with pytest.raises(PackError) as raised:
        load_pack(copy)
    found = [(p.file, p.key, p.message) for p in raised.value.problems]
    assert any(f == file and k == key and message in m for f, k, m in found), found


@pytest.mark.parametrize(("pack", "mutation", "expected"), BROKEN)
def test_packs_validate_exits_1_printing_the_file_and_key_of_a_broken_pack(
    pack: str, mutation: Mutation, expected: tuple[str, str, str], tmp_path: Path
) -> None:
    copy = copy_pack(pack, tmp_path)
    mutation(copy)
    file, key, message = expected
    result = inspector("packs", "validate", str(copy))
    assert result.returncode == 1, result.stdout
    assert "Traceback" not in result.stderr
    assert any(
        f"{pack}/{file}: {key}: " in line and message in line
        for line in result.stdout.splitlines()
    ), result.stdout


def test_packs_validate_of_a_folder_that_does_not_exist_exits_2(tmp_path: Path) -> None:
    result = inspector("packs", "validate", str(tmp_path / "nao_existe"))
    assert (result.returncode, result.stdout) == (2, "")
    assert "nao_existe" in result.stderr and "Traceback" not in result.stderr


def test_packs_validate_of_an_empty_folder_exits_1_saying_no_packs_found(tmp_path: Path) -> None:
    result = inspector("packs", "validate", str(tmp_path))
    assert result.returncode == 1
    assert "no packs found" in result.stderr
