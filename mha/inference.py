"""Inference measurements: bytes moved, FLOPs and arithmetic intensity of a prefill and of a decode step.

Both are traced from the real forward of an mha module (a Transformer, a TransformerBlock — one
layer — or a MultiHeadAttention) that fills, or reads, its KV caches, on any device ("meta"
measures frontier sizes without memory), in the module's own dtype:

- a **prefill of n tokens**: one causal forward over n tokens per sequence, from empty caches;
- a **decode step at position n**: one new token per sequence after n − 1 are cached, so its
  query attends to n keys (the convention of ``flops.decode_step``).

FLOPs are ``mha.measure_flops``'s matmul FLOPs (1 multiply-add = 2 FLOPs; softmax, scaling,
masking, bias adds, norms, activations not counted), counted on the same run.

**Bytes: the minimum traffic** between memory and the processor that the step cannot avoid, as
an ideal implementation that keeps every intermediate on chip would move it — the roofline
convention. Every aten op that runs is seen (a TorchDispatchMode; ``F.scaled_dot_product_attention``
at the function level, whatever kernel runs it), and the tensors each op reads or writes are
sorted by where they live:

- ``weights``: every parameter element an op reads, **once per step** however many ops read
  it (a view read twice — W and Wᵀ — counts once; a parameter is never counted above its own
  size). An embedding lookup reads only the rows it gathers (b·T rows of d); a tied output layer
  reads the whole matrix, which is then counted once (V·d), not V·d + the rows.
- ``kv_read``: the KV-cache elements the attention reads, once per step: the keys and values of
  every position the new queries attend to — 2·B·n·g·d_k·bytes per layer at position n (the n − 1
  cached and the new one, which mha appends to the cache and reads back with the others).
- ``kv_write``: the new tokens' keys and values written into the cache: 2·B·T·g·d_k·bytes per
  layer (T = 1 for a decode step, n for a prefill).
- ``activations``: what enters and leaves the measured module's forward: its input (token ids,
  int64, for a Transformer; x (B, T, d_model) for a block or an attention layer) and its output
  (logits (B, T, V), or (B, T, d_model)). Intermediate activations (Q, K, V, scores, the
  feed-forward's hidden layer, the residual stream between layers) stay on chip and are **not**
  counted; so a model's bytes are not the sum of its layers' (each layer's input and output).

``total = weights + kv_read + kv_write + activations``; intensity = matmul FLOPs / total bytes
(FLOP per byte). Bytes per element follow the module's dtype (fp32 4, fp16/bf16 2): build it in
the dtype to measure.

    python -m mha.inference --d-model 4096 --heads 32 --kv-heads 8 --layers 32 --n 2048 --dtype bf16
"""
from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:
    import torch

    from mha.block import Activation, Norm
    from mha.kv_cache import KVCache
    from mha.measure import FlopReport
    from mha.model_measures import Model

Phase = Literal["prefill", "decode"]

INFERENCE_NAMES = MappingProxyType({
    "bytes.decode_step": "minimum bytes moved by one decode step at position n, whole model",
    "bytes.decode_step_layer": "the same for one transformer block",
    "flops.decode_step_layer": "matmul FLOPs of one decode step at position n, one transformer block",
    "bytes.prefill": "minimum bytes moved by a prefill of n tokens, whole model",
    "bytes.prefill_layer": "the same for one transformer block",
    "flops.prefill_layer": "matmul FLOPs of a prefill of n tokens, one transformer block",
    "intensity.decode_step": "FLOP per byte of one decode step at position n, whole model",
    "intensity.decode_step_layer": "FLOP per byte of one decode step at position n, one block",
    "intensity.prefill": "FLOP per byte of a prefill of n tokens, whole model",
    "intensity.prefill_layer": "FLOP per byte of a prefill of n tokens, one block",
})


@dataclass(frozen=True)
class Traffic:
    """Bytes one step moves, by kind (see the module's doc for what each counts)."""

    weights: int
    kv_read: int
    kv_write: int
    activations: int

    @property
    def total(self) -> int:
        return self.weights + self.kv_read + self.kv_write + self.activations

    def as_dict(self) -> dict[str, int]:
        return {"weights": self.weights, "kv_read": self.kv_read, "kv_write": self.kv_write,
                "activations": self.activations, "total": self.total}


@dataclass(frozen=True)
class StepMeasurement:
    """A prefill of n tokens or a decode step at position n: its FLOPs, its bytes, its intensity."""

    phase: Phase
    n: int
    batch: int
    dtype: str
    flops: FlopReport
    traffic: Traffic

    @property
    def intensity(self) -> float:
        """Matmul FLOPs per byte moved."""
        return self.flops.matmul_total / self.traffic.total


def _view_key(t: torch.Tensor) -> tuple[int, tuple[tuple[int, int], ...]]:
    """The elements a view covers, whatever the order of its dimensions: W and Wᵀ are one key."""
    dims = sorted((int(s), int(st)) for s, st in zip(t.shape, t.stride()) if s > 1 and st != 0)
    return int(t.storage_offset()), tuple(dims)


def _distinct_bytes(t: torch.Tensor) -> int:
    """Bytes of the distinct elements of a view (an expanded dimension, stride 0, adds none)."""
    return math.prod(int(s) for s, st in zip(t.shape, t.stride()) if st != 0) * t.element_size()


def _storage(t: torch.Tensor) -> int:
    return int(t.untyped_storage()._cdata)


class _Reads:
    """Distinct reads per storage, each storage capped at its own size."""

    def __init__(self, sizes: Mapping[int, int]) -> None:
        self.sizes = sizes
        self.seen: dict[int, dict[object, int]] = {s: {} for s in sizes}

    def add(self, storage: int, key: object, nbytes: int) -> None:
        self.seen[storage].setdefault(key, nbytes)

    def total(self) -> int:
        return sum(min(sum(views.values()), self.sizes[s]) for s, views in self.seen.items())


class _TrafficCounter(Protocol):
    """What _step uses of the counter (a TorchDispatchMode, built by _traffic_class)."""

    def function_mode(self) -> AbstractContextManager[object]: ...
    def traffic(self, activations: int) -> Traffic: ...
    def __enter__(self) -> object: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> object: ...


_TRAFFIC: Callable[[Mapping[int, int], Mapping[int, int]], _TrafficCounter] | None = None


def _traffic_class() -> Callable[[Mapping[int, int], Mapping[int, int]], _TrafficCounter]:
    """The counter: a TorchDispatchMode (built on first use: importing mha.inference imports no torch)."""
    global _TRAFFIC
    if _TRAFFIC is not None:
        return _TRAFFIC
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    embedding = torch.ops.aten.embedding

    class _Function(TorchFunctionMode):
        """Reads F.scaled_dot_product_attention's q, k, v (and mask) before a kernel or its
        decomposition runs: the fused kernel reads each once."""

        def __init__(self, counter: _Traffic) -> None:
            super().__init__()
            self.counter = counter

        # args: what the function was called with (tensors, numbers, None): each op its own
        def __torch_function__(self, func: Callable[..., Any], types: Sequence[type], args: Sequence[Any] = (),
                               kwargs: Mapping[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            if func is not F.scaled_dot_product_attention:
                return func(*args, **kwargs)
            for t in (*args[:3], kwargs.get("attn_mask")):
                if isinstance(t, torch.Tensor):
                    self.counter.read(t)
            self.counter.inside_sdpa += 1
            try:
                return func(*args, **kwargs)
            finally:
                self.counter.inside_sdpa -= 1

    class _Traffic(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            return False  # as mha.measure's counter: nothing here is compiled

        def __init__(self, params: Mapping[int, int], caches: Mapping[int, int]) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.weights, self.kv = _Reads(params), _Reads(caches)
            self.kv_write = 0
            self.inside_sdpa = 0
            self.lookups = 0

        def function_mode(self) -> _Function:
            return _Function(self)

        def read(self, t: torch.Tensor, rows: int | None = None) -> None:
            s = _storage(t)
            if s in self.weights.sizes:
                if rows is None:
                    self.weights.add(s, _view_key(t), _distinct_bytes(t))
                else:  # an embedding lookup: the rows gathered
                    self.lookups += 1
                    self.weights.add(s, ("rows", self.lookups), rows * int(t.shape[-1]) * t.element_size())
            elif s in self.kv.sizes:
                self.kv.add(s, _view_key(t), _distinct_bytes(t))

        # args: the aten op's arguments (tensors, numbers, lists, None): each op its own schema
        def __torch_dispatch__(self, func: torch._ops.OpOverload, types: Sequence[type], args: Sequence[Any] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if self.inside_sdpa or func.is_view:
                return out  # SDPA read its inputs above; a view reads nothing
            schema = func._schema.arguments
            given = dict(zip((a.name for a in schema), args)) | kwargs
            for a in schema:
                value = given.get(a.name)
                tensors = value if isinstance(value, (list, tuple)) else [value]
                written = a.alias_info is not None and a.alias_info.is_write
                for t in tensors:
                    if not isinstance(t, torch.Tensor):
                        continue
                    if written:
                        if _storage(t) in self.kv.sizes:
                            self.kv_write += _distinct_bytes(t)
                    elif func.overloadpacket is embedding and a.name == "weight":
                        self.read(t, rows=given["indices"].numel())
                    else:
                        self.read(t)
            return out

        def traffic(self, activations: int) -> Traffic:
            return Traffic(self.weights.total(), self.kv.total(), self.kv_write, activations)

    _TRAFFIC = _Traffic
    return _TRAFFIC


def _check_n(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _nbytes(t: object) -> int:
    import torch
    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def _step(m: Model, phase: Phase, n: int, batch: int) -> StepMeasurement:
    import torch

    from mha.measure import BLOCK_STAGES, MODEL_STAGES, STAGES, _counter_class
    from mha.model_measures import _caches, _call, _forward_args, _inputs, _kind
    kind = _kind(m)
    _check_n("n", n)
    _check_n("batch", batch)
    w = next(m.parameters())
    caches: list[KVCache] = _caches(m, batch, n, None)  # exactly n positions: what the step reads
    if phase == "decode" and n > 1:
        _call(m, kind, _inputs(m, batch, n - 1), caches)  # the n − 1 cached tokens, not measured
    x = _inputs(m, batch, 1 if phase == "decode" else n)
    args, kw = _forward_args(kind, x, caches)
    params = {_storage(p): _nbytes(p) for p in m.parameters()}
    held = {_storage(t): _nbytes(t) for c in caches for t in (c.k, c.v)}
    stages = MODEL_STAGES if kind == "Transformer" else BLOCK_STAGES if kind == "TransformerBlock" else STAGES
    flops, traffic = _counter_class()(stages), _traffic_class()(params, held)
    with torch.no_grad(), flops.function_mode(), traffic.function_mode(), flops, traffic:
        out = m(*args, **kw)
    outputs = out if isinstance(out, tuple) else (out,)
    activations = _nbytes(x) + sum(_nbytes(t) for t in outputs)  # x once, even as query, key and value
    return StepMeasurement(phase, n, batch, str(w.dtype).removeprefix("torch."), flops.report(),
                           traffic.traffic(activations))


def measure_decode_step(m: Model, n: int, *, batch: int = 1) -> StepMeasurement:
    """FLOPs and bytes of decoding one token per sequence at position n (after n − 1 cached)."""
    return _step(m, "decode", n, batch)


def measure_prefill(m: Model, n: int, *, batch: int = 1) -> StepMeasurement:
    """FLOPs and bytes of a causal forward over n tokens per sequence that fills empty KV caches."""
    return _step(m, "prefill", n, batch)


def inference_quantity(name: str, *, d_model: int, heads: int, d_ff: int, n: int, batch: int = 1,
                       kv_heads: int | None = None, layers: int | None = None, vocab: int | None = None,
                       n_ctx: int | None = None, activation: Activation = "gelu", norm: Norm = "layernorm",
                       bias: bool = True, tied: bool = True, dtype: torch.dtype | None = None) -> int | float:
    """One of INFERENCE_NAMES, measured on a module built on "meta" in `dtype` (default fp32):
    a TransformerBlock for the ``*_layer`` names, else a Transformer (layers, vocab needed)."""
    import mha
    if name not in INFERENCE_NAMES:
        raise ValueError(f"not an inference quantity: {name!r}; expected one of {', '.join(INFERENCE_NAMES)}")
    kind, _, rest = name.partition(".")
    layer = rest.endswith("_layer")
    phase: Phase = "decode" if rest.startswith("decode") else "prefill"
    m: Model
    if layer:
        m = mha.TransformerBlock(d_model, heads, d_ff, n_kv_heads=kv_heads, activation=activation, norm=norm,
                                 bias=bias, device="meta", dtype=dtype).eval()
    else:
        if layers is None or vocab is None:
            raise ValueError(f"{name} needs layers and vocab")
        m = mha.Transformer(vocab, d_model, layers, heads, d_ff, max_len=n_ctx, n_kv_heads=kv_heads,
                            activation=activation, norm=norm, bias=bias, tie_embeddings=tied, device="meta",
                            dtype=dtype).eval()
    r = _step(m, phase, n, batch)
    if kind == "bytes":
        return r.traffic.total
    if kind == "flops":
        return r.flops.matmul_total
    return r.intensity


_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "fp64": "float64"}


def table(*, d_model: int, heads: int, layers: int, n: int, dtype: str, d_ff: int, vocab: int,
          kv_heads: Sequence[int] | None = None, activation: Activation = "gelu", norm: Norm = "layernorm",
          bias: bool = True, tied: bool = True, batch: int = 1) -> str:
    """The demonstration: per decode step at position n and for a prefill of n tokens, bytes, FLOPs
    and intensity of the whole model for MHA (g = h), GQA (each g given) and MQA (g = 1)."""
    import torch

    import mha
    groups = [heads, *(kv_heads or ()), 1]
    rows = [(f"{'attention':<12} {'g':>4} {'weights B':>16} {'KV read B':>15} {'decode B':>16} "
             f"{'decode FLOPs':>16} {'decode F/B':>10} {'prefill F/B':>11}")]
    for g in dict.fromkeys(groups):
        m = mha.Transformer(vocab, d_model, layers, heads, d_ff, n_kv_heads=g, activation=activation,
                            norm=norm, bias=bias, tie_embeddings=tied, device="meta",
                            dtype=getattr(torch, _DTYPES[dtype])).eval()
        dec, pre = measure_decode_step(m, n, batch=batch), measure_prefill(m, n, batch=batch)
        name = "MHA" if g == heads else "MQA" if g == 1 else "GQA"
        t = dec.traffic
        rows.append(f"{name:<12} {g:>4} {t.weights:>16,} {t.kv_read:>15,} {t.total:>16,} "
                    f"{dec.flops.matmul_total:>16,} {dec.intensity:>10.2f} {pre.intensity:>11.1f}")
    return "\n".join(rows)


def model_arguments(p: argparse.ArgumentParser) -> None:
    """The options that shape the Transformer measured (this module's CLI and mha.device_timing's)."""
    p.add_argument("--d-model", type=int, required=True)
    p.add_argument("--heads", type=int, required=True)
    p.add_argument("--kv-heads", type=int, action="append", default=[], help="GQA key/value heads (repeatable)")
    p.add_argument("--layers", type=int, required=True)
    p.add_argument("--n", type=int, required=True, help="the decode position / the prefill length")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--d-ff", type=int, help="feed-forward width (default 4·d_model)")
    p.add_argument("--vocab", type=int, default=32000)
    p.add_argument("--activation", default="gelu", choices=("gelu", "gelu_tanh", "relu", "silu", "swiglu"))
    p.add_argument("--norm", default="layernorm", choices=("layernorm", "rmsnorm"))
    p.add_argument("--no-bias", action="store_true")
    p.add_argument("--untied", action="store_true")


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m mha.inference", description=(
        "Bytes, FLOPs and FLOP/byte of one decode step at position n (and the FLOP/byte of a prefill "
        "of n tokens) of an mha.Transformer on the meta device, for MHA, GQA and MQA."))
    model_arguments(p)
    p.add_argument("--dtype", choices=tuple(_DTYPES), default="bf16")
    a = p.parse_args(argv)
    print(table(d_model=a.d_model, heads=a.heads, layers=a.layers, n=a.n, dtype=a.dtype,
                d_ff=a.d_ff or 4 * a.d_model, vocab=a.vocab, kv_heads=a.kv_heads, activation=a.activation,
                norm=a.norm, bias=not a.no_bias, tied=not a.untied, batch=a.batch))


if __name__ == "__main__":
    main()
