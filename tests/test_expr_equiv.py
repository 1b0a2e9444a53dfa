"""grader.expr.equivalent: equal, different (with a counterexample checked here by hand),
undecided (never a guess); relations; constraints; the time limit."""
import pickle
import signal
import threading

import pytest
import sympy

from grader.expr import Equivalence, SymbolTable, equivalent, parse

POS_INT = {"positive": True, "integer": True}
d, h, n = (sympy.Symbol(s, positive=True, integer=True) for s in "dhn")


@pytest.fixture(scope="module")
def table():
    return SymbolTable.build(symbols={"d": POS_INT, "h": POS_INT, "n": POS_INT, "b": POS_INT},
                             aliases={"d_model": "d"}, definitions={"d_k": "d/h", "d_v": "d/h"},
                             functions=("sqrt", "log", "exp", "min", "max", "abs", "O"))


def P(table, text, relations=False):
    return parse(text, table, relations=relations).expr


@pytest.mark.parametrize("answer,reference", [
    ("4d²", "4*d**2 + 4*d - 4d"),
    ("4d(d+1)", "4d²+4d"),
    ("4*d_model^2 + 4 d_model", "4*d**2 + 4*d"),
    ("d^2*4 + 4d", "4·d² + 4·d"),
    ("8nd²+4n²d", "8*n*d**2 + 4*n**2*d"),
    ("4nd(2d + n)", "8*n*d**2 + 4*n**2*d"),
    ("d/h", "d_k"),
    ("h·d_k", "d"),
    ("(d^2 - 1)/(d - 1)", "d + 1"),
    ("1/d + 1/h", "(d + h)/(d h)"),
    ("2^20", "1,048,576"),
])
def test_equal(table, answer, reference):
    r = equivalent(P(table, answer), P(table, reference), table)
    assert r.verdict == "equal", r
    assert r.method in ("identical", "rational") and r.counterexample is None


def _check_counterexample(cx, a, b):
    """The counterexample is a point of positive integers where a and b differ."""
    assert cx and all(isinstance(v, int) and v > 0 for v in cx.values())
    assert a.xreplace(cx) != b.xreplace(cx)


@pytest.mark.parametrize("answer,reference", [
    ("3d²", "4d² + 4d"),              # W^O forgotten
    ("4d", "4d² + 4d"),
    ("4d²", "4d² + 4d"),              # biases left out
    ("8*n*d**2", "8*n**2*d"),
    ("4nd² + 2n²d", "8nd² + 4n²d"),   # multiply-adds instead of FLOPs
    ("d", "d_k"),                     # d instead of d_k
    ("d/h + 1", "d_k"),
])
def test_different_with_counterexample(table, answer, reference):
    a, b = P(table, answer), P(table, reference)
    r = equivalent(a, b, table)
    assert r.verdict == "different"
    _check_counterexample(r.counterexample, a, b)


def test_hand_counterexample_shape(table):
    # 3d² against 4d² + 4d differ wherever d² + 4d ≠ 0, i.e. at every positive d
    r = equivalent(P(table, "3d²"), P(table, "4d²+4d"), table)
    (sym, value), = r.counterexample.items()
    assert sym == d and 3 * value**2 != 4 * value**2 + 4 * value


def test_not_polynomial_equal_by_simplify(table):
    r = equivalent(P(table, "log(d h)"), P(table, "log(d) + log(h)"), table)
    assert r.verdict == "equal" and r.method == "simplify"


def test_not_polynomial_different_by_sampling(table):
    a, b = P(table, "sqrt(d_k)"), P(table, "sqrt(d)/h")
    r = equivalent(a, b, table)
    assert r.verdict == "different" and r.method == "sampling"
    cx = r.counterexample
    # sqrt(d/h) = sqrt(d)/h only where h = 1 (h² = h): the counterexample has h > 1
    assert cx[h] > 1


def test_undecided_when_simplify_runs_out_of_time(table):
    r = equivalent(P(table, "log(d h n)"), P(table, "log(d) + log(h) + log(n)"), table, timeout=1e-5)
    assert r.verdict == "undecided" and "timed out" in r.method


def test_undecided_when_nothing_can_settle_it(table):
    # O(d) and O(2d) are undefined functions: no point evaluates them, simplify cannot equate them
    r = equivalent(P(table, "O(d)"), P(table, "O(2d)"), table)
    assert r.verdict == "undecided" and r.counterexample is None


def test_simplify_off_the_main_thread_is_undecided(table):
    out = {}

    def run():
        out["log"] = equivalent(P(table, "log(2 d h)"), P(table, "log(2) + log(d) + log(h)"), table)
        out["poly"] = equivalent(P(table, "4d(d+1)"), P(table, "4d^2+4d"), table)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert out["log"].verdict == "undecided"
    assert out["poly"].verdict == "equal"


def test_outer_timer_survives(table):
    fired = []
    old = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        r = equivalent(P(table, "log(3 d h)"), P(table, "log(3) + log(d) + log(h)"), table)
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert r.verdict == "equal"
        assert 0 < left <= 30 and not fired
        assert signal.getsignal(signal.SIGALRM) is not None and not fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def test_constraint_divides(table):
    a, b = P(table, "h·d_k"), P(table, "h·d")
    r = equivalent(a, b, table, constraints=[("divides", h, d)])
    assert r.verdict == "different"
    cx = r.counterexample
    assert cx[d] % cx[h] == 0 and cx[h] > 1          # h·(d/h) = d ≠ h·d needs h > 1


def test_constraint_relation(table):
    # with n > 2d, max(n, 2d) is n: no sample may refute it; simplify knows nothing of the
    # constraint, so the honest verdict is "undecided"
    r = equivalent(P(table, "max(n, 2d)"), P(table, "n"), table,
                   constraints=[P(table, "n > 2d", relations=True)])
    assert r.verdict == "undecided"
    r = equivalent(P(table, "max(n, 2d)"), P(table, "n"), table)
    assert r.verdict == "different" and r.counterexample[n] <= 2 * r.counterexample[d]


@pytest.mark.parametrize("answer", ["n > 2d", "2d < n", "n/2 > d", "d < n/2", "4n²d > 8nd²",
                                    "n - 2d > 0", "2 n > 4 d_model"])
def test_relations_equal(table, answer):
    r = equivalent(P(table, answer, True), P(table, "n > 2*d", True), table)
    assert r.verdict == "equal", r


@pytest.mark.parametrize("answer,why", [
    ("n >= 2d", "strictness"), ("n < 2d", "reversed"), ("n > d", "sampling"), ("n > 3d", "sampling"),
    ("n = 2d", "kind"),
])
def test_relations_different(table, answer, why):
    a, ref = P(table, answer, True), P(table, "n > 2*d", True)
    r = equivalent(a, ref, table)
    assert r.verdict == "different", r
    cx = r.counterexample
    assert cx is not None
    # at the counterexample exactly one of the two holds (checked by hand arithmetic on ints)
    assert bool(a.xreplace(cx)) != (cx[n] > 2 * cx[d])


def test_strictness_counterexample_is_on_the_boundary(table):
    r = equivalent(P(table, "n >= 2d", True), P(table, "n > 2d", True), table)
    assert r.counterexample[n] == 2 * r.counterexample[d]


def test_relation_against_expression(table):
    assert equivalent(P(table, "n > 2d", True), P(table, "n - 2d"), table).verdict == "different"


def test_chains(table):
    a, b = P(table, "0 < n < 2d", True), P(table, "2d > n > 0", True)
    assert equivalent(a, b, table).verdict == "equal"
    c = P(table, "0 < n < 3d", True)
    r = equivalent(a, c, table)
    assert r.verdict == "different"
    cx = r.counterexample
    assert 2 * cx[d] <= cx[n] < 3 * cx[d]


def test_values_are_picklable(table):
    r = equivalent(P(table, "3d²"), P(table, "4d²+4d"), table)
    assert pickle.loads(pickle.dumps(r)) == r
    assert isinstance(r, Equivalence)


def test_plain_numbers(table):
    assert equivalent(64, P(table, "1024/16"), table).verdict == "equal"
    assert equivalent(63, P(table, "1024/16"), table).verdict == "different"
    with pytest.raises(TypeError):
        equivalent("4d", P(table, "4d"), table)       # text must go through parse first


def test_conjuncts_true_under_the_assumptions_say_nothing(table):
    # n is a positive integer: 0 < n always holds, so 0 < n < 2d says just n < 2d
    assert equivalent(P(table, "0 < n < 2d", True), P(table, "n < 2d", True), table).verdict == "equal"
    # and n > 0 is the same statement as n ≥ 0 (both always true), not a strictness mismatch
    assert equivalent(P(table, "n > 0", True), P(table, "n >= 0", True), table).verdict == "equal"


def test_reversed_without_a_point_is_not_guessed(table):
    # sqrt(d²) - d is 0 for every positive d: both relations are always false, so they agree;
    # whatever the verdict, it must not be "different"
    r = equivalent(P(table, "sqrt(d^2) - d > 0", True), P(table, "d - sqrt(d^2) > 0", True), table)
    assert r.verdict != "different"
