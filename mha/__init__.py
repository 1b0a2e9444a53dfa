"""mha: a real multi-head attention (subject 17-08), and measurements of it.

    import mha
    m = mha.MultiHeadAttention(768, 12)
    t = mha.trace(m, x, x, x)            # every intermediate of the 17-08 equations
    mha.count_parameters(m), mha.measure_flops(m, x, x, x), mha.attention_matrices(m, x, x)

torch is imported on first use of a name below, not by `import mha`.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "MultiHeadAttention": "mha.attention",
    "LAYOUTS": "mha.attention",
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
