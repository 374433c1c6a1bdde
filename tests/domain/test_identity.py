"""Identity numbers and plates: parsing, check digits and Portuguese errors (RULES.md §B3, §B4)."""

from __future__ import annotations

import ast
import pickle
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector_app.domain import identity
from inspector_app.domain.identity import (
    MIN_OVERRIDE_REASON_LENGTH,
    CnhOverride,
    IdentityError,
    Plate,
    PlateKind,
    accept_cnh,
    check_cnh,
    format_cnpj,
    format_cpf,
    generate_cnh,
    generate_cnpj,
    generate_cpf,
    generate_plate,
    generate_renavam,
    normalize_cnpj,
    normalize_cpf,
    normalize_renavam,
    parse_plate,
    same_vehicle_plate,
)

# Seeds, not st.randoms(): the generators retry on all-equal bases, and Hypothesis's minimal
# random (all zeros) would make them loop. A seed also makes a failure easy to replay.
SEEDS = st.integers(min_value=0, max_value=2**64 - 1)


def is_valid(normalize: Callable[[str], object], text: str) -> bool:
    try:
        normalize(text)
    except IdentityError:
        return False
    return True


def is_valid_cnh(text: str) -> bool:
    return check_cnh(text).valid


# --------------------------------------------------------------------------------------------
# The module stays plain Python


def test_identity_module_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(identity.__file__).read_text(encoding="utf-8"))
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "identity.py must not import from the project"
            assert node.module is not None
            imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


# --------------------------------------------------------------------------------------------
# CPF


@pytest.mark.parametrize(
    ("text", "expected", "source"),
    [
        ("16944060167", "16944060167", "RULES.md §B4"),
        ("41840660546", "41840660546", "RULES.md §B4"),
        ("169.440.601-67", "16944060167", "brief: punctuation accepted"),
        (" 418.406.605-46 ", "41840660546", "brief: surrounding spaces accepted"),
    ],
)
def test_valid_cpf_normalises_to_its_eleven_digits(text: str, expected: str, source: str) -> None:
    assert normalize_cpf(text) == expected


@pytest.mark.parametrize(
    ("text", "formatted", "source"),
    [
        ("16944060167", "169.440.601-67", "brief"),
        ("418.406.605-46", "418.406.605-46", "RULES.md §B4 vector"),
    ],
)
def test_format_cpf_uses_dots_and_dash(text: str, formatted: str, source: str) -> None:
    assert format_cpf(text) == formatted


# --------------------------------------------------------------------------------------------
# CNPJ, numeric and alphanumeric


@pytest.mark.parametrize(
    ("text", "expected", "source"),
    [
        ("11.222.333/0001-81", "11222333000181", "well-known numeric test CNPJ"),
        ("11222333000181", "11222333000181", "well-known numeric test CNPJ"),
        ("00.394.460/0058-87", "00394460005887", "Receita Federal's own CNPJ"),
        ("12.ABC.345/01DE-35", "12ABC34501DE35", "RFB example, IN RFB 2.229/2024"),
        ("12.abc.345/01de-35", "12ABC34501DE35", "brief: lowercase accepted"),
        ("12ABC34501DE35", "12ABC34501DE35", "RFB example, no punctuation"),
    ],
)
def test_valid_cnpj_normalises_to_fourteen_uppercase_characters(
    text: str, expected: str, source: str
) -> None:
    assert normalize_cnpj(text) == expected


def test_alphanumeric_cnpj_rfb_example_has_check_digits_35() -> None:
    # IN RFB 2.229/2024: values are ASCII - 48, so 12ABC34501DE must give DV 35.
    assert normalize_cnpj("12.ABC.345/01DE-35") == "12ABC34501DE35"
    with pytest.raises(IdentityError) as caught:
        normalize_cnpj("12ABC34501DE00")
    assert caught.value.code == "check_digit"
    assert "35" not in caught.value.message  # issue 11: never print the expected digits


@pytest.mark.parametrize(
    ("text", "formatted", "source"),
    [
        ("11222333000181", "11.222.333/0001-81", "brief"),
        ("12abc34501de35", "12.ABC.345/01DE-35", "RFB example, IN RFB 2.229/2024"),
    ],
)
def test_format_cnpj_uses_dots_slash_and_dash(text: str, formatted: str, source: str) -> None:
    assert format_cnpj(text) == formatted


@pytest.mark.parametrize(
    ("valid", "twin", "source"),
    [
        ("12ABC34501DE35", "12LBC34501DE35", "A=17 and L=28 differ by 11"),
        ("12ABC34501DE35", "1HABC34501DE35", "2 and H=24 differ by 22"),
    ],
)
def test_alphanumeric_cnpj_cannot_detect_substitutions_a_multiple_of_eleven_apart(
    valid: str, twin: str, source: str
) -> None:
    # A limit of the RFB algorithm itself (mod 11 over ASCII - 48), not of this code.
    assert normalize_cnpj(valid) == valid
    assert normalize_cnpj(twin) == twin


# --------------------------------------------------------------------------------------------
# CNH (soft check, "mod-wrap" form)


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("50195131143", "RULES.md §B4"),
        ("58316794534", "RULES.md §B4"),
        ("69044271146", "RULES.md §B4"),
        ("46190906839", "RULES.md §B4"),
        ("62472927637", "RULES.md §B4"),
    ],
)
def test_valid_cnh_passes_check_without_warning(text: str, source: str) -> None:
    check = check_cnh(text)
    assert (check.number, check.valid, check.message) == (text, True, None)
    assert accept_cnh(text) == text


@pytest.mark.parametrize(
    ("text", "fragment", "source"),
    [
        ("50195471143", "dígito verificador não confere", "RULES.md §B4"),
        ("58316474534", "dígito verificador não confere", "RULES.md §B4"),
        ("98765432100", "dígito verificador não confere", "RULES.md §B4 mod-wrap"),
        ("11111111111", "todos os dígitos são iguais", "passes the DVs; common library rule"),
    ],
)
def test_invalid_cnh_returns_a_portuguese_warning_instead_of_raising(
    text: str, fragment: str, source: str
) -> None:
    check = check_cnh(text)
    assert check.number == text
    assert check.valid is False
    assert check.message is not None
    assert fragment in check.message
    assert "motivo" in check.message


@pytest.mark.parametrize(
    ("reason", "source"),
    [
        (None, "brief: no reason"),
        ("", "brief: blank reason"),
        ("          ", "brief: blank reason"),
        ("x" * (MIN_OVERRIDE_REASON_LENGTH - 1), "brief: reason under 10 characters"),
        ("  curto  ", "brief: reason under 10 characters once trimmed"),
    ],
)
def test_accept_cnh_refuses_a_failing_check_without_a_real_reason(
    reason: str | None, source: str
) -> None:
    with pytest.raises(IdentityError) as caught:
        accept_cnh("50195471143", override_reason=reason)
    err = caught.value
    assert (err.field, err.code) == ("cnh", "check_digit")
    assert "dígito verificador não confere" in err.message
    assert f"pelo menos {MIN_OVERRIDE_REASON_LENGTH} caracteres" in err.message


@pytest.mark.parametrize(
    ("text", "source"),
    [
        ("50195471143", "RULES.md §B4 invalid vector"),
        ("98765432100", "RULES.md §B4 invalid under mod-wrap"),
    ],
)
def test_accept_cnh_with_a_reason_overrides_a_failing_check(text: str, source: str) -> None:
    assert accept_cnh(text, override_reason="CNH modelo antigo conferida") == text
    assert accept_cnh(text, override_reason="x" * MIN_OVERRIDE_REASON_LENGTH) == text


def test_accept_cnh_reason_does_not_override_a_format_error() -> None:
    with pytest.raises(IdentityError) as caught:
        accept_cnh("5019547114", override_reason="CNH modelo antigo conferida")
    assert caught.value.code == "length"


def test_cnh_override_records_number_and_reason() -> None:
    override = CnhOverride("50195471143", "CNH modelo antigo conferida")
    assert override.number == "50195471143"


@pytest.mark.parametrize(
    ("number", "reason", "code", "source"),
    [
        ("50195471143", "curto", "override_reason", "brief: reason of 10+ characters"),
        ("5019547114", "CNH modelo antigo conferida", "format", "RULES.md §B4: 11 digits"),
        ("5019547114A", "CNH modelo antigo conferida", "format", "RULES.md §B4: digits only"),
    ],
)
def test_cnh_override_rejects_short_reason_and_malformed_number(
    number: str, reason: str, code: str, source: str
) -> None:
    with pytest.raises(IdentityError) as caught:
        CnhOverride(number, reason)
    assert (caught.value.field, caught.value.code) == ("cnh", code)


# --------------------------------------------------------------------------------------------
# RENAVAM


@pytest.mark.parametrize(
    ("text", "expected", "source"),
    [
        ("86769597308", "86769597308", "RULES.md §B4"),
        ("01234567897", "01234567897", "RULES.md §B4"),
        ("98765432103", "98765432103", "RULES.md §B4"),
        ("35298206229", "35298206229", "RULES.md §B4"),
        ("639884962", "00639884962", "RULES.md §B4 (9-digit, padded with 00)"),
    ],
)
def test_valid_renavam_normalises_to_eleven_digits(text: str, expected: str, source: str) -> None:
    assert normalize_renavam(text) == expected


# --------------------------------------------------------------------------------------------
# Plates


@pytest.mark.parametrize(
    ("text", "normalised", "kind", "display", "source"),
    [
        ("ABC-1234", "ABC1234", "old", "ABC-1234", "RULES.md §B3 old"),
        ("abc-1234", "ABC1234", "old", "ABC-1234", "brief: lowercase with dash"),
        ("ABC 1234", "ABC1234", "old", "ABC-1234", "brief: space"),
        ("ABC1234", "ABC1234", "old", "ABC-1234", "RULES.md §B3 regex, dash optional"),
        ("ABC1D23", "ABC1D23", "mercosul", "ABC1D23", "RULES.md §B3 Mercosul"),
        ("abc1d23", "ABC1D23", "mercosul", "ABC1D23", "brief: lowercase Mercosul"),
        (" abc-1d23 ", "ABC1D23", "mercosul", "ABC1D23", "RULES.md §B3: strip space and dash"),
    ],
)
def test_parse_plate_normalises_and_detects_the_kind(
    text: str, normalised: str, kind: str, display: str, source: str
) -> None:
    plate = parse_plate(text)
    assert (plate.text, plate.kind, plate.display()) == (normalised, kind, display)


@pytest.mark.parametrize(
    ("text", "mercosul", "old", "source"),
    [
        ("ABC-4567", "ABC4F67", "ABC4567", "RULES.md §B3 example"),
        # The 5th character of ABC1234 is "2" (A, B, C, 1, 2), so it maps to C.
        ("ABC1234", "ABC1C34", "ABC1234", "RULES.md §B3 rule: 2 -> C"),
        ("ABC1C34", "ABC1C34", "ABC1234", "RULES.md §B3 reverse: C -> 2"),
        ("ABC1B34", "ABC1B34", "ABC1134", "RULES.md §B3 reverse: B -> 1"),
        ("XYZ9J99", "XYZ9J99", "XYZ9999", "RULES.md §B3: J -> 9"),
        ("XYZ0A00", "XYZ0A00", "XYZ0000", "RULES.md §B3: A -> 0"),
        ("ABC1K34", "ABC1K34", None, "RULES.md §B3: past J has no old form"),
        ("ABC1Z34", "ABC1Z34", None, "RULES.md §B3: past J has no old form"),
    ],
)
def test_plate_converts_between_old_and_mercosul_forms(
    text: str, mercosul: str, old: str | None, source: str
) -> None:
    plate = parse_plate(text)
    assert plate.mercosul() == mercosul
    assert plate.old() == old
    assert plate.canonical_key() == mercosul


@pytest.mark.parametrize(
    ("a", "b", "same", "source"),
    [
        # RULES.md §B3 names "ABC1234 and ABC1B34" as the same vehicle, but its own rule
        # (5th character d -> chr(ord("A") + d)) and its ABC-4567 -> ABC4F67 example map the
        # 5th character of ABC1234, "2", to C. The issue text's ABC1C34 is the right pair.
        ("ABC1234", "ABC1C34", True, "RULES.md §B3 rule; issue text"),
        ("abc-1234", "abc1c34", True, "RULES.md §B3 after normalising"),
        ("ABC1C34", "ABC-1234", True, "RULES.md §B3 rule, symmetric"),
        ("ABC1234", "ABC1B34", False, "RULES.md §B3 rule: B -> 1 gives ABC1134"),
        ("ABC1134", "ABC1B34", True, "RULES.md §B3 rule: 1 -> B"),
        ("ABC-4567", "ABC4F67", True, "RULES.md §B3 example"),
        ("ABC1234", "ABC 1234", True, "same old plate, different spelling"),
        ("ABC1234", "ABC1K34", False, "RULES.md §B3: K has no old form"),
        ("ABC1234", "ABD1234", False, "different letters"),
        ("ABC1B34", "ABC1B35", False, "different last digit"),
    ],
)
def test_same_vehicle_plate_matches_old_and_mercosul_forms(
    a: str, b: str, same: bool, source: str
) -> None:
    assert same_vehicle_plate(a, b) is same


def test_same_vehicle_plate_raises_on_a_malformed_plate() -> None:
    with pytest.raises(IdentityError) as caught:
        same_vehicle_plate("ABC1234", "1234ABC")
    assert caught.value.field == "plate"


@pytest.mark.parametrize(
    ("text", "kind", "source"),
    [
        ("ABC1D23", "old", "5th char letter is Mercosul"),
        ("ABC1234", "mercosul", "5th char digit is old"),
        ("abc1234", "old", "Plate.text must be normalised"),
        ("ABC-1234", "old", "Plate.text has no dash"),
        ("ABC1234", "new", "unknown kind"),
    ],
)
def test_plate_constructor_rejects_text_that_does_not_match_its_kind(
    text: str, kind: str, source: str
) -> None:
    with pytest.raises(IdentityError) as caught:
        Plate(text, kind)  # type: ignore[arg-type]
    assert (caught.value.field, caught.value.code) == ("plate", "format")


# --------------------------------------------------------------------------------------------
# Malformed input: every rejection names the field, the problem, in Portuguese

MALFORMED: list[tuple[Callable[[str], object], str, str, str, str, str]] = [
    # (function, text, field, code, message fragment, source)
    (normalize_cpf, "", "cpf", "empty", "CPF não informado", "brief: empty"),
    (normalize_cpf, " .-", "cpf", "empty", "CPF não informado", "only punctuation"),
    (normalize_cpf, "1694406016", "cpf", "length", "deve ter 11 dígitos (foram informados 10)", "too short"),
    (normalize_cpf, "169440601670", "cpf", "length", "deve ter 11 dígitos (foram informados 12)", "too long"),
    (normalize_cpf, "169.440.601-6A", "cpf", "format", "use apenas números (encontrado 'A')", "brief: letters"),
    (normalize_cpf, "169/440/601-67", "cpf", "format", "use apenas números (encontrado '/')", "CNPJ slash"),
    (normalize_cpf, "１６９４４０６０１６７", "cpf", "format", "use apenas números", "full-width digits"),
    (normalize_cpf, "11111111111", "cpf", "all_same", "todos os dígitos são iguais", "RULES.md §B4"),
    (normalize_cpf, "00000000000", "cpf", "all_same", "todos os dígitos são iguais", "RULES.md §B4"),
    (normalize_cpf, "16944060168", "cpf", "check_digit", "dígito verificador não confere", "brief message"),
    (normalize_cpf, "16944060177", "cpf", "check_digit", "dígito verificador não confere", "DV1 wrong"),
    (normalize_cnpj, "", "cnpj", "empty", "CNPJ não informado", "brief: empty"),
    (normalize_cnpj, "11.222.333/0001-8", "cnpj", "length", "deve ter 14 caracteres (foram informados 13)", "too short"),
    (normalize_cnpj, "11.222.333/0001-811", "cnpj", "length", "(foram informados 15)", "too long"),
    (normalize_cnpj, "11.222.333_0001-81", "cnpj", "format", "caractere não permitido '_'", "bad punctuation"),
    (normalize_cnpj, "12.ABÇ.345/01DE-35", "cnpj", "format", "caractere não permitido 'Ç'", "non-ASCII letter"),
    (normalize_cnpj, "12.ABC.345/01DE-3X", "cnpj", "format", "dígitos verificadores) devem ser números", "IN RFB 2.229/2024: DVs numeric"),
    (normalize_cnpj, "00.000.000/0000-00", "cnpj", "all_same", "todos os caracteres são iguais", "brief: all-equal"),
    (normalize_cnpj, "11.222.333/0001-82", "cnpj", "check_digit", "dígito verificador não confere", "DV2 wrong"),
    (normalize_cnpj, "12.ABC.345/01DE-53", "cnpj", "check_digit", "dígito verificador não confere", "RFB example, DVs swapped"),
    (check_cnh, "", "cnh", "empty", "Número da CNH não informado", "brief: empty"),
    (check_cnh, "5019513114", "cnh", "length", "deve ter 11 dígitos (foram informados 10)", "brief: 11 digits"),
    (check_cnh, "501951311430", "cnh", "length", "(foram informados 12)", "brief: 11 digits"),
    (check_cnh, "5019513114X", "cnh", "format", "use apenas números (encontrado 'X')", "brief: digits only"),
    (normalize_renavam, "", "renavam", "empty", "RENAVAM não informado", "brief: empty"),
    (normalize_renavam, "63988496", "renavam", "length", "deve ter 9 ou 11 dígitos (foram informados 8)", "too short"),
    (normalize_renavam, "0639884962", "renavam", "length", "(foram informados 10)", "10 digits is neither"),
    (normalize_renavam, "867695973080", "renavam", "length", "(foram informados 12)", "too long"),
    (normalize_renavam, "8676959730B", "renavam", "format", "use apenas números (encontrado 'B')", "letters"),
    (normalize_renavam, "00000000000", "renavam", "all_same", "todos os dígitos são iguais", "passes the DV"),
    (normalize_renavam, "86769597309", "renavam", "check_digit", "dígito verificador não confere", "RULES.md §B4 vector, DV changed"),
    (normalize_renavam, "639884963", "renavam", "check_digit", "dígito verificador não confere", "RULES.md §B4 9-digit vector, DV changed"),
    (parse_plate, "", "plate", "empty", "Placa não informada", "brief: empty"),
    (parse_plate, " - ", "plate", "empty", "Placa não informada", "only separators"),
    (parse_plate, "AB-12345", "plate", "format", "a 3ª posição deve ser letra (recebido '1')", "brief"),
    (parse_plate, "1234ABC", "plate", "format", "a 1ª posição deve ser letra (recebido '1')", "brief"),
    (parse_plate, "ABC12D3", "plate", "format", "a 6ª posição deve ser número (recebido 'D')", "brief"),
    (parse_plate, "ABCD123", "plate", "format", "a 4ª posição deve ser número (recebido 'D')", "RULES.md §B3 regexes"),
    (parse_plate, "ABC1DE3", "plate", "format", "a 6ª posição deve ser número (recebido 'E')", "RULES.md §B3 regexes"),
    (parse_plate, "ABC123", "plate", "length", "deve ter 7 caracteres (foram informados 6)", "too short"),
    (parse_plate, "ABC-12345", "plate", "length", "deve ter 7 caracteres (foram informados 8)", "too long"),
    (parse_plate, "ABC.1234", "plate", "format", "caractere não permitido '.'", "RULES.md §B3: only space and dash stripped"),
    (parse_plate, "ABÇ1234", "plate", "format", "caractere não permitido 'Ç'", "non-ASCII letter"),
    (parse_plate, "ABCß123", "plate", "format", "caractere não permitido 'ß'", "upper() would make SS"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("function", "text", "field", "code", "fragment", "source"),
    MALFORMED,
    ids=[f"{row[0].__name__}-{row[1]!r}" for row in MALFORMED],
)
def test_malformed_input_raises_identity_error_naming_the_problem_in_portuguese(
    function: Callable[[str], object],
    text: str,
    field: str,
    code: str,
    fragment: str,
    source: str,
) -> None:
    with pytest.raises(IdentityError) as caught:
        function(text)
    err = caught.value
    assert (err.field, err.code) == (field, code)
    assert fragment in err.message
    assert str(err) == err.message
    assert err.message.endswith(".")
    assert any(word in err.message for word in ("inválid", "não informad")), err.message


@pytest.mark.parametrize(
    ("function", "text", "source"),
    [
        (format_cpf, "16944060168", "format validates first"),
        (format_cnpj, "12ABC34501DE36", "format validates first"),
    ],
)
def test_format_refuses_an_invalid_number(
    function: Callable[[str], str], text: str, source: str
) -> None:
    with pytest.raises(IdentityError, match="dígito verificador"):
        function(text)


def test_identity_error_is_a_value_error_that_survives_pickling() -> None:
    err = IdentityError("cpf", "check_digit", "CPF inválido: dígito verificador não confere.")
    assert isinstance(err, ValueError)
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.field, copy.code, copy.message) == (err.field, err.code, err.message)


# --------------------------------------------------------------------------------------------
# Properties: generators, round trips and single-character changes


@pytest.mark.parametrize(
    ("generate", "normalize"),
    [
        (generate_cpf, normalize_cpf),
        (generate_cnpj, normalize_cnpj),
        (lambda rng: generate_cnpj(rng, alphanumeric=True), normalize_cnpj),
        (generate_renavam, normalize_renavam),
        (generate_cnh, accept_cnh),
    ],
    ids=["cpf", "cnpj", "cnpj-alphanumeric", "renavam", "cnh"],
)
@given(seed=SEEDS)
def test_any_generated_document_validates_unchanged(
    generate: Callable[[random.Random], str],
    normalize: Callable[[str], str],
    seed: int,
) -> None:
    rng = random.Random(seed)
    number = generate(rng)
    assert normalize(number) == number


@given(seed=st.integers())
def test_generators_are_deterministic_for_a_seed(seed: int) -> None:
    def batch(rng: random.Random) -> tuple[object, ...]:
        return (
            generate_cpf(rng),
            generate_cnpj(rng),
            generate_cnpj(rng, alphanumeric=True),
            generate_cnh(rng),
            generate_renavam(rng),
            generate_plate(rng, "old"),
            generate_plate(rng, "mercosul"),
        )

    assert batch(random.Random(seed)) == batch(random.Random(seed))


@given(seed=SEEDS)
def test_generated_alphanumeric_cnpj_contains_a_letter(seed: int) -> None:
    rng = random.Random(seed)
    assert any(c in string.ascii_uppercase for c in generate_cnpj(rng, alphanumeric=True))


@given(seed=SEEDS)
def test_generated_numeric_cnpj_is_all_digits(seed: int) -> None:
    rng = random.Random(seed)
    assert generate_cnpj(rng).isdecimal()


@given(seed=SEEDS)
def test_formatting_then_normalising_a_cpf_is_the_identity(seed: int) -> None:
    rng = random.Random(seed)
    cpf = generate_cpf(rng)
    assert normalize_cpf(format_cpf(cpf)) == cpf


@given(seed=SEEDS, alphanumeric=st.booleans())
def test_formatting_then_normalising_a_cnpj_is_the_identity(seed: int, alphanumeric: bool) -> None:
    rng = random.Random(seed)
    cnpj = generate_cnpj(rng, alphanumeric=alphanumeric)
    assert normalize_cnpj(format_cnpj(cnpj)) == cnpj
    assert normalize_cnpj(format_cnpj(cnpj).lower()) == cnpj


@given(seed=SEEDS)
def test_nine_digit_renavam_equals_its_zero_padded_form(seed: int) -> None:
    rng = random.Random(seed)
    renavam = generate_renavam(rng)
    while not renavam.startswith("00"):
        renavam = generate_renavam(rng)
    assert normalize_renavam(renavam[2:]) == renavam


def in_mod11_blind_spot(delta: int, weights: tuple[int, ...]) -> bool:
    """Whether a change of ``delta`` at a position with these weights can go undetected.

    Remainders 0 and 1 both give check digit 0 (RULES.md §B4), so a change is invisible only
    if it moves every weighted sum by 0 or ±1 (mod 11).
    """
    return all(delta * w % 11 in (0, 1, 10) for w in weights)


# Weights of each base position, one per check digit (RULES.md §B4).
CPF_WEIGHTS = [(10 - i, 11 - i) for i in range(9)]
CNPJ_WEIGHTS = list(
    zip((5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2), (6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3), strict=True)
)
RENAVAM_WEIGHTS = [(w,) for w in (3, 2, 9, 8, 7, 6, 5, 4, 3, 2)]
CNH_WEIGHTS = [(i + 2, i + 3) for i in range(9)]


@pytest.mark.parametrize(
    ("generate", "valid", "weights", "alphabet"),
    [
        (generate_cpf, lambda t: is_valid(normalize_cpf, t), CPF_WEIGHTS, string.digits),
        (generate_cnpj, lambda t: is_valid(normalize_cnpj, t), CNPJ_WEIGHTS, string.digits),
        (
            lambda rng: generate_cnpj(rng, alphanumeric=True),
            lambda t: is_valid(normalize_cnpj, t),
            CNPJ_WEIGHTS,
            string.digits + string.ascii_uppercase,
        ),
        (
            generate_renavam,
            lambda t: is_valid(normalize_renavam, t),
            RENAVAM_WEIGHTS,
            string.digits,
        ),
        (generate_cnh, is_valid_cnh, CNH_WEIGHTS, string.digits),
    ],
    ids=["cpf", "cnpj", "cnpj-alphanumeric", "renavam", "cnh"],
)
@given(seed=SEEDS, data=st.data())
def test_changing_one_character_makes_a_valid_number_invalid_outside_the_mod11_blind_spot(
    generate: Callable[[random.Random], str],
    valid: Callable[[str], bool],
    weights: list[tuple[int, ...]],
    alphabet: str,
    seed: int,
    data: st.DataObject,
) -> None:
    rng = random.Random(seed)
    number = generate(rng)
    position = data.draw(st.integers(0, len(number) - 1), label="position")
    choices = alphabet if position < len(weights) else string.digits
    new = data.draw(st.sampled_from([c for c in choices if c != number[position]]), label="new")
    changed = number[:position] + new + number[position + 1 :]
    if position >= len(weights):
        assert not valid(changed), "a changed check digit must always be caught"
    elif not in_mod11_blind_spot(ord(new) - ord(number[position]), weights[position]):
        assert not valid(changed)


@pytest.mark.parametrize(
    ("normalize", "valid", "twin", "source"),
    [
        (normalize_cpf, "30401198006", "40401198006", "1st digit +1: 10·1 ≡ -1, 11·1 ≡ 0"),
        (normalize_cpf, "19846346409", "29846346409", "1st digit +1: 10·1 ≡ -1, 11·1 ≡ 0"),
        (normalize_renavam, "94580730210", "24580730210", "1st digit -7: 3·(-7) ≡ 1"),
        (normalize_renavam, "94580730210", "94540730210", "4th digit -4: 8·(-4) ≡ 1"),
    ],
)
def test_mod11_blind_spot_exists_in_the_official_algorithms(
    normalize: Callable[[str], str], valid: str, twin: str, source: str
) -> None:
    # Documents why the single-change property above needs its blind-spot exception.
    assert normalize(valid) == valid
    assert normalize(twin) == twin


@given(seed=SEEDS)
def test_old_plate_round_trips_through_mercosul(seed: int) -> None:
    rng = random.Random(seed)
    plate = generate_plate(rng, "old")
    mercosul = parse_plate(plate.mercosul())
    assert mercosul.kind == "mercosul"
    assert mercosul.old() == plate.text


@given(seed=SEEDS, kind=st.sampled_from(["old", "mercosul"]))
def test_canonical_key_is_equal_for_both_forms_of_a_plate(seed: int, kind: PlateKind) -> None:
    rng = random.Random(seed)
    plate = generate_plate(rng, kind)
    assert parse_plate(plate.mercosul()).canonical_key() == plate.canonical_key()
    old = plate.old()
    if old is not None:
        assert parse_plate(old).canonical_key() == plate.canonical_key()
        assert same_vehicle_plate(old, plate.mercosul())


@given(seed=SEEDS, kind=st.sampled_from(["old", "mercosul"]))
def test_generated_plate_parses_back_from_its_display_text(seed: int, kind: PlateKind) -> None:
    rng = random.Random(seed)
    plate = generate_plate(rng, kind)
    assert plate.kind == kind
    assert parse_plate(plate.display()) == plate
    assert parse_plate(plate.display().lower()) == plate


# Issue 11: a check-digit error says the number is invalid and never prints the digits that
# would make it valid (that invites turning a wrong CPF into another person's valid one).
@pytest.mark.parametrize(
    ("check", "text", "digits"),
    [
        (normalize_cpf, "16944060168", "67"),
        (normalize_cpf, "169.440.601-00", "67"),
        (normalize_cnpj, "11.222.333/0001-82", "81"),
        (normalize_cnpj, "12.ABC.345/01DE-53", "35"),
        (lambda t: accept_cnh(t), "50195471143", "65"),
        (normalize_renavam, "86769597309", None),
    ],
)
def test_check_digit_errors_never_print_the_expected_digits(
    check: Callable[[str], object], text: str, digits: str | None
) -> None:
    with pytest.raises(IdentityError) as caught:
        check(text)
    err = caught.value
    assert err.code == "check_digit"
    assert "esperado" not in err.message
    assert "inválid" in err.message or "suspeita" in err.message
    if digits:
        assert digits not in err.message.replace(text, "")


def test_cnh_warning_never_prints_the_expected_digits() -> None:
    message = check_cnh("50195471143").message or ""
    assert "esperado" not in message and "65" not in message
