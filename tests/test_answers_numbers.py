"""Numbers: every form right and wrong, precision, mistakes; expected values by hand."""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.answers import AnswerSpec, Mistake, Outcome, check_answer
from grader.answers.numbers import read_number

# 17-08 Example 2: 4 · 512² = 4 · 262,144 = 1,048,576 parameters (no biases); tolerance 0.
PARAMS = AnswerSpec("number", 1048576, tolerance=0, mistakes=(
    Mistake(786432, "786,432 counts W^Q, W^K and W^V only: W^O (262,144) is missing."),
    Mistake(1050624, "1,050,624 includes the 4·512 biases.", credit=0.5),
))
# Example 3: 4 · 2 · n · d² = 8 · 2048 · 4096² = 8 · 2048 · 16,777,216 = 274,877,906,944; 3 s.f.
PROJ = AnswerSpec("number", 274877906944, sig_figs=3, measures="flops", mistakes=(
    Mistake(34359738368, "34.4B is n·d²: one projection in multiply-adds."),
))
# The same number when nothing says what it counts: only neutral factor messages.
UNKNOWN = AnswerSpec("number", 274877906944, sig_figs=3)


def grade(spec, answer) -> Outcome:
    return check_answer(spec, answer)


@pytest.mark.parametrize("answer", [
    1048576, "1048576", "1,048,576", "1 048 576", "1\u202f048\u202f576", "1_048_576", "1'048'576",
    "1.048576e6", "1.048576E+06", "1.048576×10^6", "1.048576 x 10**6", "1.048576·10⁶", "1.048576*10^(6)",
    "+1048576", "1048576.0", "1.048576M", "1.048576 million", "1048576 parameters",
])
def test_exact_forms_of_1048576_are_correct(answer):
    out = grade(PARAMS, answer)
    assert (out.status, out.correct, out.credit) == ("correct", True, 1.0), out
    assert out.read_as == "1,048,576"


@pytest.mark.parametrize("answer", ["2^20 parameters", "4*512^2 params", "4 × 512² weights"])
def test_arithmetic_with_a_noun_reads_as_the_plain_number(answer):
    # 2^20 = 4 · 512² = 1,048,576, as "1048576 parameters" is
    out = grade(PARAMS, answer)
    assert (out.status, out.correct) == ("correct", True), out
    assert out.read_as.endswith("= 1,048,576")


@pytest.mark.parametrize("answer", ["2^20 GFLOPS", "2^10 megaflops", "2^3 TFLOPs", "2^20 bytes"])
def test_arithmetic_with_a_unit_says_a_plain_number_is_asked(answer):
    # a unit is not a noun to drop, even one that ends like a noun (GFLOPS, megaflops)
    out = grade(PARAMS, answer)
    assert out.status == "invalid" and "plain number, without a unit" in out.feedback, out


@pytest.mark.parametrize("answer", ["1,048,577", "1048575", "-1048576", "1.05e6", "1M", "1,048,576.5", "0"])
def test_near_but_not_exact_is_wrong_when_the_exact_value_is_asked(answer):
    out = grade(PARAMS, answer)
    assert (out.status, out.correct, out.credit) == ("wrong", False, 0.0), out


def test_a_rounded_answer_to_an_exact_question_says_the_exact_value_is_asked():
    out = grade(PARAMS, "1.05e6")
    assert out.feedback == "1,050,000 is rounded (to 3 significant figures); the question asks for the exact value."


@pytest.mark.parametrize("answer, read_as", [
    ("274877906944", "274,877,906,944"),
    ("274,877,906,944", "274,877,906,944"),
    ("2.75e11", "275,000,000,000"),            # 3 s.f.: |2.75e11 - 2.7488e11| = 1.2e8 <= 5e8
    ("275B", "275,000,000,000"),
    ("275 billion", "275,000,000,000"),
    ("0.275 trillion", "275,000,000,000"),
    ("274.9 billion", "274,900,000,000"),      # 4 s.f.: |...| = 2.2e7 <= 5e7
    ("2.75×10^11", "275,000,000,000"),
    ("2.75·10¹¹", "275,000,000,000"),
    ("275 GFLOPs", "275,000,000,000"),
    ("275000000000", "275,000,000,000"),       # trailing zeros of an integer are not significant: 3 s.f.
])
def test_rounded_at_three_significant_figures_is_correct(answer, read_as):
    out = grade(PROJ, answer)
    assert out.status == "correct", out
    assert out.read_as == read_as
    if answer not in ("274877906944", "274,877,906,944"):
        assert "significant figures; exactly 274,877,906,944" in out.feedback


@pytest.mark.parametrize("answer, figures", [("2.7e11", "2 significant figures"), ("3e11", "1 significant figure"),
                                             ("270 billion", "2 significant figures")])
def test_too_few_figures_is_wrong_and_says_so(answer, figures):
    out = grade(PROJ, answer)
    assert out.status == "wrong"
    assert f"rounded to {figures}" in out.feedback and "give at least 3 significant figures" in out.feedback


def test_a_wrongly_rounded_answer_is_wrong():
    # 2.74e11 at 3 s.f.: |2.74e11 - 2.74878e11| = 8.8e8 > 5e8 (half of the last digit's 1e9)
    out = grade(PROJ, "2.74e11")
    assert (out.status, out.feedback) == ("wrong", "not the expected value")


def test_author_mistakes_win_and_match_at_the_stated_precision():
    assert grade(PROJ, "34.4B").feedback == "34.4B is n·d²: one projection in multiply-adds."
    assert grade(PROJ, 34359738368).feedback == "34.4B is n·d²: one projection in multiply-adds."
    out = grade(PARAMS, "786,432")
    assert (out.status, out.credit) == ("wrong", 0.0)
    assert out.feedback.startswith("786,432 counts W^Q")


def test_partial_credit_from_a_mistake():
    out = grade(PARAMS, 1050624)
    assert (out.status, out.correct, out.credit) == ("wrong", False, 0.5)
    assert out.feedback == "1,050,624 includes the 4·512 biases. (partial credit: 50%)"


@pytest.mark.parametrize("spec, answer, start", [
    # 274,877,906,944 / 2 = 137,438,953,472 (multiply-adds)
    (PROJ, "137438953472", "Your answer is half the expected value: did you count multiply-adds instead of FLOPs"),
    (PROJ, "137.4B", "Your answer is half the expected value: did you count multiply-adds"),
    # × 2 = 549,755,813,888
    (PROJ, "549755813888", "Your answer is twice the expected value"),
    (UNKNOWN, "137438953472", "Your answer is half the expected value: is something counted once"),
    (UNKNOWN, "549755813888", "Your answer is twice the expected value: is something counted twice?"),
    # / 4 = 68,719,476,736; × 4 = 1,099,511,627,776
    (UNKNOWN, "68719476736", "Your answer is a quarter of the expected value"),
    (UNKNOWN, "1099511627776", "Your answer is four times the expected value"),
])
def test_derived_factor_mistakes(spec, answer, start):
    out = grade(spec, answer)
    assert out.status == "wrong" and out.feedback.startswith(start), out


def test_factor_messages_never_guess_what_an_unknown_number_counts():
    for answer in ("137438953472", "549755813888", "68719476736", "1099511627776"):
        feedback = grade(UNKNOWN, answer).feedback
        assert "FLOP" not in feedback and "multiply-add" not in feedback and "bytes" not in feedback, feedback


def test_a_quarter_of_flops_is_not_said_to_be_elements_or_bytes():
    # FLOPs: a quarter has no meaning of its own (one projection comes from the spec's parts)
    out = grade(PROJ, "68719476736")
    assert out.feedback == "not the expected value"


def test_mega_against_mebi_is_not_said_of_a_plain_number():
    # 1,048,576 = 2^20; 10^6 / 2^20 of it is exactly 1,000,000: a plain number has no unit to confuse
    for measures in (None, "params", "count", "bytes"):
        out = grade(AnswerSpec("number", 1048576, sig_figs=7, measures=measures), "1000000")
        assert "MiB" not in out.feedback and "Mi (2²⁰)" not in out.feedback, out


def test_author_feedback_when_no_mistake_fits():
    spec = AnswerSpec("number", 64, feedback="d_k = d_model / h = 768 / 12.")
    assert grade(spec, 65).feedback == "d_k = d_model / h = 768 / 12."
    assert grade(spec, "64").status == "correct"


@pytest.mark.parametrize("tolerance, answer, status", [
    ({"rel": 0.02}, "0.7", "correct"),          # |0.7 - 0.70711| = 0.00711 <= 0.02 · 0.70711 = 0.01414
    ({"rel": 0.01}, "0.7", "wrong"),            # 0.00711 > 0.01 · 0.70711 = 0.00707
    ({"abs": 0.01}, "0.71", "correct"),         # 0.0029 <= 0.01
    ("2%", "0.7", "correct"),
    ("1e-3", "0.7", "wrong"),                   # 0.00711 > 0.000707
    ("0.001 abs", "0.708", "wrong"),            # 0.0009 ... fits: see next
])
def test_tolerances(tolerance, answer, status):
    ref = "0.7071067811865476"
    out = grade(AnswerSpec("number", ref, tolerance=tolerance), answer)
    if tolerance == "0.001 abs":
        # |0.708 - 0.70711| = 0.00089 <= 0.001: within the tolerance
        assert out.status == "correct"
    else:
        assert out.status == status, out


def test_outside_the_tolerance_says_so():
    out = grade(AnswerSpec("number", "0.7071067811865476", tolerance={"rel": 0.01}), "0.7")
    assert out.feedback == "0.7 is not within 1% of the expected value."


def test_non_integer_reference_accepts_three_figures_by_default():
    # 1/√2 = 0.70710678...: 0.707 (3 s.f.) right, 0.71 (2 s.f.) too coarse, 0.708 wrong
    spec = AnswerSpec("number", "0.7071067811865476")
    assert grade(spec, "0.707").status == "correct"
    assert "give at least 3 significant figures" in grade(spec, "0.71").feedback
    assert grade(spec, "0.708").status == "wrong"


def test_exact_fraction_reference_compares_exactly():
    spec = AnswerSpec("number", Fraction(1, 8))
    assert grade(spec, "0.125").status == "correct"
    assert grade(spec, 0.125).status == "correct"
    assert grade(spec, "12.5%").status == "correct"
    assert grade(spec, "0.126").status == "wrong"


def test_big_integers_are_never_rounded_through_floats():
    # 2^53 + 1 = 9,007,199,254,740,993 is not a float; float(2^53 + 1) == float(2^53)
    spec = AnswerSpec("number", 2**53 + 1)
    assert grade(spec, "9,007,199,254,740,993").status == "correct"
    assert grade(spec, "9007199254740992").status == "wrong"


@pytest.mark.parametrize("answer, message", [
    ("16,8", "use a point for decimals"),
    ("16.8m", "m is ambiguous (milli or million)"),
    ("sixty-four", "cannot read"),
    ("1e999999", "too large"),
])
def test_unreadable_numbers_are_invalid_with_a_reason(answer, message):
    out = grade(PARAMS, answer)
    assert (out.status, out.correct, out.credit) == ("invalid", False, 0.0)
    assert out.feedback.startswith("invalid answer: ") and message in out.feedback, out


@pytest.mark.parametrize("text, value, sig", [
    ("16.8", Fraction(168, 10), 3), ("16.0", Fraction(16), 3), ("0.0625", Fraction(1, 16), 3),
    ("1.05e6", Fraction(1050000), 3), ("34.4B", Fraction(34400000000), 3), ("2 billion", Fraction(2 * 10**9), 1),
    ("16.8k", Fraction(16800), 3), ("1.2 trillion", Fraction(12 * 10**11), 2), ("−5", Fraction(-5), 1),
    (".5", Fraction(1, 2), 1), ("1,000", Fraction(1000), 1),
])
def test_stated_precision(text, value, sig):
    r = read_number(text)
    assert (r.value, r.sig_figs) == (value, sig)


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_any_integer_with_separators_or_full_scientific_notation_reads_back_to_itself(n):
    digits = str(abs(n))
    sign = "-" if n < 0 else ""
    grouped = f"{abs(n):,}"
    forms = [f"{sign}{grouped}", f"{sign}{grouped.replace(',', ' ')}", f"{sign}{grouped.replace(',', '_')}"]
    if n:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        forms += [f"{sign}{mantissa}e{len(digits) - 1}", f"{sign}{mantissa}×10^{len(digits) - 1}"]
    for text in forms:
        assert read_number(text).value == n, text
        assert check_answer(AnswerSpec("number", n), text).status == "correct", text


def test_kilo_against_kibi_only_for_a_quantity_in_those_units():
    # 1024 = 2^10; 10^3/2^10 of it is 1000: a plain number has no kB or KiB to confuse
    assert "Ki" not in grade(AnswerSpec("number", 1024), "1000").feedback
    assert "Ki" not in grade(AnswerSpec("number", 1000), "1024").feedback
    # 16,000 KiB = 16,384,000 bytes = 16,777,216 · 10³/2¹⁰: given in KiB, the k/Ki confusion fits
    out = grade(AnswerSpec("quantity", 16777216, unit="byte"), "16000 KiB")
    assert out.feedback.startswith("Your answer is 10³/2¹⁰ of the expected value: k (10³) and Ki (2¹⁰) were confused")


def test_plain_numbers_import_neither_sympy_nor_pint():
    import subprocess
    import sys
    code = ("import sys; from grader.answers import AnswerSpec, check_answer\n"
            "s = AnswerSpec('number', 274877906944, sig_figs=3)\n"
            "r = [check_answer(s, a).status for a in (274877906944, '274,877,906,944', '275B', '2.75e11', '137.4B')]\n"
            "r += [check_answer(AnswerSpec('shape', (128, 64)), '128x64').status]\n"
            "r += [check_answer(AnswerSpec('choice', 'A', choices={'A': 'x'}), 'a').status]\n"
            "print(r, 'sympy' in sys.modules, 'pint' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['correct', 'correct', 'correct', 'correct', 'wrong', 'correct', 'correct'] False False"
