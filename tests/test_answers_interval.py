"""The interval kind (grader/answers/kinds/interval.py): the forms it reads, its verdicts and
feedback, hostile input, the bank's exercise and its verification."""
from fractions import Fraction

import pytest

from grader.answers import AnswerSpec, Mistake, check_answer
from grader.answers.kinds.interval import Interval, read_interval
from grader.answers.model import Unreadable

SOFTMAX_MAX = AnswerSpec("interval", "[1/128, 1)")


@pytest.mark.parametrize("text, expected", [
    ("[0, 1]", Interval(Fraction(0), Fraction(1), False, False)),
    ("(0, 1]", Interval(Fraction(0), Fraction(1), True, False)),
    ("]0, 1[", Interval(Fraction(0), Fraction(1), True, True)),
    ("[0; 1)", Interval(Fraction(0), Fraction(1), False, True)),
    ("0 to 1", Interval(Fraction(0), Fraction(1), False, False)),
    ("from -1 to 1", Interval(Fraction(-1), Fraction(1), False, False)),
    ("between 0 and 1/2", Interval(Fraction(0), Fraction(1, 2), False, False)),
    ("0 <= x < 1", Interval(Fraction(0), Fraction(1), False, True)),
    ("0 < a_ij ≤ 1", Interval(Fraction(0), Fraction(1), True, False)),
    ("[0, ∞)", Interval(Fraction(0), None, False, True)),
    ("(-inf, 0]", Interval(None, Fraction(0), True, False)),
    ("[1,024; 2,048]", Interval(Fraction(1024), Fraction(2048), False, False)),
    ("[2^-7, 1)", Interval(Fraction(1, 128), Fraction(1), False, True)),
    ([0, 1], Interval(Fraction(0), Fraction(1), False, False)),     # a YAML list: closed
])
def test_forms(text, expected):
    assert read_interval(text) == expected


@pytest.mark.parametrize("text, why", [
    ("[1, 0]", "the lower end 1 is above the upper end 0"),
    ("(1, 1]", "an empty interval"),
    ("[0, inf]", "∞ is not a number an interval can include"),
    ("[inf, 0)", "inf cannot be the lower end"),
    ("[1,024, 2,048]", "cannot tell the two endpoints apart"),
    ("[sqrt(2), 2]", "is not an exact number"),
    ("[0, 1", "expected an interval such as"),
    ("hello", "expected an interval such as"),
])
def test_unreadable_intervals_say_why(text, why):
    with pytest.raises(Unreadable, match=None) as e:
        read_interval(text)
    assert why in str(e.value)
    out = check_answer(SOFTMAX_MAX, text)
    assert (out.status, out.credit) == ("invalid", 0.0) and why in out.feedback


@pytest.mark.parametrize("answer", ["[1/128, 1)", "[0.0078125, 1)", "1/128 <= w < 1", "[2^-7; 1)", "[1/128,1)"])
def test_the_same_interval_written_otherwise_is_correct(answer):
    out = check_answer(SOFTMAX_MAX, answer)
    assert (out.status, out.credit, out.read_as) == ("correct", 1.0, "[0.0078125, 1)")


def test_right_endpoints_with_an_end_wrongly_included_or_excluded():
    out = check_answer(SOFTMAX_MAX, "[1/128, 1]")
    assert out.status == "wrong" and "1 itself is never reached: leave it out with ')'" in out.feedback
    out = check_answer(SOFTMAX_MAX, "(1/128, 1)")
    assert out.status == "wrong" and "0.0078125 itself is reached: include it with '['" in out.feedback
    out = check_answer(SOFTMAX_MAX, "(1/128, 1]")       # both ends: both said
    assert "never reached" in out.feedback and "is reached" in out.feedback


def test_wider_narrower_and_one_end():
    assert "too wide" in check_answer(SOFTMAX_MAX, "[0, 1)").feedback
    assert "the upper end is right" in check_answer(SOFTMAX_MAX, "[0, 1)").feedback
    assert "too narrow" in check_answer(SOFTMAX_MAX, "[1/64, 1/2]").feedback
    assert check_answer(SOFTMAX_MAX, "[2, 3]").feedback == "not the expected interval"


def test_authors_mistakes_tolerance_and_unbounded_ends():
    spec = AnswerSpec("interval", "[1/128, 1)", mistakes=(Mistake("[0, 1]", "every weight, not the largest", 0.5),))
    out = check_answer(spec, "0 to 1")
    assert (out.status, out.credit, out.feedback) == ("wrong", 0.5, "every weight, not the largest (partial credit: 50%)")
    rounded = AnswerSpec("interval", "[1/128, 1)", tolerance={"abs": 0.001})
    assert check_answer(rounded, "[0.008, 1)").status == "correct"
    assert check_answer(SOFTMAX_MAX, "[0.008, 1)").status == "wrong"       # exact without a tolerance
    relu = AnswerSpec("interval", "[0, inf)")
    assert check_answer(relu, "0 <= y < ∞").status == "correct"
    assert check_answer(relu, "(0, inf)").status == "wrong"


@pytest.mark.parametrize("raw", [[0, 1, 2], [[0], 1], [True, 1], {"lo": 0}, None, "x" * 5000, "[0\x00, 1]",
                                 "[0, 1e999999999]", "[1e-999999999, 1)", "[1/128, 10**400)", "[0,1) or [1/128,1)",
                                 "[" + "(" * 1500 + "0, 1]", "[1/128, 1) # x"])
def test_hostile_answers_are_invalid(raw):
    out = check_answer(SOFTMAX_MAX, raw)
    assert (out.status, out.credit) == ("invalid", 0.0) and out.feedback.startswith("invalid answer: ")


def test_the_bank_exercise_is_verified_graded_and_previewed():
    from grader.api import grade_answer, load_bank, validate_answer
    from grader.bank import verify_reference
    bank = load_bank()
    pid = "17-08/softmax-largest-weight"
    v = verify_reference(bank.get(pid), bank)
    assert v.ok and "endpoints 0.0078125 and 1" in v.found
    r = grade_answer(bank, pid, "[1/128, 1)")
    assert (r.status, r.score) == ("correct", 1.0) and r.latex == r"\left[\frac{1}{128}, 1\right)"
    r = grade_answer(bank, pid, [0, 1])         # an answers file's YAML list
    assert r.status == "wrong" and "at least their mean, 1/128" in r.feedback
    reading = validate_answer(bank, pid, "(0, 1)")
    assert reading.ok and reading.read_as == "(0, 1)" and "<mo>(</mo>" in reading.mathml
    assert not validate_answer(bank, pid, "[1, 0]").ok


def test_a_wrong_endpoint_in_the_bank_fails_verification(tmp_path):
    from grader.bank import load_bank, verify_reference
    f = tmp_path / "b.yaml"
    f.write_text("subject: x\nproblems:\n  - {id: x/a, prompt: p, kind: interval, reference: '[1/64, 1)',\n"
                 "     derive: {lo: 1/n, hi: '1', at: {n: 128}}}\n")
    bank = load_bank(f)
    v = verify_reference(bank.get("x/a"), bank)
    assert not v.ok and "gives endpoints 0.0078125 and 1" in v.message


def test_the_exercise_is_true_of_real_softmax_rows():
    """Independent of the grader: the largest of 128 softmax weights is >= 1/128 (equal scores
    reach it) and < 1, on random and extreme rows."""
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    rows = torch.cat([torch.randn(256, 128, generator=g, dtype=torch.float64) * s for s in (0.1, 1.0, 8.0)]
                     + [torch.zeros(1, 128, dtype=torch.float64)])
    largest = torch.softmax(rows, dim=-1).max(dim=-1).values
    assert bool((largest >= 1 / 128 - 1e-15).all()) and bool((largest < 1).all())
    assert abs(float(largest[-1]) - 1 / 128) < 1e-15        # equal scores: the mean is reached


def test_an_interval_problem_cannot_have_a_variant(tmp_path):
    """A variant's reference is derived: an interval's endpoints are, which ends it includes is not."""
    from grader.bank import load_bank
    from grader.errors import ErrorList
    f = tmp_path / "b.yaml"
    f.write_text("subject: x\nproblems:\n  - {id: x/a, prompt: p, kind: interval, reference: '[1/128, 1)',\n"
                 "     derive: {lo: 1/n, hi: '1', at: {n: 128}}, variant: {seed_from: learner, choose: {n: [64, 128]}}}\n")
    with pytest.raises(ErrorList) as e:
        load_bank(f)
    assert f"{f}:4:" in str(e.value) and "an interval problem cannot have a 'variant'" in str(e.value)
