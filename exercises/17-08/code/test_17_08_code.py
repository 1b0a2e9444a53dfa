"""17-08 code exercise: your functions against the real multi-head attention.

    pytest exercises/17-08/code --solution path/to/your_solution.py

Each test builds seeded random weights and inputs, runs your function and the real thing
(``mha``), and compares shapes and values (tolerance ``mha_checks.TOL``). The sizes include
the edges: one head (h = 1), one dimension per head (h = d), one position (n = 1) and
cross-attention (n_q ≠ n_k).
"""
import pytest

import mha_checks as C
from mha_checks import Case

CASES = [
    Case("base", d=16, h=4, n_q=6, n_k=6),
    Case("one head, h = 1", d=8, h=1, n_q=5, n_k=5, seed=1),
    Case("h = d (d_k = 1)", d=6, h=6, n_q=4, n_k=4, seed=2),
    Case("one position, n = 1", d=12, h=3, n_q=1, n_k=1, seed=3),
    Case("cross-attention, n_q != n_k", d=16, h=2, n_q=3, n_k=7, seed=4),
    Case("unbatched", d=8, h=2, n_q=5, n_k=5, b=None, seed=5),
]
IDS = [c.name for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_split_heads(solution, case):
    C.check_split_heads(solution, case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_merge_heads(solution, case):
    C.check_merge_heads(solution, case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_attention_weights(solution, case):
    C.check_attention_weights(solution, case)


@pytest.mark.parametrize("case", CASES[:1] + CASES[4:], ids=IDS[:1] + IDS[4:])
def test_attention_weights_masked(solution, case):
    C.check_attention_weights(solution, case, masked=True)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_scaled_dot_product_attention(solution, case):
    C.check_sdpa(solution, case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_multi_head_forward(solution, case):
    C.check_multi_head_forward(solution, case)


@pytest.mark.parametrize("case", CASES[:1] + CASES[4:5], ids=IDS[:1] + IDS[4:5])
def test_multi_head_forward_masked(solution, case):
    C.check_multi_head_forward(solution, case, masked=True)


@pytest.mark.parametrize("d, h, bias", [(512, 8, True), (512, 8, False), (64, 1, True)])
def test_parameter_count(solution, d, h, bias):
    C.check_parameter_count(solution, d, h, bias)


@pytest.mark.parametrize("n_q, d, h, n_k", [(128, 512, 8, None), (2048, 4096, 32, None), (10, 64, 4, 30)])
def test_flop_count(solution, n_q, d, h, n_k):
    C.check_flop_count(solution, n_q, d, h, n_k)


def test_dropout_only_in_training(solution):
    C.check_dropout_eval(solution, Case("dropout", d=16, h=4, n_q=8, n_k=8, seed=6))


def test_dropout_in_training(solution):
    C.check_dropout_training(solution, Case("dropout", d=16, h=4, n_q=32, n_k=32, b=4, seed=7))
