"""The experiments' statistics, each computed from its definition (tests check them on
attention maps built by hand).

Attention maps ``A`` are (..., n_q, n_k) tensors whose rows are distributions over the keys;
leading dimensions are batch and heads. Every function returns plain Python numbers or lists.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import torch


def positional_mass(A: torch.Tensor, offset: int = 1, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Mean attention on key position i - offset, over the queries i that have one.

    A: (B, h, n_q, n_k); valid: (B, n_q) bool, the queries to count (None: all).
    -> (h,): for each head, mean over b and over the counted queries i with 0 <= i - offset < n_k
    of A[b, head, i, i - offset]."""
    B, h, n_q, n_k = A.shape
    rows = torch.arange(n_q)
    cols = rows - offset
    has = (cols >= 0) & (cols < n_k)  # (n_q,)
    w = has.view(1, n_q).expand(B, n_q) if valid is None else valid & has.view(1, n_q)  # (B, n_q)
    if not w.any():
        raise ValueError(f"no query has a key at offset {offset} (n_q {n_q}, n_k {n_k})")
    on_key = A[:, :, rows[has], cols[has]]  # (B, h, queries that have a key at i - offset)
    w = w[:, has].to(A.dtype).view(B, 1, -1)  # (B, 1, queries that have a key at i - offset)
    return (on_key * w).sum(dim=(0, 2)) / w.sum()


def match_mass(A: torch.Tensor, match: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Mean attention on each query's content match.

    A: (B, h, n_q, n_k); match: (B, n_q) key index per query; valid: (B, n_q) bool (None: all).
    -> (h,): for each head, mean over the valid (b, i) of A[b, head, i, match[b, i]]."""
    B, h, n_q, n_k = A.shape
    idx = match.view(B, 1, n_q, 1).expand(B, h, n_q, 1)  # (B, n_q) → (B, h, n_q, 1)
    on_match = A.gather(3, idx).squeeze(3)  # (B, h, n_q)
    if valid is None:
        return on_match.mean(dim=(0, 2))
    w = valid.view(B, 1, n_q).to(A.dtype)  # (B, n_q) → (B, 1, n_q)
    return (on_match * w).sum(dim=(0, 2)) / w.sum()


def mean_distance(A: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
    """Mean attention distance: sum_j A[i, j]·|i - j|, averaged over (valid) queries.

    A: (B, h, n_q, n_k) -> (h,)."""
    B, h, n_q, n_k = A.shape
    dist = (torch.arange(n_q).view(n_q, 1) - torch.arange(n_k).view(1, n_k)).abs().to(A.dtype)  # (n_q, n_k)
    per_query = (A * dist).sum(-1)  # (B, h, n_q)
    if valid is None:
        return per_query.mean(dim=(0, 2))
    w = valid.view(B, 1, n_q).to(A.dtype)  # (B, n_q) → (B, 1, n_q)
    return (per_query * w).sum(dim=(0, 2)) / w.sum()


def spread(values: Iterable[float]) -> float:
    """max - min of a list of numbers (0 for one number)."""
    values = [float(v) for v in values]
    return max(values) - min(values)


def specialisation(prev: Sequence[float], match: Sequence[float]) -> float:
    """D: the spread over heads of (positional mass - match mass): 0 when every head attends
    alike, 2 when one head is wholly on i-1 and another wholly on the match."""
    return spread([p - m for p, m in zip(prev, match)])


def roles(prev: Sequence[float], match: Sequence[float], threshold: float = 0.5) -> list[str]:
    """Each head's role: "positional" when at least ``threshold`` of its mass is on i-1 (and more
    than on the match), "match" likewise for the content match, else "mixed"."""
    out = []
    for p, m in zip(prev, match):
        if p >= threshold and p > m:
            out.append("positional")
        elif m >= threshold and m > p:
            out.append("match")
        else:
            out.append("mixed")
    return out


def shared_roles(head_roles: Sequence[str]) -> int:
    """How many heads have a clear role ("positional" or "match") that another head has too."""
    clear = [r for r in head_roles if r != "mixed"]
    return sum(1 for r in clear if clear.count(r) > 1)


def positional_head(prev: Sequence[float], match: Sequence[float], threshold: float = 0.5) -> int | None:
    """The index of the head most given to position i-1 (largest prev - match), or None when
    that head does not take the positional role (less than ``threshold`` of its mass on i-1)."""
    diffs = [p - m for p, m in zip(prev, match)]
    i = max(range(len(diffs)), key=lambda j: (diffs[j], -j))
    return i if roles(prev, match, threshold)[i] == "positional" else None


def distinct(values: Iterable[int | None]) -> int:
    """How many different values (None left out)."""
    return len({v for v in values if v is not None})


def binomial_z(zeroed: int, total: int, p: float) -> float:
    """|zeroed - p·N| / sqrt(N·p·(1-p)): how many binomial standard deviations the count of
    zeroed weights is from its expectation."""
    if not 0 < p < 1 or total <= 0:
        raise ValueError(f"binomial_z needs 0 < p < 1 and N > 0, got p={p}, N={total}")
    return abs(zeroed - p * total) / math.sqrt(total * p * (1 - p))


def survivor_scale_error(after: torch.Tensor, before: torch.Tensor, p: float) -> float:
    """The largest |after·(1-p)/before - 1| over the weights that survived (after != 0):
    0 when every survivor is its weight scaled by exactly 1/(1-p)."""
    kept = after != 0
    if not kept.any():
        return math.inf
    return float(((after[kept] * (1 - p)) / before[kept] - 1).abs().max())


def accuracy_gain(acc: dict[int, float]) -> float:
    """min over h != 1 of accuracy(h) - accuracy(1); ``acc`` maps h -> accuracy."""
    if 1 not in acc or len(acc) < 2:
        raise ValueError(f"accuracy_gain compares h = 1 with other h, got {sorted(acc)}")
    return min(a for h, a in acc.items() if h != 1) - acc[1]


def head_difference(X: torch.Tensor, reduce: str = "min") -> float:
    """For stacked per-head tensors X: (h, n, d_k), over every pair of heads a < b, the min (or
    max) of max|X_a - X_b|, relative to max|X|; 0.0 for h = 1."""
    h = X.shape[0]
    scale = float(X.abs().max()) or 1.0
    diffs = [float((X[a] - X[b]).abs().max()) / scale for a in range(h) for b in range(a + 1, h)]
    if not diffs:
        return 0.0
    return min(diffs) if reduce == "min" else max(diffs)


def mean_sd(values: Iterable[float]) -> tuple[float, float]:
    """(mean, sample standard deviation) of a list of numbers (sd 0.0 for one number)."""
    values = [float(v) for v in values]
    k = len(values)
    mean = sum(values) / k
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (k - 1)) if k > 1 else 0.0
    return mean, sd


# Confidence bounds of Monte Carlo estimates (kind `distribution` of the spec language; also usable for
# the demonstrations' per-seed statistics). Large-sample normal approximations, stated as such.

def z_value(level: float = 0.95) -> float:
    """The two-sided standard normal quantile: 1.96 for 95%."""
    from statistics import NormalDist
    if not 0 < level < 1:
        raise ValueError(f"a confidence level is between 0 and 1, got {level}")
    return NormalDist().inv_cdf(0.5 + level / 2)


def mean_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """(mean, half-width): the mean ± z·s/√N covers the true mean with probability about ``level``."""
    mean, sd = mean_sd(values)
    return mean, z_value(level) * sd / math.sqrt(len(values))


def variance_interval(values: Iterable[float], level: float = 0.95) -> tuple[float, float]:
    """(sample variance s², half-width): s² ± z·√((m₄ − s⁴)/N), m₄ the fourth central moment — the
    asymptotic standard error of s², which does not assume normal data."""
    values = [float(v) for v in values]
    k = len(values)
    if k < 4:
        raise ValueError("a variance's confidence bound needs at least 4 samples")
    mean = sum(values) / k
    dev2 = [(v - mean) ** 2 for v in values]
    s2 = sum(dev2) / (k - 1)
    m4 = sum(x * x for x in dev2) / k
    return s2, z_value(level) * math.sqrt(max(m4 - s2 * s2, 0.0) / k)


def proportion_interval(hits: int, total: int, level: float = 0.95) -> tuple[float, float]:
    """(centre, half-width) of the Wilson score interval for a proportion hits/total."""
    if total <= 0 or not 0 <= hits <= total:
        raise ValueError(f"a proportion needs 0 <= hits <= total and total > 0, got {hits}/{total}")
    z = z_value(level)
    p = hits / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return centre, half
