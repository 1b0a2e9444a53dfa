"""The two-relation task and its training run (plain PyTorch, CPU, seeded).

Every position j of a source sequence holds a key token and a value token. For a query
position i, the targets are two value tokens:

- the **positional** relation: the value at source position i - 1;
- the **content** relation: the value at the one source position whose key is the query's key.

Self-attention (sizes d, n): the queries are the source positions; the keys come in pairs
(n/2 distinct keys, each at two positions), so a position's match is the other position with
its key. Cross-attention (sizes d, n_q, n_k, n_q ≠ n_k allowed): a separate query sequence of
n_q key tokens, each the key of one of the n_k source positions (whose keys are distinct).

The model: learned embeddings (key, value, position) summed into d dimensions, ONE mha layer
(queries from the query side, keys and values from the source), and two linear read-outs
d -> values (one per relation). For every h the model has the same parameters (the layer has
4d² + 4d whatever h) and the same matmul FLOPs, and for a given seed the same initial weights
(the fused layout's in-projection has the same shape whatever h) and the same batches.

Training: Adam, cross-entropy on both targets at every query that has both, fresh batches from
a generator seeded by the seed. Evaluation: a fixed batch (seeded by the seed too), never
trained on. One thread and torch's deterministic algorithms: the same seed gives the same
numbers, bit for bit, on the same machine and torch; with the portable CPU kernels that the
measuring process and ``python -m mha.experiments`` select (:mod:`mha.experiments.numerics`),
the same on other x86-64 machines too.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import stats

if TYPE_CHECKING:
    from .catalog import Attention

EVAL_SEED = 1_000_003   # the evaluation batch's generator: seed + EVAL_SEED (never a training seed)


@dataclass(frozen=True)
class TaskConfig:
    d: int = 32
    n_q: int = 8
    n_k: int = 8
    cross: bool = False
    values: int = 8         # value vocabulary
    batch: int = 64
    steps: int = 300
    lr: float = 2e-2
    eval_batch: int = 512

    @property
    def keys(self) -> int:
        """Key vocabulary: room for n/2 pairs (self-attention) or n_k distinct keys (cross)."""
        return max(8, self.n_k)

    def describe(self) -> str:
        sizes = f"n_q={self.n_q}, n_k={self.n_k}" if self.cross else f"n={self.n_q}"
        return (f"d={self.d}, {sizes}, {self.keys} keys, {self.values} values, batch {self.batch}, "
                f"{self.steps} steps, Adam lr {self.lr:g}")

    def as_dict(self) -> dict[str, int | float | bool]:
        return asdict(self)


def check_config(cfg: TaskConfig) -> None:
    if not cfg.cross and (cfg.n_q != cfg.n_k or cfg.n_q % 2 or cfg.n_q < 4):
        raise ValueError(f"self-attention needs an even n >= 4 (keys come in pairs), got n={cfg.n_q}")
    if cfg.cross and cfg.n_q < 2:
        raise ValueError(f"cross-attention needs n_q >= 2 (query i has source position i-1), got {cfg.n_q}")


@dataclass
class Batch:
    q_keys: torch.Tensor     # (B, n_q) key token of each query
    src_keys: torch.Tensor   # (B, n_k)
    src_vals: torch.Tensor   # (B, n_k)
    match: torch.Tensor      # (B, n_q) the source position whose key is the query's
    valid: torch.Tensor      # (B, n_q) bool: the query has both targets (source position i-1 exists)
    prev_target: torch.Tensor   # (B, n_q) value at source position i-1 (0 where not valid)
    match_target: torch.Tensor  # (B, n_q) value at the match


def sample(g: torch.Generator, cfg: TaskConfig, B: int) -> Batch:
    """B sequences of the task, drawn from generator ``g``."""
    n_q, n_k, K = cfg.n_q, cfg.n_k, cfg.keys
    if cfg.cross:
        src_keys = torch.stack([torch.randperm(K, generator=g)[:n_k] for _ in range(B)])  # (B, n_k) distinct
        match = torch.randint(0, n_k, (B, n_q), generator=g)  # (B, n_q)
        q_keys = src_keys.gather(1, match)  # (B, n_q)
    else:
        half = n_k // 2
        pairs = torch.stack([torch.randperm(K, generator=g)[:half] for _ in range(B)])  # (B, n/2)
        pairs = torch.cat([pairs, pairs], dim=1)  # (B, n): each key twice
        order = torch.stack([torch.randperm(n_k, generator=g) for _ in range(B)])
        src_keys = pairs.gather(1, order)  # (B, n)
        same = (src_keys.unsqueeze(2) == src_keys.unsqueeze(1)) & ~torch.eye(n_k, dtype=torch.bool)  # (B, n, n)
        match = same.to(torch.int64).argmax(dim=2)  # (B, n): the other position with the key
        q_keys = src_keys
    src_vals = torch.randint(0, cfg.values, (B, n_k), generator=g)  # (B, n_k)
    i = torch.arange(n_q)
    has_prev = (i >= 1) & (i - 1 < n_k)  # (n_q,)
    valid = has_prev.view(1, n_q).expand(B, n_q)  # (n_q,) → (B, n_q)
    prev_pos = (i - 1).clamp(0, n_k - 1).view(1, n_q).expand(B, n_q)  # (n_q,) → (B, n_q)
    prev_target = src_vals.gather(1, prev_pos)
    match_target = src_vals.gather(1, match)
    return Batch(q_keys, src_keys, src_vals, match, valid, prev_target, match_target)


class TwoRelationModel(nn.Module):
    """Embeddings -> one attention layer -> two linear read-outs (see the module doc)."""

    def __init__(self, cfg: TaskConfig, h: int, attention: Attention | None = None) -> None:
        super().__init__()
        import mha

        d = cfg.d
        self.cfg = cfg
        self.key_emb = nn.Embedding(cfg.keys, d)
        self.val_emb = nn.Embedding(cfg.values, d)
        self.src_pos = nn.Parameter(torch.randn(cfg.n_k, d))
        self.q_pos = nn.Parameter(torch.randn(cfg.n_q, d)) if cfg.cross else None
        self.att = (attention or mha.MultiHeadAttention)(d, h)
        self.read_prev = nn.Linear(d, cfg.values)
        self.read_match = nn.Linear(d, cfg.values)

    def inputs(self, b: Batch) -> tuple[torch.Tensor, torch.Tensor]:
        src = self.key_emb(b.src_keys) + self.val_emb(b.src_vals) + self.src_pos  # (B, n_k, d)
        if self.q_pos is None:
            return src, src
        return self.key_emb(b.q_keys) + self.q_pos, src  # (B, n_q, d), (B, n_k, d)

    def forward(self, b: Batch, need_weights: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        q, src = self.inputs(b)
        y, w = self.att(q, src, src, need_weights=need_weights, average_attn_weights=False)  # y (B, n_q, d)
        return self.read_prev(y), self.read_match(y), w  # (B, n_q, values) twice; w (B, h, n_q, n_k)


@contextmanager
def deterministic() -> Iterator[None]:
    """One intra-op thread and torch's deterministic algorithms while inside; restored after."""
    threads = torch.get_num_threads()
    was = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was)
        torch.set_num_threads(threads)


def loss_of(model: TwoRelationModel, b: Batch) -> torch.Tensor:
    prev, match, _ = model(b)
    v = b.valid
    return F.cross_entropy(prev[v], b.prev_target[v]) + F.cross_entropy(match[v], b.match_target[v])


def _r(x: float | torch.Tensor, digits: int = 4) -> float:
    return round(float(x), digits)


def observe(model: TwoRelationModel, b: Batch) -> dict[str, Any]:
    """What the statistics read, on the evaluation batch: accuracies, per-head masses on the
    positional and on the content relation, mean attention distance, average attention maps."""
    with torch.no_grad():
        prev, match, A = model(b, need_weights=True)  # A: (B, h, n_q, n_k)
    v = b.valid
    ok_prev = prev.argmax(-1) == b.prev_target
    ok_match = match.argmax(-1) == b.match_target
    i = torch.arange(b.match.shape[1]).view(1, -1)  # (1, n_q)
    apart = v & (b.match != i - 1)  # both relations exist and point at different source positions
    return {
        "accuracy": _r((ok_prev & ok_match)[v].float().mean()),
        "accuracy_prev": _r(ok_prev[v].float().mean()),
        "accuracy_match": _r(ok_match[v].float().mean()),
        "prev_mass": [_r(x) for x in stats.positional_mass(A, 1, apart)],
        "match_mass": [_r(x) for x in stats.match_mass(A, b.match, apart)],
        "distance": [_r(x) for x in stats.mean_distance(A, v)],
        "maps": [[[_r(x, 3) for x in row] for row in head] for head in A.mean(0)],  # (h, n_q, n_k)
        "example": [[[_r(x, 3) for x in row] for row in head] for head in A[0]],
    }


def train_run(cfg: TaskConfig, h: int, seed: int, attention: Attention | None = None) -> dict[str, Any]:
    """Train one model (h heads, this seed) and observe it before and after: a plain dict."""
    import mha

    check_config(cfg)
    start = time.perf_counter()
    with deterministic():
        torch.manual_seed(seed)
        model = TwoRelationModel(cfg, h, attention)
        g = torch.Generator().manual_seed(seed)
        ev = sample(torch.Generator().manual_seed(seed + EVAL_SEED), cfg, cfg.eval_batch)
        model.eval()
        init = observe(model, ev)
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
        for _ in range(cfg.steps):
            loss = loss_of(model, sample(g, cfg, cfg.batch))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        model.eval()
        trained = observe(model, ev)
        with torch.no_grad():
            final_loss = float(loss_of(model, ev))
        one = Batch(*(t[:1] for t in (ev.q_keys, ev.src_keys, ev.src_vals, ev.match, ev.valid,
                                      ev.prev_target, ev.match_target)))
        q, src = model.inputs(one)
        q, src = q.detach(), src.detach()
        flops = mha.measure_flops(model.att, q, src, src, need_weights=True).matmul_total
    return {"h": h, "seed": seed, "config": cfg.as_dict(), "init": init, "trained": trained,
            "final_loss": _r(final_loss), "params": mha.count_parameters(model),
            "attention_params": mha.count_parameters(model.att), "attention_flops": int(flops),
            "example_keys": {"query": one.q_keys[0].tolist(), "source": one.src_keys[0].tolist()},
            "seconds": round(time.perf_counter() - start, 3)}
