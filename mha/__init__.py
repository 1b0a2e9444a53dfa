"""mha: a real multi-head attention (subject 17-08), the transformer around it, and measurements.

    import mha
    m = mha.MultiHeadAttention(768, 12)   # n_kv_heads=g for GQA/MQA
    t = mha.trace(m, x, x, x)            # every intermediate of the 17-08 equations
    mha.count_parameters(m), mha.measure_flops(m, x, x, x), mha.attention_matrices(m, x, x)
    gpt2 = mha.Transformer(50257, 768, 12, 12, 3072, max_len=1024, device="meta")
    mha.measure_model(gpt2, n=1024).named()   # params.*, flops.*, bytes.kv_cache*

torch is imported on first use of a name below, not by `import mha`.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "MultiHeadAttention": "mha.attention",
    "LAYOUTS": "mha.conversions",
    "trace": "mha.tracing",
    "Trace": "mha.tracing",
    "TRACE_NAMES": "mha.tracing",
    "count_parameters": "mha.measure",
    "measure_flops": "mha.measure",
    "FlopReport": "mha.measure",
    "attention_matrices": "mha.measure",
    "AttentionMatrices": "mha.measure",
    "KVCache": "mha.kv_cache",
    "FeedForward": "mha.block",
    "TransformerBlock": "mha.block",
    "Transformer": "mha.block",
    "measure_model": "mha.measure_model",
    "ModelMeasurement": "mha.measure_model",
    "MEASURE_NAMES": "mha.measure_model",
    "kv_cache_bytes": "mha.measure_model",
    "decode_step_flops": "mha.measure_model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mha' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + __all__)
