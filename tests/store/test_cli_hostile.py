"""Issue 14, finding 13: hostile input to the device CLI gets one clear line and exit 2,
never a traceback; the registry import refuses what it used to store or count wrongly.

Every case runs the real ``inspector`` in a subprocess over a real (encrypted) store.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_store_cli import REPO_ROOT, inspector

from inspector_app.security.passwords import (
    FAST_PARAMETERS,
    MINIMUM_PARAMETERS,
    hash_password,
)
from inspector_app.store.db import DB_NAME, StoreFullError, connect_data_dir, open_store
from inspector_app.store.registry_import import MAX_LISTED

HOLDERS_HEADER = "id,kind,name,cpf,cnpj,permit_number,permit_status,pack_id\n"


def _count(data_dir: Path, table: str) -> int:
    if not (data_dir / DB_NAME).exists():
        return 0
    conn = connect_data_dir(data_dir, readonly=True)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def _one_line_exit_2(result: subprocess.CompletedProcess[str], says: str) -> None:
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines()
             if "permissions narrowed" not in line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("inspector: ") and says in lines[0], lines[0]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- whole files refused: exit 2, one line, nothing of the file written ----------------------

def csv_field_over_the_limit(tmp: Path) -> Path:
    return _write(tmp / "permit_holders.csv", HOLDERS_HEADER
                  + "H0,pf,Ana Souza,169.440.601-67,,P0,active,DF_STPCR\n"
                  + f'H1,pf,"{"x" * 140_000}",169.440.601-67,,P1,active,DF_STPCR\n')


def csv_line_over_a_mebibyte(tmp: Path) -> Path:
    return _write(tmp / "permit_holders.csv", HOLDERS_HEADER
                  + "H0,pf,Ana Souza,169.440.601-67,,P0,active,DF_STPCR\n" + "x," * 600_000)


def json_nested_deeply(tmp: Path) -> Path:
    return _write(tmp / "cadastro.json", '{"lines": [{"id": "L1", "code": "1", "name": "A", '
                  '"pack_id": "DF_STPCR"}], "x": ' + "[" * 100_000 + "]" * 100_000 + "}")


def json_naming_a_table_twice(tmp: Path) -> Path:
    one = '[{"id": "L1", "code": "1", "name": "Linha 1", "pack_id": "DF_STPCR"}]'
    two = '[{"id": "L2", "code": "2", "name": "Linha 2", "pack_id": "DF_STPCR"}]'
    return _write(tmp / "cadastro.json", f'{{"lines": {one}, "lines": {two}}}')


def json_repeating_a_field(tmp: Path) -> Path:
    return _write(tmp / "cadastro.json", '{"lines": [{"id": "L1", "code": "1", "name": "A", '
                  '"name": "B", "pack_id": "DF_STPCR"}]}')


def json_over_the_size_limit(tmp: Path) -> Path:
    row = {"id": "L", "code": "1", "name": "n" * 1000, "pack_id": "DF_STPCR"}
    path = tmp / "cadastro.json"
    with path.open("w", encoding="utf-8") as f:
        f.write('{"lines": [')
        f.write(",".join(json.dumps({**row, "id": f"L{i}"}) for i in range(17_000)))
        f.write("]}")
    return path


FILES = [
    pytest.param(csv_field_over_the_limit, "field larger than field limit", "ref_permit_holders",
                 id="CSV field over 131,072 characters"),
    pytest.param(csv_line_over_a_mebibyte, "line longer than", "ref_permit_holders",
                 id="CSV line over 1 MiB"),
    pytest.param(json_nested_deeply, "nested too deeply", "ref_lines", id="JSON nested 100,000"),
    pytest.param(json_naming_a_table_twice, "'lines' appears twice", "ref_lines",
                 id="JSON naming a table twice"),
    pytest.param(json_repeating_a_field, "'name' appears twice", "ref_lines",
                 id="JSON repeating a field of a row"),
    pytest.param(json_over_the_size_limit, "byte limit", "ref_lines", id="JSON over 16 MiB"),
]


@pytest.mark.parametrize(("make", "says", "table"), FILES)
def test_a_hostile_registry_file_is_refused_whole_in_one_line(tmp_path, make, says, table):
    data_dir = tmp_path / "data"
    result = inspector(data_dir, "registry", "import", str(make(tmp_path)))
    _one_line_exit_2(result, says)
    assert _count(data_dir, table) == 0


# --- damaged databases ------------------------------------------------------------------------

def _store(tmp: Path) -> Path:
    data_dir = tmp / "data"
    store = open_store(data_dir)
    store.set_meta("probe", "x")
    store.close()
    return data_dir


def truncated(tmp: Path) -> Path:
    data_dir = _store(tmp)
    with open(data_dir / DB_NAME, "r+b") as f:
        f.truncate(3000)
    return data_dir


def header_damaged(tmp: Path) -> Path:
    data_dir = _store(tmp)
    with open(data_dir / DB_NAME, "r+b") as f:
        f.write(b"\x00" * 100)
    return data_dir


def truncated_plaintext(tmp: Path) -> Path:
    """A store from before encryption, cut short: the encryption at start cannot read it."""
    data_dir = tmp / "data"
    data_dir.mkdir()
    conn = sqlite3.connect(data_dir / DB_NAME)
    conn.execute("CREATE TABLE t (x TEXT)")
    conn.executemany("INSERT INTO t VALUES (?)", [("x" * 500,) for _ in range(200)])
    conn.commit()
    conn.close()
    with open(data_dir / DB_NAME, "r+b") as f:
        f.truncate(6000)
    return data_dir


def key_missing(tmp: Path) -> Path:
    data_dir = _store(tmp)
    (data_dir / "inspector.db.key").unlink()
    return data_dir


@pytest.mark.parametrize("damage", [truncated, header_damaged, truncated_plaintext, key_missing])
@pytest.mark.parametrize("command", [("store", "verify"), ("store", "status")])
def test_a_database_that_cannot_be_opened_is_one_line_and_exit_2(tmp_path, damage, command):
    data_dir = damage(tmp_path)
    before = (data_dir / DB_NAME).read_bytes()
    result = inspector(data_dir, *command)
    _one_line_exit_2(result, "cannot open the database" if damage is not key_missing
                     else "its key")
    assert (data_dir / DB_NAME).read_bytes() == before  # never re-created over it


def test_a_pack_with_toml_nested_50000_deep_is_a_listed_problem_not_a_traceback(tmp_path):
    packs = tmp_path / "packs"
    shutil.copytree(REPO_ROOT / "forms" / "DF_STPCR", packs / "DF_STPCR")
    with (packs / "DF_STPCR" / "parameters.toml").open("a", encoding="utf-8") as f:
        f.write("\nx = " + "[" * 50_000 + "]" * 50_000 + "\n")
    result = subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", "packs", "validate", str(packs)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=120, check=False)
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    # ``packs validate`` reports a broken pack with exit 1, one line per problem.
    assert result.returncode == 1
    assert "DF_STPCR/parameters.toml: -: invalid TOML: nested too deeply" in result.stdout
    env = {**os.environ, "INSPECTOR_FORMS_DIR": str(packs)}
    catalogue = subprocess.run(
        [sys.executable, "-m", "inspector_app.cli", "rules", "catalogue", "DF_STPCR"],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=120, check=False, env=env)
    assert "Traceback" not in catalogue.stderr and catalogue.returncode == 1
    assert "nested too deeply" in catalogue.stderr


def test_a_full_disk_in_set_meta_is_a_store_full_error_in_portuguese(tmp_path):
    store = open_store(tmp_path / "data")
    try:
        pages = int(store.conn.execute("PRAGMA page_count").fetchone()[0])
        store.conn.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(StoreFullError) as err:
            store.set_meta("nota", "x" * 200_000)
        assert "disco cheio" in err.value.message_pt
        assert store.meta("nota") is None
    finally:
        store.close()


# --- rows refused -----------------------------------------------------------------------------

def _import(tmp_path: Path, name: str, text: str) -> tuple[Path, subprocess.CompletedProcess]:
    data_dir = tmp_path / "data"
    path = _write(tmp_path / name, textwrap.dedent(text))
    return data_dir, inspector(data_dir, "registry", "import", str(path))


def test_a_repeated_csv_id_is_refused_and_counted_once(tmp_path):
    data_dir, result = _import(tmp_path, "lines.csv", """\
        id,code,name,pack_id
        L1,1,Ceilândia,DF_STPCR
        L2,2,Taguatinga,DF_STPCR
        L1,1,Ceilândia (outra),DF_STPCR
        """)
    assert "Traceback" not in result.stderr and result.returncode == 1
    out = result.stdout.splitlines()
    assert out[0].endswith("linhas importadas – lines: 2.")
    assert "ERRO lines.csv:4: id: 'L1' repetido neste arquivo (já em lines.csv:2)" in out[1]
    conn = connect_data_dir(data_dir, readonly=True)
    try:
        assert conn.execute("SELECT name FROM ref_lines WHERE id = 'L1'").fetchone() == (
            "Ceilândia",)
    finally:
        conn.close()


@pytest.mark.parametrize(("char", "code"), [
    ("\x00", "U+0000"), ("\x1b[31m", "U+001B"), ("\u202e", "U+202E"), ("\u2066", "U+2066"),
    ("\x9b", "U+009B"),
], ids=["NUL", "ANSI escape", "RTL override", "LRI isolate", "C1 CSI"])
def test_control_and_bidi_characters_are_refused_and_never_echoed(tmp_path, char, code):
    data_dir, result = _import(tmp_path, "lines.csv",
                               f"id,code,name,pack_id\nL1,1,Linha{char}Norte,DF_STPCR\n"
                               "L2,2,Taguatinga,DF_STPCR\n")
    assert "Traceback" not in result.stderr and result.returncode == 1
    assert f"ERRO lines.csv:2: name: caractere de controle ou de direção de texto {code}" \
        in result.stdout
    assert char not in result.stdout + result.stderr
    assert _count(data_dir, "ref_lines") == 1


def test_an_unknown_json_key_with_an_escape_is_shown_escaped(tmp_path):
    _data_dir, result = _import(tmp_path, "cadastro.json", json.dumps(
        {"lines": [{"id": "L1", "code": "1", "name": "A", "pack_id": "DF_STPCR",
                    "\x1b]0;owned\x07": "x"}], "\u202egnp.exe": []}))
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout
    assert "\\u001b]0;owned\\u0007" in result.stdout and "\\u202egnp.exe" in result.stdout


def _inspectors_csv(password_hash: str) -> str:
    return ("id,matricula,name,role,password_hash\n"
            f"I1,9001,Carla Mendes,inspector,\"{password_hash}\"\n")


def test_argon2_hashes_below_the_floor_are_refused_and_the_floor_accepted(tmp_path):
    weak = hash_password("segredo1", parameters=FAST_PARAMETERS)  # m=8 KiB, t=1
    assert "m=8,t=1" in weak
    data_dir, result = _import(tmp_path, "inspectors.csv", _inspectors_csv(weak))
    assert result.returncode == 1
    assert "password_hash: hash argon2id fraco demais (m=8 KiB, t=1)" in result.stdout
    assert _count(data_dir, "ref_inspectors") == 0
    good = hash_password("segredo1", parameters=MINIMUM_PARAMETERS)
    (tmp_path / "b").mkdir()
    data_dir, result = _import(tmp_path / "b", "inspectors.csv", _inspectors_csv(good))
    assert (result.returncode, result.stderr) == (0, ""), result.stdout
    assert _count(data_dir, "ref_inspectors") == 1


def test_errors_past_the_listing_limit_are_counted_not_listed(tmp_path):
    rows = "id,code,name,pack_id,updated_at\n" + "".join(
        f"L{i},{i},,DF_STPCR\n" for i in range(MAX_LISTED + 500))
    _data_dir, result = _import(tmp_path, "lines.csv", rows)
    assert result.returncode == 1
    errors = [line for line in result.stdout.splitlines() if line.startswith("ERRO ")]
    assert len(errors) == MAX_LISTED + 1
    assert errors[-1] == "ERRO … e mais 500 erro(s) não listado(s)."
    assert result.stdout.splitlines()[-1].startswith(f"{MAX_LISTED + 500} linha(s) recusada(s)")


# --- size: streamed ---------------------------------------------------------------------------

# VmHWM is this process's own peak (ru_maxrss would carry the parent's across exec).
_RSS = """\
import sys
from inspector_app.cli import main
code = main(sys.argv[1:])
with open("/proc/self/status") as f:
    peak = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
print("maxrss_kib", peak, file=sys.stderr)
raise SystemExit(code)
"""


def _peak_kib(data_dir: Path, csv_path: Path) -> int:
    result = subprocess.run(
        [sys.executable, "-c", _RSS, "--data-dir", str(data_dir), "registry", "import",
         str(csv_path)],
        capture_output=True, text=True, cwd=REPO_ROOT, timeout=280, check=False)
    assert result.returncode == 0, result.stderr
    [line] = [x for x in result.stderr.splitlines() if x.startswith("maxrss_kib")]
    return int(line.split()[1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="Linux /proc")
def test_a_large_csv_is_streamed_memory_does_not_grow_with_the_rows(tmp_path):
    """200,000 lines (13 MB): the peak RSS above a one-row import stays under 48 MiB (the
    whole-file reader grew by about 90 MiB; at 300,000 lines 136 MiB against 28 MiB
    streamed; 1,000,000 rows: peak 503 → 112 MB)."""
    big = tmp_path / "lines.csv"
    with big.open("w", encoding="utf-8") as f:
        f.write("id,code,name,pack_id\n")
        for i in range(200_000):
            f.write(f"L{i:07d},{i},Linha {i} Ceilândia - Plano Piloto,DF_STPCR\n")
    small = _write(tmp_path / "one.csv", "# table: lines\nid,code,name,pack_id\nL,1,A,DF_STPCR\n")
    baseline = _peak_kib(tmp_path / "a", small)
    peak = _peak_kib(tmp_path / "b", big)
    assert _count(tmp_path / "b", "ref_lines") == 200_000
    assert peak - baseline < 48 * 1024, (baseline, peak)
