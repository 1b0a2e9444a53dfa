"""The experiments' statistics computed from their definitions on hand-made cases, and the
verdict rule of kind demonstrate (expected numbers worked out by hand in the comments)."""
import math

import pytest
import torch

from grader.claims.checks.demonstrate import decide, parse_effect
from mha.experiments import stats
from mha.experiments.tasks import Batch, TaskConfig, observe, sample


def _maps():
    """Two heads over 4 positions. Head 1: query i puts 0.7 on i-1 and 0.3 on i (query 0 all on
    0). Head 2: uniform, 0.25 everywhere."""
    a = torch.zeros(4, 4)
    a[0, 0] = 1.0
    for i in range(1, 4):
        a[i, i - 1], a[i, i] = 0.7, 0.3
    return torch.stack([a, torch.full((4, 4), 0.25)]).unsqueeze(0)   # (1, 2, 4, 4)


def test_positional_mass_is_the_mean_weight_on_the_previous_position():
    A = _maps()
    # queries 1..3 have a previous position: head 1 gives it 0.7 each time, head 2 0.25
    assert stats.positional_mass(A, 1).tolist() == pytest.approx([0.7, 0.25])
    # offset 0 (the position itself), all 4 queries: head 1 (1 + 0.3·3)/4 = 0.475
    assert stats.positional_mass(A, 0).tolist() == pytest.approx([0.475, 0.25])
    # only query 3 counted: the same 0.7
    valid = torch.tensor([[False, False, False, True]])
    assert stats.positional_mass(A, 1, valid).tolist() == pytest.approx([0.7, 0.25])


def test_match_mass_reads_each_querys_own_match():
    A = _maps()
    match = torch.tensor([[1, 0, 1, 2]])     # query 0's match is key 1, query 1's key 0, ...
    # head 1: A[0,1] = 0, A[1,0] = 0.7, A[2,1] = 0.7, A[3,2] = 0.7 -> 2.1 / 4 = 0.525
    assert stats.match_mass(A, match).tolist() == pytest.approx([0.525, 0.25])
    valid = torch.tensor([[True, True, False, False]])      # (0 + 0.7) / 2
    assert stats.match_mass(A, match, valid).tolist() == pytest.approx([0.35, 0.25])


def test_mean_distance():
    A = _maps()
    # head 1: query 0 at distance 0; queries 1-3: 0.7·1 + 0.3·0 = 0.7 -> (0 + 2.1)/4 = 0.525
    # head 2 (uniform): query 0: (0+1+2+3)/4 = 1.5; query 1: (1+0+1+2)/4 = 1; 2: 1; 3: 1.5 -> 1.25
    assert stats.mean_distance(A).tolist() == pytest.approx([0.525, 1.25])


def test_specialisation_roles_and_redundancy():
    # one head wholly on i-1, one wholly on the match: D = (1 - 0) - (0 - 1) = 2
    assert stats.specialisation([1.0, 0.0], [0.0, 1.0]) == 2.0
    assert stats.specialisation([0.3, 0.3, 0.3], [0.2, 0.2, 0.2]) == 0.0     # all alike
    assert stats.roles([0.9, 0.1, 0.4, 0.6], [0.0, 0.8, 0.4, 0.55]) == ["positional", "match", "mixed", "positional"]
    assert stats.positional_head([0.1, 0.9], [0.8, 0.0]) == 1
    assert stats.positional_head([0.4, 0.3], [0.1, 0.2]) is None            # no head has half its mass on i-1
    assert stats.distinct([3, 3, None, 1]) == 2
    assert stats.shared_roles(["match", "match", "positional", "mixed"]) == 2
    assert stats.shared_roles(["match", "positional"]) == 0


def test_binomial_bound_and_survivor_scale():
    # 110 of 1000 zeroed at p = 0.1: |110 - 100| / sqrt(1000·0.1·0.9) = 10 / sqrt(90)
    assert stats.binomial_z(110, 1000, 0.1) == pytest.approx(10 / math.sqrt(90))
    before = torch.tensor([0.2, 0.4, 0.4])
    after = torch.tensor([0.0, 0.4 / 0.9, 0.4 / 0.9])
    assert stats.survivor_scale_error(after, before, 0.1) == pytest.approx(0.0, abs=1e-6)
    # a survivor left unscaled: 0.4·0.9/0.4 - 1 = -0.1
    assert stats.survivor_scale_error(torch.tensor([0.0, 0.4, 0.4 / 0.9]), before, 0.1) == pytest.approx(0.1)


def test_accuracy_gain_and_head_difference():
    assert stats.accuracy_gain({1: 0.25, 2: 0.9, 4: 0.8}) == pytest.approx(0.55)    # min(0.9, 0.8) - 0.25
    with pytest.raises(ValueError):
        stats.accuracy_gain({2: 0.9, 4: 0.8})
    X = torch.tensor([[[1.0, 0.0]], [[1.0, 0.0]], [[0.0, 2.0]]])     # heads 1 and 2 equal, head 3 not
    assert stats.head_difference(X, "min") == 0.0
    assert stats.head_difference(X, "max") == pytest.approx(1.0)       # max |diff| 2 over max |X| 2


def test_observe_reads_accuracy_and_masses_from_a_hand_made_model():
    """observe() on a stub model whose attention maps and predictions are given by hand."""
    # one sequence of 4: keys 0 1 0 1 -> matches 2 3 0 1; query 2's match (0) is not i-1 (1), ...
    b = Batch(q_keys=torch.tensor([[0, 1, 0, 1]]), src_keys=torch.tensor([[0, 1, 0, 1]]),
              src_vals=torch.tensor([[5, 6, 7, 4]]), match=torch.tensor([[2, 3, 0, 1]]),
              valid=torch.tensor([[False, True, True, True]]),
              prev_target=torch.tensor([[5, 5, 6, 7]]), match_target=torch.tensor([[7, 4, 5, 6]]))
    A = torch.zeros(1, 2, 4, 4)
    for i in range(4):
        A[0, 0, i, max(i - 1, 0)] = 1.0               # head 1: all on i-1
        A[0, 1, i, int(b.match[0, i])] = 1.0          # head 2: all on the match
    prev = torch.nn.functional.one_hot(b.prev_target, 8).float()
    match = torch.nn.functional.one_hot(b.match_target, 8).float()
    match[0, 3] = torch.nn.functional.one_hot(torch.tensor(0), 8).float()   # query 3's match wrong

    def model(batch, need_weights=False):
        return prev, match, A

    got = observe(model, b)
    # valid queries 1, 2, 3: prev right 3/3; match right at 1 and 2 -> both right 2/3
    assert got["accuracy"] == pytest.approx(2 / 3, abs=1e-4) and got["accuracy_prev"] == 1.0
    # masses over queries whose match is not i-1: query 1's match is 3 (i-1 = 0), query 2's 0 (1),
    # query 3's 1 (2): all three count. Head 1: 1 on i-1, 0 on the match; head 2 the reverse.
    assert got["prev_mass"] == [1.0, 0.0] and got["match_mass"] == [0.0, 1.0]


def test_the_task_sampler_builds_what_it_says():
    g = torch.Generator().manual_seed(0)
    b = sample(g, TaskConfig(d=8, n_q=8, n_k=8), 16)
    for s in range(16):
        keys = b.src_keys[s].tolist()
        for i in range(8):
            j = int(b.match[s, i])
            assert j != i and keys[j] == keys[i] and keys.count(keys[i]) == 2
            assert b.match_target[s, i] == b.src_vals[s, j]
            if i >= 1:
                assert b.prev_target[s, i] == b.src_vals[s, i - 1]
    c = sample(g, TaskConfig(d=8, n_q=5, n_k=9, cross=True), 16)
    assert c.q_keys.shape == (16, 5) and c.src_keys.shape == (16, 9)
    for s in range(16):
        assert len(set(c.src_keys[s].tolist())) == 9                     # distinct source keys
        for i in range(5):
            assert c.src_keys[s, int(c.match[s, i])] == c.q_keys[s, i]


@pytest.mark.parametrize("values, effect, verdict", [
    ([0.7, 0.72, 0.75], "> 0.2", "demonstrated"),          # every seed
    ([0.5, 0.5, 0.5, 0.5, 0.1], "> 0.2", "demonstrated"),  # mean 0.42, sd 0.179, se 0.08: 0.22 > 2·0.08
    ([0.3, 0.1, 0.25, 0.15], "> 0.2", "inconclusive"),     # mean 0.2: within the spread
    ([0.0, 0.1, -0.05], "> 0.2", "not demonstrated"),      # no seed
    ([0.1, 0.1, 0.1, 0.1, 0.25], "> 0.2", "not demonstrated"),  # mean 0.13, se 0.03: 0.07 > 0.06 beyond
    ([0, 0, 0], "= 0", "demonstrated"),
    ([0, 3, 0], "= 0", "inconclusive"),
    ([2, 3, 5], "= 0", "not demonstrated"),
    ([1.0, None, 1.0], ">= 1", "inconclusive"),
])
def test_the_verdict_rule(values, effect, verdict):
    op, threshold = parse_effect(effect)
    assert decide(values, op, threshold)[0] == verdict


def test_effects_are_read_without_eval():
    assert parse_effect(" >= 1e-5 ") == (">=", 1e-5)
    for bad in ("> x", "__import__('os')", "> 1 or 1", "", "> inf", "=> 1"):
        with pytest.raises(ValueError):
            parse_effect(bad)
