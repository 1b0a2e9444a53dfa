"""kind distribution: statistical claims checked by Monte Carlo (seeded, with a confidence bound) and by
sympy.stats. The true values are derived by hand: for q, k with d_k independent components of mean 0 and
variance 1, E[q·k] = Σ E[q_i]E[k_i] = 0 and Var(q·k) = Σ Var(q_i k_i) = Σ E[q_i²]E[k_i²] = d_k."""
import pytest

from grader.errors import ErrorList
from grader.claims.load import load_subject
from grader.claims.run import run_subject
from spec_helpers import claim, write_spec


def run(tmp_path, *claims):
    subject = load_subject(write_spec(tmp_path, *claims))
    return {r.claim.id: r for r in run_subject(subject, device="cpu").results}


def test_the_variance_of_q_dot_k_is_d_k(tmp_path):
    r = run(tmp_path,
            claim("var", "holds", ['{kind: distribution, quantity: dot, statistic: variance, at: {d_k: 64}, expected: d_k}']),
            claim("var-uniform", "holds", ['{kind: distribution, quantity: dot, statistic: variance, at: {d_k: 16}, '
                                           'components: uniform, expected: d_k, seed: 3}']),
            claim("var-one", "refuted", ['{kind: distribution, quantity: dot, statistic: variance, at: {d_k: 64}, expected: "1"}']),
            claim("scaled", "holds", ['{kind: distribution, quantity: dot, statistic: variance, at: {d_k: 64}, scaled: true, '
                                      'expected: "1"}']),
            claim("mean", "holds", ['{kind: distribution, quantity: dot, statistic: mean, at: {d_k: 64}, expected: "0"}']),
            # d_k = 1: q·k = q_1 k_1 is positive with probability 1/2 (a symmetric product)
            claim("tail", "holds", ['{kind: distribution, quantity: dot, statistic: tail, threshold: 0, at: {d_k: 1}, '
                                    'claimed: "0.5", samples: 10000}']))
    assert {k: v.verdict for k, v in r.items()} == {"var": "holds", "var-uniform": "holds", "var-one": "refuted",
                                                    "scaled": "holds", "mean": "holds", "tail": "holds"}
    ev = r["var"].evidence
    assert ev.startswith("holds: variance of q·k ") and "(95%) at d_k = 64, 20,000 samples (seed 0" in ev
    assert "sympy.stats" in ev and "Var(q·k) = d_k·Var(q_1 k_1) = d_k" in ev
    assert "outside it" in r["var-one"].evidence and ", not 1" in r["var-one"].evidence


def test_softmax_saturates_without_the_scaling(tmp_path):
    vary = "vary: {d_k: [4, 16, 64, 256]}, samples: 4000"
    r = run(tmp_path,
            claim("max-up", "holds", [f'{{kind: distribution, quantity: softmax_max, statistic: mean, at: {{n: 16}}, {vary}, '
                                      f'trend: increasing}}']),
            claim("entropy-down", "holds", [f'{{kind: distribution, quantity: softmax_entropy, statistic: mean, at: {{n: 16}}, '
                                            f'{vary}, trend: decreasing}}']),
            # with 1/√d_k the scores keep variance 1: no saturation to show
            claim("scaled-flat", "refuted", [f'{{kind: distribution, quantity: softmax_max, statistic: mean, at: {{n: 16}}, '
                                             f'{vary}, scaled: true, trend: increasing}}']))
    assert {k: v.verdict for k, v in r.items()} == {"max-up": "holds", "entropy-down": "holds", "scaled-flat": "refuted"}
    assert "do not show it increasing" in r["scaled-flat"].evidence


def test_a_seed_gives_the_same_numbers_and_another_seed_others():
    from grader.claims.statistics import run_statistic
    req = {"quantity": "dot", "statistic": "variance", "sizes": {"d_k": 8}, "samples": 500, "seed": 7}
    a, b = run_statistic(req), run_statistic(dict(req))
    c = run_statistic({**req, "seed": 8})
    assert a == b and a["estimate"] != c["estimate"]


@pytest.mark.parametrize("req, truth", [
    ({"quantity": "dot", "statistic": "variance", "sizes": {"d_k": 4}}, 4.0),
    ({"quantity": "dot", "statistic": "mean", "sizes": {"d_k": 4}, "components": "rademacher"}, 0.0),
    ({"quantity": "dot", "statistic": "tail", "sizes": {"d_k": 1}, "threshold": 0.0}, 0.5),
])
def test_the_stated_95_percent_bound_covers_the_true_value_about_95_percent_of_the_time(req, truth):
    """300 seeds of 1,000 samples: the share of bounds that cover the true value is 0.95 give or take the
    binomial noise of 300 trials (sd 1.3%); the range below is about ±3.5 sd."""
    from grader.claims.statistics import run_statistic
    covered = 0
    for seed in range(300):
        e = run_statistic({**req, "samples": 1000, "seed": seed, "level": 0.95})
        covered += abs(e["estimate"] - truth) <= e["half"]
    assert 0.90 <= covered / 300 <= 0.99, covered


@pytest.mark.parametrize("check, message", [
    ('{kind: distribution, quantity: dot, statistic: mean, at: {d_k: 8}, expected: "0", trend: increasing}', "give one of"),
    ('{kind: distribution, quantity: softmax_max, statistic: mean, at: {d_k: 8}, expected: "1/n"}', "give n in 'at'"),
    ('{kind: distribution, quantity: dot, statistic: tail, at: {d_k: 8}, claimed: "0.5"}', "needs 'threshold'"),
    ('{kind: distribution, quantity: dot, statistic: mean, at: {d: 8}, expected: "0"}', "unknown size 'd'"),
    ('{kind: distribution, quantity: dot, statistic: mean, at: {d_k: 8}, expected: "h"}', "unknown name 'h'"),
    ('{kind: distribution, quantity: softmax_max, statistic: mean, at: {d_k: 60000, n: 4000}, expected: "1"}',
     "random numbers, more than"),
    ('{kind: distribution, quantity: dot, statistic: mean, at: {d_k: 8}, expected: "0", level: 2}', "confidence level"),
])
def test_bad_distribution_checks_are_load_errors(tmp_path, check, message):
    with pytest.raises(ErrorList) as e:
        load_subject(write_spec(tmp_path, claim("c", "holds", [check])))
    assert any(message in str(x) for x in e.value.errors), [str(x) for x in e.value.errors]
