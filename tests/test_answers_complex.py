"""Answers whose values are not real at a sample point (√(d - 10⁴⁰) at d = 5, (-1)^log(2)), and
min, max and abs around them: each gets a decided grade (correct or wrong) or is an invalid
answer with its reason, never "cannot grade automatically" (issue #26, item 13)."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from grader.answers import check_answer


@pytest.fixture(scope="module")
def bank():
    from grader.api import load_bank
    return load_bank()


@pytest.fixture(scope="module")
def specs(bank):
    """The bundled bank's answer specs, one problem of each kind that reads expressions."""
    from grader.grade.check import prepare
    ids = {"expression": "17-08/params-formula", "relation": "17-08/crossover",
           "number": "17-08/practice-1", "quantity": "17-08/practice-4.bytes",
           "interval": "17-08/softmax-largest-weight"}
    out = {}
    for kind, pid in ids.items():
        problem = bank.get(pid)
        assert problem is not None and problem.kind == kind, pid
        out[kind] = prepare(problem, bank)
    return out


# -- the three answers of the issue, through the public API, on the bundled bank ----------------

def test_a_power_with_an_exponent_that_is_not_real_is_invalid(bank):
    # (-1)^log(2) = exp(iπ·log 2) = cos(π·log 2) + i·sin(π·log 2); π·log 2 ≈ 2.18 lies strictly
    # between 0 and π, so the imaginary part sin(2.18) ≈ 0.82 is not 0: not a real number
    from grader.api import grade_answer
    r = grade_answer(bank, "17-08/params-formula", "2^((-1)^log(2))")
    assert (r.status, r.score) == ("invalid", 0)
    assert r.feedback.startswith("invalid answer: ") and "not a real number: (-1)^log(2)" in r.feedback, r.feedback


def test_a_max_of_a_value_never_real_is_invalid(bank):
    # n is a positive integer: n/(-1) = -n < 0, so √(n/(-1)) = i·√n is never real, and max
    # compares real numbers only
    from grader.api import grade_answer
    r = grade_answer(bank, "17-08/crossover", "exp(max(d, sqrt(n/(-1)))) > n")
    assert (r.status, r.score) == ("invalid", 0)
    assert "max compares real numbers: √(n/(-1)) is not a real number" in r.feedback, r.feedback


def test_a_min_of_a_value_not_real_at_a_sample_point_is_wrong(bank):
    # the reference is 4d² + 4d, real at every d. At d = 1 (any d below 10⁴⁰, all the allowed
    # values a learner's d takes) d - 10⁴⁰ < 0, so √(d - 10⁴⁰) is not real and the min of it has
    # no value: the answer is not 4d² + 4d there. (It also depends on b, which 4d² + 4d does not.)
    from grader.api import grade_answer
    r = grade_answer(bank, "17-08/params-formula", "sqrt(min(sqrt(d - 1e40), max(64, exp(b))) - abs(d_k/0.5))")
    assert (r.status, r.score) == ("wrong", 0), r
    assert "cannot grade" not in r.feedback


@pytest.mark.parametrize("answer, status", [
    # √(d - 10⁴⁰) is i·√(10⁴⁰ - d) at every sampled d: "d - 10⁴⁰ > n" relates no real numbers there,
    # while the reference n > 2d holds at n = 3, d = 1
    ("sqrt(d - 1e40) > n", "wrong"),
    # max(√(d - 10⁴⁰), 1) has no value for d < 10⁴⁰, so the relation holds nowhere there (n > 2d
    # does at n = 3, d = 1): SymPy's sign of the ratio (max(...) ≥ 1 > 0) must not make it "equal"
    ("max(sqrt(d - 1e40), 1)*(n - 2d) > 0", "wrong"),
    ("max(sqrt(d - 1e40), n) > 2d", "wrong"),
    # √(-d) = i·√d is never real for d > 0
    ("max(sqrt(-d), d) > n", "invalid"),
    ("2^((-1)^log(2)) > n", "invalid"),
    # a real side throughout: max(√d, 0) = √d; n > 2d is still told apart at n = 3, d = 1 (3 > √1)
    ("max(sqrt(d), 0) > n", "wrong"),
    # the same region written with a factor that stays real and positive: max(d, 1) = d ≥ 1
    ("max(d, 1)*(n - 2d) > 0", "correct"),
])
def test_relations_with_values_that_are_not_real(specs, answer, status):
    out = check_answer(specs["relation"], answer)
    assert out.status == status, out


@pytest.mark.parametrize("answer, status", [
    ("min(sqrt(d - 1e40), 4)", "wrong"),           # no value at d = 1, where 4d² + 4d = 8
    ("abs(sqrt(d - 1e40))", "wrong"),              # |i·√(10⁴⁰ - 1)| ≈ 10²⁰ at d = 1, not 8
    ("max(sqrt(-d), d)", "invalid"),               # √(-d) never real
    ("min(2, (-1)^log(2))", "invalid"),
    ("log(-2)", "invalid"),                        # log 2 + iπ
    ("(-8)^(1/3)", "invalid"),                     # the principal cube root 1 + i·√3
])
def test_expressions_with_values_that_are_not_real(specs, answer, status):
    out = check_answer(specs["expression"], answer)
    assert out.status == status, out


def test_a_min_that_is_real_and_equal_to_the_reference_is_correct(specs):
    # √d > 0 for d > 0, so min(√d, 0) = 0 and the answer is 4d² + 4d; max(-√d, 0) = 0 likewise
    out = check_answer(specs["expression"], "4d^2 + 4d + min(sqrt(d), 0) + max(-sqrt(d), 0)")
    assert out.status == "correct", out


# -- the family, generated -------------------------------------------------------------------------

LEAVES = st.sampled_from(["d", "n", "h", "b", "d_k", "1", "2", "0.5", "64", "-1", "1e40", "-3", "(1/2)"])


def _grow(children):
    one = st.tuples(st.sampled_from(["sqrt", "log", "exp", "abs", "-"]), children).map(
        lambda t: f"-({t[1]})" if t[0] == "-" else f"{t[0]}({t[1]})")
    two = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "^"]), children).map(
        lambda t: f"({t[0]}) {t[1]} ({t[2]})")
    ext = st.tuples(st.sampled_from(["min", "max"]), st.lists(children, min_size=1, max_size=3)).map(
        lambda t: f"{t[0]}({', '.join(t[1])})")
    return st.one_of(one, two, ext)


# square roots and logs of differences (negative for every sample point, or for some), inside
# min, max, abs and powers
NEGATIVE = st.sampled_from(["sqrt(d - 1e40)", "sqrt(n/(-1))", "sqrt(1 - d)", "(-1)^log(2)", "log(-d)",
                            "sqrt(h - n)", "(-2)^(1/3)", "log(1 - n)", "sqrt(d_k - 3)"])
FAMILY = st.recursive(st.one_of(LEAVES, NEGATIVE), _grow, max_leaves=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(["expression", "relation", "number", "quantity", "interval"]), text=FAMILY,
       rhs=st.sampled_from(["n", "2d", "max(d, sqrt(1 - n))", "0"]), op=st.sampled_from([">", "<=", "<"]))
def test_values_that_are_not_real_never_make_an_internal_error(specs, kind, text, rhs, op):
    answer = f"{text} {op} {rhs}" if kind == "relation" else f"[{text}, 1]" if kind == "interval" else text
    out = check_answer(specs[kind], answer)
    assert "cannot grade automatically" not in out.feedback, (answer, out)
    assert out.status in ("correct", "wrong", "invalid", "undecided"), (answer, out)
    if out.status == "undecided":       # the grader could not decide, never a bug
        assert out.feedback.startswith("the grader could not decide"), (answer, out)
