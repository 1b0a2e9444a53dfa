"""Measurements of a block or a whole stack: parameters, forward and decoding FLOPs, KV-cache bytes.

Each number is read off the live module (any device; "meta" measures frontier sizes without
memory): parameters by counting them, FLOPs with mha.measure_flops (1 multiply-add = 2 FLOPs,
matmuls by stage, softmax/scaling/masking/bias apart; norms, activations, residual adds and
embedding lookups are not counted), KV-cache bytes from the caches a causal forward fills.

    r = mha.measure_model(model, n=4096, dtype=torch.float16)
    r.named()["bytes.kv_cache"]     # one sequence of n tokens, every layer, at fp16

The names in `MEASURE_NAMES` are those the spec language uses.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, TypeAlias, TypedDict

if TYPE_CHECKING:
    import torch

    from mha.attention import MultiHeadAttention
    from mha.block import Transformer, TransformerBlock
    from mha.kv_cache import KVCache
    from mha.measure import FlopReport

    Model: TypeAlias = Transformer | TransformerBlock | MultiHeadAttention

Kind = Literal["Transformer", "TransformerBlock", "MultiHeadAttention"]

MEASURE_NAMES = MappingProxyType({
    "params.block": "parameters of one transformer block (the first)",
    "params.model": "parameters of the whole module (a tied matrix counted once)",
    "flops.forward": "matmul FLOPs of one forward pass over n tokens (batch b)",
    "flops.attention": "QKᵀ and A·V matmul FLOPs of that forward, all layers",
    "flops.projections": "Q, K, V and output projection FLOPs of that forward, all layers",
    "flops.ffn": "feed-forward matmul FLOPs of that forward, all layers",
    "flops.lm_head": "output-layer matmul FLOPs of that forward",
    "flops.decode_step": "matmul FLOPs of decoding one token after n − 1 cached (batch b)",
    "bytes.kv_cache": "KV-cache bytes of b sequences of n tokens, all layers, at dtype",
    "bytes.kv_cache_token": "KV-cache bytes per token, all layers, at dtype",
    "bytes.kv_cache_token_layer": "KV-cache bytes per token and layer, at dtype",
})


@dataclass(frozen=True)
class ModelMeasurement:
    """What measure_model read off one module at n tokens, batch b, KV cache at `dtype`."""

    n: int
    batch: int
    dtype: str
    layers: int
    params_block: int
    params_model: int
    forward: FlopReport  # the forward over n tokens
    decode_step: FlopReport  # one token after n − 1 cached
    kv_cache_bytes: int  # b sequences of n tokens, all layers

    def named(self) -> dict[str, int]:
        """{spec-language name: value} for every name in MEASURE_NAMES."""
        per_token = self.kv_cache_bytes // (self.n * self.batch)
        f = self.forward
        return {"params.block": self.params_block, "params.model": self.params_model,
                "flops.forward": f.matmul_total, "flops.attention": f.attention,
                "flops.projections": f.projections, "flops.ffn": f.ffn, "flops.lm_head": f.lm_head,
                "flops.decode_step": self.decode_step.matmul_total,
                "bytes.kv_cache": self.kv_cache_bytes, "bytes.kv_cache_token": per_token,
                "bytes.kv_cache_token_layer": per_token // self.layers}


def _kind(m: object) -> Kind:
    from mha.attention import MultiHeadAttention
    from mha.block import Transformer, TransformerBlock
    if isinstance(m, Transformer):
        return "Transformer"
    if isinstance(m, TransformerBlock):
        return "TransformerBlock"
    if isinstance(m, MultiHeadAttention):
        return "MultiHeadAttention"
    raise ValueError(f"m must be an mha.Transformer, mha.TransformerBlock or mha.MultiHeadAttention, "
                     f"got {type(m).__name__}")


def _sizes(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _inputs(m: Model, batch: int, n: int) -> torch.Tensor:
    """Zeros of the right shape on m's device: token ids for a Transformer, else (batch, n, d_model)."""
    import torch

    from mha.attention import MultiHeadAttention
    from mha.block import Transformer
    w = next(m.parameters())
    if isinstance(m, Transformer):
        return torch.zeros(batch, n, dtype=torch.long, device=w.device)  # (B, n)
    d = m.d_model if isinstance(m, MultiHeadAttention) else m.attn.d_model
    return torch.zeros(batch, n, d, dtype=w.dtype, device=w.device)  # (B, n, d_model)


def _caches(m: Model, batch: int, max_len: int, dtype: torch.dtype | None) -> list[KVCache]:
    from mha.block import Transformer
    if isinstance(m, Transformer):
        return m.new_kv_caches(batch, max_len, dtype=dtype)
    return [m.new_kv_cache(batch, max_len, dtype=dtype)]


class _ForwardKwargs(TypedDict, total=False):
    is_causal: bool
    need_weights: bool
    kv_cache: KVCache
    kv_caches: Sequence[KVCache]


def _forward_args(kind: Kind, x: torch.Tensor,
                  caches: Sequence[KVCache]) -> tuple[tuple[torch.Tensor, ...], _ForwardKwargs]:
    """The arguments of one causal forward of a `kind` module on x appending to caches."""
    if kind == "Transformer":
        return (x,), {"kv_caches": caches}
    if kind == "TransformerBlock":
        return (x,), {"is_causal": True, "kv_cache": caches[0]}
    return (x, x, x), {"is_causal": True, "kv_cache": caches[0], "need_weights": False}


def _call(m: Model, kind: Kind, x: torch.Tensor, caches: Sequence[KVCache]) -> None:
    """One causal forward of m on x appending to caches."""
    import torch
    args, kw = _forward_args(kind, x, caches)
    with torch.no_grad():
        m(*args, **kw)


def kv_cache_bytes(m: Model, n_tokens: int = 1, *, batch: int = 1, dtype: torch.dtype | None = None) -> int:
    """Bytes of the KV caches that a causal forward over `batch` sequences of `n_tokens` fills,
    summed over layers, with caches at `dtype` (default: m's dtype). Runs on m's device."""
    kind = _kind(m)
    _sizes("n_tokens", n_tokens)
    _sizes("batch", batch)
    caches = _caches(m, batch, n_tokens, dtype)
    _call(m, kind, _inputs(m, batch, n_tokens), caches)
    return sum(c.nbytes for c in caches)


def decode_step_flops(m: Model, n_past: int, *, batch: int = 1) -> FlopReport:
    """FlopReport of decoding one token (per sequence of the batch) after n_past tokens are cached."""
    kind = _kind(m)
    if isinstance(n_past, bool) or not isinstance(n_past, int) or n_past < 0:
        raise ValueError(f"n_past must be a non-negative integer, got {n_past!r}")
    _sizes("batch", batch)
    caches = _caches(m, batch, n_past + 1, None)
    if n_past:
        _call(m, kind, _inputs(m, batch, n_past), caches)
    from mha.measure import measure_flops
    args, kw = _forward_args(kind, _inputs(m, batch, 1), caches)
    return measure_flops(m, *args, **kw)  # the last token, measured


def measure_model(m: Model, n: int, *, batch: int = 1, dtype: torch.dtype | None = None) -> ModelMeasurement:
    """Parameters, forward FLOPs over n tokens, one decoding step after n − 1, and KV-cache bytes
    for `batch` sequences of n tokens at `dtype` (a torch.dtype; default m's), of a Transformer,
    a TransformerBlock or a MultiHeadAttention (a block or a layer counts as one layer)."""
    import torch

    from mha.block import Transformer
    from mha.measure import count_parameters, measure_flops
    kind = _kind(m)
    _sizes("n", n)
    _sizes("batch", batch)
    w = next(m.parameters())
    dtype = w.dtype if dtype is None else dtype
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise ValueError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    x = _inputs(m, batch, n)
    if kind == "MultiHeadAttention":
        forward = measure_flops(m, x, x, x, is_causal=True, need_weights=False)
    else:
        forward = measure_flops(m, x, is_causal=True) if kind == "TransformerBlock" else measure_flops(m, x)
    block = m.blocks[0] if isinstance(m, Transformer) else m
    return ModelMeasurement(
        n=n, batch=batch, dtype=str(dtype).removeprefix("torch."),
        layers=len(m.blocks) if isinstance(m, Transformer) else 1,
        params_block=count_parameters(block), params_model=count_parameters(m), forward=forward,
        decode_step=decode_step_flops(m, n - 1, batch=batch),
        kv_cache_bytes=kv_cache_bytes(m, n, batch=batch, dtype=dtype))
