"""Quantities with units (pint): 17-08 Practice 4, the fp32 attention weights.

By hand: h = 8 heads × batch 32 = 256 matrices of 128 × 128 = 16,384 elements; × 4 bytes
= 256 × 65,536 = 16,777,216 bytes = 2^24 bytes = 16 × 2^20 = 16 MiB = 16,384 KiB
= 16.777216 MB (10^6 bytes each) ≈ 16.8 MB at 3 significant figures.
"""
import pytest

from grader.answers import AnswerSpec, Mistake, check_answer
from grader.units.quantities import UNITS, factor

BYTES = AnswerSpec("quantity", 16777216, unit="byte", sig_figs=3, mistakes=(
    Mistake("4194304 bytes", "4,194,304 is the number of elements; each float32 takes 4 bytes."),
))


@pytest.mark.parametrize("answer, read_as", [
    ("16777216 bytes", "16,777,216 bytes"),
    ("16,777,216 B", "16,777,216 bytes"),
    ("16 MiB", "16 MiB = 16,777,216 bytes"),
    ("16MiB", "16 MiB = 16,777,216 bytes"),
    ("16 mebibytes", "16 MiB = 16,777,216 bytes"),
    ("16.777216 MB", "16.777216 MB = 16,777,216 bytes"),
    ("16384 KiB", "16,384 KiB = 16,777,216 bytes"),
    ("0.015625 GiB", "0.015625 GiB = 16,777,216 bytes"),    # 16 / 1024 = 0.015625
    ("134217728 bits", "134,217,728 bits = 16,777,216 bytes"),  # × 8
])
def test_exact_quantities_in_any_byte_unit(answer, read_as):
    out = check_answer(BYTES, answer)
    assert (out.status, out.correct, out.credit, out.feedback) == ("correct", True, 1.0, "correct"), out
    assert out.read_as == read_as


@pytest.mark.parametrize("answer", ["16.8 MB", "16.8 million bytes", "0.0168 GB", "16,800 KB", "16.78 MB"])
def test_rounded_at_three_figures_or_more_is_right(answer):
    # 16.777216 MB -> 16.8 at 3 s.f.; 0.016777 GB -> 0.0168; 16,777.216 KB -> 16,800 (3 s.f.); 16.78 (4 s.f.)
    out = check_answer(BYTES, answer)
    assert out.status == "correct", out
    assert "exactly 16,777,216 bytes" in out.feedback


def test_sixteen_point_seven_megabytes_is_wrong():
    # |16.7 - 16.777216| = 0.077 > 0.05
    out = check_answer(BYTES, "16.7 MB")
    assert (out.status, out.credit, out.feedback) == ("wrong", 0.0, "not the expected quantity")


def test_seventeen_megabytes_is_too_coarse():
    # |17 - 16.777| = 0.22 <= 0.5, but 17 has 2 significant figures
    out = check_answer(BYTES, "17 MB")
    assert out.status == "wrong"
    assert out.feedback.startswith("17 MB is rounded to 2 significant figures") and "at least 3" in out.feedback


def test_sixteen_megabytes_is_the_mb_mib_confusion():
    out = check_answer(BYTES, "16 MB")
    assert out.status == "wrong"
    assert out.feedback == ("16 MB is 16,000,000 bytes; the expected 16,777,216 bytes is 16 MiB (1,048,576 bytes "
                            "each), or about 16.8 MB (1,000,000 bytes each): MB and MiB differ.")


def test_mib_for_mb_the_other_way():
    # reference 16,000,000 bytes = 16 MB; "16 MiB" is 16,777,216 bytes
    out = check_answer(AnswerSpec("quantity", 16000000, unit="byte"), "16 MiB")
    assert out.feedback.startswith("16 MiB is 16,777,216 bytes; the expected 16,000,000 bytes is 16 MB")


def test_author_mistake_and_derived_factors():
    assert check_answer(BYTES, "4194304 bytes").feedback.startswith("4,194,304 is the number of elements")
    assert check_answer(BYTES, "4 MiB").feedback.startswith("4,194,304 is the number of elements")  # 4 × 2^20
    # 8 bytes per element: 33,554,432 = 2 × 16,777,216
    assert check_answer(BYTES, "32 MiB").feedback.startswith("Your answer is twice the expected value")
    # bits given as bytes: 16,777,216 × 8 = 134,217,728 bytes
    assert check_answer(BYTES, "134217728 bytes").feedback.startswith("Your answer is eight times")


def test_dimension_mismatch_names_both():
    out = check_answer(BYTES, "16 s")
    assert out.status == "wrong"
    assert out.feedback == ("16 seconds is a time (second), but the question asks for an amount of data (byte).")
    assert "is a number of operations (gigaflop), but the question asks for an amount of data" in check_answer(BYTES, "16 GFLOPs").feedback


def test_a_missing_unit_is_wrong_and_says_what_is_missing():
    out = check_answer(BYTES, "16777216")
    assert (out.status, out.feedback) == ("wrong", "The number is right in bytes, but a quantity needs its unit: "
                                                   "write 16,777,216 bytes.")
    assert check_answer(BYTES, 12).feedback.startswith("A unit is missing")


def test_unknown_units_are_invalid_and_never_reach_pint():
    out = check_answer(BYTES, "16 __import__")
    assert out.status == "invalid"
    for bad in ("16 foo", "16 meter", "16 Mbyte"):
        out = check_answer(BYTES, bad)
        assert out.status == "invalid" and "unknown unit" in out.feedback, out


def test_si_and_binary_prefixes_by_hand():
    assert factor("kilobyte", "byte") == 1000
    assert factor("kibibyte", "byte") == 1024
    assert factor("megabyte", "byte") == 10**6
    assert factor("mebibyte", "byte") == 2**20
    assert factor("gibibyte", "byte") == 2**30
    assert factor("bit", "byte") * 8 == 1
    assert factor("second", "byte") is None
    assert UNITS["KB"][0] == UNITS["kB"][0] == "kilobyte"
    assert UNITS["KiB"][0] == "kibibyte"


def test_bytes_given_as_bits():
    # 16,777,216 bits = 2,097,152 bytes = 16,777,216 / 8
    out = check_answer(BYTES, "16777216 bits")
    assert out.feedback.startswith("Your answer is an eighth of the expected value: bits and bytes differ by 8")
