"""The measuring side of a transformer's quantities (imports torch; run in the measuring process).

    measure_model_quantity("params.model", {"d": 768, "h": 12, "d_ff": 3072, "L": 12, "V": 50257,
                                             "n_ctx": 1024}, {"activation": "gelu_tanh", ...})

Every number is read off a real ``mha.Transformer`` / ``mha.TransformerBlock`` built on the
"meta" device (no memory at any size), by mha's own counters (:mod:`mha.model_measures`):
parameters counted, FLOPs by mha.measure_flops (1 multiply-add = 2 FLOPs), KV-cache bytes from
the caches a causal forward fills. The KV cache does not depend on d_ff or the vocabulary, so
``bytes.kv_cache*`` build the stack with d_ff = 1 and a vocabulary of 1.
"""
from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .model_sizes import DTYPES, INFERENCE, SHARED

if TYPE_CHECKING:       # mha (and torch) are imported on first use only
    from mha.block import Activation, Norm, Transformer, TransformerBlock
    from mha.measure import FlopReport

_TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


def measure_model_quantity(quantity: str, sizes: Mapping[str, int], options: Mapping[str, Any]) -> int | float:
    """The quantity of the transformer with these sizes and options (see grader.claims.model_sizes)."""
    from .measure import import_torch
    torch = import_torch()
    o: dict[str, Any] = {"activation": "gelu", "norm": "layernorm", "tied": True, "dtype": "fp32", "bias": True,
                         **options}
    if o["dtype"] not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {o['dtype']!r}")
    dtype = getattr(torch, _TORCH_DTYPES[o["dtype"]])
    s = dict(sizes)
    d, h, g = s["d"], s["h"], s.get("g")
    key = (o["activation"], o["norm"], bool(o["tied"]), bool(o["bias"]))
    if quantity in INFERENCE:  # mha.inference: every size and setting, the model in dtype
        from mha.inference import inference_quantity
        return inference_quantity(quantity, d_model=d, heads=h, d_ff=s["d_ff"], n=s["n"], batch=s.get("b", 1),
                                  kv_heads=g, layers=s.get("L"), vocab=s.get("V"), n_ctx=s.get("n_ctx"),
                                  activation=key[0], norm=key[1], tied=key[2], bias=key[3], dtype=dtype)
    if quantity == "params.block":
        return _count(_block(d, h, s["d_ff"], g, *key))
    if quantity == "params.model":
        return _count(_stack(s["V"], d, s["L"], h, s["d_ff"], g, s.get("n_ctx"), *key))
    from mha.model_measures import kv_cache_bytes
    if quantity == "bytes.kv_cache_token_layer":
        return kv_cache_bytes(_block(d, h, 1, g, *key), 1, dtype=dtype)
    if quantity == "bytes.kv_cache_token":
        return kv_cache_bytes(_stack(1, d, s["L"], h, 1, g, None, *key), 1, dtype=dtype)
    if quantity == "bytes.kv_cache":
        return kv_cache_bytes(_stack(1, d, s["L"], h, 1, g, None, *key), s["n"], batch=s.get("b", 1), dtype=dtype)
    m = _stack(s["V"], d, s["L"], h, s["d_ff"], g, s.get("n_ctx"), *key)
    if quantity == "flops.decode_step":
        return _decode(m, s["n"], s.get("b", 1)).matmul_total
    report = _forward(m, s["n"], s.get("b", 1))
    part = quantity.partition(".")[2]
    if quantity == "flops.forward":
        return report.matmul_total
    if quantity in SHARED or part in ("ffn", "lm_head"):
        flops: int = getattr(report, part)      # the report's count of that part
        return flops
    raise ValueError(f"not a model quantity: {quantity!r}")


def _count(m: TransformerBlock | Transformer) -> int:
    from mha.measure import count_parameters
    return int(count_parameters(m))


@lru_cache(maxsize=16)
def _block(d: int, h: int, d_ff: int, g: int | None, activation: Activation, norm: Norm, tied: bool,
           bias: bool) -> TransformerBlock:
    """A mha.TransformerBlock on "meta" (``tied`` unused: a block has no output layer; it keys the cache alike)."""
    import mha
    return mha.TransformerBlock(d, h, d_ff, n_kv_heads=g, activation=activation, norm=norm, bias=bias,
                                device="meta").eval()


@lru_cache(maxsize=8)
def _stack(vocab: int, d: int, layers: int, h: int, d_ff: int, g: int | None, n_ctx: int | None,
           activation: Activation, norm: Norm, tied: bool, bias: bool) -> Transformer:
    """A mha.Transformer on "meta"."""
    import mha
    return mha.Transformer(vocab, d, layers, h, d_ff, max_len=n_ctx, n_kv_heads=g, activation=activation,
                           norm=norm, bias=bias, tie_embeddings=tied, device="meta").eval()


@lru_cache(maxsize=16)
def _forward(m: Transformer, n: int, b: int) -> FlopReport:
    """mha's FLOP report of one forward of the model over n tokens."""
    import torch

    from mha.measure import measure_flops
    tokens = torch.zeros(b, n, dtype=torch.long, device="meta")  # (B, n)
    return measure_flops(m, tokens)


@lru_cache(maxsize=16)
def _decode(m: Transformer, n: int, b: int) -> FlopReport:
    """mha's FLOP report of one decoding step after n - 1 cached tokens."""
    from mha.model_measures import decode_step_flops
    return decode_step_flops(m, n - 1, batch=b)
