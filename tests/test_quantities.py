"""One reader for numbers and quantities (grader.units.quantities): the spec's stated figures and the
learners' answers read the same strings the same way."""
from fractions import Fraction

import pytest
from hypothesis import given, settings, strategies as st

from grader.answers.model import Unreadable
from grader.answers.numbers import NumberReading, Reading, read_number
from grader.answers.units import read_quantity
from grader.claims.figures import FigureError, parse_figure


@pytest.mark.parametrize("text, value", [
    ("~68.7B", 68_700_000_000),
    ("≈ 343.6B", 343_600_000_000),
    ("about 1.05M", 1_050_000),
    ("approx. 5k", 5_000),
    ("approximately 2.36 million", 2_360_000),
    ("roughly 12 thousand", 12_000),
    ("34.4B", 34_400_000_000),
    ("128 dims", 128),
    ("32768 parameters", 32_768),
    ("1.05M parameters", 1_050_000),
    ("~ 275 GFLOPs", 275_000_000_000),
])
def test_issue_examples_are_read_by_both_sides(text, value):
    assert read_number(text).value == value
    assert parse_figure(text).value == value


def test_approximation_marks_no_longer_get_the_unit_refusal():
    # ~68.7B used to be refused "without a unit ('B')" although 68.7B was accepted
    assert read_number("~68.7B").sig_figs == 3
    with pytest.raises(Unreadable, match="plain number, without a unit .'GB'"):
        read_number("~68.7 GB")             # a real unit where a plain number is asked: that reason
    with pytest.raises(Unreadable, match="after the approximation mark"):
        read_number("≈")
    with pytest.raises(Unreadable, match="ambiguous"):
        read_number("about 3 m")


def test_quantities_take_marks_and_magnitude_words():
    assert read_quantity("≈ 16.8 MB", "byte").value == 16_800_000
    assert read_quantity("about 16 MiB", "byte").value == 16 * 2**20
    assert read_quantity("2.36 million bytes", "byte").value == 2_360_000
    assert parse_figure("2.36 million bytes").value == 2_360_000
    assert read_quantity("16 B", "byte").value == 16          # a byte where a quantity is read
    assert read_number("16 B").value == 16 * 10**9             # a billion where a number is


def test_the_spec_reads_what_answers_read_and_states_its_tolerance():
    f = parse_figure("2.36 million")
    assert (f.value, f.tolerance) == (2_360_000, 5_000)        # half of 0.01 million
    assert parse_figure("1e9").tolerance == 0                  # no mark, no point, no magnitude
    with pytest.raises(FigureError, match="unknown unit 'parsecs'"):
        parse_figure("3 parsecs")
    assert parse_figure("2 hours").value == 7200           # a time is a figure too (issue #27): 2 × 3,600 s


def test_the_old_name_still_imports():
    assert Reading is NumberReading


# --- the property: both sides read the same strings the same way ----------------------------
MARKS = ["", "≈ ", "≈", "~", "~ ", "about ", "approx. ", "approximately ", "roughly "]
SCALE = {"": 0, "k": 3, "K": 3, " thousand": 3, "M": 6, " M": 6, " million": 6, "B": 9, " billion": 9,
         "G": 9, "T": 12, " trillion": 12}
NOUNS = ["", " parameters", " params", " FLOPs", " dims", " heads", " tokens", " elements"]
BYTES = {" bytes": 1, " kB": 10**3, " KB": 10**3, " MB": 10**6, " GB": 10**9, " KiB": 2**10, " MiB": 2**20,
         " GiB": 2**30}


def _grouped(n: int) -> str:
    return f"{n:,}"


@st.composite
def written_numbers(draw):
    whole = draw(st.integers(0, 10**9))
    decimals = draw(st.integers(0, 4))
    frac = draw(st.integers(0, 10**decimals - 1)) if decimals else None
    whole_text = _grouped(whole) if draw(st.booleans()) else str(whole)
    text = whole_text + (f".{frac:0{decimals}d}" if decimals else "")
    value = Fraction(whole) + (Fraction(frac, 10**decimals) if decimals else 0)
    return text, value, decimals


@settings(max_examples=300, deadline=None)
@given(written_numbers(), st.sampled_from(MARKS), st.sampled_from(sorted(SCALE)), st.sampled_from(NOUNS))
def test_property_plain_numbers_read_alike(number, mark, scale, noun):
    num_text, value, decimals = number
    text = f"{mark}{num_text}{scale}{noun}"
    expected = value * 10 ** SCALE[scale]             # derived from how the string was built
    answer = read_number(text)
    figure = parse_figure(text)
    assert answer.value == figure.value == expected
    approx = bool(mark) or bool(scale) or decimals > 0
    assert figure.approx == approx
    if approx:                                       # half a unit of the last written digit
        assert figure.tolerance == Fraction(10) ** (SCALE[scale] - decimals) / 2
        if decimals:                                 # a decimal states its precision the same way
            assert answer.half_unit == figure.tolerance


@settings(max_examples=200, deadline=None)
@given(written_numbers(), st.sampled_from(MARKS), st.sampled_from(sorted(BYTES)))
def test_property_byte_quantities_read_alike(number, mark, unit):
    num_text, value, _ = number
    text = f"{mark}{num_text}{unit}"
    expected = value * BYTES[unit]
    assert read_quantity(text, "byte").value == expected
    assert parse_figure(text).value == expected
