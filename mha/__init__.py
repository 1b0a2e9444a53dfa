"""mha: a real multi-head attention (subject 17-08), the transformer around it, and measurements.

    import mha
    m = mha.MultiHeadAttention(768, 12)   # n_kv_heads=g for GQA/MQA
    t = mha.trace(m, x, x, x)            # every intermediate of the 17-08 equations
    mha.count_parameters(m), mha.measure_flops(m, x, x, x), mha.attention_matrices(m, x, x)
    gpt2 = mha.Transformer(50257, 768, 12, 12, 3072, max_len=1024, device="meta")
    mha.measure_model(gpt2, n=1024).named()   # params.*, flops.*, bytes.kv_cache*
    mha.measure_decode_step(gpt2, n=1024).intensity   # FLOP/byte of one decoding step (mha.inference)

torch is imported on first use of a name below, not by `import mha`.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the names below, for type checkers; at run time __getattr__ loads them on first use
    from mha.attention import MultiHeadAttention as MultiHeadAttention
    from mha.block import FeedForward as FeedForward
    from mha.block import Transformer as Transformer
    from mha.block import TransformerBlock as TransformerBlock
    from mha.conversions import LAYOUTS as LAYOUTS
    from mha.inference import INFERENCE_NAMES as INFERENCE_NAMES
    from mha.inference import StepMeasurement as StepMeasurement
    from mha.inference import Traffic as Traffic
    from mha.inference import measure_decode_step as measure_decode_step
    from mha.inference import measure_prefill as measure_prefill
    from mha.kv_cache import KVCache as KVCache
    from mha.measure import AttentionMatrices as AttentionMatrices
    from mha.measure import FlopReport as FlopReport
    from mha.measure import attention_matrices as attention_matrices
    from mha.measure import count_parameters as count_parameters
    from mha.measure import measure_flops as measure_flops
    from mha.model_measures import MEASURE_NAMES as MEASURE_NAMES
    from mha.model_measures import ModelMeasurement as ModelMeasurement
    from mha.model_measures import decode_step_flops as decode_step_flops
    from mha.model_measures import kv_cache_bytes as kv_cache_bytes
    from mha.model_measures import measure_model as measure_model
    from mha.tracing import TRACE_NAMES as TRACE_NAMES
    from mha.tracing import Trace as Trace
    from mha.tracing import trace as trace

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
    "measure_model": "mha.model_measures",
    "ModelMeasurement": "mha.model_measures",
    "MEASURE_NAMES": "mha.model_measures",
    "kv_cache_bytes": "mha.model_measures",
    "decode_step_flops": "mha.model_measures",
    "measure_decode_step": "mha.inference",
    "measure_prefill": "mha.inference",
    "StepMeasurement": "mha.inference",
    "Traffic": "mha.inference",
    "INFERENCE_NAMES": "mha.inference",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mha' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
