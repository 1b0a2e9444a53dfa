"""Experiments on the layer's mechanics, no training: dropout on the attention weights, one
backward pass and one step, independently initialised heads, the 1/√d_k scaling.

Each function takes the experiment's sizes, one seed, and ``attention`` (a class or factory
called like mha.MultiHeadAttention(d_model, num_heads, **kw); tests pass broken variants) and
returns {statistic: value, ..., "detail": "..."} for that seed. Seeded by torch.manual_seed(seed):
the weights, the inputs and dropout's draws.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal, overload

import torch
import torch.nn.functional as F

from . import stats

if TYPE_CHECKING:
    from mha.attention import MultiHeadAttention

    from .catalog import Attention

# What each experiment returns for one seed: {statistic: value, ..., "detail": "..."}
Outcome = dict[str, float | str]


def _attention(attention: Attention | None) -> Attention:
    if attention is not None:
        return attention
    import mha
    return mha.MultiHeadAttention


# -- dropout ---------------------------------------------------------------------------------

def dropout(sizes: Mapping[str, int], seed: int, p: float, attention: Attention | None = None) -> Outcome:
    """Training mode: the fraction of attention weights zeroed, and the survivors' scale;
    evaluation mode: the weights zeroed (none expected)."""
    import mha

    d, h, n, b = sizes["d"], sizes["h"], sizes["n"], sizes["b"]
    torch.manual_seed(seed)
    m = _attention(attention)(d, h, dropout=p).train()
    x = torch.randn(b, n, d)
    with torch.no_grad():
        A = mha.trace(m, x, x, x)["A_i"]  # (b, h, n, n): softmax before dropout
        _, A_train = m(x, x, x, need_weights=True, average_attn_weights=False)  # after dropout
        m.eval()
        _, A_eval = m(x, x, x, need_weights=True, average_attn_weights=False)
    positive = A > 0  # a softmax weight that underflowed to 0 says nothing about dropout
    N = int(positive.sum())
    zeroed = int(((A_train == 0) & positive).sum())
    z = stats.binomial_z(zeroed, N, p)
    scale_err = stats.survivor_scale_error(A_train, A, p)
    eval_zeroed = int(((A_eval == 0) & positive).sum())
    eval_change = float((A_eval - A).abs().max())
    return {"zeroed-z": round(z, 4), "survivor-scale-error": float(f"{scale_err:.3g}"),
            "eval-zeroed": eval_zeroed,
            "detail": f"training: {zeroed:,} of {N:,} weights zeroed ({zeroed / N:.4f}; p·N = {p * N:,.0f}, "
                      f"z = {z:.2f}), survivors ×(1-p)/A - 1 at most {scale_err:.1e}; evaluation: "
                      f"{eval_zeroed} zeroed, largest change {eval_change:.1e}"}


# -- gradients -------------------------------------------------------------------------------

@overload
def head_matrices(m: MultiHeadAttention, i: int, grad: Literal[False] = False) -> Mapping[str, torch.Tensor]: ...


@overload
def head_matrices(m: MultiHeadAttention, i: int, grad: Literal[True]) -> Mapping[str, torch.Tensor | None]: ...


def head_matrices(m: MultiHeadAttention, i: int, grad: bool = False) -> Mapping[str, torch.Tensor | None]:
    """Head i's W_i^Q, W_i^K, W_i^V and its rows of W^O (text orientation: Concat·W^O), as views
    of the parameters (or of their gradients); any layout."""
    def of(t: torch.Tensor) -> torch.Tensor | None:
        return t.grad if grad else t.detach()

    dk = m.d_k
    cols = slice(i * dk, (i + 1) * dk)
    if m.layout == "per_head":
        q, k, v = (of(getattr(m, f"W_i_{x}")[i]) for x in "QKV")
    elif m.packed:
        w = of(m.in_proj_weight)
        q, k, v = (None if w is None else w[j * m.d_model:(j + 1) * m.d_model][cols] for j in range(3))
    else:
        q, k, v = (of(w) for w in (m.q_proj_weight, m.k_proj_weight, m.v_proj_weight))
        q, k, v = (None if t is None else t[cols] for t in (q, k, v))
    wo = of(m.out_proj.weight)
    return {"W_i^Q": q, "W_i^K": k, "W_i^V": v, "W^O rows": None if wo is None else wo[:, cols]}


def gradients(sizes: Mapping[str, int], seed: int, attention: Attention | None = None) -> Outcome:
    """One backward pass of a seeded loss and one SGD step: which per-head matrices got a
    non-zero gradient and changed."""
    d, h, n, b = sizes["d"], sizes["h"], sizes["n"], sizes["b"]
    torch.manual_seed(seed)
    m = _attention(attention)(d, h, layout="per_head").train()
    x, target = torch.randn(b, n, d), torch.randn(b, n, d)
    before = [{k: t.clone() for k, t in head_matrices(m, i).items()} for i in range(h)]
    out, _ = m(x, x, x, need_weights=False)
    F.mse_loss(out, target).backward()
    grads = [{k: (0.0 if g is None else float(g.norm())) for k, g in head_matrices(m, i, grad=True).items()}
             for i in range(h)]
    torch.optim.SGD(m.parameters(), lr=0.1).step()
    after = [head_matrices(m, i) for i in range(h)]
    updated, missed = 0, []
    for i in range(h):
        for name in before[i]:
            changed = not torch.equal(before[i][name], after[i][name])
            if grads[i][name] > 0 and changed:
                updated += 1
            else:
                missed.append(f"head {i + 1} {name}" + ("" if grads[i][name] > 0 else " (zero gradient)")
                              + ("" if changed else " (unchanged)"))
    smallest = {name: min(g[name] for g in grads) for name in grads[0]}
    detail = (f"{updated} of {4 * h} per-head matrices updated; smallest gradient norm: "
              + ", ".join(f"{k} {v:.2e}" for k, v in smallest.items()))
    if missed:
        detail += "; not updated: " + ", ".join(missed)
    return {"updated-fraction": round(updated / (4 * h), 6), "detail": detail}


# -- independent heads -----------------------------------------------------------------------

def independent_heads(sizes: Mapping[str, int], seed: int, attention: Attention | None = None) -> Outcome:
    """Q_i, K_i, V_i of every head on one input: with the layer's own initialisation, and with
    every head given head 1's weights."""
    import mha

    d, h, n = sizes["d"], sizes["h"], sizes["n"]
    torch.manual_seed(seed)
    m = _attention(attention)(d, h, layout="per_head").eval()
    x = torch.randn(n, d)
    with torch.no_grad():
        t = mha.trace(m, x, x, x)
        own = {k: stats.head_difference(t[k], "min") for k in ("Q_i", "K_i", "V_i")}
        for name in ("W_i_Q", "W_i_K", "W_i_V") + (("b_i_Q", "b_i_K", "b_i_V") if m.bias else ()):
            group = getattr(m, name)
            for i in range(1, h):
                group[i].copy_(group[0])
        t = mha.trace(m, x, x, x)
        equal = {k: stats.head_difference(t[k], "max") for k in ("Q_i", "K_i", "V_i")}
    return {"min-head-difference": round(min(own.values()), 6),
            "equal-weights-difference": float(f"{max(equal.values()):.3g}"),
            "detail": "own weights: smallest relative difference between two heads "
                      + ", ".join(f"{k} {v:.3f}" for k, v in own.items())
                      + "; equal weights: largest " + ", ".join(f"{k} {v:.1e}" for k, v in equal.items())}


# -- scaling ---------------------------------------------------------------------------------

def score_scale(sizes: Mapping[str, int], seed: int, heads: Iterable[int],
                attention: Attention | None = None) -> Outcome:
    """var(S_i) for each h (d_k = d/h) on the same unit-variance inputs and initial weights."""
    import mha

    d, n, b = sizes["d"], sizes["n"], sizes["b"]
    torch.manual_seed(seed)
    x = torch.randn(b, n, d)
    var = {}
    for h in heads:
        torch.manual_seed(seed + 1)  # the same initial weights for every h (same shapes)
        m = _attention(attention)(d, h).eval()
        with torch.no_grad():
            var[d // h] = float(mha.trace(m, x, x, x)["S_i"].var())
    big, small = max(var), min(var)
    ratio = math.log2(var[big] / var[small])
    return {"log2-variance-ratio": round(ratio, 4),
            "detail": "var(S_i): " + ", ".join(f"d_k={k} {v:.3f}" for k, v in sorted(var.items()))
                      + f"; log2(var at d_k={big} / var at d_k={small}) = {ratio:.2f}"}
