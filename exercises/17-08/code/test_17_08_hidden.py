"""17-08 code exercise: hidden tests (graders keep this file; learners do not get it).

Other seeds and sizes than the visible tests, so a solution that only fits those cases —
or returns numbers copied from them — fails here.
"""
import pytest

import mha_checks as C
from mha_checks import Case

HIDDEN = [
    Case("hidden: wide batch", d=24, h=3, n_q=9, n_k=9, b=3, seed=101),
    Case("hidden: cross-attention", d=20, h=5, n_q=7, n_k=2, seed=102),
    Case("hidden: h = d", d=10, h=10, n_q=3, n_k=6, b=None, seed=103),
    Case("hidden: n_q = 1", d=18, h=2, n_q=1, n_k=5, b=1, seed=104),
]
IDS = [c.name for c in HIDDEN]


@pytest.mark.parametrize("case", HIDDEN, ids=IDS)
def test_hidden_split_merge(solution, case):
    C.check_split_heads(solution, case)
    C.check_merge_heads(solution, case)


@pytest.mark.parametrize("case", HIDDEN, ids=IDS)
def test_hidden_forward(solution, case):
    C.check_multi_head_forward(solution, case, masked=True)


@pytest.mark.parametrize("case", HIDDEN, ids=IDS)
def test_hidden_attention(solution, case):
    C.check_sdpa(solution, case, masked=True)


@pytest.mark.parametrize("d, h, bias", [(768, 12, True), (1024, 16, False), (96, 96, True)])
def test_hidden_parameter_count(solution, d, h, bias):
    C.check_parameter_count(solution, d, h, bias)


@pytest.mark.parametrize("n_q, d, h, n_k, batch", [(77, 768, 12, None, 3), (5, 32, 4, 11, 2)])
def test_hidden_flop_count(solution, n_q, d, h, n_k, batch):
    C.check_flop_count(solution, n_q, d, h, n_k, batch)
