"""Measurements of a live module: parameters, forward FLOPs by stage, attention-weight matrices.

FLOPs are counted on the ops the forward pass actually executes (any device, "meta"
included), with 1 multiply-add = 2 FLOPs:

- matmuls (aten mm, addmm, bmm, baddbmm, mv, addmv, dot) — 2·M·K·N each — attributed to the
  stage the module marks while running them (q_proj, k_proj, v_proj, qk, av, out_proj; the
  packed Q/K/V projection of self-attention is split by its output columns, which are exact);
- scaled_dot_product_attention, whatever kernel runs it (the fused CPU/CUDA kernels, or the
  math decomposition on "meta"), by its formula: qk 2·B·h·L·S·E, av 2·B·h·L·S·Ev, softmax and
  scaling as below. torch's FlopCounterMode counts 0 for the fused CPU kernel; this does not.
- not matmuls, reported apart: softmax (5 FLOPs per score: max, subtract, exp, sum, divide),
  scaling (1 per score: S_i = Q_i K_iᵀ / √d_k), masking (1 per score when a mask is added),
  bias (1 per output element of a projection with a bias).

An op that looks like a matmul or attention kernel but is not known raises instead of being
dropped. Dropout is not counted.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import MappingProxyType, TracebackType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch

    from mha.attention import MultiHeadAttention
    from mha.block import Transformer, TransformerBlock

STAGES = ("q_proj", "k_proj", "v_proj", "qk", "av", "out_proj")
BLOCK_STAGES = STAGES + ("ffn",)  # a TransformerBlock; a Transformer adds "lm_head"
MODEL_STAGES = BLOCK_STAGES + ("lm_head",)
SOFTMAX_FLOPS_PER_ELEMENT = 5


@dataclass(frozen=True)
class FlopReport:
    """Forward FLOPs of one call; matmul FLOPs by stage, the rest apart (1 multiply-add = 2 FLOPs)."""

    by_stage: MappingProxyType[str, int]
    softmax: int
    scaling: int
    masking: int
    bias: int

    @property
    def projections(self) -> int:
        s = self.by_stage
        return s["q_proj"] + s["k_proj"] + s["v_proj"] + s["out_proj"]

    @property
    def attention(self) -> int:
        return self.by_stage["qk"] + self.by_stage["av"]

    @property
    def ffn(self) -> int:
        """Feed-forward matmuls (0 for a lone attention layer)."""
        return self.by_stage.get("ffn", 0)

    @property
    def lm_head(self) -> int:
        """The output layer's matmul (0 but for a Transformer)."""
        return self.by_stage.get("lm_head", 0)

    @property
    def matmul_total(self) -> int:
        return sum(self.by_stage.values())

    def as_dict(self) -> dict[str, int]:
        return {**self.by_stage, "projections": self.projections, "attention": self.attention,
                "matmul_total": self.matmul_total, "softmax": self.softmax, "scaling": self.scaling,
                "masking": self.masking, "bias": self.bias}


@dataclass(frozen=True)
class AttentionMatrices:
    """The attention-weight matrices A_i of one forward call: count = batch × h, each shape (n_q, n_k)."""

    count: int
    shape: tuple[int, int]
    elements: int
    bytes: int


def count_parameters(m: torch.nn.Module) -> int:
    """Number of parameters of a live module (works on "meta")."""
    return sum(p.numel() for p in m.parameters())


def attention_matrices(m: MultiHeadAttention, query: torch.Tensor, key: torch.Tensor,
                       dtype: torch.dtype | None = None) -> AttentionMatrices:
    """How many attention-weight matrices a forward call makes, their shape and their bytes
    (at `dtype`, default the module's weights' dtype): read off the weights A_i that the
    forward computes, run on a "meta" twin of `m` (same configuration, no memory), so any
    size can be measured. Inputs are checked as forward checks them."""
    import torch

    from mha.attention import MultiHeadAttention
    from mha.tracing import trace

    _check_module(m)
    dtype = m.out_proj.weight.dtype if dtype is None else dtype
    if not isinstance(dtype, torch.dtype):
        raise ValueError(f"dtype must be a torch.dtype, got {dtype!r}")
    w = m.out_proj.weight
    value = key.new_empty(key.shape[:-1] + (m.vdim,))
    m._batch_first_inputs(query, key, value)  # the caller's inputs, checked against m itself
    twin = MultiHeadAttention(m.d_model, m.num_heads, kdim=m.kdim, vdim=m.vdim, bias=m.bias, layout=m.layout,
                              batch_first=m.batch_first, device="meta", dtype=w.dtype,
                              n_kv_heads=m.n_kv_heads)
    meta = [t.to("meta") for t in (query, key, value)]
    A = trace(twin, *meta)["A_i"]  # (…, h, n_q, n_k): one matrix per (batch item, head)
    n_q, n_k = A.shape[-2:]
    count = math.prod(A.shape[:-2])
    itemsize = torch.empty((), dtype=dtype, device="meta").element_size()
    return AttentionMatrices(count, (n_q, n_k), A.numel(), A.numel() * itemsize)


def _check_module(m: object) -> None:
    from mha.attention import MultiHeadAttention
    if not isinstance(m, MultiHeadAttention):
        raise ValueError(f"m must be an mha.MultiHeadAttention (for a torch.nn.MultiheadAttention, measure "
                         f"MultiHeadAttention.from_torch(m)), got {type(m).__name__}")


def measure_flops(m: MultiHeadAttention | TransformerBlock | Transformer, query: torch.Tensor,
                  key: torch.Tensor | None = None, value: torch.Tensor | None = None, **kw: object) -> FlopReport:
    """Run m(query, key, value, **kw) once under a counter and return its FLOPs by stage.

    kw as for m.forward (need_weights picks the path: True the explicit equations, False the
    fused scaled_dot_product_attention). No gradients are recorded.
    An mha.TransformerBlock is run as m(query, **kw) (query = x) and its report adds the stage
    "ffn"; an mha.Transformer as m(query, **kw) (query = tokens), adding "ffn" and "lm_head".
    Stage FLOPs of a stack are summed over its layers.
    """
    import torch

    if isinstance(m, torch.nn.MultiheadAttention):  # other modules are counted (or refused) stage by stage
        raise ValueError("m is a torch.nn.MultiheadAttention, whose fast path hides its stages: measure "
                         "mha.MultiHeadAttention.from_torch(m), the same function")
    from mha.block import Transformer, TransformerBlock
    whole = isinstance(m, (Transformer, TransformerBlock))
    if whole and (key is not None or value is not None):
        raise ValueError(f"an mha.{type(m).__name__} takes one input: measure_flops(m, x_or_tokens, **kw)")
    stages = MODEL_STAGES if isinstance(m, Transformer) else BLOCK_STAGES if whole else STAGES
    counter = _counter_class()(stages)
    with torch.no_grad(), counter.function_mode(), counter:
        if whole:
            m(query, **kw)
        else:
            m(query, key, value, **kw)
    return counter.report()


def _sdpa_flops(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, masked: bool) -> dict[str, int]:
    """Formula of one scaled_dot_product_attention call on q (…, L, E), k (…, S, E), v (…, S, Ev)."""
    *batch, L, E = q.shape
    S, Ev = k.shape[-2], v.shape[-1]
    bh = 1
    for d in batch:
        bh *= d
    scores = bh * L * S
    return {"qk": 2 * scores * E, "av": 2 * scores * Ev, "softmax": SOFTMAX_FLOPS_PER_ELEMENT * scores,
            "scaling": scores, "masking": scores if masked else 0}


def _matmul_flops(func_name: str, args: Sequence[torch.Tensor]) -> tuple[int, int]:
    """(matmul FLOPs, fused additions) of one aten matmul op."""
    a, b = {"mm": (0, 1), "bmm": (0, 1), "addmm": (1, 2), "baddbmm": (1, 2), "mv": (0, 1),
            "addmv": (1, 2), "dot": (0, 1)}[func_name]
    x, y = args[a].shape, args[b].shape
    if func_name in ("mm", "addmm"):
        M, K, N, batch = x[0], x[1], y[1], 1
    elif func_name in ("bmm", "baddbmm"):
        batch, M, K, N = x[0], x[1], x[2], y[2]
    elif func_name in ("mv", "addmv"):
        M, K, N, batch = x[0], x[1], 1, 1
    else:
        M, K, N, batch = 1, x[0], 1, 1
    adds = batch * M * N if func_name.startswith("add") or func_name == "baddbmm" else 0
    return 2 * batch * M * K * N, adds


class _FlopCounter(Protocol):
    """What measure_flops uses of the counter (a TorchDispatchMode, built by _counter_class)."""

    def function_mode(self) -> AbstractContextManager[object]: ...
    def report(self) -> FlopReport: ...
    def __enter__(self) -> object: ...
    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> object: ...


_COUNTER: Callable[[Sequence[str]], _FlopCounter] | None = None


def _counter_class() -> Callable[[Sequence[str]], _FlopCounter]:
    """Built on first use so that importing mha.measure does not import torch."""
    global _COUNTER
    if _COUNTER is not None:
        return _COUNTER
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    from mha.ops import STAGE

    aten = torch.ops.aten
    matmuls = {getattr(aten, n): n for n in ("mm", "bmm", "addmm", "baddbmm", "mv", "addmv", "dot")}
    sdpa_kernels = {getattr(aten, n) for n in (
        "_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
        "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention",
        "_scaled_dot_product_attention_math", "_scaled_dot_product_fused_attention_overrideable",
    ) if hasattr(aten, n)}
    softmaxes = {aten._softmax, aten._safe_softmax} if hasattr(aten, "_safe_softmax") else {aten._softmax}
    elementwise = {aten.mul: "scaling", aten.mul_: "scaling", aten.div: "scaling", aten.add: "add", aten.add_: "add"}
    suspicious = ("mm", "matmul", "attention", "conv", "linear", "einsum")

    class _Function(TorchFunctionMode):
        """Sees F.scaled_dot_product_attention before it is decomposed into kernels."""

        def __init__(self, counter: _Counter) -> None:
            super().__init__()
            self.counter = counter

        # args: what the function was called with (tensors, numbers, None): each op its own
        def __torch_function__(self, func: Callable[..., Any], types: Sequence[type], args: Sequence[Any] = (),
                               kwargs: Mapping[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            if func is F.scaled_dot_product_attention:
                q, k, v = args[:3]
                masked = kwargs.get("attn_mask") is not None or bool(kwargs.get("is_causal", False))
                self.counter.add_sdpa(q, k, v, masked)
                self.counter.inside_sdpa += 1
                try:
                    return func(*args, **kwargs)
                finally:
                    self.counter.inside_sdpa -= 1
            return func(*args, **kwargs)

    class _Counter(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # torch wraps every TorchDispatchMode's __torch_dispatch__ in torch._disable_dynamo
            # (so that torch.compile does not trace into it), which imports torch._dynamo, more
            # than a second, on the first op counted. Nothing here is compiled: opt out (if a
            # later torch drops this hook, the cost comes back; the counts do not change).
            return False

        def __init__(self, stages: Sequence[str] = STAGES) -> None:
            # torch's TorchDispatchMode.__init__ has no annotations (it takes an optional dispatch key)
            super().__init__()  # type: ignore[no-untyped-call]
            self.flops = dict.fromkeys(stages, 0)
            self.other = {"softmax": 0, "scaling": 0, "masking": 0, "bias": 0}
            self.inside_sdpa = 0

        def function_mode(self) -> _Function:
            return _Function(self)

        def add_sdpa(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, masked: bool) -> None:
            f = _sdpa_flops(q, k, v, masked)
            self.flops["qk"] += f["qk"]
            self.flops["av"] += f["av"]
            for name in ("softmax", "scaling", "masking"):
                self.other[name] += f[name]

        def _add_matmul(self, flops: int, adds: int) -> None:
            stage = STAGE.get()
            if isinstance(stage, tuple):  # packed projection: split by output columns
                _, parts = stage
                total = sum(parts)
                for name, part in zip(("q_proj", "k_proj", "v_proj"), parts):
                    share, rest = divmod(flops * part, total)
                    if rest:
                        raise RuntimeError(f"packed projection FLOPs {flops} do not split by {parts}")
                    self.flops[name] += share
                self.other["bias"] += adds
                return
            if stage not in self.flops:
                raise RuntimeError(f"a matmul of {flops} FLOPs ran outside any known stage ({stage!r})")
            self.flops[stage] += flops
            if adds:
                self.other["masking" if stage in ("qk", "av") else "bias"] += adds

        # args: the aten op's arguments (tensors, numbers, lists, None): each op its own schema
        def __torch_dispatch__(self, func: torch._ops.OpOverload, types: Sequence[type], args: Sequence[Any] = (),
                               kwargs: dict[str, Any] | None = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            if self.inside_sdpa:
                return out  # counted by its formula in _Function
            packet = func.overloadpacket
            stage = STAGE.get()
            stage_name = stage[0] if isinstance(stage, tuple) else stage
            if packet in matmuls:
                self._add_matmul(*_matmul_flops(matmuls[packet], args))
            elif packet in sdpa_kernels:
                q, k, v = args[:3]
                names = [a.name for a in func._schema.arguments]
                given = dict(zip(names, args)) | kwargs
                mask = given.get("attn_mask", given.get("attn_bias"))
                self.add_sdpa(q, k, v, mask is not None or bool(given.get("is_causal", False)))
            elif packet in softmaxes:
                self.other["softmax"] += SOFTMAX_FLOPS_PER_ELEMENT * out.numel()
            elif packet in elementwise and isinstance(out, torch.Tensor):
                if stage_name == "qk":
                    self.other["masking" if elementwise[packet] == "add" else "scaling"] += out.numel()
                elif stage_name in ("q_proj", "k_proj", "v_proj", "in_proj", "out_proj", "ffn") \
                        and elementwise[packet] == "add":
                    self.other["bias"] += out.numel()
            elif any(s in packet.__name__ for s in suspicious):
                raise RuntimeError(f"mha.measure_flops does not know how to count {func}; refusing to drop it")
            return out

        def report(self) -> FlopReport:
            return FlopReport(MappingProxyType(dict(self.flops)), **self.other)

    _COUNTER = _Counter
    return _COUNTER
