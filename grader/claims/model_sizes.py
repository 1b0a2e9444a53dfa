"""The sizes each measured quantity takes, and the quantities of a whole transformer (light: no torch).

A measured check names a quantity and gives sizes in ``at:``; every size it gives must be one
the measured thing takes (:func:`sizes_taken`), or the spec does not load. Two families:

- one attention layer (``mha.MultiHeadAttention``): ``params``, ``flops.*``, ``attention.*``,
  ``shape.*``, ``tensor.*`` at d, h, n (or n_q and n_k), optionally b (batch) and, for
  parameters and FLOPs, g (key/value heads: GQA; g = 1 is MQA, g = h plain MHA);
- a transformer (``mha.TransformerBlock`` / ``mha.Transformer``, :data:`MODEL_QUANTITIES`):
  ``params.block``, ``params.model``, ``flops.forward|attention|projections|ffn|lm_head|decode_step``,
  ``bytes.kv_cache``, ``bytes.kv_cache_token``, ``bytes.kv_cache_token_layer`` at d, h, d_ff, L
  (layers), V (vocabulary), n, optionally b, g and n_ctx (learned positions, as GPT-2's).
  ``flops.attention`` and ``flops.projections`` are the layer's unless a model size (L, d_ff, V)
  is given.

The model's other settings (activation, norm, tied output layer, biases, the KV cache's dtype)
are fields of the check, not sizes (see docs/spec-language.md).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from types import MappingProxyType
from typing import Any

MODEL_QUANTITIES: tuple[str, ...] = ("params.block", "params.model", "flops.forward", "flops.ffn", "flops.lm_head",
                                     "flops.decode_step", "bytes.kv_cache", "bytes.kv_cache_token",
                                     "bytes.kv_cache_token_layer")
# Inference (mha.inference.INFERENCE_NAMES): bytes, FLOPs, FLOP/byte of a decode step or a prefill
INFERENCE = ("bytes.decode_step", "bytes.decode_step_layer", "flops.decode_step_layer", "bytes.prefill",
             "bytes.prefill_layer", "flops.prefill_layer", "intensity.decode_step", "intensity.decode_step_layer",
             "intensity.prefill", "intensity.prefill_layer")
MODEL_QUANTITIES += INFERENCE
SHARED = ("flops.attention", "flops.projections")     # the layer's, or with L/d_ff/V the model's
MODEL_SIZES = ("L", "d_ff", "V")
# Other names a spec may give its symbols for these sizes (an alias of the spec resolves first).
SIZE_ALIASES = MappingProxyType({
    "d_model": "d", "num_heads": "h", "batch": "b", "batch_size": "b", "n_kv_heads": "g", "n_kv": "g",
    "num_kv_heads": "g", "n_layers": "L", "layers": "L", "vocab": "V", "vocab_size": "V",
    "max_len": "n_ctx", "context": "n_ctx"})
SIZE_MEANING = MappingProxyType({
    "d": "d_model", "h": "heads", "n": "sequence length", "b": "batch", "n_q": "query positions",
    "n_k": "key/value positions", "g": "key/value heads", "L": "layers", "d_ff": "feed-forward width",
    "V": "vocabulary", "n_ctx": "learned positions"})
ACTIVATIONS = ("gelu", "gelu_tanh", "relu", "silu", "swiglu")
NORMS = ("layernorm", "rmsnorm")
DTYPES = ("fp32", "fp16", "bf16", "fp64")


def size_name(name: str) -> str:
    return SIZE_ALIASES.get(name, name)


def is_model_quantity(quantity: str, given: Iterable[str] = ()) -> bool:
    """Whether the quantity is measured on a transformer (else on one attention layer)."""
    given = {size_name(k) for k in given}
    return quantity in MODEL_QUANTITIES or (quantity in SHARED and bool(given & set(MODEL_SIZES)))


def sizes_taken(quantity: str, given: Iterable[str] = ()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the sizes the quantity needs, the sizes it may also be given), with the sizes ``given``."""
    given = {size_name(k) for k in given}
    if is_model_quantity(quantity, given):
        if quantity == "params.block":
            return ("d", "h", "d_ff"), ("g",)
        if quantity == "params.model":
            return ("d", "h", "d_ff", "L", "V"), ("g", "n_ctx")
        if quantity == "bytes.kv_cache_token_layer":
            return ("d", "h"), ("g",)
        if quantity == "bytes.kv_cache_token":
            return ("d", "h", "L"), ("g",)
        if quantity == "bytes.kv_cache":
            return ("d", "h", "L", "n"), ("b", "g")
        if quantity in INFERENCE and quantity.endswith("_layer"):
            return ("d", "h", "d_ff", "n"), ("b", "g")
        return ("d", "h", "d_ff", "L", "V", "n"), ("b", "g", "n_ctx")
    if quantity in ("params", "params_nobias"):
        return ("d", "h"), ("g",)
    seq = ("n_q", "n_k") if {"n_q", "n_k"} & given else ("n",)
    extra = ("b", "g") if quantity.startswith("flops.") else ("b",)
    return ("d", "h") + seq, extra


def describe_sizes(quantity: str, given: Iterable[str] = ()) -> str:
    """'d, h, n (and optionally b, g)' with their meanings, for error messages."""
    need, optional = sizes_taken(quantity, given)
    show = ", ".join(f"{k} ({SIZE_MEANING[k]})" for k in need)
    return show + (f"; optionally {', '.join(f'{k} ({SIZE_MEANING[k]})' for k in optional)}" if optional else "")


def model_options(check_get: Callable[[str, Any], Any]) -> dict[str, Any]:
    """A model check's settings, from its fields (``check_get(name, default)``)."""
    return {"activation": check_get("activation", "gelu"), "norm": check_get("norm", "layernorm"),
            "tied": bool(check_get("tied", True)), "dtype": check_get("dtype", "fp32")}
