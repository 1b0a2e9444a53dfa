"""The ``measure`` adapter: named quantities of the real :mod:`mha`, at given sizes.

    measure("params", {"d": 512, "h": 8})                       -> 1050624
    measure("flops.projections", {"d": 4096, "h": 32, "n": 2048}) -> 274877906944
    measure("shape.Q_i", {"d": 768, "h": 12, "n": 128})          -> (128, 64)

Sizes: d (d_model), h (heads), n (sequence length; self-attention), b (batch; absent:
one unbatched sequence). Everything is measured on the "meta" device (shapes, parameters
and FLOPs without memory), so sizes can be those of real models. torch is imported here,
on first call, and nowhere else in the spec engine but the equivalence check.

Quantities:
  params, params_nobias                       count_parameters (bias=True / bias=False)
  flops.total | flops.matmul_total            all matmul FLOPs of one forward (1 multiply-add = 2)
  flops.projections | flops.attention         q+k+v+out projections | QKᵀ + A·V
  flops.<stage>                               q_proj, k_proj, v_proj, qk, av, out_proj
  flops.softmax | flops.scaling | flops.bias  reported apart from matmuls
  attention.count | attention.elements        A_i matrices (batch × h) and their elements
  attention.bytes.fp32 | .fp16 | .bf16        bytes of all A_i at that dtype
  shape.<name>                                one head's shape of a trace name (Q_i, S_i, concat, ...)
  tensor.<name>                               the traced tensor's whole shape, heads stacked: (h, n, d_k)
"""
from __future__ import annotations

from functools import lru_cache

SIZE_NAMES = ("d", "h", "n", "b")
ALIASES = {"d_model": "d", "num_heads": "h", "batch": "b", "batch_size": "b"}
FLOP_PARTS = ("total", "matmul_total", "projections", "attention", "q_proj", "k_proj", "v_proj", "qk",
              "av", "out_proj", "softmax", "scaling", "masking", "bias")
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


class QuantityError(ValueError):
    """An unknown quantity or missing size."""


def quantities() -> tuple:
    """Every quantity name ``measure`` accepts (shape.* listed with the trace names)."""
    from mha.tracing import TRACE_NAMES
    return (("params", "params_nobias") + tuple(f"flops.{p}" for p in FLOP_PARTS)
            + ("attention.count", "attention.elements") + tuple(f"attention.bytes.{k}" for k in DTYPES)
            + tuple(f"shape.{n}" for n in TRACE_NAMES) + tuple(f"tensor.{n}" for n in TRACE_NAMES))


def check_quantity(quantity: str) -> None:
    """Raise QuantityError (with the list of known names) if ``quantity`` is not one."""
    if quantity not in quantities():
        raise QuantityError(f"unknown quantity {quantity!r}; expected one of: {', '.join(quantities())}")


def _sizes(values, need):
    v = {ALIASES.get(k, k): int(x) for k, x in values.items()}
    missing = [k for k in need if k not in v]
    if missing:
        raise QuantityError(f"missing size {', '.join(missing)} (sizes are d, h, n and optionally b)")
    return v


def measure(quantity: str, values, device: str = "meta", layout: str = "fused", bias: bool = True):
    """The named quantity of a real mha.MultiHeadAttention(d, h) at the given sizes (see module doc)."""
    check_quantity(quantity)
    if quantity in ("params", "params_nobias"):
        v = _sizes(values, ("d", "h"))
        return _params(v["d"], v["h"], layout, bias and quantity == "params")
    v = _sizes(values, ("d", "h", "n"))
    return _measure(quantity, v["d"], v["h"], v["n"], v.get("b"), layout, bias, device)


@lru_cache(maxsize=256)
def _params(d, h, layout, bias):
    import mha
    return mha.count_parameters(mha.MultiHeadAttention(d, h, bias=bias, layout=layout, device="meta"))


@lru_cache(maxsize=256)
def _measure(quantity, d, h, n, b, layout, bias, device):
    import torch

    import mha

    m = mha.MultiHeadAttention(d, h, bias=bias, layout=layout, device=device).eval()
    shape = (n, d) if b is None else (b, n, d)
    x = torch.empty(shape, device=device)
    group, _, part = quantity.partition(".")
    if group == "flops":
        report = mha.measure_flops(m, x, x, x, need_weights=False)
        return report.matmul_total if part in ("total", "matmul_total") else report.as_dict()[part]
    if group == "attention":
        if part.startswith("bytes."):
            a = mha.attention_matrices(m, x, x, dtype=getattr(torch, DTYPES[part[len("bytes."):]]))
            return a.bytes
        a = mha.attention_matrices(m, x, x)
        return a.count if part == "count" else a.elements
    with torch.no_grad():
        t = mha.trace(m, x, x, x)
    shape = t.shape(part) if group == "shape" else t[part].shape
    return tuple(int(s) for s in shape)
