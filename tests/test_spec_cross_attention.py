"""Cross-attention in the measuring adapter: n_q query positions, n_k key/value positions.
Expected figures by hand: d 512, h 8 (d_k 64), n_q 10, n_k 20."""
import pytest

from grader.errors import ErrorList
from grader.claims.load import load_subject, load_subjects
from grader.claims.measure import QuantityError, measure
from grader.claims.run import run_subject
from spec_helpers import HEADER, claim, write_spec

CROSS = {"d": 512, "h": 8, "n_q": 10, "n_k": 20}


def test_shapes_and_counts_of_cross_attention():
    assert measure("shape.Q_i", CROSS) == (10, 64)          # the queries' rows
    assert measure("shape.K_i", CROSS) == (20, 64) == measure("shape.V_i", CROSS)
    assert measure("shape.S_i", CROSS) == (10, 20) == measure("shape.A_i", CROSS)
    assert measure("shape.output", CROSS) == (10, 512)
    assert measure("tensor.A_i", {**CROSS, "b": 3}) == (3, 8, 10, 20)
    assert measure("attention.count", {**CROSS, "b": 3}) == 24            # 3 · 8
    assert measure("attention.elements", CROSS) == 8 * 10 * 20            # 1,600
    assert measure("attention.bytes.fp32", CROSS) == 4 * 1600


def test_flops_of_cross_attention():
    # q and out projections: 2·n_q·d² each = 5,242,880; k and v: 2·n_k·d² each = 10,485,760
    assert measure("flops.q_proj", CROSS) == 2 * 10 * 512**2 == measure("flops.out_proj", CROSS)
    assert measure("flops.k_proj", CROSS) == 2 * 20 * 512**2 == measure("flops.v_proj", CROSS)
    assert measure("flops.projections", CROSS) == 4 * 10 * 512**2 + 4 * 20 * 512**2      # 31,457,280
    # QKᵀ and A·V: 2·n_q·n_k·d each = 204,800
    assert measure("flops.qk", CROSS) == 2 * 10 * 20 * 512 == measure("flops.av", CROSS)
    # n_q = n_k = n is self-attention's count
    assert measure("flops.total", {"d": 64, "h": 4, "n_q": 9, "n_k": 9}) == measure("flops.total", {"d": 64, "h": 4, "n": 9})


def test_sizes_are_n_or_n_q_and_n_k():
    with pytest.raises(QuantityError, match="not both"):
        measure("flops.total", {**CROSS, "n": 10})
    with pytest.raises(QuantityError, match="missing size n_k"):
        measure("flops.total", {"d": 8, "h": 2, "n_q": 3})


HEADER_CROSS = HEADER.replace("  n: {positive: true, integer: true}\n",
                              "  n: {positive: true, integer: true}\n  n_q: {positive: true, integer: true}\n"
                              "  n_k: {positive: true, integer: true}\n")


def test_cross_attention_checks_in_a_spec(tmp_path):
    p = write_spec(tmp_path,
                   claim("s", "holds", ['{kind: shapes, at: {d: 512, h: 8, n_q: 10, n_k: 20}, '
                                        'shapes: {Q_i: [10, 64], K_i: [20, 64], A_i: [10, 20]}}']),
                   claim("m", "holds", ['{kind: measure, quantity: flops.qk, at: {d: 512, h: 8, n_q: 10, n_k: 20}, '
                                        'formula: "2*n_q*n_k*d"}']),
                   claim("w", "refuted", ['{kind: shapes, at: {d: 512, h: 8, n_q: 10, n_k: 20}, '
                                          'shapes: {K_i: [10, 64]}}']),
                   header=HEADER_CROSS)
    r = {x.claim.id: x for x in run_subject(load_subject(p)).results}
    assert r["s"].verdict == "holds" and r["m"].verdict == "holds" and "204,800" in r["m"].evidence
    assert r["w"].verdict == "refuted" and "traced (20, 64)" in r["w"].evidence


def test_cross_attention_sizes_are_checked_when_the_spec_loads(tmp_path):
    p = write_spec(tmp_path,
                   claim("a", "holds", ['{kind: shapes, at: {d: 8, h: 2, n: 3, n_q: 3, n_k: 4}, shapes: {Q_i: [3, 4]}}']),
                   claim("b", "holds", ['{kind: measure, quantity: flops.qk, at: {d: 8, h: 2, n_q: 3}, claimed: "1"}']),
                   claim("c", "holds", ['{kind: equivalence, a: fused, b: torch, at: {d: 8, h: 2, n_q: 3, n_k: 4}}']),
                   header=HEADER_CROSS)
    with pytest.raises(ErrorList) as info:
        load_subjects([p])
    errs = "\n".join(str(e) for e in info.value.errors)
    assert "give n (self-attention) or n_q and n_k (cross-attention), not both" in errs
    assert "needs a value for n_k" in errs
    assert "equivalence runs self-attention: give n" in errs
