"""Expressions and relations through grader.expr: 17-08's formulas in d (= d_model), h, n, b.

By hand: parameters with biases = 4 matrices d×d + 4 biases of d = 4d² + 4d = 4d(d + 1);
d_k = d/h; the crossover 4n²d > 8nd² ⟺ (dividing by 4nd > 0) n > 2d ⟺ d < n/2.
"""
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader import expr
from grader.expr import poly as P
from grader.answers import AnswerSpec, Mistake, check_answer

POS = {"positive": True, "integer": True}
TABLE = expr.SymbolTable.build(symbols={"d": POS, "h": POS, "n": POS, "b": POS},
                               aliases={"d_model": "d"}, definitions={"d_k": "d/h", "d_v": "d/h"})

PARAMS = AnswerSpec("expression", "4*d**2 + 4*d", table=TABLE, mistakes=(
    Mistake("4*d**2", "4d² leaves the biases out: each of the four projections has a bias of d entries."),
    Mistake("3*d**2 + 3*d", "W^O is forgotten: the output projection is a fourth d × d matrix with its bias."),
    Mistake("4*d**2 + d", "Only one bias counted.", credit=0.5),
))
D_K = AnswerSpec("expression", "d/h", table=TABLE, mistakes=(Mistake("d*h", "d_k shrinks with more heads: d_k = d / h."),))
CROSSOVER = AnswerSpec("relation", "n > 2*d", table=TABLE, mistakes=(
    Mistake("n > d", "n > d is the text's rule of thumb; with 8nd² against 4n²d the crossover is n = 2d."),
))


@pytest.mark.parametrize("answer", ["4*d**2 + 4*d", "4d² + 4d", "4·d² + 4·d", "d^2*4 + 4*d", "4d(d+1)",
                                    "4*d_model^2 + 4*d_model", "4 × d² + 4 × d", "4*d*(d + 1)", "(d+1)*4d"])
def test_equivalent_forms_of_4d2_plus_4d_are_correct(answer):
    out = check_answer(PARAMS, answer)
    assert (out.status, out.correct, out.credit) == ("correct", True, 1.0), out
    assert out.read_as


@pytest.mark.parametrize("answer, feedback, credit", [
    ("4d²", "4d² leaves the biases out: each of the four projections has a bias of d entries.", 0.0),
    ("4*d_model^2", "4d² leaves the biases out: each of the four projections has a bias of d entries.", 0.0),
    ("3d(d+1)", "W^O is forgotten: the output projection is a fourth d × d matrix with its bias.", 0.0),
    ("4d^2 + d", "Only one bias counted. (partial credit: 50%)", 0.5),
    # derived: 8d² + 8d = 2 · (4d² + 4d); 2d² + 2d = ½ ·; d² + d = ¼ ·
    ("8d^2 + 8d", "Your formula is twice the expected one: is something counted twice?", 0.0),
    ("2d^2 + 2d", "Your formula is half the expected one", 0.0),
    ("d^2 + d", "Your formula is a quarter of the expected one", 0.0),
    ("1048576", "Your answer is a number; the question asks for a formula in d.", 0.0),
    ("4d^2 + 4d + 1", "not equivalent to the expected formula", 0.0),
])
def test_wrong_formulas_get_the_most_specific_message(answer, feedback, credit):
    out = check_answer(PARAMS, answer)
    assert (out.status, out.correct, out.credit) == ("wrong", False, credit), out
    assert out.feedback.startswith(feedback), out.feedback


def test_d_k_through_definitions_and_aliases():
    for answer in ("d/h", "d_model/h", "d_k", "d / h"):
        assert check_answer(D_K, answer).status == "correct", answer
    out = check_answer(D_K, "d*h")
    assert (out.status, out.feedback) == ("wrong", "d_k shrinks with more heads: d_k = d / h.")


def test_an_undecided_equivalence_is_reported_never_guessed(monkeypatch):
    import grader.answers.symbolic as symbolic
    monkeypatch.setattr(symbolic, "compare_expressions", lambda a, b, table: "undecided")
    out = check_answer(D_K, "d_model/h")        # not a polynomial: SymPy's equivalence decides
    assert (out.status, out.correct, out.credit) == ("undecided", None, 0.0)
    assert "a person will check" in out.feedback


@pytest.mark.parametrize("answer", ["n > 2d", "2d < n", "d < n/2", "n > 2*d_model", "4n²d > 8nd²", "n - 2d > 0",
                                    "{n : n > 2d}", "{n | 2d < n}", "n ∈ (2d, ∞)", "n in (2*d, inf)"])
def test_equivalent_relations_are_correct(answer):
    out = check_answer(CROSSOVER, answer)
    assert out.status == "correct", out


@pytest.mark.parametrize("answer, feedback", [
    ("n > d", "n > d is the text's rule of thumb; with 8nd² against 4n²d the crossover is n = 2d."),
    ("n < 2d", "Your inequality points the other way: it holds exactly where the expected one fails."),
    ("2d > n", "Your inequality points the other way"),
    ("n >= 2d", "Strict (>, <) and non-strict (≥, ≤) differ at the boundary"),
    ("n > 3d", "not the expected relation"),
    ("n ∈ [2d, ∞)", "Strict (>, <) and non-strict (≥, ≤) differ at the boundary"),
    ("n ∈ (−∞, 2d)", "Your inequality points the other way"),
])
def test_wrong_relations(answer, feedback):
    out = check_answer(CROSSOVER, answer)
    assert out.status == "wrong" and out.feedback.startswith(feedback), out


def test_a_relation_needs_an_inequality():
    out = check_answer(CROSSOVER, "2d")
    assert out.status == "invalid" and "inequality" in out.feedback
    out = check_answer(CROSSOVER, "n ∈ (2d, 3d)")
    assert out.status == "invalid" and "a bounded interval is two inequalities" in out.feedback


@pytest.mark.parametrize("answer", [
    "__import__('os').system('touch PWNED')", "().__class__.__bases__[0].__subclasses__()",
    "lambda: open('PWNED', 'w')", "9**9**9**9", "((9^999)^999)^999", "2^(2^(2^(2^(2^2))))", "10^10^10",
    "(" * 500 + "d" + ")" * 500, "d^(" * 300 + "d" + ")" * 300, "d.__class__", "d.real", "import os",
])
@pytest.mark.parametrize("spec", [PARAMS, CROSSOVER], ids=["expression", "relation"])
def test_hostile_formulas_are_invalid_and_run_nothing(spec, answer, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = check_answer(spec, answer)
    assert (out.status, out.credit) == ("invalid", 0.0), out
    assert out.feedback.startswith("invalid answer: ")
    assert not os.path.exists(tmp_path / "PWNED")


@pytest.mark.parametrize("answer, value", [("1024/16", 64), ("2^6", 64), ("4*512^2", 1048576), ("2^20", 1048576),
                                           ("sqrt(4096)", 64)])
def test_arithmetic_numbers_through_the_parser(answer, value):
    out = check_answer(AnswerSpec("number", value), answer)
    assert out.status == "correct", out
    assert out.read_as.endswith(f"{value:,}")


def test_arithmetic_quantities():
    # 2^24 = 16,777,216; 4 · 2^22 = 16,777,216
    spec = AnswerSpec("quantity", 16777216, unit="byte")
    for answer in ("2^24 B", "2^24 bytes", "4*2^22 bytes", "256*128^2*4 bytes"):
        assert check_answer(spec, answer).status == "correct", answer


def test_four_times_the_formula():
    # 16d² + 16d = 4 · (4d² + 4d)
    out = check_answer(PARAMS, "16d^2 + 16d")
    assert out.feedback.startswith("Your formula is four times the expected one")


FORMS = ["4d^2 + 4d", "4d(d+1)", "4d^2", "3d^2 + 3d", "4d^2 + d", "8d^2 + 8d", "d^2 + d", "4d^2 + 4h", "d_k*h*4*(d+1)",
         "4d^2 + 4d + 0*h", "(2d+2)^2 - 4d - 4", "4*d_model^2 + 4*d_k*h", "1048576", "4d^2 - 4d", "d^3"]
RELATIONS = ["n > 2d", "2d < n", "n >= 2d", "n < 2d", "n > d", "n > 3d", "n^2 > 4d^2", "n/h > 2*d_k", "n > 2*d_k*h",
             "n - d > d", "2n > d", "n > 2d + 1"]


@pytest.mark.parametrize("spec, forms", [(PARAMS, FORMS), (CROSSOVER, RELATIONS)], ids=["expression", "relation"])
def test_fingerprints_never_change_a_verdict(spec, forms, monkeypatch):
    import grader.answers.check as check
    import grader.answers.symbolic as symbolic
    fast = [check_answer(spec, f) for f in forms]
    monkeypatch.setattr(symbolic, "fingerprint", lambda expr, table: None)
    monkeypatch.setattr(symbolic, "truths", lambda rel, table: None)
    monkeypatch.setattr(symbolic, "spread_truths", lambda rel, table: None)
    monkeypatch.setattr(symbolic, "polynomial_fingerprint", lambda poly: None)
    # two polynomials are compared by SymPy's equivalence instead of as polynomials
    monkeypatch.setattr(symbolic, "compare_polynomials", lambda a, b: symbolic.compare_expressions(
        P.to_sympy(a), P.to_sympy(b), TABLE))
    check.prepare.cache_clear()
    slow = [check_answer(spec, f) for f in forms]
    check.prepare.cache_clear()
    # the same verdicts and messages; only the sample points know a point to show
    def plain(o):
        return (o.status, o.correct, o.credit, o.read_as, o.feedback.split(": at ")[0])
    assert [plain(o) for o in fast] == [plain(o) for o in slow]
    assert {o.status for o in fast} == {"correct", "wrong"}


@pytest.mark.parametrize("answer", ["n > 3d", "n > 8*d", "n > d/2", "n^2 > 9d^2", "n > 2d + 1000", "2n > 5d"])
def test_relations_told_apart_at_sample_points_need_no_sympy(answer, monkeypatch):
    # each differs from n > 2d and from n > d at some positive n, d (n = 3d, 10d, d, 2.5d, ...)
    # and agrees with them elsewhere: proven different without the SymPy comparison
    import grader.answers.symbolic as symbolic

    def no_sympy(*args):
        raise AssertionError("compare_relations ran")
    monkeypatch.setattr(symbolic, "compare_relations", no_sympy)
    out = check_answer(CROSSOVER, answer)
    assert out.status == "wrong" and out.feedback.startswith("not the expected relation: at "), out


# the learner's relations above, and the reference n > 2d, in plain Python arithmetic
BY_HAND = {"n > 3d": lambda n, d: n > 3 * d, "n > 8*d": lambda n, d: n > 8 * d, "n^2 > 9d^2": lambda n, d: n * n > 9 * d * d,
           "n > 2d + 1000": lambda n, d: n > 2 * d + 1000, "2n > 5d": lambda n, d: 2 * n > 5 * d}


@pytest.mark.parametrize("answer", sorted(BY_HAND))
def test_a_wrong_relation_is_shown_a_point_where_it_is_wrong(answer):
    # the feedback names values of d and n; by hand there, the answer's truth is the one the
    # feedback says, and the reference's (n > 2d) is the other
    import re
    out = check_answer(CROSSOVER, answer)
    m = re.fullmatch(r"not the expected relation: at d = (\d+), n = (\d+) it (holds, but should not|fails, but "
                     r"should hold)", out.feedback)
    assert m, out.feedback
    d, n, said = int(m.group(1)), int(m.group(2)), m.group(3).startswith("holds")
    assert BY_HAND[answer](n, d) == said and (n > 2 * d) != said


def test_a_power_the_parser_left_unexpanded_is_not_expanded_for_the_sample_truths():
    # (n + d + h + b + 1)^16 has C(20, 4) = 4,845 terms once expanded: over MAX_TERMS, so no
    # expansion (it took seconds); the twelve points through SymPy still tell it apart
    from grader.answers.symbolic import MAX_TERMS, read_relation, spread_truths, truths
    rel = read_relation("(n+d+h+b+1)^16 > 2*d", TABLE)[0]
    assert MAX_TERMS < 4845 and spread_truths(rel, TABLE) is None
    assert truths(rel, TABLE) is not None
    out = check_answer(CROSSOVER, "(n+d+h+b+1)^16 > 2*d")
    assert out.status == "wrong" and out.feedback.startswith("not the expected relation: at "), out


@settings(max_examples=200, deadline=None)
@given(terms=st.lists(st.tuples(st.fractions(min_value=-50, max_value=50, max_denominator=7),
                                st.integers(-2, 3), st.integers(-2, 3)), min_size=1, max_size=4),
       op=st.sampled_from([">", "<", ">=", "<="]))
def test_sample_truths_match_sympy_at_every_point(terms, op):
    # the truths come from an integer polynomial (denominators and negative powers cleared);
    # here SymPy evaluates the relation itself, point by point
    import sympy
    from grader.answers.symbolic import SPREAD, spread_truths
    n, d = TABLE.symbol("n"), TABLE.symbol("d")
    lhs = sum((sympy.Rational(c.numerator, c.denominator) * n ** a * d ** b for c, a, b in terms), sympy.Integer(0))
    rel = sympy.Rel(lhs, sympy.Integer(1), op)
    if isinstance(rel, sympy.logic.boolalg.BooleanAtom):
        return
    got = spread_truths(rel, TABLE)
    assert got is not None
    col = {name: j for j, (name, _) in enumerate(TABLE.symbols)}
    for row, truth in zip(SPREAD, got):
        at = {n: row[col["n"] % len(row)], d: row[col["d"] % len(row)]}
        if lhs.xreplace(at) == 1:
            assert truth is None            # on the boundary
        else:
            assert truth == bool(rel.xreplace(at))


@settings(max_examples=200, deadline=None)
@given(terms=st.dictionaries(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 2)),
                             st.fractions(min_value=-99, max_value=99, max_denominator=9), max_size=5))
def test_polynomial_fingerprint_is_the_sympy_fingerprint(terms):
    # the same value at d = h = n = 7, once by SymPy's substitution, once from the polynomial
    from grader.answers.symbolic import fingerprint, polynomial, polynomial_fingerprint
    d, h, n = (TABLE.symbol(x) for x in "dhn")
    poly = {tuple((s, e) for s, e in zip((d, h, n), exps) if e): c for exps, c in terms.items() if c}
    expr = P.to_sympy(poly)
    assert polynomial(expr, TABLE) == poly
    assert polynomial_fingerprint(poly) == fingerprint(expr, TABLE)


def test_by_hand_verdicts_of_the_forms():
    # 4d² + 4d = 4d(d+1) = (2d+2)² − 4d − 4 = 4·d_model² + 4·d_k·h (d_k·h = d); 4d² + 4h is not (h ≠ d)
    ok = {"4d^2 + 4d", "4d(d+1)", "d_k*h*4*(d+1)", "4d^2 + 4d + 0*h", "(2d+2)^2 - 4d - 4", "4*d_model^2 + 4*d_k*h"}
    for f in FORMS:
        assert (check_answer(PARAMS, f).status == "correct") == (f in ok), f
    # n > 2d ⟺ 2d < n ⟺ n² > 4d² (n, d > 0) ⟺ n/h > 2·d_k ⟺ n > 2·d_k·h ⟺ n − d > d
    same = {"n > 2d", "2d < n", "n^2 > 4d^2", "n/h > 2*d_k", "n > 2*d_k*h", "n - d > d"}
    for r in RELATIONS:
        assert (check_answer(CROSSOVER, r).status == "correct") == (r in same), r


ANY = st.one_of(st.text(max_size=40), st.text(alphabet="dhnb_0123456789+-*/^()<>= ·×²³.,{}|:∈∞", max_size=40),
                st.integers(), st.floats(), st.lists(st.integers(), max_size=3))


@settings(max_examples=150, deadline=None)
@given(answer=ANY, relation=st.booleans())
def test_random_formulas_never_raise(answer, relation):
    out = check_answer(CROSSOVER if relation else PARAMS, answer)
    assert out.status in ("correct", "wrong", "invalid", "undecided")
    assert 0.0 <= out.credit <= 1.0
    if out.status == "invalid":
        assert out.feedback.startswith("invalid answer: ")
